import { and, count, desc, type SQL, sql } from "drizzle-orm";
import { type Db, type DbOrTx, sqliteOf } from "../client";
import { nullsLast } from "../dialect";
import { preparedPerConnection } from "../prepared";
import { type ConversationRow, conversations } from "../schema";
import { contactLabel, foldForSearch, searchWords, type ThreadSearch } from "./text";

/**
 * Thread search on SQLite: the FTS5 table `conversation_search` (migration 0009, its text folded
 * since 0038: ./text.ts), one row per message plus one per thread for its contact (first/last name,
 * phone digit suffixes), rowid = `search_key * 2^20 + n`, so `rowid >> 20` names the thread without
 * reading any stored text. ./index.ts dispatches here.
 */

const THREAD_SPAN = 1_048_576;

/**
 * Turns free text into an FTS5 query: each word becomes a quoted prefix term, all of them required.
 * Quoting keeps operators (AND, NEAR, *, ") in user input from being parsed as syntax.
 */
function ftsQuery(text: string): string | null {
  const words = searchWords(text);
  if (!words.length) return null;
  return words.map((tokens) => `"${tokens.join(" ")}"*`).join(" ");
}

/** Up to this many matching index rows the thread keys are read into JavaScript; above, joined in SQL. */
const SMALL_MATCH_SET = 2000;

/**
 * Threads of the workspace matching `text` (every word a prefix of a word in the contact's name or
 * phone, or in one message) and `where`, most recently active first, with the total.
 *
 * With one workspace in the database and no filter, the index's distinct thread keys (rowid >> 20
 * names the thread) are read once and serve as both the total and the page's key list. Otherwise
 * the index's matching rows are counted first, then the workspace's matching threads are counted
 * and the page is read in inbox order.
 */
export async function searchConversationsSqlite(
  db: Db,
  input: ThreadSearch,
  drain: { limit: number; batchSize: number },
): Promise<{ rows: ConversationRow[]; total: number }> {
  const query = ftsQuery(input.text);
  if (!query) return { rows: [], total: 0 };
  await drainSearchBacklogSqlite(db, drain.limit, drain.batchSize);
  const smallMatchSet = input.smallMatchSet ?? SMALL_MATCH_SET;

  if (!input.where && (await workspaceHoldsEveryThreadSqlite(db, input.workspaceId))) {
    // Every thread is the workspace's: the distinct keys are the total, without visiting the
    // threads (~2.5 ms for 4,000 of 22,000 threads, where reading the index three times took ~4 ms).
    const keys = await matchingThreadKeys(db, query);
    // A JSON array of integers: its length is one more than its commas.
    const total = keys === "[]" ? 0 : (keys.match(/,/g)?.length ?? 0) + 1;
    if (total === 0 || input.offset >= total) return { rows: [], total };
    const keyList = sql`SELECT value FROM json_each(${keys})`;
    return {
      rows: await page(
        db,
        input,
        threadsWithKeys(input.workspaceId, keyList, total <= smallMatchSet ? "byKey" : "byInbox"),
      ),
      total,
    };
  }

  const indexRows = await matchingRowCount(db, query);
  if (indexRows === 0) return { rows: [], total: 0 };
  // Few matches: their thread keys as one JSON array. Many (a common word): the match is a
  // subquery, so SQLite joins the index's thread keys to the threads itself and neither the keys
  // nor the inbox order are carried into JavaScript (shipping both as JSON arrays cost ~40 MB of
  // working memory at 60,000 messages, growing with the inbox; this costs ~8 MB).
  const small = indexRows <= smallMatchSet;
  const keyList = small
    ? sql`SELECT value FROM json_each(${await matchingThreadKeys(db, query)})`
    : sql`SELECT rowid >> 20 FROM conversation_search WHERE conversation_search MATCH ${query}`;
  // Few: each thread looked up by key. Many: counted as the planner chooses, and the page walks the
  // inbox order, stopping once it is full.
  const matches = and(threadsWithKeys(input.workspaceId, keyList, small ? "byKey" : "either"), input.where);
  const total = (await db.select({ n: count() }).from(conversations).where(matches).get())?.n ?? 0;
  if (total === 0 || input.offset >= total) return { rows: [], total };
  const pageWhere = small
    ? matches
    : and(threadsWithKeys(input.workspaceId, keyList, "byInbox"), input.where);
  return { rows: await page(db, input, pageWhere), total };
}

/**
 * The workspace's threads whose key is in `keyList`, and how SQLite should find them: `byKey`
 * looks each key up and then sorts (`+workspace_id`: not by walking the workspace's index), for few
 * keys; `byInbox` walks the inbox order and only checks each thread's key (`+search_key`), stopping
 * once a page is full; `either` leaves the choice to the planner (counting many).
 */
function threadsWithKeys(workspaceId: string, keyList: SQL, plan: "byKey" | "byInbox" | "either"): SQL {
  const workspace = plan === "byKey" ? sql`+${conversations.workspaceId}` : sql`${conversations.workspaceId}`;
  const key = plan === "byInbox" ? sql`+${conversations.searchKey}` : sql`${conversations.searchKey}`;
  return sql`${workspace} = ${workspaceId} AND ${key} IN (${keyList})`;
}

/** One page of the matching threads, most recently active first. */
async function page(
  db: Db,
  input: { limit: number; offset: number },
  where: SQL | undefined,
): Promise<ConversationRow[]> {
  return await db
    .select()
    .from(conversations)
    .where(where)
    .orderBy(nullsLast(desc(conversations.lastMessageAt)), desc(conversations.id))
    .limit(input.limit)
    .offset(input.offset)
    .all();
}

/** How many rows of the index (messages and thread labels) match the FTS5 query. */
async function matchingRowCount(db: Db, query: string): Promise<number> {
  return (
    await db.values<[number]>(
      sql`SELECT count(*) FROM conversation_search WHERE conversation_search MATCH ${query}`,
    )
  )[0][0];
}

/**
 * Whether every thread in the database belongs to the workspace: the smallest and the largest
 * workspace id of the threads are both its own (two index seeks).
 */
export async function workspaceHoldsEveryThreadSqlite(db: Db, workspaceId: string): Promise<boolean> {
  const first = (await db.values<[string | null]>(sql`SELECT min(workspace_id) FROM conversations`))[0][0];
  const last = (await db.values<[string | null]>(sql`SELECT max(workspace_id) FROM conversations`))[0][0];
  return first === workspaceId && last === workspaceId;
}

/**
 * Keys (`conversations.search_key`) of the threads with a row matching the FTS5 query, each once,
 * as one JSON array (bound back as a parameter, never parsed) instead of a row per matching message.
 */
async function matchingThreadKeys(db: Db, query: string): Promise<string> {
  return (
    await db.values<[string]>(
      sql`SELECT json_group_array(DISTINCT rowid >> 20) FROM conversation_search WHERE conversation_search MATCH ${query}`,
    )
  )[0][0];
}

/**
 * Writes up to `limit` rows of `search_backlog` into the index, oldest first, in transactions of
 * `batchSize` rows (IMMEDIATE, so two servers draining at once take turns instead of indexing a
 * row twice). Returns how many backlog rows were consumed. Rows whose thread or message was
 * deleted meanwhile are dropped.
 */
export async function drainSearchBacklogSqlite(db: Db, limit: number, batchSize: number): Promise<number> {
  let consumed = 0;
  while (consumed < limit) {
    const batch = Math.min(batchSize, limit - consumed);
    const done = await db.transaction(async (tx) => {
      const statements = drainStatements(tx);
      const rows = statements.backlog.values(batch) as [number, number, number][];
      for (const [, kind, ref] of rows) {
        if (kind === 0) {
          const thread = statements.thread.values(ref)[0] as
            | [number, string | null, string | null, string]
            | undefined;
          if (!thread) continue;
          // A thread is noted again when its contact is renamed (migration 0038): its label is
          // rewritten from the contact as it is now.
          const [key, firstName, lastName, phone] = thread;
          statements.deleteRow.run(key * THREAD_SPAN);
          statements.insertRow.run(key * THREAD_SPAN, contactLabel(firstName, lastName, phone), null);
        } else {
          const message = statements.message.values(ref)[0] as [number, string, string] | undefined;
          if (!message) continue;
          const [key, body, id] = message;
          const last = statements.lastInThread.values(
            key * THREAD_SPAN,
            key * THREAD_SPAN + THREAD_SPAN - 1,
          )[0] as [number] | undefined;
          statements.insertRow.run((last?.[0] ?? key * THREAD_SPAN) + 1, foldForSearch(body), id);
        }
      }
      if (rows.length) statements.consumed.run(rows[rows.length - 1][0]);
      return rows.length;
    });
    consumed += done;
    if (done < batch) break;
  }
  return consumed;
}

/**
 * The drain's statements, compiled once per connection (a drain runs them per backlog row; built
 * through the query builder each time they cost more than the index writes themselves).
 */
const drainStatements = preparedPerConnection((db: DbOrTx) => {
  const sqlite = sqliteOf(db);
  return {
    backlog: sqlite.prepare("SELECT seq, kind, ref FROM search_backlog ORDER BY seq LIMIT ?"),
    thread: sqlite.prepare(
      `SELECT cv.search_key, c.first_name, c.last_name, c.phone_number
       FROM conversations cv JOIN contacts c ON c.id = cv.contact_id WHERE cv.rowid = ?`,
    ),
    message: sqlite.prepare(
      "SELECT cv.search_key, m.body, m.id FROM messages m JOIN conversations cv ON cv.id = m.conversation_id WHERE m.rowid = ?",
    ),
    // The thread's last indexed row (its label or its newest message): the next message goes after it.
    lastInThread: sqlite.prepare(
      "SELECT rowid FROM conversation_search WHERE rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT 1",
    ),
    deleteRow: sqlite.prepare("DELETE FROM conversation_search WHERE rowid = ?"),
    insertRow: sqlite.prepare("INSERT INTO conversation_search (rowid, text, message_id) VALUES (?, ?, ?)"),
    consumed: sqlite.prepare("DELETE FROM search_backlog WHERE seq <= ?"),
  };
});
