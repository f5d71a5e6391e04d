import { sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, updatedAtColumn } from "./columns";

/**
 * People who sign in to the dashboard. Not owned by a workspace: a user belongs to workspaces
 * through `memberships`. `email` is stored lower-cased and is unique; `password_hash` is an
 * argon2id PHC string (`Bun.password`), null until the user has followed a setup link.
 */
export const users = sqliteTable(
  "users",
  {
    id: idColumn(),
    email: text("email").notNull(),
    name: text("name").notNull(),
    passwordHash: text("password_hash"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [uniqueIndex("users_email_idx").on(t.email)],
);

export type UserRow = typeof users.$inferSelect;
