import { and, count, type SQL, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../client";
import { type ConversationRow, conversations } from "../schema";
import { indexedText, searchWords, type ThreadSearch } from "./text";

/**
 * Thread search on PostgreSQL, the twin of ./sqlite.ts's FTS5 table (./index.ts dispatches here).
 * The table `conversation_search` (migrations/pg/0001_triggers_and_search.sql) holds one row per
 * thread for its contact's label (`message_id` NULL: names and the phone's digit suffixes) and one
 * per message; its `tsv` is the text's 'simple' tsvector without accents (`search_unaccent`), under
 * a GIN index. A query is every word of the user's text as a prefix term, all required:
 * `to_tsquery('simple', 'w1':* & 'w2':*)`, built term by term so nothing the user types is parsed
 * as tsquery syntax.
 *
 * Messages are indexed as SQLite's are (./text.ts, indexedText): folded, split into FTS5's tokens,
 * lower-cased, one space apart, so PostgreSQL's parser does not keep e-mail addresses, URLs,
 * decimals or markup whole where FTS5 splits them. The user's words are folded the same way
 * (searchWords). Labels are written by the database (`conversation_search_label`, also used by the
 * trigger that rewrites them when a contact is renamed), whose `unaccent` folds the letters
 * ./text.ts does.
 *
 * As on SQLite, writes only note rows in `search_backlog` (triggers); `drainSearchBacklog` indexes
 * them in batches, claiming backlog rows so that two processes never index one twice, and a search
 * drains first, so it sees every message committed before it.
 */

/**
 * A token of the user's text as a tsquery: lower-cased (messages are indexed lower-cased), or, when
 * it has capitals outside ASCII, as written too: labels are lower-cased by the database, which on a
 * cluster with the C locale folds ASCII letters only.
 */
function term(token: string, prefix: boolean): SQL {
  const lower = token.toLowerCase();
  if (lower === token || !NON_ASCII.test(token)) return spelling(lower, prefix);
  return sql`(${spelling(lower, prefix)} || ${spelling(token, prefix)})`;
}

const NON_ASCII = /\P{ASCII}/u;

/**
 * One spelling of a token as a tsquery: unaccented by the index's own function, quoted (a quote or
 * backslash the unaccent rules produce is escaped), a prefix term when `prefix`. Never a syntax
 * error, whatever the token holds.
 */
function spelling(token: string, prefix: boolean): SQL {
  const quoted = sql`'''' || replace(replace(search_unaccent(${token}::text), '\\', '\\\\'), '''', '''''') || ''''`;
  return prefix ? sql`to_tsquery('simple', ${quoted} || ':*')` : sql`to_tsquery('simple', ${quoted})`;
}

/**
 * The user's text as a tsquery, like the FTS5 query of the SQLite side: each whitespace-separated
 * word is a phrase of its tokens whose last token is a prefix (FTS5: `"w"*`), all words required.
 * Null when no word has a letter or a digit.
 */
export function searchQuery(text: string): SQL | null {
  const words = searchWords(text);
  if (!words.length) return null;
  const phrases = words.map((word) =>
    word
      .map((token, i) => term(token, i === word.length - 1))
      .reduce((phrase, next) => sql`tsquery_phrase(${phrase}, ${next})`),
  );
  return phrases.reduce((all, next) => sql`(${all} && ${next})`);
}

/**
 * Threads of the workspace with a label or a message matching `query`, and `where`, most recently
 * active first (SQLite's order: a thread that never had a message last, then by id in byte order),
 * with the total.
 */
export async function searchConversationsPg(
  db: Db,
  input: ThreadSearch,
  drainLimit: number,
): Promise<{ rows: ConversationRow[]; total: number }> {
  const query = searchQuery(input.text);
  if (!query) return { rows: [], total: 0 };
  await drainWithRetry(db, drainLimit);
  const matches = and(
    sql`${conversations.workspaceId} = ${input.workspaceId}`,
    sql`${conversations.id} IN (SELECT conversation_id FROM conversation_search WHERE tsv @@ ${query})`,
    input.where,
  );
  const total = (await db.select({ n: count() }).from(conversations).where(matches).get())?.n ?? 0;
  if (total === 0 || input.offset >= total) return { rows: [], total };
  const rows = await db
    .select()
    .from(conversations)
    .where(matches)
    .orderBy(sql`${conversations.lastMessageAt} DESC NULLS LAST`, sql`${conversations.id} COLLATE "C" DESC`)
    .limit(input.limit)
    .offset(input.offset)
    .all();
  return { rows, total };
}

/** Whether every thread in the database belongs to the workspace (none: false), as on SQLite. */
export async function workspaceHoldsEveryThreadPg(db: Db, workspaceId: string): Promise<boolean> {
  const row = await db.get<{ every: boolean | null }>(
    sql`SELECT min(workspace_id) = ${workspaceId} AND max(workspace_id) = ${workspaceId} AS every FROM conversations`,
  );
  return row?.every === true;
}

/** PostgreSQL's error code of a failed statement (drizzle wraps the driver's error in `cause`). */
function errorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * A search's drain: it waits for backlog rows another process is indexing (so the search sees
 * them), and tries once more when PostgreSQL broke a deadlock with a concurrent delete of messages
 * by aborting it.
 */
async function drainWithRetry(db: Db, limit: number): Promise<number> {
  try {
    return await drainSearchBacklogPg(db, limit, "wait");
  } catch (error) {
    if (errorCode(error) !== "40P01") throw error;
    return await drainSearchBacklogPg(db, limit, "wait");
  }
}

/**
 * Writes up to `limit` rows of `search_backlog` into the index, oldest first, in transactions of
 * `batch` rows; answers how many backlog rows were consumed. Each transaction deletes the rows it
 * claims (`FOR UPDATE`): with `skip` it leaves rows another process has claimed to it, with `wait`
 * it waits for that process and then finds them gone. Either way no row is indexed twice.
 *
 * Labels are inserted unless the thread has one: a contact renamed since the row was noted wrote
 * the newest label already (its trigger). Messages are read with a key-share lock, so a message
 * deleted concurrently is either gone before it is read or deleted (with its index row, by the
 * delete trigger) after this commits. Rows of threads or messages deleted meanwhile are dropped.
 */
export async function drainSearchBacklogPg(
  db: Db,
  limit: number,
  claim: "skip" | "wait" = "skip",
  batch = 500,
): Promise<number> {
  const pending = await db.get<{ any: boolean }>(sql`SELECT EXISTS (SELECT 1 FROM search_backlog) AS any`);
  if (!pending?.any) return 0;
  const lock = claim === "skip" ? sql`FOR UPDATE SKIP LOCKED` : sql`FOR UPDATE`;
  let consumed = 0;
  while (consumed < limit) {
    const size = Math.min(batch, limit - consumed);
    const done = await db.transaction(async (tx) => await drainBatch(tx, size, lock));
    consumed += done;
    // Skipping: fewer than asked means the rest is claimed elsewhere. Waiting: rows another
    // process indexed meanwhile shorten a batch, so only an empty one ends the drain.
    if (done === 0 || (claim === "skip" && done < size)) break;
  }
  return consumed;
}

async function drainBatch(tx: DbOrTx, size: number, lock: SQL): Promise<number> {
  const claimed = await tx.all<{ kind: number; ref: string }>(sql`
    WITH claimed AS (
      DELETE FROM search_backlog
      WHERE seq IN (SELECT seq FROM search_backlog ORDER BY seq LIMIT ${size} ${lock})
      RETURNING kind, ref
    ), labels AS (
      INSERT INTO conversation_search (conversation_id, message_id, text)
      SELECT cv.id, NULL, conversation_search_label(c.first_name, c.last_name, c.phone_number)
      FROM claimed
      JOIN conversations cv ON cv.id = claimed.ref
      JOIN contacts c ON c.id = cv.contact_id
      WHERE claimed.kind = 0
      ON CONFLICT (conversation_id) WHERE message_id IS NULL DO NOTHING
    )
    SELECT kind, ref FROM claimed`);
  const messageIds = claimed.filter((row) => Number(row.kind) === 1).map((row) => row.ref);
  if (messageIds.length) {
    const messages = await tx.all<{ id: string; conversation_id: string; body: string | null }>(sql`
      SELECT m.id, m.conversation_id, m.body FROM messages m
      WHERE m.id IN (SELECT json_array_elements_text(${JSON.stringify(messageIds)}::json))
        AND m.conversation_id IS NOT NULL
      FOR KEY SHARE OF m`);
    if (messages.length) {
      const rows = messages.map((m) => ({ c: m.conversation_id, m: m.id, t: indexedText(m.body ?? "") }));
      await tx.run(sql`
        INSERT INTO conversation_search (conversation_id, message_id, text)
        SELECT r.c, r.m, r.t FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(c text, m text, t text)
        ON CONFLICT (conversation_id, message_id) WHERE message_id IS NOT NULL DO NOTHING`);
    }
  }
  return claimed.length;
}
