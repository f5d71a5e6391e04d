import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, timestampColumn, updatedAtColumn, workspaceIdColumn } from "./columns";

/**
 * One event on its way to one endpoint. `payload` is the exact JSON body that is signed and sent
 * on every attempt; `message_id` (the event id) is the `webhook-id` header, stable across retries.
 * status: pending | succeeded | failed.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    webhookId: text("webhook_id").notNull(),
    messageId: text("message_id").notNull(),
    eventType: text("event_type").notNull(),
    payload: text("payload").notNull(),
    status: text("status").notNull().default("pending"),
    /** Attempts made so far, replays included. */
    attempts: integer("attempts").notNull().default(0),
    lastResponseStatus: integer("last_response_status"),
    nextAttemptAt: timestampColumn("next_attempt_at"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    index("webhook_deliveries_workspace_webhook_idx").on(t.workspaceId, t.webhookId, t.createdAt),
    // One delivery per subscription and event, whichever server fans the event out.
    uniqueIndex("webhook_deliveries_webhook_message_idx").on(t.webhookId, t.messageId),
  ],
);

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
