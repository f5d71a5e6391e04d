import { AsyncLocalStorage } from "node:async_hooks";
import { is, SQL } from "drizzle-orm";
import { BUSY_TIMEOUT_MS, type Db, type DbHandle, isBusy, openDatabase, withoutBusyWait } from "../client";
import { writeAlone } from "./batch";
import { Mutex } from "./mutex";
import type { BatchScope, Query, Store } from "./types";

export type SqliteStore = Store<Db, Db> & {
  /** The writer's connection (SQLite-only mechanics under src/db/: migrations, backups). */
  readonly writer: DbHandle;
};

/** A transaction in progress on the writer: savepoints nest under it while it is open. */
interface Open {
  open: boolean;
  depth: number;
}

/** Retries of a BEGIN that found the write lock taken before they back off to 1 ms apart. */
const IMMEDIATE_RETRIES = 20;

/**
 * The SQLite store: one writer connection whose transactions run one at a time under an async
 * mutex, and one read-only connection for autocommit reads (a `:memory:` database has one
 * connection, so there reads share the writer's).
 *
 * Transactions are manual `BEGIN IMMEDIATE` … `COMMIT`/`ROLLBACK` rather than bun:sqlite's, whose
 * callback must be synchronous: with an async callback, a second request's microtask would run
 * while the transaction is open and its statements would join it. Under the mutex nothing else
 * writes on the writer until the transaction ends. BEGIN asks for the write lock without waiting
 * (another process or the background thread may hold it) and is tried again on the next turns,
 * for up to BUSY_TIMEOUT_MS, as the group commit does, so a wait never sleeps the thread.
 */
export function createSqliteStore(path: string, options: { cacheMb?: number } = {}): SqliteStore {
  const writer = openDatabase(path, { cacheMb: options.cacheMb });
  const shared = path === ":memory:" || path === "";
  const reader = shared ? writer : openDatabase(path, { cacheMb: options.cacheMb });
  // Autocommit writes through `db` would take the write lock from under the writer's open
  // transaction, and sleep this thread waiting for itself: refused instead.
  if (!shared) reader.sqlite.exec("PRAGMA query_only = ON");
  const mutex = new Mutex();
  const current = new AsyncLocalStorage<Open>();
  const sqlite = writer.sqlite;
  const begin = sqlite.prepare("BEGIN IMMEDIATE");
  const commit = sqlite.prepare("COMMIT");
  const rollback = sqlite.prepare("ROLLBACK");
  let closed = false;

  async function beginImmediate() {
    const since = Date.now();
    for (let retry = 1; ; retry++) {
      try {
        withoutBusyWait(sqlite, () => begin.run());
        return;
      } catch (error) {
        if (!isBusy(error) || Date.now() - since >= BUSY_TIMEOUT_MS) throw error;
      }
      await new Promise((resolve) =>
        retry <= IMMEDIATE_RETRIES ? setImmediate(resolve) : setTimeout(resolve, 1),
      );
    }
  }

  /** Runs `fn` in a savepoint of the open transaction: its error undoes its part and is rethrown. */
  async function savepoint<R>(open: Open, fn: () => Promise<R> | R): Promise<R> {
    const name = `store_${++open.depth}`;
    sqlite.exec(`SAVEPOINT ${name}`);
    try {
      const value = await fn();
      sqlite.exec(`RELEASE ${name}`);
      return value;
    } catch (error) {
      sqlite.exec(`ROLLBACK TO ${name}`);
      sqlite.exec(`RELEASE ${name}`);
      throw error;
    } finally {
      open.depth--;
    }
  }

  /** One transaction on the writer, under the mutex: committed when `fn` resolves, else rolled back. */
  function transaction<R>(fn: (open: Open) => Promise<R> | R): Promise<R> {
    return mutex.run(async () => {
      if (closed) throw new Error("the database is closed");
      await beginImmediate();
      const open: Open = { open: true, depth: 0 };
      try {
        const value = await current.run(open, () => fn(open));
        commit.run();
        return value;
      } catch (error) {
        // A failed COMMIT (or a statement error SQLite ended the transaction for) leaves nothing to roll back.
        if (sqlite.inTransaction) rollback.run();
        throw error;
      } finally {
        open.open = false;
      }
    });
  }

  // writeBatched: the writes asked for during one event-loop turn share one transaction, one
  // savepoint each (the group commit's semantics: ./group-commit.ts).
  type Write = {
    fn: (tx: Db, batch: BatchScope<Db>) => unknown;
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
  };
  let pending: Write[] = [];
  let scheduled = false;

  function flushBatch() {
    scheduled = false;
    const batch = pending;
    pending = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
    transaction(async (open) => {
      const shared = new Map<string, { value: unknown; finish: (tx: Db, value: unknown) => unknown }>();
      const scope: BatchScope<Db> = {
        collect(key, create, finish) {
          let entry = shared.get(key);
          if (!entry) {
            entry = { value: create(), finish: finish as (tx: Db, value: unknown) => unknown };
            shared.set(key, entry);
          }
          return entry.value as never;
        },
      };
      for (const write of batch) {
        try {
          outcomes.push({ ok: true, value: await savepoint(open, () => write.fn(writer.db, scope)) });
        } catch (error) {
          outcomes.push({ ok: false, value: error });
        }
      }
      for (const { value, finish } of shared.values()) await finish(writer.db, value);
    }).then(
      () =>
        batch.forEach((write, i) => {
          const outcome = outcomes[i];
          if (outcome.ok) write.resolve(outcome.value);
          else write.reject(outcome.value);
        }),
      (error) => {
        for (const write of batch) write.reject(error);
      },
    );
  }

  const store: SqliteStore = {
    dialect: "sqlite",
    db: reader.db,
    writer,
    tx(fn) {
      const open = current.getStore();
      if (open?.open) return savepoint(open, () => fn(writer.db));
      return transaction(() => fn(writer.db));
    },
    writeBatched<R>(fn: (tx: Db, batch: BatchScope<Db>) => Promise<R> | R): Promise<R> {
      // Inside a transaction the write joins it (a savepoint): waiting for the next batch would
      // wait for the mutex this transaction holds.
      const open = current.getStore();
      if (open?.open) return savepoint(open, () => writeAlone(writer.db, fn));
      return new Promise<R>((resolve, reject) => {
        pending.push({ fn, resolve: resolve as (value: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flushBatch);
        }
      });
    },
    async first<R>(query: Query<R>) {
      if (is(query, SQL)) return rawRows<R>(writerOrReader(), query)[0];
      const limited = hasLimit(query) ? query.limit(1) : query;
      return ((await limited) as R[])[0];
    },
    async rows<R>(query: Query<R>) {
      if (is(query, SQL)) return rawRows<R>(writerOrReader(), query);
      return (await query) as R[];
    },
    exec(text) {
      const open = current.getStore();
      if (open?.open) {
        sqlite.exec(text);
        return Promise.resolve();
      }
      return mutex.run(() => {
        sqlite.exec(text);
      });
    },
    async ping() {
      reader.sqlite.query("SELECT 1").get();
    },
    async close() {
      if (closed) return;
      await mutex.run(() => {
        closed = true;
      });
      if (reader !== writer) reader.close();
      writer.close();
    },
  };

  /** Raw SQL inside a transaction runs on its handle; outside, on the reader. */
  function writerOrReader(): DbHandle {
    return current.getStore()?.open ? writer : reader;
  }

  return store;
}

/** Raw SQL's rows as objects keyed by column name (drizzle's `db.all(sql)` answers arrays here). */
function rawRows<R>(handle: DbHandle, query: SQL): R[] {
  const dialect = (
    handle.db as unknown as { dialect: { sqlToQuery(q: SQL): { sql: string; params: unknown[] } } }
  ).dialect;
  const compiled = dialect.sqlToQuery(query);
  return handle.sqlite.query(compiled.sql).all(...(compiled.params as never[])) as R[];
}

/** A select builder (it can be limited to one row). */
function hasLimit<R>(
  query: PromiseLike<R[]>,
): query is PromiseLike<R[]> & { limit(n: number): PromiseLike<R[]> } {
  return typeof (query as { limit?: unknown }).limit === "function";
}
