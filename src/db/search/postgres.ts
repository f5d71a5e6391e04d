import { and, count, type SQL, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../client";
import { allOver } from "../prepared";
import { type ConversationRow, conversations } from "../schema";
import { contactLabel, indexedText, searchWords, type ThreadSearch } from "./text";

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
 * (searchWords). A thread's label is the contact's `contactLabel` (./text.ts), as on SQLite: the
 * drain reads the contact and writes it, also after a rename (its trigger notes the threads again,
 * migrations/pg/0009_search_labels_from_server.sql).
 *
 * As on SQLite, writes only note rows in `search_backlog` (triggers); `drainSearchBacklog` indexes
 * them in batches, claiming backlog rows so that two processes never index one twice, and a search
 * drains first, so it sees every message committed before it.
 */

/**
 * A token of the user's text as a tsquery: lower-cased (labels and messages are indexed
 * lower-cased), unaccented by the index's own function, quoted (a quote or backslash the unaccent
 * rules produce is escaped), a prefix term when `prefix`. Never a syntax error, whatever the token
 * holds.
 */
function term(word: string, prefix: boolean): SQL {
  const token = word.toLowerCase();
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
 * A thread's label is written (or rewritten, after a rename) from its contact as it is now, read
 * with a share lock: a rename waits for this commit, and the backlog rows it notes are drained
 * after it, so the newest label is written last. A contact being changed at that moment is not
 * waited for: its thread goes back in the backlog (see drainBatch). Threads and messages are read
 * with a key-share lock, so one deleted concurrently is either gone before it is read or deleted
 * (with its index rows, by the delete triggers) after this commits. Rows of threads or messages
 * deleted meanwhile are dropped.
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
    const { done, putBack } = await db.transaction(async (tx) => await drainBatch(tx, size, lock));
    consumed += done;
    // Skipping: fewer than asked means the rest is claimed elsewhere. Waiting: rows another
    // process indexed meanwhile shorten a batch, so only an empty one ends the drain, or one whose
    // rows all went back (their contacts being changed: the next batch would claim them again).
    if (done === 0 || done === putBack || (claim === "skip" && done < size)) break;
  }
  return consumed;
}

/** Ids bound as one JSON parameter, as a subquery for `IN` (one parameter however many ids). */
const idsOf = (ids: readonly string[]): SQL =>
  sql`(SELECT json_array_elements_text(${JSON.stringify(ids)}::json))`;

/**
 * One batch: claims up to `size` backlog rows and indexes them. Answers how many it claimed, and
 * how many of them it put back in the backlog: threads whose contact another transaction is
 * changing at this moment (a rename not committed yet, an import). The drain never waits for such
 * a contact (holding other contacts meanwhile could deadlock with a transaction changing several),
 * and never writes a label from a name about to change; the next drain writes it.
 */
async function drainBatch(tx: DbOrTx, size: number, lock: SQL): Promise<{ done: number; putBack: number }> {
  const claimed = await tx.all<{ kind: number; ref: string }>(sql`
    DELETE FROM search_backlog
    WHERE seq IN (SELECT seq FROM search_backlog ORDER BY seq LIMIT ${size} ${lock})
    RETURNING kind, ref`);
  const threadIds = claimed.filter((row) => Number(row.kind) === 0).map((row) => row.ref);
  const messageIds = claimed.filter((row) => Number(row.kind) === 1).map((row) => row.ref);
  type Contact = { id: string; first_name: string | null; last_name: string | null; phone_number: string };
  type Message = { id: string; conversation_id: string; body: string | null };
  const [labels, messages] = await allOver([
    threadIds.length
      ? tx.all<Contact>(sql`
          SELECT cv.id, c.first_name, c.last_name, c.phone_number
          FROM conversations cv JOIN contacts c ON c.id = cv.contact_id
          WHERE cv.id IN ${idsOf(threadIds)}
          ORDER BY c.id
          FOR KEY SHARE OF cv FOR SHARE OF c SKIP LOCKED`)
      : Promise.resolve([]),
    messageIds.length
      ? tx.all<Message>(sql`
          SELECT m.id, m.conversation_id, m.body FROM messages m
          WHERE m.id IN ${idsOf(messageIds)}
            AND m.conversation_id IS NOT NULL
          FOR KEY SHARE OF m`)
      : Promise.resolve([]),
  ]);
  // Skipped for a lock on the contact, or gone: the threads still there (with their contact) go
  // back in the backlog.
  const read = new Set(labels.map((thread) => thread.id));
  const busy = [...new Set(threadIds)].filter((id) => !read.has(id));
  const labelRows = labels.map((t) => ({
    c: t.id,
    t: contactLabel(t.first_name, t.last_name, t.phone_number),
  }));
  const messageRows = messages.map((m) => ({ c: m.conversation_id, m: m.id, t: indexedText(m.body ?? "") }));
  const [back] = await allOver([
    busy.length
      ? tx.all<{ ref: string }>(sql`
          INSERT INTO search_backlog (kind, ref)
          SELECT 0, cv.id FROM conversations cv JOIN contacts c ON c.id = cv.contact_id
          WHERE cv.id IN ${idsOf(busy)}
          RETURNING ref`)
      : Promise.resolve([]),
    labelRows.length
      ? tx.run(sql`
          INSERT INTO conversation_search (conversation_id, message_id, text)
          SELECT r.c, NULL, r.t FROM json_to_recordset(${JSON.stringify(labelRows)}::json) AS r(c text, t text)
          ON CONFLICT (conversation_id) WHERE message_id IS NULL DO UPDATE SET text = excluded.text`)
      : Promise.resolve(),
    messageRows.length
      ? tx.run(sql`
          INSERT INTO conversation_search (conversation_id, message_id, text)
          SELECT r.c, r.m, r.t FROM json_to_recordset(${JSON.stringify(messageRows)}::json) AS r(c text, m text, t text)
          ON CONFLICT (conversation_id, message_id) WHERE message_id IS NOT NULL DO NOTHING`)
      : Promise.resolve(),
  ]);
  return { done: claimed.length, putBack: back.length };
}
