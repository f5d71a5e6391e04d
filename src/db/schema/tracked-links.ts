import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, workspaceIdColumn } from "./columns";

/**
 * Every `/r/<code>` link: an offer's own link (contact, campaign and message null) and the
 * per-recipient links `{{offer_url}}` becomes in a campaign message, so a click knows its contact,
 * campaign, message and sending number. Looked up by its primary key on every click.
 */
export const trackedLinks = sqliteTable(
  "tracked_links",
  {
    code: text("code").primaryKey(),
    workspaceId: workspaceIdColumn(),
    offerId: text("offer_id").notNull(),
    contactId: text("contact_id"),
    campaignId: text("campaign_id"),
    messageId: text("message_id"),
    numberId: text("number_id"),
    createdAt: createdAtColumn(),
  },
  (t) => [index("tracked_links_workspace_offer_idx").on(t.workspaceId, t.offerId)],
);

export type TrackedLinkRow = typeof trackedLinks.$inferSelect;
