import { and, count, desc, eq, type SQL, sql } from "drizzle-orm";
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

/** Below this many matches a page is sorted from the matches; above, read in inbox order. */
const SMALL_MATCH_SET = 2000;

/**
 * Threads of the workspace matching `text` (every word a prefix of a word in the contact's name or
 * phone, or in one message) and `where`, most recently active first, with the total.
 */
export function searchConversations(
  db: Db,
  input: { workspaceId: string; text: string; where?: SQL; limit: number; offset: number },
): { rows: ConversationRow[]; total: number } {
  const query = ftsQuery(input.text);
  if (!query) return { rows: [], total: 0 };
  const matches = sql`${conversations.searchKey} IN (SELECT rowid >> 20 FROM conversation_search WHERE conversation_search MATCH ${query})`;
  // `+workspace_id` keeps SQLite from walking the workspace's whole index: the matches are looked
  // up by search_key instead, which is what makes a rare word cheap.
  const byMatches = and(sql`+${conversations.workspaceId} = ${input.workspaceId}`, matches, input.where);
  const total = db.select({ n: count() }).from(conversations).where(byMatches).get()?.n ?? 0;
  if (total === 0 || input.offset >= total) return { rows: [], total };
  // Many matches: walk the inbox order and stop after a page; few: sort just the matches.
  const where =
    total > SMALL_MATCH_SET
      ? and(eq(conversations.workspaceId, input.workspaceId), matches, input.where)
      : byMatches;
  const rows = db
    .select()
    .from(conversations)
    .where(where)
    .orderBy(desc(conversations.lastMessageAt), desc(conversations.id))
    .limit(input.limit)
    .offset(input.offset)
    .all();
  return { rows, total };
}
