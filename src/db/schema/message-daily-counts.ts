import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { workspaceIdColumn } from "./columns";

/**
 * Messages per workspace, UTC day of `created_at` (days since 1970-01-01) and status, kept by
 * triggers on every insert, status change and delete of `messages` (migration
 * `message_daily_counts`), whoever writes them. Analytics counts the whole days of a window here
 * and only its partial first and last days from the messages' index.
 */
export const messageDailyCounts = sqliteTable(
  "message_daily_counts",
  {
    workspaceId: workspaceIdColumn(),
    day: integer("day").notNull(),
    status: text("status").notNull(),
    n: integer("n").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.day, t.status] })],
);
