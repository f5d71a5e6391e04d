import { and, count, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { Db } from "./client";
import { type ConversationRow, conversations } from "./schema";

/**
 * Thread search (`GET /v1/conversations?q=`), the one place that knows how it is done. SQLite uses
 * the FTS5 table `conversation_search` (migration 0009): one row per message plus one per thread
 * for its contact (first/last name, phone digit suffixes), rowid = `search_key * 2^20 + n`, so
 * `rowid >> 20` names the thread without reading any stored text. Another dialect swaps this
 * module (e.g. a tsvector index).
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
  const keys = matchingThreadKeys(db, query);
  if (keys.size === 0) return { rows: [], total: 0 };
  const inbox = and(eq(conversations.workspaceId, input.workspaceId), input.where);
  // `+workspace_id`: look threads up by key rather than walk the workspace's index.
  const inWorkspace = sql`+${conversations.workspaceId} = ${input.workspaceId}`;

  if (keys.size <= (input.smallMatchSet ?? SMALL_MATCH_SET)) {
    const matches = and(inWorkspace, input.where, inArray(conversations.searchKey, [...keys]));
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

  const walk = db
    .select({ key: conversations.searchKey })
    .from(conversations)
    .where(inbox)
    .orderBy(desc(conversations.lastMessageAt), desc(conversations.id))
    .values();
  let total = 0;
  const page: number[] = [];
  for (let i = 0; i < walk.length; i++) {
    const key = walk[i][0];
    if (key === null || !keys.has(key)) continue;
    if (total >= input.offset && page.length < input.limit) page.push(key);
    total++;
  }
  if (page.length === 0) return { rows: [], total };
  const byKey = new Map(
    db
      .select()
      .from(conversations)
      .where(and(inWorkspace, inArray(conversations.searchKey, page)))
      .all()
      .map((row) => [row.searchKey, row]),
  );
  const rows = page.map((key) => byKey.get(key)).filter((row): row is ConversationRow => row !== undefined);
  return { rows, total };
}

/** Keys (`conversations.search_key`) of the threads with a row matching the FTS5 query. */
function matchingThreadKeys(db: Db, query: string): Set<number> {
  const keys = new Set<number>();
  const found = db.values<[number]>(
    sql`SELECT rowid >> 20 FROM conversation_search WHERE conversation_search MATCH ${query}`,
  );
  for (let i = 0; i < found.length; i++) keys.add(found[i][0]);
  return keys;
}
