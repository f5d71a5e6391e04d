import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import {
  boolColumn,
  createdAtColumn,
  idColumn,
  onPostgres,
  timestampColumn,
  updatedAtColumn,
  workspaceIdColumn,
} from "./columns";

/**
 * Inbox threads: one contact's back-and-forth with an agent or the team. A contact has at most one
 * open thread; inbound to a contact with only closed threads reopens the latest.
 */
export const conversations = sqliteTable(
  "conversations",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    contactId: text("contact_id").notNull(),
    /** open | closed */
    status: text("status").notNull(),
    needsAttention: boolColumn("needs_attention").notNull().default(false),
    /** Why the thread needs a person (ATTENTION_REASONS in domain/messaging/conversations.ts); null when it does not. */
    attentionReason: text("attention_reason"),
    /** The workspace user the thread is assigned to (a user id, API.md §7.4); null when unassigned. */
    assignedTo: text("assigned_to"),
    /** The AI agent that owns the thread, if any. */
    agentId: text("agent_id"),
    /** True once a human replied or the agent handed off: the agent stops answering on this thread. */
    agentPaused: boolColumn("agent_paused").notNull().default(false),
    lastMessageAt: timestampColumn("last_message_at"),
    /** An assist-mode agent's proposed answer, waiting for a human (API.md §6.3); null when none. */
    draftReply: text("draft_reply"),
    /** The latest inbound message's intent as the agent classified it: none | low | medium | high. */
    intent: text("intent"),
    /**
     * Numeric key of the thread in the search index (`conversation_search`, see
     * src/db/search/sqlite.ts); set by a trigger on insert. PostgreSQL: an identity column (the
     * next key comes from its sequence, so concurrent inserts never pick the same one).
     */
    searchKey: onPostgres(integer("search_key"), "identity"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    // Inbox order; search_key at the end lets a search walk the inbox from the index alone.
    index("conversations_workspace_inbox_idx").on(t.workspaceId, t.lastMessageAt, t.id, t.searchKey),
    index("conversations_workspace_contact_idx").on(t.workspaceId, t.contactId, t.status),
    index("conversations_workspace_status_idx").on(t.workspaceId, t.status, t.lastMessageAt),
    uniqueIndex("conversations_search_key_idx").on(t.searchKey),
    // At most one open thread per contact, whichever process creates or reopens it.
    uniqueIndex("conversations_open_contact_idx").on(t.workspaceId, t.contactId).where(sql`status = 'open'`),
  ],
);

export type ConversationRow = typeof conversations.$inferSelect;
