import { sql } from "drizzle-orm";
import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, jsonColumn, timestampColumn, workspaceIdColumn } from "./columns";

/**
 * The outbox of events written by a process without the webhook fan-out (a script on the file):
 * written in the same transaction as the change they describe, fanned out by the next server's boot
 * sweep, which sets `dispatched_at`. A server fans its events out as they are emitted, into
 * webhook deliveries that carry their own payload, and writes no row here.
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
