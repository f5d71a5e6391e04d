import { index, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, workspaceIdColumn } from "./columns";

/** The number a contact first got from a pool: later bulk sends from that pool reuse it. */
export const poolStickySenders = sqliteTable(
  "pool_sticky_senders",
  {
    workspaceId: workspaceIdColumn(),
    poolId: text("pool_id").notNull(),
    contactId: text("contact_id").notNull(),
    numberId: text("number_id").notNull(),
    createdAt: createdAtColumn(),
  },
  (t) => [
    primaryKey({ columns: [t.poolId, t.contactId] }),
    index("pool_sticky_senders_workspace_pool_idx").on(t.workspaceId, t.poolId),
    index("pool_sticky_senders_number_idx").on(t.numberId),
  ],
);

export type PoolStickySenderRow = typeof poolStickySenders.$inferSelect;
