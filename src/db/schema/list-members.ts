import { index, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, workspaceIdColumn } from "./columns";
import { contacts } from "./contacts";
import { lists } from "./lists";

/**
 * Contact ↔ list membership. Deleting a list or a contact removes its memberships (cascade), never
 * the other side. (list_id, contact_id) serves member pages, counts and segment `in_list` rules;
 * (contact_id) serves "lists of a contact" and the cascade from contacts.
 */
export const listMembers = sqliteTable(
  "list_members",
  {
    listId: text("list_id")
      .notNull()
      .references(() => lists.id, { onDelete: "cascade" }),
    contactId: text("contact_id")
      .notNull()
      .references(() => contacts.id, { onDelete: "cascade" }),
    workspaceId: workspaceIdColumn(),
    createdAt: createdAtColumn(),
  },
  (t) => [
    primaryKey({ columns: [t.listId, t.contactId] }),
    index("list_members_contact_idx").on(t.contactId),
    index("list_members_workspace_list_idx").on(t.workspaceId, t.listId),
  ],
);

export type ListMemberRow = typeof listMembers.$inferSelect;
