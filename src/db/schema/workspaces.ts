import { integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { boolColumn, createdAtColumn, idColumn, updatedAtColumn } from "./columns";

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
    /**
     * The id a public page names the workspace by (`/t.js?w=<public id>`), never the workspace id.
     * Made with the workspace; a workspace from before it existed gets one the first time it is asked.
     */
    publicId: text("public_id"),
    /** `settings.costs`: what one SMS segment and one call minute cost, for analytics ROI. */
    costSmsSegment: real("cost_sms_segment").notNull().default(0.0079),
    costCallMinute: real("cost_call_minute").notNull().default(0.014),
    costCurrency: text("cost_currency").notNull().default("USD"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [uniqueIndex("workspaces_public_id_idx").on(t.publicId)],
);

export type WorkspaceRow = typeof workspaces.$inferSelect;
