import { integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { boolColumn, createdAtColumn, idColumn, jsonColumn, updatedAtColumn } from "./columns";

/** A tenant. Every other row belongs to exactly one workspace; settings live on the row itself. */
export const workspaces = sqliteTable(
  "workspaces",
  {
    id: idColumn(),
    name: text("name").notNull(),
    /** IANA zone used for the workspace's own schedules (quiet hours fall back to the contact's zone). */
    timezone: text("timezone").notNull().default("America/New_York"),
    /** Sending number used when a send names no `from`; null = the oldest active number. */
    defaultNumberId: text("default_number_id"),
    conversionTrackingEnabled: boolColumn("conversion_tracking_enabled").notNull().default(true),
    helpReply: text("help_reply").notNull(),
    optOutReply: text("opt_out_reply").notNull(),
    optInReply: text("opt_in_reply").notNull(),
    quietHoursEnabled: boolColumn("quiet_hours_enabled").notNull().default(true),
    quietStartHour: integer("quiet_start_hour").notNull().default(21),
    quietEndHour: integer("quiet_end_hour").notNull().default(8),
    /** Apply the built-in US state table (src/compliance/state-rules.ts) to marketing sends. */
    stateRules: boolColumn("state_rules").notNull().default(true),
    /** Campaign, flow and one-off sends from US local numbers need an APPROVED 10DLC campaign. */
    requireRegistration: boolColumn("require_registration").notNull().default(false),
    /** Rolling cap on marketing sends per contact (API.md §6.1). */
    frequencyCapEnabled: boolColumn("frequency_cap_enabled").notNull().default(true),
    frequencyCapMaxMessages: integer("frequency_cap_max_messages").notNull().default(3),
    frequencyCapWindowHours: integer("frequency_cap_window_hours").notNull().default(24),
    /** false: only contacts of capped states (with state_rules on); true: everyone. */
    frequencyCapApplyToAll: boolColumn("frequency_cap_apply_to_all").notNull().default(false),
    /** US state / Canadian province codes whose marketing sends are stopped (skipped as state_paused). */
    pausedStates: jsonColumn<string[]>("paused_states").notNull().default([]),
    /**
     * The id a public page names the workspace by (`/t.js?w=<public id>`), never the workspace id.
     * Made with the workspace; a workspace from before it existed gets one the first time it is asked.
     */
    publicId: text("public_id"),
    /** `settings.costs`: what one SMS segment and one call minute cost, for analytics ROI. */
    costSmsSegment: real("cost_sms_segment").notNull().default(0.0079),
    costCallMinute: real("cost_call_minute").notNull().default(0.014),
    costCurrency: text("cost_currency").notNull().default("USD"),
    /** Daily budget of one-off sends (POST /v1/messages and /v1/calls) per UTC day; null = none. */
    oneOffDailyLimit: integer("one_off_daily_limit").default(5000),
    /** Daily budget of numbers ordered per UTC day; null = none. */
    numberOrdersDailyLimit: integer("number_orders_daily_limit").default(50),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [uniqueIndex("workspaces_public_id_idx").on(t.publicId)],
);

export type WorkspaceRow = typeof workspaces.$inferSelect;
