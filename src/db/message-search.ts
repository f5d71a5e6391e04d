import { type SQL, sql } from "drizzle-orm";
import { conversations } from "./schema";

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

/**
 * The one place that knows how message bodies are searched: a condition on `conversations` that
 * holds when one of the thread's messages matches `text`. SQLite uses the FTS5 table
 * `messages_fts` (migration 0002); another dialect swaps this function (e.g. a tsvector index).
 */
export function conversationHasMessageMatching(workspaceId: string, text: string): SQL {
  const query = ftsQuery(text);
  if (!query) return sql`0`;
  return sql`${conversations.id} IN (SELECT conversation_id FROM messages_fts WHERE messages_fts MATCH ${query} AND workspace_id = ${workspaceId})`;
}
