import type { SQL } from "drizzle-orm";

/** Which database a store runs on. */
export type Dialect = "sqlite" | "postgres";

/** A transaction's isolation on PostgreSQL (SQLite's write transactions are serializable). */
export type Isolation = "read committed" | "repeatable read" | "serializable";

/**
 * What the writes of one batch share (see `Store.writeBatched`): `collect` gives every write of the
 * batch the same value for `key` (made by `create` for the first), and `finish` writes it once,
 * in the batch's transaction, after the last write. A write whose part was rolled back may have
 * left its piece in the value: `finish` tolerates references to rows that were never written.
 * On PostgreSQL a batch is one write, so `finish` runs at the end of that write's transaction.
 */
export interface BatchScope<T> {
  collect<V>(key: string, create: () => V, finish: (tx: T, value: V) => Promise<void> | void): V;
}

/** A query to run: a drizzle builder (awaiting it runs it) or raw SQL. */
export type Query<R> = PromiseLike<R[]> | SQL;

/**
 * One store, two databases. Everything above src/db/ reads and writes through this interface and
 * drizzle's query builder, never through a driver.
 *
 * - `db` runs autocommit statements (reads; on SQLite it is read-only, so a write outside a
 *   transaction fails at once instead of slipping past the writer).
 * - `tx(fn)` runs `fn` in one transaction on its handle: committed when `fn` resolves, rolled back
 *   entirely when it throws (the error is rethrown). Every statement of the transaction goes
 *   through the handle. A `tx` inside a transaction of the same store is a savepoint: its error
 *   undoes its own part, and rolls back everything unless the outer `fn` catches it.
 * - `writeBatched(fn)`: a write that may share its commit with the other writes of this moment
 *   (SQLite: one transaction per event-loop turn, one savepoint per write; PostgreSQL: a
 *   transaction of its own). Answered after the commit; a write that throws is undone alone.
 */
export interface Store<D = unknown, T = D> {
  readonly dialect: Dialect;
  readonly db: D;
  tx<R>(fn: (tx: T) => Promise<R> | R, options?: { isolation?: Isolation }): Promise<R>;
  writeBatched<R>(fn: (tx: T, batch: BatchScope<T>) => Promise<R> | R): Promise<R>;
  /** The first row of a query (a select is limited to one row), or undefined. */
  first<R>(query: Query<R>): Promise<R | undefined>;
  /** Every row of a query. */
  rows<R>(query: Query<R>): Promise<R[]>;
  /** Runs SQL text outside any transaction (DDL, settings). */
  exec(sql: string): Promise<void>;
  /** Resolves when the database answers a trivial query; rejects otherwise. */
  ping(): Promise<void>;
  /** Waits for the open transaction, then closes the connections. */
  close(): Promise<void>;
}
