import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, timestampColumn, workspaceIdColumn } from "./columns";
import { users } from "./users";
import { workspaces } from "./workspaces";

/**
 * One-time setup links (`/setup?token=…`, 24 h). `id` is the hex SHA-256 of the token. A token
 * naming `user_id` sets that user's password; otherwise it creates a user (with `email` when the
 * token names one, else the e-mail given at setup) with `role` in `workspace_id`.
 */
export const setupTokens = sqliteTable(
  "setup_tokens",
  {
    id: text("id").primaryKey(),
    workspaceId: workspaceIdColumn().references(() => workspaces.id, { onDelete: "cascade" }),
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    email: text("email"),
    /** admin | agent */
    role: text("role").notNull(),
    expiresAt: timestampColumn("expires_at").notNull(),
    usedAt: timestampColumn("used_at"),
    createdAt: createdAtColumn(),
  },
  (t) => [index("setup_tokens_workspace_idx").on(t.workspaceId, t.createdAt)],
);

export type SetupTokenRow = typeof setupTokens.$inferSelect;
