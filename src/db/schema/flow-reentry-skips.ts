import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { workspaceIdColumn } from "./columns";

/**
 * Flow entries refused by the re-entry bound (API.md §7.2: at most 5 entries of a contact into one
 * flow in 24 hours), per flow and UTC day, for the flow's stats (`skipped_reentry`).
 */
export const flowReentrySkips = sqliteTable(
  "flow_reentry_skips",
  {
    flowId: text("flow_id").notNull(),
    workspaceId: workspaceIdColumn(),
    day: integer("day").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.flowId, t.day] })],
);
