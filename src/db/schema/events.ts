import { sql } from "drizzle-orm";
import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, jsonColumn, timestampColumn, workspaceIdColumn } from "./columns";

/**
 * The outbox: every event is written in the same transaction as the change it describes.
 * Webhook delivery reads from here; `dispatched_at` is set once it has been fanned out.
 */
export const events = sqliteTable(
  "events",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    type: text("type").notNull(),
    data: jsonColumn<unknown>("data").notNull(),
    createdAt: createdAtColumn(),
    dispatchedAt: timestampColumn("dispatched_at"),
  },
  (t) => [
    index("events_workspace_idx").on(t.workspaceId, t.createdAt),
    // Partial: events are written dispatched when the fan-out runs as they are emitted; only the
    // boot sweep looks for the others.
    index("events_undispatched_idx").on(t.createdAt).where(sql`dispatched_at IS NULL`),
  ],
);

export type EventRow = typeof events.$inferSelect;
