import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, workspaceIdColumn } from "./columns";

/**
 * Numbers kept off every send. Keyed by phone (not contact), so deleting a contact keeps it.
 * reason: manual | opt_out | carrier | complaint.
 */
export const suppressions = sqliteTable(
  "suppressions",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    phoneNumber: text("phone_number").notNull(),
    reason: text("reason").notNull(),
    source: text("source"),
    createdAt: createdAtColumn(),
  },
  (t) => [
    uniqueIndex("suppressions_workspace_phone_idx").on(t.workspaceId, t.phoneNumber),
    index("suppressions_workspace_created_idx").on(t.workspaceId, t.createdAt),
  ],
);

export type SuppressionRow = typeof suppressions.$inferSelect;
