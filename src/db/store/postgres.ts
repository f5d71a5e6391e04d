import { AsyncLocalStorage } from "node:async_hooks";
import { hostname } from "node:os";
import { is, SQL } from "drizzle-orm";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { limitedToOne, writeAlone } from "./batch";
import type { BatchScope, Query, Store } from "./types";

export type PgDb = PostgresJsDatabase<Record<string, never>>;
/** A transaction handle (drizzle's PgTransaction; it has the same query builder as PgDb). */
export type PgTx = Parameters<Parameters<PgDb["transaction"]>[0]>[0];
export type PgHandle = PgDb | PgTx;

export type PgStore = Store<PgDb, PgHandle> & {
  /** The postgres.js client (SQL text, LISTEN/NOTIFY). */
  readonly client: postgres.Sql;
};

export interface PgClientOptions {
  /** Connections in the pool (postgres.js opens them as they are needed). */
  max?: number;
  /** Seconds to wait for a connection to open. */
  connectTimeoutSec?: number;
}

/** The default pool size of one process's request side. */
export const DEFAULT_PG_POOL = 10;

/** The widest integer a JavaScript number holds exactly. */
const SAFE_DIGITS = 15;

/**
 * int8 (count(*), sum of integers, bigint columns) as a number when it is a safe integer; a
 * larger one stays the exact string PostgreSQL sent. Epoch-ms timestamps and every counter here
 * are far below 2^53.
 */
export function parseInt8(text: string): number | string {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

/** numeric (sum/avg of numerics, exact decimals) as a number when it has at most 15 significant digits. */
export function parseNumeric(text: string): number | string {
  if (!/^-?\d+(\.\d+)?$/.test(text)) return text; // NaN, Infinity
  const digits = text.replace(/^-/, "").replace(".", "").replace(/^0+/, "");
  const significant = text.includes(".") ? digits.replace(/0+$/, "") : digits;
  return significant.length <= SAFE_DIGITS ? Number(text) : text;
}

/**
 * The one place a PostgreSQL connection pool is made (the driver stays swappable: postgres.js
 * today, through drizzle's postgres-js driver). Notices are not printed; int8 and numeric come
 * back as numbers where that is exact.
 */
export function createPgClient(url: string, options: PgClientOptions = {}): postgres.Sql {
  backUpImmediates();
  const { url: address, host } = socketOf(url);
  const client = postgres(address, {
    ...(host ? { host } : {}),
    max: options.max ?? DEFAULT_PG_POOL,
    connect_timeout: options.connectTimeoutSec ?? 10,
    onnotice: () => {},
    connection: {
      // Each node's sessions named in pg_stat_activity (PGAPPNAME or the URL's own win).
      application_name: process.env.PGAPPNAME || `outreach ${process.pid}@${hostname()}`.slice(0, 63),
      // A node frozen mid-transaction (SIGSTOP, a stalled VM) would hold its row locks, and every
      // other node's sends on those rows, until it woke: the server ends such a session instead.
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    },
  });
  const parsers = client.options.parsers as Record<string, (text: string) => unknown>;
  parsers[20] = parseInt8;
  parsers[1700] = parseNumeric;
  return client;
}

/** How long a session may sit in an open transaction doing nothing before the server ends it. */
export const IDLE_IN_TRANSACTION_MS = 15_000;

let backedUp = false;

/** How long an immediate may wait before its fallback timer runs it instead. */
const IMMEDIATE_FALLBACK_MS = 5;

/**
 * postgres.js sends a short message (a BEGIN, a small query) on the next `setImmediate`, and Bun
 * sometimes leaves an immediate queued until the next I/O event, timers firing meanwhile: a lone
 * sign-in on an otherwise idle server waited 30 s in a browser test. Once a PostgreSQL client
 * exists, every immediate of the process also gets a fallback timer that runs it if it has not
 * run within IMMEDIATE_FALLBACK_MS (each runs once; clearImmediate cancels both). A working loop
 * runs the immediate first and the timer is cleared.
 */
function backUpImmediates() {
  if (backedUp) return;
  backedUp = true;
  const schedule = globalThis.setImmediate;
  const cancel = globalThis.clearImmediate;
  const fallbacks = new WeakMap<object, ReturnType<typeof setTimeout>>();
  const wrapped = ((callback: (...args: unknown[]) => void, ...args: unknown[]) => {
    let ran = false;
    const run = () => {
      if (ran) return;
      ran = true;
      clearTimeout(fallback);
      callback(...args);
    };
    const handle = schedule(run);
    const fallback = setTimeout(() => {
      cancel(handle);
      run();
    }, IMMEDIATE_FALLBACK_MS);
    fallbacks.set(handle, fallback);
    return handle;
  }) as typeof setImmediate;
  globalThis.setImmediate = Object.assign(wrapped, schedule);
  globalThis.clearImmediate = ((handle: Parameters<typeof clearImmediate>[0]) => {
    if (handle && typeof handle === "object") {
      const fallback = fallbacks.get(handle);
      if (fallback !== undefined) clearTimeout(fallback);
    }
    cancel(handle);
  }) as typeof clearImmediate;
}

/**
 * libpq's form for a Unix socket, `postgres://user@/db?host=/var/run/postgresql` (or with a host
 * name and `?host=` overriding it), which postgres.js reads only as its `host` option: the socket
 * folder. A database on the same machine answers a good deal sooner over its socket than over TCP.
 */
function socketOf(url: string): { url: string; host?: string } {
  const parsed = new URL(url);
  const folder = parsed.searchParams.get("host");
  if (!folder?.startsWith("/")) return { url };
  // Else postgres.js would also send it to the server as a setting named `host`.
  parsed.searchParams.delete("host");
  return { url: parsed.toString(), host: folder };
}

const ISOLATION = {
  "read committed": "read committed",
  "repeatable read": "repeatable read",
  serializable: "serializable",
} as const;

/**
 * The PostgreSQL store: a postgres.js pool through drizzle. A transaction holds one pooled
 * connection for its callback; `writeBatched` is a transaction of its own (the pool gives the
 * concurrency; PostgreSQL batches WAL flushes of concurrent commits itself).
 */
export function createPgStore(url: string, options: PgClientOptions = {}): PgStore {
  const client = createPgClient(url, options);
  const db = drizzle({ client }) as PgDb;
  const current = new AsyncLocalStorage<{ tx: PgTx; open: boolean }>();

  function transaction<R>(fn: (tx: PgTx) => Promise<R> | R, isolation?: keyof typeof ISOLATION): Promise<R> {
    const open = current.getStore();
    // Inside a transaction: a savepoint on its connection.
    if (open?.open) return open.tx.transaction(async (inner) => fn(inner));
    return db.transaction(
      async (tx) => {
        const state = { tx, open: true };
        try {
          return await current.run(state, () => fn(tx));
        } finally {
          state.open = false;
        }
      },
      isolation ? { isolationLevel: ISOLATION[isolation] } : undefined,
    );
  }

  function handle(): PgHandle {
    const open = current.getStore();
    return open?.open ? open.tx : db;
  }

  return {
    dialect: "postgres",
    db,
    client,
    tx: (fn, options) => transaction(fn, options?.isolation),
    writeBatched<R>(fn: (tx: PgHandle, batch: BatchScope<PgHandle>) => Promise<R> | R) {
      return transaction((tx) => writeAlone<PgHandle, R>(tx, fn));
    },
    async first<R>(query: Query<R>) {
      if (is(query, SQL)) return (await handle().execute(query))[0] as R | undefined;
      return ((await limitedToOne(query)) as R[])[0];
    },
    async rows<R>(query: Query<R>) {
      if (is(query, SQL)) return [...(await handle().execute(query))] as R[];
      return (await query) as R[];
    },
    async exec(text) {
      await client.unsafe(text);
    },
    async ping() {
      await client`select 1`;
    },
    async close() {
      await client.end({ timeout: 5 });
    },
  };
}

/**
 * Whether the PostgreSQL database at `url` answers: null when it does, else the driver's reason in
 * one line (refused, unknown host, wrong password, no such database, timed out). Runs `select 1`
 * and nothing else.
 */
export async function probePostgres(url: string, timeoutSec = 5): Promise<string | null> {
  const client = createPgClient(url, { max: 1, connectTimeoutSec: timeoutSec });
  try {
    await client`select 1`;
    return null;
  } catch (error) {
    const { message, code } = error as { message?: string; code?: string };
    return (message || code || String(error)).split("\n")[0];
  } finally {
    await client.end({ timeout: 1 }).catch(() => {});
  }
}
