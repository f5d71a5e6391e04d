import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, timestampColumn, updatedAtColumn, workspaceIdColumn } from "./columns";

/**
 * Every SMS in or out. Outbound status: PENDING → QUEUED → SENT → DELIVERED | UNDELIVERED | FAILED;
 * inbound messages are RECEIVED. `sender` says who wrote an outbound message (campaign, flow, agent,
 * human, system) or `contact` for inbound. Segment activity rules read direction + created_at.
 */
export const messages = sqliteTable(
  "messages",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    /** inbound | outbound */
    direction: text("direction").notNull(),
    /** contact | agent | human | campaign | flow | system | api */
    sender: text("sender").notNull(),
    fromNumber: text("from_number").notNull(),
    toNumber: text("to_number").notNull(),
    body: text("body").notNull(),
    status: text("status").notNull(),
    segments: integer("segments").notNull(),
    /** GSM-7 | UCS-2 */
    encoding: text("encoding").notNull(),
    contactId: text("contact_id"),
    conversationId: text("conversation_id"),
    campaignId: text("campaign_id"),
    /** A call's entry in the thread (status CALL, not an SMS): the call it reports. */
    callId: text("call_id"),
    /** An agent's follow-up: a marketing send the frequency cap counts (API.md §6.1), like a campaign's. */
    followup: integer("followup", { mode: "boolean" }).notNull().default(false),
    /** The workspace number that sends (outbound) or received (inbound) the message. */
    numberId: text("number_id"),
    carrierMessageId: text("carrier_message_id"),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    /**
     * Set (and committed) right before the carrier hand-off. A job that finds it set from an earlier
     * attempt asks the carrier for the send by our id instead of sending again.
     */
    handoffStartedAt: timestampColumn("handoff_started_at"),
    /** Deferred (quiet hours) until this instant; null unless deferred (API.md §6.1). */
    sendAt: timestampColumn("send_at"),
    createdAt: createdAtColumn(),
    sentAt: timestampColumn("sent_at"),
    deliveredAt: timestampColumn("delivered_at"),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    index("messages_workspace_contact_idx").on(t.workspaceId, t.contactId, t.direction, t.createdAt),
    index("messages_workspace_conversation_idx").on(t.workspaceId, t.conversationId, t.createdAt),
    // A campaign writes one message per recipient (its dispatch step is the only writer of
    // campaign_id): a second step that overlapped the first fails here instead of sending twice.
    // It also serves every read of a campaign's messages (`campaign_id = ?` implies the index's
    // condition on both databases); a (workspace_id, campaign_id) index beside it only cost each
    // write of a message one more index entry.
    uniqueIndex("messages_campaign_contact_idx")
      .on(t.campaignId, t.contactId)
      .where(sql`campaign_id IS NOT NULL`),
    index("messages_workspace_status_idx").on(t.workspaceId, t.status, t.createdAt),
    // Only messages the carrier has named: a message is written, and handed off, before its
    // carrier id is known, and each of those writes would otherwise add an entry under NULL.
    index("messages_carrier_id_idx").on(t.carrierMessageId).where(sql`carrier_message_id IS NOT NULL`),
    // Analytics (overview, timeseries, numbers) count from this index alone, never the table; it
    // also serves every walk of a workspace's messages in created_at order (listings, lookbacks).
    index("messages_workspace_analytics_idx").on(
      t.workspaceId,
      t.createdAt,
      t.direction,
      t.status,
      t.numberId,
      t.segments,
    ),
  ],
);

export type MessageRow = typeof messages.$inferSelect;
