import { getTableColumns, type Placeholder, sql } from "drizzle-orm";
import type { SQLiteInsertValue, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { DbOrTx } from "./client";

/**
 * Per-connection memo for drizzle prepared statements (`.prepare()` with `sql.placeholder()`), so
 * a hot query's SQL is built once instead of on every call. Keyed by the drizzle session, which a
 * database and its transactions share: on SQLite a transaction runs on the database's one
 * connection, so a statement prepared once takes part in whatever transaction is open when it
 * runs. A dialect with a connection pool swaps this for transaction-bound queries.
 */
export function preparedPerConnection<D extends DbOrTx, T>(build: (db: D) => T): (db: D) => T {
  const cache = new WeakMap<object, T>();
  return (db) => {
    const session = (db as unknown as { session?: object }).session;
    if (!session) return build(db);
    let statements = cache.get(session);
    if (!statements) {
      statements = build(db);
      cache.set(session, statements);
    }
    return statements;
  };
}

/**
 * `.values()` for a prepared insert of a whole row: every column of `table` bound to a placeholder
 * of the same (property) name, so `statement.run(row)` inserts the row object as is.
 */
export function rowPlaceholders<T extends SQLiteTable>(table: T): SQLiteInsertValue<T> {
  const values: Record<string, Placeholder> = {};
  for (const key of Object.keys(getTableColumns(table))) values[key] = sql.placeholder(key);
  return values as SQLiteInsertValue<T>;
}
