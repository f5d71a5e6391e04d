import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, workspaceIdColumn } from "./columns";

/**
 * Every HTTP attempt of a webhook delivery, kept for the delivery log: the receiver's status, the
 * first 1 KiB of its answer, how long it took, and the error when there was no answer.
 * status: succeeded | failed.
 */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    webhookId: text("webhook_id").notNull(),
    deliveryId: text("delivery_id").notNull(),
    /** 1 for the first attempt of the delivery. */
    attempt: integer("attempt").notNull(),
    status: text("status").notNull(),
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    createdAt: createdAtColumn(),
  },
  (t) => [
    index("webhook_attempts_workspace_webhook_idx").on(t.workspaceId, t.webhookId, t.createdAt),
    index("webhook_attempts_delivery_idx").on(t.deliveryId),
  ],
);

export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;
