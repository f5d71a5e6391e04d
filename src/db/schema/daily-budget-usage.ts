import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { workspaceIdColumn } from "./columns";

/**
 * What a workspace spent of a daily budget (API.md §7.2), per UTC day (days since 1970-01-01).
 * `budget` names the setting: `one_off_daily_limit` (one-off messages and calls) or
 * `number_orders_daily_limit` (numbers ordered). Counted in the transaction that writes the send
 * or the order, by one conditional upsert, so concurrent requests never overshoot the budget.
 */
export const dailyBudgetUsage = sqliteTable(
  "daily_budget_usage",
  {
    workspaceId: workspaceIdColumn(),
    budget: text("budget").notNull(),
    day: integer("day").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.budget, t.day] })],
);
