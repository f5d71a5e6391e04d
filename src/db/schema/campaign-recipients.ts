import { sql } from "drizzle-orm";
import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAtColumn, timestampColumn, workspaceIdColumn } from "./columns";

/**
 * One row per contact of a launched campaign (unique per campaign + contact, so resolution can be
 * replayed after a crash without duplicates). outcome: queued | deferred | sent | delivered |
 * failed | skipped; `reason` says why for skipped, deferred and failed.
 *
 * Internal columns: `due_at` is when the dispatcher next looks at the row; `handed_off_at`,
 * `replied_at` and `opted_out_at` feed `stats` (sent, replied, opted_out), which are counted from
 * the covering index `campaign_recipients_stats_idx` without reading the table.
 */
export const campaignRecipients = sqliteTable(
  "campaign_recipients",
  {
    campaignId: text("campaign_id").notNull(),
    contactId: text("contact_id").notNull(),
    workspaceId: workspaceIdColumn(),
    phoneNumber: text("phone_number").notNull(),
    /** Variant name (A/B), null without variants. */
    variant: text("variant"),
    outcome: text("outcome").notNull(),
    reason: text("reason"),
    /** Deferred (quiet hours) or capped (daily_limit) until this instant; null otherwise. */
    sendAt: timestampColumn("send_at"),
    dueAt: timestampColumn("due_at").notNull(),
    messageId: text("message_id"),
    callId: text("call_id"),
    handedOffAt: timestampColumn("handed_off_at"),
    repliedAt: timestampColumn("replied_at"),
    optedOutAt: timestampColumn("opted_out_at"),
    createdAt: createdAtColumn(),
  },
  (t) => [
    uniqueIndex("campaign_recipients_campaign_contact_idx").on(t.campaignId, t.contactId),
    index("campaign_recipients_stats_idx").on(
      t.campaignId,
      t.outcome,
      t.variant,
      t.handedOffAt,
      t.repliedAt,
      t.optedOutAt,
    ),
    // The dispatcher's queue: rows not yet handed off (queued without a message or call, or deferred with
    // or without their waiting QUEUED message), by due time; it shrinks as the run goes.
    index("campaign_recipients_pending_idx")
      .on(t.campaignId, t.dueAt, t.contactId)
      .where(sql`(message_id IS NULL AND call_id IS NULL AND outcome = 'queued') OR outcome = 'deferred'`),
    // Replies and opt-outs find the recipient rows of a contact.
    index("campaign_recipients_workspace_contact_idx").on(t.workspaceId, t.contactId),
  ],
);

export type CampaignRecipientRow = typeof campaignRecipients.$inferSelect;
