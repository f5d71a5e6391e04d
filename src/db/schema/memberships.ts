import { index, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, workspaceIdColumn } from "./columns";
import { users } from "./users";
import { workspaces } from "./workspaces";

/**
 * A user's place in a workspace and what the user may do there: `admin` (everything) or `agent`
 * (reads all but settings, API keys and users; writes conversations only).
 */
export const memberships = sqliteTable(
  "memberships",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    workspaceId: workspaceIdColumn().references(() => workspaces.id, { onDelete: "cascade" }),
    /** admin | agent */
    role: text("role").notNull(),
    createdAt: createdAtColumn(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.workspaceId] }),
    index("memberships_workspace_idx").on(t.workspaceId, t.createdAt),
  ],
);

export type MembershipRow = typeof memberships.$inferSelect;
