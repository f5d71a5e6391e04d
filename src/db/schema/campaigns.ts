import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import {
  createdAtColumn,
  idColumn,
  jsonColumn,
  timestampColumn,
  updatedAtColumn,
  workspaceIdColumn,
} from "./columns";

/** Who a campaign goes to: resolved into `campaign_recipients` at launch (segments live then). */
export interface CampaignAudience {
  list_ids: string[];
  segment_ids: string[];
  contact_ids: string[];
  exclude_list_ids: string[];
}

/** What an SMS campaign says; with `variants`, each recipient gets one of them (A/B). */
export interface CampaignMessage {
  body: string | null;
  variants: { name: string; body: string; weight: number }[] | null;
}

export interface CampaignQuietHours {
  enabled: boolean;
  start_hour: number;
  end_hour: number;
}

/**
 * A bulk send (API.md §3 Campaigns). status: draft → scheduled → active ⇄ paused → completed, any
 * non-final → canceled. The dispatcher's bookkeeping lives here too: `resolved_at` (every recipient
 * row written), `dispatch_generation` (a resumed campaign's dispatcher; older ones stop) and the
 * throttle window.
 */
export const campaigns = sqliteTable(
  "campaigns",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    name: text("name").notNull(),
    /** sms | voice */
    campaignType: text("campaign_type").notNull(),
    status: text("status").notNull(),
    audience: jsonColumn<CampaignAudience>("audience").notNull(),
    message: jsonColumn<CampaignMessage>("message"),
    say: text("say"),
    agentId: text("agent_id"),
    fromNumber: text("from_number"),
    poolId: text("pool_id"),
    offerId: text("offer_id"),
    /** Branded link domain of its `{{offer_url}}` links; null: the offer's, the default, PUBLIC_URL. */
    linkDomainId: text("link_domain_id"),
    sendAt: timestampColumn("send_at"),
    /** Null: the workspace's quiet hours apply. */
    quietHours: jsonColumn<CampaignQuietHours>("quiet_hours"),
    throttlePerMinute: integer("throttle_per_minute"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
    launchedAt: timestampColumn("launched_at"),
    completedAt: timestampColumn("completed_at"),
    canceledAt: timestampColumn("canceled_at"),
    /** When the last recipient row was written (audience fully resolved). */
    resolvedAt: timestampColumn("resolved_at"),
    dispatchGeneration: integer("dispatch_generation").notNull().default(0),
    /** Start of the current throttle minute and hand-offs counted in it. */
    throttleWindowStart: timestampColumn("throttle_window_start"),
    throttleWindowCount: integer("throttle_window_count").notNull().default(0),
  },
  (t) => [
    index("campaigns_workspace_created_idx").on(t.workspaceId, t.createdAt, t.id),
    index("campaigns_workspace_status_idx").on(t.workspaceId, t.status, t.createdAt),
  ],
);

export type CampaignRow = typeof campaigns.$inferSelect;
