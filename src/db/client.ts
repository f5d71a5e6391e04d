import { Database } from "bun:sqlite";
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { sql, TransactionRollbackError } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { PreparedQuery } from "drizzle-orm/bun-sqlite/session";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { bindParametersOnce } from "./bound-parameters";
import { createCommitWatch } from "./commit-watch";
import { Mutex } from "./store/mutex";

/** What a write statement answers (`.run()`): the rows it changed. */
export interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

/**
 * The database handle the domain holds. Its API is drizzle's asynchronous one: every statement is
 * awaited, and transactions take async callbacks (`await db.transaction(async (tx) => …)`), so the
 * same code runs on a database reached over the network.
 */
export type Db = BaseSQLiteDatabase<"async", RunResult>;
/** A transaction handle; domain functions that write take `Db | Tx` so callers can compose them. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type DbOrTx = Db | Tx;
/**
 * The bun:sqlite connection, by type, for the code outside src/db/ that still holds one (the key
 * authenticator's last-use touch). Only src/db/ imports the driver itself.
 */
export type SqliteConnection = Database;

/** The bun:sqlite connection a drizzle database or transaction runs on. */
export function sqliteOf(db: DbOrTx): Database {
  return (db as unknown as { session: { client: Database } }).session.client;
}

export interface DbHandle {
  db: Db;
  sqlite: Database;
  close(): void;
}

export class DatabaseOpenError extends Error {}

/**
 * Compiled statements kept per connection; drizzle's SQL text is stable for a given query shape, and
 * the whole service uses a few hundred shapes (about 60 under the soak workload).
 */
export const STATEMENT_CACHE_SIZE = 500;
/**
 * Statements with more parameters than this are not kept: they are lists spelled one placeholder
 * per value (`IN (?, ?, …)`, multi-row inserts), a new SQL text for every length, and a compiled
 * list of 1,000 values holds ~100 KB. Lists on hot paths bind one JSON parameter instead
 * (`inJsonList` in ./dialect).
 */
export const MAX_CACHED_PARAMS = 64;

/**
 * drizzle's bun-sqlite driver compiles every query it runs (`client.prepare(sql)`), which costs more
 * than running it. This keeps compiled statements per SQL text (least recently used beyond
 * STATEMENT_CACHE_SIZE are dropped, and so are statements over MAX_CACHED_PARAMS parameters), so a
 * query shape is compiled once per connection. Safe because SQLite calls are synchronous: a
 * statement is never used by two callers at once (no code here holds an open `iterate()` across
 * another query of the same text).
 *
 * Parameters that SQLite's planner would read (a join's `= ?`, `LIMIT ?`, a one-table `= ?` that
 * no partial index depends on) are compiled as `+?` (./bound-parameters), so SQLite does not
 * compile the statement again on every run.
 *
 * Answers a function that finalizes the cached statements. It runs before the connection closes:
 * with a statement left unfinalized, `close()` leaves the connection open, and Bun checkpoints it
 * when the process exits, holding the WAL write lock meanwhile, so the writes of a server on the
 * same file fail with "database is locked" while a CLI command ends.
 */
function cacheCompiledStatements(sqlite: Database): () => void {
  const compile = sqlite.prepare.bind(sqlite);
  const query = sqlite.query.bind(sqlite);
  sqlite.query = ((sql: string) => query(bindParametersOnce(sql))) as Database["query"];
  const cache = new Map<string, ReturnType<Database["prepare"]>>();
  sqlite.prepare = ((sql: string, ...rest: unknown[]) => {
    if (rest.length > 0)
      return (compile as (...args: unknown[]) => unknown)(bindParametersOnce(sql), ...rest);
    let statement = cache.get(sql);
    if (statement) {
      cache.delete(sql);
    } else {
      statement = compile(bindParametersOnce(sql));
      if (statement.paramsCount > MAX_CACHED_PARAMS) return statement;
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    }
    cache.set(sql, statement);
    return statement;
  }) as Database["prepare"];
  return () => {
    for (const statement of cache.values()) statement.finalize();
    cache.clear();
  };
}

/** A transaction in progress on a connection: savepoints nest under it while it is open. */
interface Open {
  open: boolean;
  depth: number;
}

/**
 * Retries of a BEGIN that found the write lock taken, on the next turns, before the next ones wait
 * for a write transaction of this process to end (at most 1 ms each).
 */
const IMMEDIATE_RETRIES = 20;

/**
 * The write-lock signal of this process's SQLite connections: a counter each of them moves (and
 * notifies) when it ends a write transaction. A BEGIN that found the lock taken, and retried on the
 * next turns in vain, waits on it: it tries again the moment the holder is done instead of polling
 * 1 ms apart (idle time between the request thread's group commits and the background thread's
 * transactions). The background thread adopts the request thread's buffer (startBackgroundThread
 * passes it). Another process's transactions do not signal: the wait ends after 1 ms anyway.
 */
let writeSignal = new Int32Array(new SharedArrayBuffer(4));

/** The buffer of this process's write-lock signal, for a thread to adopt. */
export function writeSignalBuffer(): SharedArrayBuffer {
  return writeSignal.buffer as SharedArrayBuffer;
}

/** Makes this thread's connections signal and wait on the buffer of another thread's signal. */
export function adoptWriteSignal(buffer: SharedArrayBuffer): void {
  writeSignal = new Int32Array(buffer);
}

function signalWriteEnded(): void {
  Atomics.add(writeSignal, 0, 1);
  Atomics.notify(writeSignal, 0);
}

/** Resolves once a write transaction of this process ended after `seen` was read, or after 1 ms. */
async function writeEndedSince(seen: number): Promise<void> {
  const wait = Atomics.waitAsync(writeSignal, 0, seen, 1);
  if (wait.async) await wait.value;
}

/** The statement-running methods of drizzle's prepared queries (and of raw `db.run(sql)` & co.). */
const EXECUTORS = ["run", "all", "get", "values"] as const;

/**
 * Gives the connection's drizzle database asynchronous transactions, one at a time.
 *
 * bun:sqlite runs statements synchronously and its transactions take synchronous callbacks. With
 * async callbacks, another request's statements would run while a transaction is open on the
 * connection and join it. So:
 *
 * - `db.transaction(fn)` is a manual `BEGIN IMMEDIATE` … `COMMIT`/`ROLLBACK` under an async mutex.
 *   Inside it (the callback and everything it awaits), `tx.transaction()` and `db.transaction()`
 *   are savepoints. BEGIN IMMEDIATE takes the write lock at once (a deferred transaction that
 *   reads, then writes, cannot wait for a lock another process took in between). When another
 *   connection (the background thread, another process) holds the lock, BEGIN is tried again on
 *   the next turns for up to BUSY_TIMEOUT_MS, so a wait never sleeps the thread.
 * - A statement outside a transaction runs at once when no transaction is open or waiting (the
 *   common case, as fast as before), else after them, in order.
 *
 * The transaction handle is the database itself: on one connection, every statement run inside
 * the callback belongs to the transaction.
 */
function asyncTransactions(db: Db, sqlite: Database) {
  const mutex = new Mutex();
  const current = new AsyncLocalStorage<Open>();
  const begin = sqlite.prepare("BEGIN IMMEDIATE");
  const commit = sqlite.prepare("COMMIT");
  const rollback = sqlite.prepare("ROLLBACK");
  let direct = 0;

  const inTransaction = () => direct > 0 || current.getStore()?.open === true;

  /** Runs one statement now when that is safe, else after the open and waiting transactions. */
  function statement<R>(self: unknown, run: (...args: never[]) => R, args: unknown[]): R | Promise<R> {
    if (inTransaction() || mutex.idle) return runDirectly(self, run, args);
    return mutex.run(() => runDirectly(self, run, args));
  }

  function runDirectly<R>(self: unknown, run: (...args: never[]) => R, args: unknown[]): R {
    direct++;
    try {
      return run.apply(self, args as never[]);
    } finally {
      direct--;
    }
  }

  async function beginImmediate() {
    const since = Date.now();
    for (let retry = 1; ; retry++) {
      const seen = Atomics.load(writeSignal, 0);
      try {
        withoutBusyWait(sqlite, () => begin.run());
        return;
      } catch (error) {
        if (!isBusy(error) || Date.now() - since >= BUSY_TIMEOUT_MS) throw error;
      }
      if (retry <= IMMEDIATE_RETRIES) await new Promise((resolve) => setImmediate(resolve));
      else await writeEndedSince(seen);
    }
  }

  async function savepoint<R>(open: Open, fn: () => Promise<R> | R): Promise<R> {
    const name = `sp${++open.depth}`;
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

  function transaction<R>(fn: (tx: Db) => Promise<R> | R): Promise<R> {
    const open = current.getStore();
    if (open?.open) return savepoint(open, async () => await fn(db));
    return mutex.run(async () => {
      await beginImmediate();
      const opened: Open = { open: true, depth: 0 };
      try {
        const value = await current.run(opened, async () => await fn(db));
        commit.run();
        return value;
      } catch (error) {
        // A failed COMMIT (or an error SQLite ended the transaction for) leaves nothing to roll back.
        if (sqlite.inTransaction) rollback.run();
        throw error;
      } finally {
        opened.open = false;
        signalWriteEnded();
      }
    });
  }

  const session = (db as unknown as { session: Record<string, unknown> }).session;
  const prepareQuery = (
    session.prepareQuery as (...args: unknown[]) => Record<string | symbol, unknown>
  ).bind(session);
  const connection: Connection = { statement, inTransaction };
  session.prepareQuery = (...args: unknown[]) => {
    const prepared = prepareQuery(...args);
    prepared[RUNS_ON] = connection;
    return prepared;
  };
  (db as unknown as { transaction: unknown }).transaction = transaction;
  (db as unknown as { rollback: unknown }).rollback = () => {
    throw new TransactionRollbackError();
  };
  return connection;
}

/** The connection a prepared query runs on (set by its session, see asyncTransactions). */
const RUNS_ON = Symbol("runs on");

/**
 * Every prepared query's statement-running methods go through its connection's `statement`, once
 * for all (the prototype's): at once when no transaction is open or waiting, else after them. The
 * methods call each other (`all` reads through `values`): those inner calls run directly, inside
 * the statement already under way.
 */
function routePreparedQueries() {
  const prototype = PreparedQuery.prototype as unknown as Record<string | symbol, unknown>;
  for (const name of EXECUTORS) {
    const run = prototype[name] as (...args: never[]) => unknown;
    prototype[name] = function (this: Record<symbol, Connection | undefined>, ...args: unknown[]) {
      const connection = this[RUNS_ON];
      return connection ? connection.statement(this, run, args) : run.apply(this, args as never[]);
    };
  }
}
routePreparedQueries();

interface Connection {
  statement<R>(self: unknown, run: (...args: never[]) => R, args: unknown[]): R | Promise<R>;
  inTransaction(): boolean;
}

const connections = new WeakMap<object, Connection>();

/**
 * Runs raw work on the connection (bun:sqlite statements of src/db) as a drizzle statement runs:
 * at once inside the open transaction or when none is open, else after the transactions.
 */
export function onConnection<R>(db: DbOrTx, work: () => R): R | Promise<R> {
  const connection = connections.get((db as unknown as { session: object }).session);
  return connection ? connection.statement(undefined, work, []) : work();
}

/** Whether the caller runs inside a transaction open on this database's connection. */
export function inTransaction(db: DbOrTx): boolean {
  return connections.get((db as unknown as { session: object }).session)?.inTransaction() === true;
}

/** The open failure as one line for the operator. */
function openError(path: string, error: unknown): DatabaseOpenError {
  const message = (error as Error).message;
  if (/not a database|file is encrypted/i.test(message)) {
    return new DatabaseOpenError(`${path} is not an SQLite database`);
  }
  if (/readonly|read-only/i.test(message)) {
    return new DatabaseOpenError(`${path} is read-only: the server needs to write to it (check permissions)`);
  }
  return new DatabaseOpenError(`cannot open database ${path}: ${message}`);
}

/**
 * Checkpoints from this connection, PASSIVE (as much of the WAL as no reader still needs, without
 * waiting for readers or blocking writers), every `intervalMs` in which another connection
 * committed. This connection's own commits still checkpoint at wal_autocheckpoint, so a second
 * spent on its own writes (a campaign) adds no copy. For the background thread's connection: it
 * copies the request thread's commits back, so the request thread's own checkpoint (at the same
 * 10,000 pages) finds little left to copy.
 *
 * The request thread keeps that checkpoint of its own: SQLite starts the WAL over only when a
 * writer begins while every frame is already copied, which a PASSIVE checkpoint on another thread
 * never achieves while the request thread commits every few hundred microseconds (a burst of
 * redirects). With no checkpoints there at all the WAL grew to 1.7 GB in 40 s of redirects, and
 * every read slowed with it (each page is looked up in the WAL's index first). Its checkpoint runs
 * between two of its own commits, so it can finish, and the next write starts the file over.
 */
export function startCheckpoints(sqlite: Database, intervalMs = 1000): { stop(): void } {
  const checkpoint = sqlite.prepare("PRAGMA wal_checkpoint(PASSIVE)");
  const othersCommitted = createCommitWatch(sqlite);
  let seen = othersCommitted();
  const timer = setInterval(() => {
    try {
      const version = othersCommitted();
      if (version === seen) return;
      seen = version;
      checkpoint.get();
    } catch {
      // Busy or closing: the next round checkpoints.
    }
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      checkpoint.finalize();
    },
  };
}

/** How long a write waits for another connection's write to finish (SQLite sleeps the thread). */
export const BUSY_TIMEOUT_MS = 5000;

/** Whether SQLite refused for a lock another connection holds (SQLITE_BUSY and its variants). */
export function isBusy(error: unknown): boolean {
  const code =
    (error as { code?: string; cause?: { code?: string } }).code ??
    (error as { cause?: { code?: string } }).cause?.code;
  return code?.startsWith("SQLITE_BUSY") === true;
}

/**
 * Runs `work` with SQLite's busy handler off: a statement that needs the write lock while another
 * connection (the background thread, another process) holds it fails at once with SQLITE_BUSY
 * instead of sleeping this thread (1 ms and more, and every request it serves with it). The
 * connection waits for locks again afterwards.
 */
export function withoutBusyWait<T>(sqlite: Database, work: () => T): T {
  sqlite.query("PRAGMA busy_timeout = 0").run();
  try {
    return work();
  } finally {
    sqlite.query(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`).run();
  }
}

/**
 * Runs a write that may be skipped rather than wait (`withoutBusyWait`). Answers whether it ran.
 * For bookkeeping a later request can redo (a key's last use), never for anything that must be
 * written.
 */
export function writeUnlessBusy(sqlite: Database, write: () => void): boolean {
  try {
    withoutBusyWait(sqlite, write);
    return true;
  } catch (error) {
    if (isBusy(error)) return false;
    throw error;
  }
}

/** Opens the file and reads its schema once: a file that is not SQLite fails here, clearly. */
function connect(path: string, options: { readonly?: boolean }): Database {
  let sqlite: Database;
  try {
    sqlite = new Database(path, options.readonly ? { readonly: true } : { create: true, readwrite: true });
  } catch (error) {
    throw new DatabaseOpenError(`cannot open database ${path}: ${(error as Error).message}`);
  }
  try {
    sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    sqlite.query("SELECT count(*) FROM sqlite_master").get();
  } catch (error) {
    sqlite.close();
    throw openError(path, error);
  }
  return sqlite;
}

/** Which file a path names right now (device and inode), or undefined when there is none. */
function fileIdentity(path: string): string | undefined {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat ? `${stat.dev}:${stat.ino}` : undefined;
}

/**
 * Opens the SQLite file with the pragmas the service relies on: WAL (readers never block the
 * writer), synchronous=NORMAL (durable across process crashes), foreign keys, and a busy timeout
 * so the CLI and the server can share the file.
 */
export function openDatabase(path: string, options: { readonly?: boolean; cacheMb?: number } = {}): DbHandle {
  if (path !== ":memory:") {
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (error) {
      throw new DatabaseOpenError(`cannot create the folder for ${path}: ${(error as Error).message}`);
    }
  }
  let sqlite: Database;
  for (let attempt = 1; ; attempt++) {
    const before = path === ":memory:" ? undefined : fileIdentity(path);
    sqlite = connect(path, options);
    // `outreach restore` renames the restored file onto the path while it holds the old file
    // locked, so a process that opened the path just before the rename got the old file and was
    // held at its first read until the rename was done. Nothing has been written yet: open again.
    if (before === undefined || before === fileIdentity(path) || attempt === 3) break;
    sqlite.close();
  }
  try {
    if (!options.readonly) {
      sqlite.exec("PRAGMA journal_mode = WAL");
      sqlite.exec("PRAGMA synchronous = NORMAL");
      // Checkpoint (copy the WAL back, with its fsyncs) every ~40 MB instead of every ~4 MB: each
      // accepted message rewrites ~45 pages, mostly the same hot index pages, copied once per checkpoint.
      sqlite.exec("PRAGMA wal_autocheckpoint = 10000");
    }
    sqlite.exec("PRAGMA foreign_keys = ON");
    // Savepoint and statement journals (a copy of each page a group-commit write or a statement
    // inside a transaction changes, to undo it alone) stay in memory. By default SQLite moves them
    // to a temporary file past 64 KiB and then writes every journaled page there, one pwrite each,
    // until the transaction ends: a campaign step wrote ~5 such pages for every WAL frame. Sorts
    // too large for the page cache and temporary tables are kept in memory as well.
    sqlite.exec("PRAGMA temp_store = MEMORY");
    // The page cache (SQLite's default is 2 MB): a campaign's writes touch the same hot index
    // pages of messages, jobs and recipients; measured 1,228 → 1,395 msg/s at 16 MB.
    if (options.cacheMb !== undefined)
      sqlite.exec(`PRAGMA cache_size = -${Math.round(options.cacheMb * 1024)}`);
    if (!options.readonly) {
      // A write probe (rewrites the header with its own value): a read-only file fails here, at
      // start, instead of on the first write.
      const version =
        sqlite.query<{ user_version: number }, []>("PRAGMA user_version").get()?.user_version ?? 0;
      sqlite.exec(`PRAGMA user_version = ${Number(version)}`);
    }
  } catch (error) {
    sqlite.close();
    throw openError(path, error);
  }
  const finalizeStatements = cacheCompiledStatements(sqlite);
  const db = drizzle({ client: sqlite }) as unknown as Db;
  connections.set((db as unknown as { session: object }).session, asyncTransactions(db, sqlite));
  return {
    db,
    sqlite,
    close: () => {
      finalizeStatements();
      sqlite.close();
    },
  };
}

/**
 * Things kept per database rather than per statement session: on SQLite a connection (its
 * transactions run on it), on PostgreSQL the database (a transaction has a session of its
 * own, so keying by session would make a new one per transaction).
 */
const perDatabase = new WeakMap<object, Map<unknown, unknown>>();
/** Registered by the PostgreSQL store for its database and transactions: the process's change counter. */
const pgChangeWatches = new WeakMap<object, () => number>();

function sessionOf(db: DbOrTx): object {
  return (db as unknown as { session: object }).session;
}

/** Whether `db` runs on PostgreSQL (a session the PostgreSQL store registered). */
function pgWatchOf(db: DbOrTx): (() => number) | undefined {
  return pgChangeWatches.get((db as unknown as { dialect: object }).dialect);
}

/** Marks a dialect object as PostgreSQL's, with the counter its caches compare (see changeWatchOf). */
export function registerPgChangeWatch(dialect: object, watch: () => number): void {
  pgChangeWatches.set(dialect, watch);
}

/**
 * A counter that moves whenever another connection or process may have changed the database: on
 * SQLite the connection's `PRAGMA data_version`, on PostgreSQL the notifications this process
 * received (and every reconnection). Caches compare it (./commit-watch).
 */
export function changeWatchOf(db: DbOrTx): () => number {
  return pgWatchOf(db) ?? memo(db, changeWatchOf, () => createCommitWatch(sqliteOf(db)));
}

/** `build(db)` once per database (see perDatabase), e.g. a cache. */
export function memo<T>(db: DbOrTx, key: unknown, build: () => T): T {
  // PostgreSQL: the database's drizzle dialect object, which its transactions share (a
  // transaction's session is its own). Several databases in one process (tests) keep apart.
  const owner = pgWatchOf(db) ? (db as unknown as { dialect: object }).dialect : sessionOf(db);
  let values = perDatabase.get(owner);
  if (!values) {
    values = new Map();
    perDatabase.set(owner, values);
  }
  if (!values.has(key)) values.set(key, build());
  return values.get(key) as T;
}

/**
 * A read that must answer synchronously (a cache's freshness check): on SQLite, `sql` run on the
 * connection at once; on PostgreSQL there is none (undefined), and the caller relies on the change
 * counter alone.
 */
export function synchronousReader<T>(db: DbOrTx, text: string): (() => T | undefined) | undefined {
  if (pgWatchOf(db)) return undefined;
  const statement = sqliteOf(db).query<T, []>(text);
  return () => statement.get() ?? undefined;
}

/**
 * Runs bookkeeping that may be skipped rather than wait (a key's last use). SQLite: at once, unless
 * a transaction of this connection is open or another connection holds the write lock (then
 * false, or a promise of whether it ran when transactions are queued). PostgreSQL: the write is
 * sent and its answer not waited for.
 */
export function writeSoonUnlessBusy(db: DbOrTx, write: () => unknown): boolean | Promise<boolean> {
  if (pgWatchOf(db)) {
    return Promise.resolve()
      .then(write)
      .then(
        () => true,
        () => false,
      );
  }
  const sqlite = sqliteOf(db);
  return onConnection(db, () => writeUnlessBusy(sqlite, () => void write()));
}

/** Which database `db` runs on. */
export function dialectOf(db: DbOrTx): "sqlite" | "postgres" {
  return pgWatchOf(db) ? "postgres" : "sqlite";
}

/** Resolves when the database answers a trivial query; rejects otherwise. */
export async function pingDatabase(db: DbOrTx): Promise<void> {
  await db.get(sql`select 1`);
}

/**
 * Inside a transaction: waits until no other process is bootstrapping the database (PostgreSQL:
 * a transaction-scoped advisory lock; SQLite: a write transaction already runs alone).
 */
export async function lockForBootstrap(tx: DbOrTx): Promise<void> {
  if (dialectOf(tx) === "postgres") await tx.run(sql`select pg_advisory_xact_lock(4180511962310779)`);
}

/** Connection-level failures (postgres.js codes and PostgreSQL SQLSTATEs of classes 08, 57P, 53300, 3D000, 42P01). */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "57P01",
  "57P02",
  "57P03",
  "53300",
  // The database itself is gone (dropped), or its tables are (a restore under way: the server
  // migrated them at start, so a missing one means the database changed under it).
  "3D000",
  "42P01",
]);

/**
 * Whether an error says the database could not be reached (rather than that a statement was
 * wrong): the request answers 503 and a later one, once the pool reconnects, succeeds.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === "string" && (UNAVAILABLE_CODES.has(code) || code.startsWith("08"))) return true;
    // A database that does not take connections now (ALLOW_CONNECTIONS false, a restore under way).
    if (code === "55000" && /accepting connections/.test(String(message))) return true;
  }
  return false;
}
