import { and, count, desc, eq, type SQL, sql } from "drizzle-orm";
import { log } from "../lib/log";
import type { Db } from "./client";
import { inJsonList } from "./dialect";
import { type ConversationRow, conversations } from "./schema";

/**
 * Thread search (`GET /v1/conversations?q=`), the one place that knows how it is done. SQLite uses
 * the FTS5 table `conversation_search` (migration 0009): one row per message plus one per thread
 * for its contact (first/last name, phone digit suffixes), rowid = `search_key * 2^20 + n`, so
 * `rowid >> 20` names the thread without reading any stored text. Another dialect swaps this
 * module (e.g. a tsvector index).
 *
 * Indexing is kept off the sending transaction (migration 0011): inserting a thread or a message
 * only notes it in `search_backlog`; `drainSearchBacklog` writes the index in batches. Every server
 * drains about once a second (`startSearchIndexer`) and a search drains what is left first, so a
 * search sees every message written before it.
 */

/**
 * Turns free text into an FTS5 query: each word becomes a quoted prefix term, all of them required.
 * Quoting keeps operators (AND, NEAR, *, ") in user input from being parsed as syntax.
 */
function ftsQuery(text: string): string | null {
  const words = text
    .split(/\s+/)
    .map((w) => w.replace(/"/g, ""))
    .filter((w) => /[\p{L}\p{N}]/u.test(w));
  if (!words.length) return null;
  return words.map((w) => `"${w}"*`).join(" ");
}

/** Up to this many matching threads a page is sorted from the matches; above, read in inbox order. */
const SMALL_MATCH_SET = 2000;

/**
 * Threads of the workspace matching `text` (every word a prefix of a word in the contact's name or
 * phone, or in one message) and `where`, most recently active first, with the total.
 *
 * The index is read once: the keys of every matching thread (all workspaces; rowids come in order,
 * so a thread's matches are adjacent). Few matches: count and sort just those threads. Many (a
 * common word): walk the workspace's inbox order on `conversations_workspace_inbox_idx`, which
 * carries each thread's key, counting the matches and keeping the requested page — one pass over
 * the index instead of a lookup per match and a second pass for the page.
 */
export function searchConversations(
  db: Db,
  input: {
    workspaceId: string;
    text: string;
    where?: SQL;
    limit: number;
    offset: number;
    /** Overrides SMALL_MATCH_SET (tests run both paths on a small corpus). */
    smallMatchSet?: number;
  },
): { rows: ConversationRow[]; total: number } {
  const query = ftsQuery(input.text);
  if (!query) return { rows: [], total: 0 };
  drainSearchBacklog(db, SEARCH_DRAIN_LIMIT);
  const keys = matchingThreadKeys(db, query);
  if (keys.size === 0) return { rows: [], total: 0 };
  const inbox = and(eq(conversations.workspaceId, input.workspaceId), input.where);
  // `+workspace_id`: look threads up by key rather than walk the workspace's index.
  const inWorkspace = sql`+${conversations.workspaceId} = ${input.workspaceId}`;

  if (keys.size <= (input.smallMatchSet ?? SMALL_MATCH_SET)) {
    const matches = and(inWorkspace, input.where, inJsonList(conversations.searchKey, [...keys]));
    const total = db.select({ n: count() }).from(conversations).where(matches).get()?.n ?? 0;
    if (total === 0 || input.offset >= total) return { rows: [], total };
    const rows = db
      .select()
      .from(conversations)
      .where(matches)
      .orderBy(desc(conversations.lastMessageAt), desc(conversations.id))
      .limit(input.limit)
      .offset(input.offset)
      .all();
    return { rows, total };
  }

  // The inbox's keys in order as one JSON array: one string and one array of numbers, where a row
  // per thread is ~50 bytes of garbage each (~5 MB a search at 100,000 threads). SQLite keeps a
  // FROM-subquery's ORDER BY when the outer query feeds an order-sensitive aggregate.
  const ordered = db
    .select({ key: conversations.searchKey })
    .from(conversations)
    .where(inbox)
    .orderBy(desc(conversations.lastMessageAt), desc(conversations.id));
  const walk = JSON.parse(
    db.values<[string]>(sql`SELECT json_group_array(search_key) FROM (${ordered})`)[0][0],
  ) as (number | null)[];
  let total = 0;
  const page: number[] = [];
  for (let i = 0; i < walk.length; i++) {
    const key = walk[i];
    if (key === null || !keys.has(key)) continue;
    if (total >= input.offset && page.length < input.limit) page.push(key);
    total++;
  }
  if (page.length === 0) return { rows: [], total };
  const byKey = new Map(
    db
      .select()
      .from(conversations)
      .where(and(inWorkspace, inJsonList(conversations.searchKey, page)))
      .all()
      .map((row) => [row.searchKey, row]),
  );
  const rows = page.map((key) => byKey.get(key)).filter((row): row is ConversationRow => row !== undefined);
  return { rows, total };
}

/**
 * Keys (`conversations.search_key`) of the threads with a row matching the FTS5 query, read as one
 * JSON array instead of a row per matching message.
 */
function matchingThreadKeys(db: Db, query: string): Set<number> {
  const found = db.values<[string]>(
    sql`SELECT json_group_array(rowid >> 20) FROM conversation_search WHERE conversation_search MATCH ${query}`,
  )[0][0];
  return new Set(JSON.parse(found) as number[]);
}

/** Rows of the backlog indexed per transaction: small enough not to hold the event loop long. */
const DRAIN_BATCH = 500;
/**
 * Most backlog rows a search indexes before it reads. The periodic drain keeps the backlog far
 * below this; after a long outage of it, a search answers without the newest rows rather than
 * stall, and they become searchable as the drain catches up.
 */
const SEARCH_DRAIN_LIMIT = 20_000;
const THREAD_SPAN = 1_048_576;

/** The thread's contact label as the index keeps it: names and the phone's digit suffixes. */
function contactLabel(firstName: string | null, lastName: string | null, phone: string): string {
  const digits = phone.replace(/[+ ]/g, "");
  const suffixes: string[] = [digits];
  for (let from = 1; from <= 10; from++) suffixes.push(digits.slice(from));
  return `${firstName ?? ""} ${lastName ?? ""} ${suffixes.join(" ")}`;
}

/**
 * Writes up to `limit` rows of `search_backlog` into the index, oldest first, in transactions of
 * DRAIN_BATCH rows (IMMEDIATE, so two servers draining at once take turns instead of indexing a
 * row twice). Returns how many backlog rows were consumed. Rows whose thread or message was
 * deleted meanwhile are dropped.
 */
export function drainSearchBacklog(db: Db, limit = DRAIN_BATCH): number {
  let consumed = 0;
  while (consumed < limit) {
    const batch = Math.min(DRAIN_BATCH, limit - consumed);
    const done = db.transaction(
      (tx) => {
        const rows = tx.values<[number, number, number]>(
          sql`SELECT seq, kind, ref FROM search_backlog ORDER BY seq LIMIT ${batch}`,
        );
        for (const [, kind, ref] of rows) {
          if (kind === 0) {
            const [thread] = tx.values<[number, string | null, string | null, string]>(
              sql`SELECT cv.search_key, c.first_name, c.last_name, c.phone_number
                  FROM conversations cv JOIN contacts c ON c.id = cv.contact_id WHERE cv.rowid = ${ref}`,
            );
            if (!thread) continue;
            // A contact edited before this drain may have written the label already: replace it.
            const [key, firstName, lastName, phone] = thread;
            tx.run(sql`DELETE FROM conversation_search WHERE rowid = ${key * THREAD_SPAN}`);
            tx.run(
              sql`INSERT INTO conversation_search (rowid, text, message_id)
                  VALUES (${key * THREAD_SPAN}, ${contactLabel(firstName, lastName, phone)}, NULL)`,
            );
          } else {
            tx.run(
              sql`INSERT INTO conversation_search (rowid, text, message_id)
                  SELECT coalesce(
                      (SELECT max(s.rowid) FROM conversation_search s
                       WHERE s.rowid BETWEEN cv.search_key * ${THREAD_SPAN} AND cv.search_key * ${THREAD_SPAN} + ${THREAD_SPAN - 1}),
                      cv.search_key * ${THREAD_SPAN}
                    ) + 1, m.body, m.id
                  FROM messages m JOIN conversations cv ON cv.id = m.conversation_id WHERE m.rowid = ${ref}`,
            );
          }
        }
        if (rows.length) tx.run(sql`DELETE FROM search_backlog WHERE seq <= ${rows[rows.length - 1][0]}`);
        return rows.length;
      },
      { behavior: "immediate" },
    );
    consumed += done;
    if (done < batch) break;
  }
  return consumed;
}

/**
 * Drains the backlog about once a second, a batch per event-loop turn so requests interleave.
 * Every server runs one; nothing depends on it for correctness (a search drains first).
 */
export function startSearchIndexer(db: Db, intervalMs = 1000): { stop(): void } {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const tick = () => {
    if (stopped) return;
    let more = false;
    try {
      more = drainSearchBacklog(db, DRAIN_BATCH) === DRAIN_BATCH;
    } catch (error) {
      // Busy (another server is draining) or a closing database: the next tick tries again.
      log.debug("search backlog drain deferred", { error: String(error) });
    }
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
