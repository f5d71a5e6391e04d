import { count, desc, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { DbOrTx } from "./client";

/** A page of a list endpoint (`limit` and `offset` already checked by the route). */
export interface Page {
  limit: number;
  offset: number;
}

/**
 * One page of `table`'s rows matching `where`, newest first by `order` (a time column, then the id
 * as tie-break, both descending), and the total matching: the shape of every list endpoint.
 */
export async function newestFirstPage<T extends SQLiteTable>(
  db: DbOrTx,
  table: T,
  where: SQL | undefined,
  order: readonly [SQLiteColumn, SQLiteColumn],
  page: Page,
): Promise<{ rows: T["$inferSelect"][]; total: number }> {
  const rows = (await db
    .select()
    .from(table as SQLiteTable)
    .where(where)
    .orderBy(desc(order[0]), desc(order[1]))
    .limit(page.limit)
    .offset(page.offset)
    .all()) as T["$inferSelect"][];
  const total =
    (
      await db
        .select({ n: count() })
        .from(table as SQLiteTable)
        .where(where)
        .get()
    )?.n ?? 0;
  return { rows, total };
}
