import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import {
  boolColumn,
  createdAtColumn,
  idColumn,
  jsonColumn,
  timestampColumn,
  updatedAtColumn,
  workspaceIdColumn,
} from "./columns";

/** 10DLC brands (API.md §3 10DLC). status: PENDING | VERIFIED | UNVERIFIED | FAILED. */
export const tendlcBrands = sqliteTable(
  "tendlc_brands",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    legalName: text("legal_name").notNull(),
    ein: text("ein"),
    entityType: text("entity_type").notNull(),
    vertical: text("vertical").notNull(),
    website: text("website"),
    email: text("email").notNull(),
    phone: text("phone").notNull(),
    address: jsonColumn<Record<string, string>>("address").notNull(),
    status: text("status").notNull(),
    failureReasons: jsonColumn<string[]>("failure_reasons").notNull(),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
    reviewedAt: timestampColumn("reviewed_at"),
  },
  (t) => [index("tendlc_brands_workspace_created_idx").on(t.workspaceId, t.createdAt, t.id)],
);
export type TendlcBrandRow = typeof tendlcBrands.$inferSelect;

/** 10DLC campaigns. status: PENDING | APPROVED | REJECTED; `warnings` are the pre-flight's. */
export const tendlcCampaigns = sqliteTable(
  "tendlc_campaigns",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    brandId: text("brand_id").notNull(),
    useCase: text("use_case").notNull(),
    description: text("description").notNull(),
    messageFlow: text("message_flow").notNull(),
    sampleMessages: jsonColumn<string[]>("sample_messages").notNull(),
    helpMessage: text("help_message").notNull(),
    optoutMessage: text("optout_message").notNull(),
    hasEmbeddedLinks: boolColumn("has_embedded_links").notNull(),
    hasEmbeddedPhone: boolColumn("has_embedded_phone").notNull(),
    numberIds: jsonColumn<string[]>("number_ids").notNull(),
    status: text("status").notNull(),
    rejectionReasons: jsonColumn<string[]>("rejection_reasons").notNull(),
    warnings: jsonColumn<Record<string, unknown>[]>("warnings").notNull(),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
    reviewedAt: timestampColumn("reviewed_at"),
  },
  (t) => [index("tendlc_campaigns_workspace_created_idx").on(t.workspaceId, t.createdAt, t.id)],
);
export type TendlcCampaignRow = typeof tendlcCampaigns.$inferSelect;

/**
 * Which numbers a 10DLC campaign registers (its `number_ids`, one row each), so the sender check
 * finds "in an APPROVED campaign" with an index seek.
 */
export const tendlcCampaignNumbers = sqliteTable(
  "tendlc_campaign_numbers",
  {
    campaignId: text("campaign_id").notNull(),
    numberId: text("number_id").notNull(),
    workspaceId: workspaceIdColumn(),
  },
  (t) => [
    primaryKey({ columns: [t.campaignId, t.numberId] }),
    index("tendlc_campaign_numbers_number_idx").on(t.workspaceId, t.numberId),
  ],
);

/** Short-code requests. status: submitted | in_review | approved | rejected. */
export const shortCodeRequests = sqliteTable(
  "short_code_requests",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    type: text("type").notNull(),
    vanityCode: text("vanity_code"),
    useCase: text("use_case").notNull(),
    monthlyVolume: integer("monthly_volume").notNull(),
    sampleMessages: jsonColumn<string[]>("sample_messages").notNull(),
    status: text("status").notNull(),
    shortCode: text("short_code"),
    rejectionReasons: jsonColumn<string[]>("rejection_reasons").notNull(),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [index("short_code_requests_workspace_created_idx").on(t.workspaceId, t.createdAt, t.id)],
);
export type ShortCodeRequestRow = typeof shortCodeRequests.$inferSelect;
