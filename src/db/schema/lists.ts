import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, updatedAtColumn, workspaceIdColumn } from "./columns";

/** Static groups of contacts. Membership lives in `list_members`; renaming never touches it. */
export const lists = sqliteTable(
  "lists",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [index("lists_workspace_created_idx").on(t.workspaceId, t.createdAt)],
);

export type ListRow = typeof lists.$inferSelect;
