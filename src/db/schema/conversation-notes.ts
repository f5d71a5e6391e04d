import { index, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, timestampColumn, workspaceIdColumn } from "./columns";

/**
 * Private notes the team leaves on a thread (API.md §7.4). Kept apart from `messages` on purpose:
 * nothing that sends, counts, bills, feeds an agent or emits `message.*` events reads this table, so
 * a note cannot leave the workspace. The thread shows them among its messages with `sender: "note"`.
 */
export const conversationNotes = sqliteTable(
  "conversation_notes",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    conversationId: text("conversation_id").notNull(),
    body: text("body").notNull(),
    /** The user who wrote it; null when written with an API key. */
    authorUserId: text("author_user_id"),
    /** Who wrote it, as shown: the user's name, or the API key's name. */
    authorName: text("author_name").notNull(),
    createdAt: createdAtColumn(),
  },
  (t) => [index("conversation_notes_thread_idx").on(t.workspaceId, t.conversationId, t.createdAt)],
);

export type ConversationNoteRow = typeof conversationNotes.$inferSelect;

/**
 * When each workspace user last opened each thread (a GET of the thread with their session): a
 * thread's `unread` counts the inbound messages after it (API.md §7.4).
 */
export const conversationReads = sqliteTable(
  "conversation_reads",
  {
    conversationId: text("conversation_id").notNull(),
    userId: text("user_id").notNull(),
    workspaceId: workspaceIdColumn(),
    readAt: timestampColumn("read_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.userId] })],
);

export type ConversationReadRow = typeof conversationReads.$inferSelect;
