import { index, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, workspaceIdColumn } from "./columns";

/**
 * A recorded conversion (`POST /v1/conversion`), always of a known contact, unique per workspace
 * and `txn` forever. The attributed click (last click within 30 days) and what it came from are
 * copied onto the row, so campaign stats and analytics never join clicks. `event = 'purchase'`
 * rows are what flows with `exit_on_purchase` read.
 */
export const conversions = sqliteTable(
  "conversions",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    txn: text("txn").notNull(),
    event: text("event").notNull(),
    value: real("value"),
    currency: text("currency").notNull(),
    contactId: text("contact_id").notNull(),
    clickId: text("click_id"),
    offerId: text("offer_id"),
    campaignId: text("campaign_id"),
    messageId: text("message_id"),
    numberId: text("number_id"),
    agentId: text("agent_id"),
    flowId: text("flow_id"),
    createdAt: createdAtColumn(),
  },
  (t) => [
    uniqueIndex("conversions_workspace_txn_idx").on(t.workspaceId, t.txn),
    // Analytics sums value over a time window from the index alone.
    index("conversions_workspace_created_idx").on(t.workspaceId, t.createdAt, t.value),
    index("conversions_workspace_contact_idx").on(t.workspaceId, t.contactId, t.event, t.createdAt),
    index("conversions_workspace_campaign_idx").on(t.workspaceId, t.campaignId, t.value),
  ],
);

export type ConversionRow = typeof conversions.$inferSelect;
