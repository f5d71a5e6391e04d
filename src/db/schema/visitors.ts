import { primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, updatedAtColumn, workspaceIdColumn } from "./columns";

/**
 * A browser the tracking script saw (`vid`, a UUID the script makes), tied to a contact by a
 * click (`vcx`) or by `/t/identify`. Per workspace: the same vid on two workspaces' pages is two
 * visitors.
 */
export const visitors = sqliteTable(
  "visitors",
  {
    workspaceId: workspaceIdColumn(),
    vid: text("vid").notNull(),
    contactId: text("contact_id"),
    /** The latest click the visitor landed from. */
    clickId: text("click_id"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.vid] })],
);

export type VisitorRow = typeof visitors.$inferSelect;
