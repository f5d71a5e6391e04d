import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, workspaceIdColumn } from "./columns";

/**
 * One row per followed tracked link. The id is the click id handed to the destination as `vcx`.
 * Attribution reads a contact's latest click (`clicks_workspace_contact_idx`); analytics and
 * campaign stats count by time and by campaign.
 */
export const clicks = sqliteTable(
  "clicks",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    offerId: text("offer_id").notNull(),
    code: text("code").notNull(),
    contactId: text("contact_id"),
    campaignId: text("campaign_id"),
    messageId: text("message_id"),
    numberId: text("number_id"),
    createdAt: createdAtColumn(),
  },
  (t) => [
    index("clicks_workspace_created_idx").on(t.workspaceId, t.createdAt),
    index("clicks_workspace_contact_idx").on(t.workspaceId, t.contactId, t.createdAt),
    index("clicks_workspace_campaign_idx").on(t.workspaceId, t.campaignId, t.contactId),
  ],
);

export type ClickRow = typeof clicks.$inferSelect;
