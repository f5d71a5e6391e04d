import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { workspaceIdColumn } from "./columns";

/**
 * Sends counted against a number's `daily_limit`, per local day of the number (`YYYY-MM-DD` in
 * `numbers.timezone`). A send is counted when it is accepted (reserved), not when it is delivered.
 */
export const numberDailyUsage = sqliteTable(
  "number_daily_usage",
  {
    numberId: text("number_id").notNull(),
    workspaceId: workspaceIdColumn(),
    day: text("day").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.numberId, t.day] }),
    index("number_daily_usage_workspace_day_idx").on(t.workspaceId, t.day),
  ],
);

export type NumberDailyUsageRow = typeof numberDailyUsage.$inferSelect;
