import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, updatedAtColumn, workspaceIdColumn } from "./columns";

/** A set of sending numbers that bulk sends rotate across. Membership is `numbers.pool_id`. */
export const pools = sqliteTable(
  "pools",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    name: text("name").notNull(),
    description: text("description"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [index("pools_workspace_created_idx").on(t.workspaceId, t.createdAt)],
);

export type PoolRow = typeof pools.$inferSelect;
