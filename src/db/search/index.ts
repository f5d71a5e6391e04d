import { type SQL, sql } from "drizzle-orm";
import { errorText, log } from "../../lib/log";
import { type Db, type DbOrTx, dialectOf } from "../client";
import { type ConversationRow, conversations } from "../schema";
import { drainSearchBacklogPg, searchConversationsPg, workspaceHoldsEveryThreadPg } from "./postgres";
import {
  drainSearchBacklogSqlite,
  searchConversationsSqlite,
  workspaceHoldsEveryThreadSqlite,
} from "./sqlite";
import type { ThreadSearch } from "./text";

/**
 * Thread search (`GET /v1/conversations?q=`), the one place that knows how it is done: each
 * exported function here dispatches on the database. SQLite has an FTS5 table (./sqlite.ts),
 * PostgreSQL its twin, a tsvector table (./postgres.ts); both are written with the same folded text
 * and read the user's words folded the same way (./text.ts), so both find the same threads.
 *
 * Indexing is kept off the sending transaction (migration 0011): inserting a thread or a message
 * only notes it in `search_backlog`; `drainSearchBacklog` writes the index in batches. Every server
 * drains about once a second (`startSearchIndexer`) and a search drains what is left first, so a
 * search sees every message written before it.
 */

/** Rows of the backlog indexed per transaction: small enough not to hold the event loop long. */
const DRAIN_BATCH = 500;
/**
 * Most backlog rows a search indexes before it reads. The periodic drain keeps the backlog far
 * below this; after a long outage of it, a search answers without the newest rows rather than
 * stall, and they become searchable as the drain catches up.
 */
const SEARCH_DRAIN_LIMIT = 20_000;

/**
 * The search key of a thread being inserted (`conversations.search_key`), as the insert's value:
 * on SQLite the next after the largest (the unique index answers max), written with the row;
 * on PostgreSQL the identity column's next value (`DEFAULT`: concurrent inserts never pick the same
 * key, and a thread written without one gets the next too). PostgreSQL's index names threads by
 * id, not by this key.
 */
export function newSearchKey(db: DbOrTx): SQL {
  if (dialectOf(db) === "postgres") return sql`DEFAULT`;
  return sql`(SELECT coalesce(max(${conversations.searchKey}), 0) + 1 FROM ${conversations})`;
}

/**
 * Threads of the workspace matching `text` (every word a prefix of a word in the contact's name or
 * phone, or in one message) and `where`, most recently active first, with the total. A search
 * drains the backlog first (up to SEARCH_DRAIN_LIMIT rows).
 */
export async function searchConversations(
  db: Db,
  input: ThreadSearch,
): Promise<{ rows: ConversationRow[]; total: number }> {
  if (dialectOf(db) === "postgres") return await searchConversationsPg(db, input, SEARCH_DRAIN_LIMIT);
  return await searchConversationsSqlite(db, input, { limit: SEARCH_DRAIN_LIMIT, batchSize: DRAIN_BATCH });
}

/** Whether every thread in the database belongs to the workspace (none: false). */
export async function workspaceHoldsEveryThread(db: Db, workspaceId: string): Promise<boolean> {
  if (dialectOf(db) === "postgres") return await workspaceHoldsEveryThreadPg(db, workspaceId);
  return await workspaceHoldsEveryThreadSqlite(db, workspaceId);
}

/**
 * Writes up to `limit` rows of `search_backlog` into the index, oldest first, in batches of
 * DRAIN_BATCH rows, each indexed once however many servers drain at the same time; answers how many
 * backlog rows were consumed. Rows whose thread or message was deleted meanwhile are dropped.
 */
export async function drainSearchBacklog(db: Db, limit = DRAIN_BATCH): Promise<number> {
  if (dialectOf(db) === "postgres") return await drainSearchBacklogPg(db, limit, "skip", DRAIN_BATCH);
  return await drainSearchBacklogSqlite(db, limit, DRAIN_BATCH);
}

/** What the indexer yields to, and for how long at most. */
export interface SearchIndexerOptions {
  /** How often it looks at the backlog (1 s). */
  intervalMs?: number;
  /**
   * Whether the thread has more pressing work (jobs running: sends, dispatch steps, reports): the
   * drain waits while it does, up to `maxDeferMs` after the last drain.
   */
  busy?: () => boolean;
  /** The longest the drain waits for `busy` to pass (10 s). */
  maxDeferMs?: number;
}

/** The longest the search indexer yields to running jobs before it drains anyway. */
export const SEARCH_MAX_DEFER_MS = 10_000;

/**
 * Drains the backlog about once a second, a batch per event-loop turn so requests interleave.
 * Every server runs one; nothing depends on it for correctness (a search drains first). Both
 * databases: the drain it calls dispatches. While `busy` says jobs are running it waits, up to
 * `maxDeferMs` since its last drain: indexing a campaign's messages and threads is a sixth of the
 * statement time of the campaign on PostgreSQL, and the sends come first. The search that comes
 * meanwhile drains what is left before it answers, so it is never stale, only slower.
 */
export function startSearchIndexer(db: Db, options: SearchIndexerOptions = {}): { stop(): void } {
  const intervalMs = options.intervalMs ?? 1000;
  const maxDeferMs = options.maxDeferMs ?? SEARCH_MAX_DEFER_MS;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let drainedAt = Date.now();
  const tick = async () => {
    if (stopped) return;
    if (options.busy?.() && Date.now() - drainedAt < maxDeferMs) {
      timer = setTimeout(tick, intervalMs);
      return;
    }
    let more = false;
    try {
      more = (await drainSearchBacklog(db, DRAIN_BATCH)) === DRAIN_BATCH;
    } catch (error) {
      // Busy (another server is draining) or a closing database: the next tick tries again.
      log.debug("search backlog drain deferred", { error: errorText(error) });
    }
    if (!more) drainedAt = Date.now();
    timer = setTimeout(tick, more ? 0 : intervalMs);
  };
  timer = setTimeout(tick, intervalMs);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
