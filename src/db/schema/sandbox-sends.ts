import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { idColumn, timestampColumn, workspaceIdColumn } from "./columns";

/**
 * The simulated carrier's ledger: one row per message it accepted, kept so tests and benchmarks
 * can count sends from outside and so pending deliveries survive a restart. Like a carrier that
 * honours an idempotency key (our message id), it sends a message once however often it is handed
 * over: a repeated hand-off only adds to `handoffs` of the first row, so `handoffs > 1` shows that
 * we asked twice.
 */
export const sandboxSends = sqliteTable(
  "sandbox_sends",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    /** Our message id, as handed to the carrier. */
    messageId: text("message_id").notNull(),
    from: text("from_number").notNull(),
    to: text("to_number").notNull(),
    body: text("body").notNull(),
    carrierMessageId: text("carrier_message_id").notNull(),
    acceptedAt: timestampColumn("accepted_at").notNull(),
    /** When the final status is due to be reported. */
    deliverAt: timestampColumn("deliver_at").notNull(),
    /** DELIVERED | UNDELIVERED | FAILED: the status that will be reported. */
    outcome: text("outcome").notNull(),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    /** When the final status was reported; null while pending. */
    deliveredAt: timestampColumn("delivered_at"),
    /** How many times the message was handed over (1 unless a hand-off was repeated). */
    handoffs: integer("handoffs").notNull().default(1),
  },
  (t) => [
    index("sandbox_sends_workspace_accepted_idx").on(t.workspaceId, t.acceptedAt),
    uniqueIndex("sandbox_sends_message_idx").on(t.messageId),
    index("sandbox_sends_pending_idx").on(t.deliverAt).where(sql`delivered_at IS NULL`),
  ],
);

export type SandboxSendRow = typeof sandboxSends.$inferSelect;
