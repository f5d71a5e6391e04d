import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, timestampColumn, workspaceIdColumn } from "./columns";
import { users } from "./users";
import { workspaces } from "./workspaces";

/**
 * Dashboard sign-ins. `id` is the hex SHA-256 of the cookie's token: the token itself is never
 * stored. A session acts in one workspace; `expires_at` slides forward on use (30 days), written
 * at most once a minute per session (`last_seen_at`).
 */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    workspaceId: workspaceIdColumn().references(() => workspaces.id, { onDelete: "cascade" }),
    createdAt: createdAtColumn(),
    expiresAt: timestampColumn("expires_at").notNull(),
    lastSeenAt: timestampColumn("last_seen_at").notNull(),
  },
  (t) => [
    index("sessions_workspace_user_idx").on(t.workspaceId, t.userId),
    index("sessions_user_idx").on(t.userId),
    index("sessions_expires_idx").on(t.expiresAt),
  ],
);

export type SessionRow = typeof sessions.$inferSelect;
