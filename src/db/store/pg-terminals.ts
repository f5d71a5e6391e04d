import { PgDatabase, PgDeleteBase, PgInsertBase, PgSelectBase, PgUpdateBase } from "drizzle-orm/pg-core";
import { PostgresJsPreparedQuery, PostgresJsSession, PostgresJsTransaction } from "drizzle-orm/postgres-js";

/**
 * The domain reads and writes through drizzle's query builder with the terminals of its SQLite
 * API, awaited: `await q.get()` (the first row), `await q.all()` (every row), `await q.run()`
 * (`{ changes }`), `await q.values()` (rows as arrays), on builders, on prepared statements
 * (`q.prepare()` then `.get(params)`) and on raw SQL (`db.all(sql)`). PostgreSQL's builders
 * answer the same terminals through this module, so one domain runs on both databases. A
 * prepared statement needs no name here: postgres.js prepares each SQL text once per connection.
 */

interface Executable {
  execute(placeholders?: Record<string, unknown>): Promise<unknown>;
}

/** The number of rows a write changed, from postgres.js's answer (its `count`) or its rows. */
function changesOf(result: unknown): { changes: number } {
  const count = (result as { count?: number } | null)?.count;
  if (typeof count === "number") return { changes: count };
  return { changes: Array.isArray(result) ? result.length : 0 };
}

function rowsOf(result: unknown): Record<string, unknown>[] {
  return Array.isArray(result) ? (result as Record<string, unknown>[]) : [];
}

function terminalsOn(target: Record<string, unknown>, executable: (self: never) => Executable) {
  target.all = function (this: never, placeholders?: Record<string, unknown>) {
    return executable(this)
      .execute(placeholders)
      .then((result) => rowsOf(result));
  };
  target.get = function (this: never, placeholders?: Record<string, unknown>) {
    return executable(this)
      .execute(placeholders)
      .then((result) => rowsOf(result)[0]);
  };
  target.run = function (this: never, placeholders?: Record<string, unknown>) {
    return executable(this).execute(placeholders).then(changesOf);
  };
  target.values = function (this: never, placeholders?: Record<string, unknown>) {
    return executable(this)
      .execute(placeholders)
      .then((result) => rowsOf(result).map((row) => Object.values(row)));
  };
}

/** What runs once the outermost transaction of a session has ended, by the transaction's session. */
const pendingAfterCommit = new WeakMap<object, (() => void)[]>();

/**
 * Runs `work` once `db`'s transaction has ended (at once outside a PostgreSQL transaction, and on
 * SQLite, whose transactions run alone). For signals to other connections, such as a worker's
 * wake-up for a job just enqueued: on PostgreSQL another connection sees the row only after the
 * commit. A savepoint's work waits for its outermost transaction; it may run after a rollback too
 * (a wake-up that finds nothing).
 */
export function afterCommit(db: unknown, work: () => void): void {
  const session = (db as { session?: object } | null)?.session;
  const pending = session ? pendingAfterCommit.get(session) : undefined;
  if (pending) pending.push(work);
  else work();
}

function runAll(pending: (() => void)[]) {
  for (const work of pending.splice(0)) work();
}

/** Transactions (and savepoints) of the postgres-js driver collect `afterCommit` work. */
function collectAfterCommit() {
  type Tx = { session: object };
  type Begin = (this: { session?: object }, fn: (tx: Tx) => unknown, config?: unknown) => Promise<unknown>;
  const session = PostgresJsSession.prototype as unknown as { transaction: Begin };
  const begin = session.transaction;
  session.transaction = function (fn, config) {
    const pending: (() => void)[] = [];
    const outcome = begin.call(
      this,
      (tx) => {
        pendingAfterCommit.set(tx.session, pending);
        return fn(tx);
      },
      config,
    );
    return outcome.finally(() => runAll(pending));
  };
  const transaction = PostgresJsTransaction.prototype as unknown as { transaction: Begin };
  const savepoint = transaction.transaction;
  transaction.transaction = function (fn) {
    const pending = this.session ? pendingAfterCommit.get(this.session) : undefined;
    return savepoint.call(this, (tx) => {
      if (pending) pendingAfterCommit.set(tx.session, pending);
      return fn(tx);
    });
  };
}

/**
 * Statements with more parameters than this run unnamed (parsed and planned each time): their text
 * usually varies with a list's length, and each text would stay prepared on its connection.
 */
export const MAX_PREPARED_PARAMS = 32;

/**
 * Every statement of up to MAX_PREPARED_PARAMS parameters is a named prepared statement on its
 * connection, not only those built with `.prepare()`: builder terminals (`.all()`, `.get()` …)
 * and raw SQL (`db.all(sql)`, the JSON-row inserts and updates) too. drizzle runs a statement
 * without a name unprepared, and postgres.js then sends each run as Parse and Describe, waits for
 * the answer, then Bind and Execute: two round trips, and the server parses and plans the text
 * every time. Prepared, a statement is described once per connection and then costs one round
 * trip with its plan cached. postgres.js keeps a connection's statements until the connection is
 * recycled (every 30–60 minutes) and prepares again after a schema change.
 */
function prepareByDefault() {
  type PrepareQuery = (
    this: unknown,
    query: { params: unknown[] },
    fields: unknown,
    name?: string,
    ...rest: unknown[]
  ) => unknown;
  const session = PostgresJsSession.prototype as unknown as { prepareQuery: PrepareQuery };
  const prepareQuery = session.prepareQuery;
  session.prepareQuery = function (query, fields, name, ...rest) {
    const named = name ?? (query.params.length <= MAX_PREPARED_PARAMS ? "" : undefined);
    return prepareQuery.call(this, query, fields, named, ...rest);
  };
}

let installed = false;

/** Gives PostgreSQL's builders, prepared statements and database the SQLite API's terminals. */
export function installPgTerminals(): void {
  if (installed) return;
  installed = true;
  collectAfterCommit();
  prepareByDefault();
  for (const builder of [PgSelectBase, PgInsertBase, PgUpdateBase, PgDeleteBase]) {
    const prototype = builder.prototype as unknown as Record<string, unknown>;
    terminalsOn(prototype, (self: { _prepare(name?: string): Executable }) => self._prepare());
    // pg-core asks for a statement name; postgres.js prepares by SQL text, so none is needed.
    const prepare = prototype.prepare as (this: unknown, name?: string) => unknown;
    prototype.prepare = function (this: unknown, name?: string) {
      return prepare.call(this, name ?? "");
    };
  }
  terminalsOn(
    PostgresJsPreparedQuery.prototype as unknown as Record<string, unknown>,
    (self: Executable) => self,
  );
  // Raw SQL on the database or a transaction: `db.all(sql)`, `db.get(sql)`, `db.run(sql)`, `db.values(sql)`.
  const database = PgDatabase.prototype as unknown as Record<string, unknown>;
  const raw = (self: { execute(query: unknown): Promise<unknown> }, query: unknown) => self.execute(query);
  database.all = function (this: never, query: unknown) {
    return raw(this, query).then(rowsOf);
  };
  database.get = function (this: never, query: unknown) {
    return raw(this, query).then((result) => rowsOf(result)[0]);
  };
  database.run = function (this: never, query: unknown) {
    return raw(this, query).then(changesOf);
  };
  database.values = function (this: never, query: unknown) {
    return raw(this, query).then((result) => rowsOf(result).map((row) => Object.values(row)));
  };
}
