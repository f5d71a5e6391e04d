import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { boolColumn, createdAtColumn, idColumn, updatedAtColumn } from "./columns";

/** A tenant. Every other row belongs to exactly one workspace; settings live on the row itself. */
export const workspaces = sqliteTable("workspaces", {
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
  createdAt: createdAtColumn(),
  updatedAt: updatedAtColumn(),
});

export type WorkspaceRow = typeof workspaces.$inferSelect;
