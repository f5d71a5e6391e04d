import { and, count, desc, eq, isNotNull, isNull, or, type SQL, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import {
  byteOrder,
  greatest,
  inJsonList,
  inJsonListParam,
  jsonList,
  nullsLast,
  unlessTakenMeanwhile,
} from "../../db/dialect";
import { insertRowsReturning, preparedPerConnection, rowPlaceholders } from "../../db/prepared";
import {
  type ConversationNoteRow,
  type ConversationRow,
  contacts,
  conversationNotes,
  conversationReads,
  conversations,
  type MessageRow,
  memberships,
  messages,
  users,
} from "../../db/schema";
import { newSearchKey, searchConversations } from "../../db/search";
import { workspaceRow } from "../../db/workspace-row";
import { conflict, invalid, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { toIso } from "../../lib/time";
import { smsAgentForReference } from "../agents/agents";
import { emitEvent } from "../events";

export const CONVERSATION_FILTERS = [
  "all",
  "open",
  "closed",
  "needs_attention",
  "assigned",
  "unassigned",
  "agent",
  "mine",
] as const;
export type ConversationFilter = (typeof CONVERSATION_FILTERS)[number];
export const CONVERSATION_STATUSES = ["open", "closed"] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];

/** Who wrote a message in a thread (`note`: a private note of the team, never sent). */
export type MessageSender = "contact" | "agent" | "human" | "campaign" | "flow" | "system" | "note";

/** Who reads the inbox: the session's user, or null for an API key (no user). */
export interface InboxViewer {
  userId: string | null;
}

/**
 * Why a thread needs a person (API.md §7.1 `attention_reason`):
 * - unanswered_message: a contact's message no agent will answer (no agent, agent not acting, its
 *   daily replies spent);
 * - possible_opt_out: a message longer than six words containing an opt-out keyword (not an opt-out
 *   by itself: a person decides);
 * - agent_handoff: the thread's agent handed off;
 * - agent_flagged: the agent asked a person to look (a hot lead, an assist-mode draft);
 * - manual: set by a person (PATCH needs_attention).
 */
export const ATTENTION_REASONS = [
  "unanswered_message",
  "possible_opt_out",
  "agent_handoff",
  "agent_flagged",
  "manual",
] as const;
export type AttentionReason = (typeof ATTENTION_REASONS)[number];

/** The Conversation as the API returns it. */
export interface ConversationJson {
  id: string;
  contact_id: string;
  status: string;
  needs_attention: boolean;
  attention_reason: string | null;
  assigned_to: string | null;
  agent_id: string | null;
  agent_paused: boolean;
  agent_active: boolean;
  draft_reply: string | null;
  intent: string | null;
  last_message_at: string | null;
  created_at: string;
}

/** One message of a thread (`conversation.messages`). */
export interface ThreadMessageJson {
  id: string;
  direction: string;
  sender: string;
  body: string;
  status: string;
  /** A call's entry (status CALL): the call it reports; null for SMS. */
  call_id: string | null;
  created_at: string;
  /** Notes only: who wrote it. */
  author?: NoteAuthorJson;
}

/** Who wrote a note: a workspace user (`user_id`), or an API key (`user_id` null, its name). */
export interface NoteAuthorJson {
  user_id: string | null;
  name: string;
}

/** A private note of the team on a thread (API.md §7.4). */
export interface NoteJson {
  id: string;
  body: string;
  author: NoteAuthorJson;
  created_at: string;
}

/** What an inbox row shows beyond the thread itself (API.md §7.4), read for a page at once. */
export interface InboxDetailsJson {
  contact: {
    id: string;
    first_name: string | null;
    last_name: string | null;
    phone_number: string;
    opted_in: boolean;
  } | null;
  last_message: { body: string; direction: string; sender: string; created_at: string } | null;
  unread: number;
  assignee: { id: string; email: string; name: string } | null;
}

/** Characters of the latest message an inbox row carries. */
export const LAST_MESSAGE_PREVIEW = 140;

export function conversationJson(row: ConversationRow): ConversationJson {
  return {
    id: row.id,
    contact_id: row.contactId,
    status: row.status,
    needs_attention: row.needsAttention,
    attention_reason: row.needsAttention ? row.attentionReason : null,
    assigned_to: row.assignedTo,
    agent_id: row.agentId,
    agent_paused: row.agentPaused,
    agent_active: row.agentId !== null && !row.agentPaused,
    draft_reply: row.draftReply,
    intent: row.intent,
    last_message_at: toIso(row.lastMessageAt),
    created_at: toIso(row.createdAt) as string,
  };
}

function threadMessageJson(row: MessageRow): ThreadMessageJson {
  return {
    id: row.id,
    direction: row.direction,
    sender: row.sender,
    body: row.body,
    status: row.status,
    call_id: row.callId,
    created_at: toIso(row.createdAt) as string,
  };
}

/** The workspace's conversation with this id, or undefined (malformed ids never reach the database). */
export async function findConversation(
  db: DbOrTx,
  workspaceId: string,
  id: string,
): Promise<ConversationRow | undefined> {
  return await workspaceRow(db, conversations, workspaceId, id);
}

const threadStatements = preparedPerConnection((db) => {
  const id = sql.placeholder("id");
  // A message at `at`: last_message_at moves forward (never back).
  const touched = {
    lastMessageAt: greatest(sql`coalesce(${conversations.lastMessageAt}, 0)`, sql.placeholder("at")),
    updatedAt: sql`${sql.placeholder("at")}`,
  };
  return {
    // Two lookups instead of one sorted by "open first": each is a plain index search, while
    // the sort needed a temporary b-tree per call (~10 µs on every send).
    open: db
      .select()
      .from(conversations)
      .where(
        and(
          eq(conversations.workspaceId, sql.placeholder("workspaceId")),
          eq(conversations.contactId, sql.placeholder("contactId")),
          eq(conversations.status, "open"),
        ),
      )
      .limit(1)
      .prepare(),
    latest: db
      .select()
      .from(conversations)
      .where(
        and(
          eq(conversations.workspaceId, sql.placeholder("workspaceId")),
          eq(conversations.contactId, sql.placeholder("contactId")),
        ),
      )
      .orderBy(desc(conversations.createdAt))
      .limit(1)
      .prepare(),
    openOfMany: db
      .select()
      .from(conversations)
      .where(
        and(
          eq(conversations.workspaceId, sql.placeholder("workspaceId")),
          inJsonListParam(conversations.contactId, "contactIds"),
          eq(conversations.status, "open"),
        ),
      )
      .prepare(),
    reopen: db
      .update(conversations)
      .set({ status: "open", updatedAt: sql`${sql.placeholder("now")}` })
      .where(eq(conversations.id, id))
      .prepare(),
    // The thread's search key is written with the row (newSearchKey): migration 0028's trigger no
    // longer rewrites the row to set it. A contact's open thread made meanwhile by another
    // transaction (conversations_open_contact_idx) leaves this one unwritten: nothing comes back.
    // No conflict target: drizzle spells a partial index's WHERE after DO NOTHING on SQLite, and
    // the other unique keys (id, search_key) never meet a concurrent twin.
    insert: db
      .insert(conversations)
      .values({ ...rowPlaceholders(conversations), searchKey: newSearchKey(db) })
      .onConflictDoNothing()
      .returning({ id: conversations.id })
      .prepare(),
    touch: db.update(conversations).set(touched).where(eq(conversations.id, id)).prepare(),
    touchMany: db
      .update(conversations)
      .set(touched)
      .where(inJsonListParam(conversations.id, "ids"))
      .prepare(),
  };
});

/**
 * The contact's thread to write into: its open conversation, else (when `reopen`) its latest closed
 * one reopened, else a new open conversation. Call inside the transaction that adds the message.
 * Two transactions finding no open thread at once (two servers on PostgreSQL) end up in one: the
 * unique open-thread index refuses the second thread, which then takes the first one's.
 */
export async function threadForContact(
  tx: DbOrTx,
  workspaceId: string,
  contactId: string,
  options: {
    reopen: boolean;
    now: number;
    /** Owner of a thread created here. */
    agentId?: string | null;
    /** The contact was created in this transaction: it has no thread yet, so none is looked up. */
    newContact?: boolean;
  },
): Promise<ConversationRow> {
  if (options.newContact) return await newThread(tx, workspaceId, contactId, options);
  const statements = threadStatements(tx);
  const open = await statements.open.get({ workspaceId, contactId });
  if (open) return open;
  if (options.reopen) {
    const latest = await statements.latest.get({ workspaceId, contactId });
    if (latest) {
      const reopen = (on: DbOrTx) => threadStatements(on).reopen.run({ id: latest.id, now: options.now });
      if (await unlessTakenMeanwhile(tx, reopen))
        return { ...latest, status: "open", updatedAt: options.now };
      return await openThreadMadeMeanwhile(tx, workspaceId, contactId);
    }
  }
  return await newThread(tx, workspaceId, contactId, options);
}

/** The contact's open thread another transaction wrote after this one looked for it. */
async function openThreadMadeMeanwhile(
  tx: DbOrTx,
  workspaceId: string,
  contactId: string,
): Promise<ConversationRow> {
  const open = await threadStatements(tx).open.get({ workspaceId, contactId });
  // The index said it exists, and it is committed (a conflict waits for the other transaction).
  if (!open) throw new Error(`contact ${contactId} has an open thread that cannot be read`);
  return open;
}

/** A new open thread's row (its search key is the database's, given at insert). */
function newThreadRow(
  workspaceId: string,
  contactId: string,
  options: { now: number; agentId?: string | null },
): ConversationRow {
  return {
    id: newId(),
    workspaceId,
    contactId,
    status: "open",
    needsAttention: false,
    attentionReason: null,
    assignedTo: null,
    agentId: options.agentId ?? null,
    agentPaused: false,
    draftReply: null,
    intent: null,
    // Every thread is created with its first message: it sorts by that message from the start.
    lastMessageAt: options.now,
    searchKey: null,
    createdAt: options.now,
    updatedAt: options.now,
  };
}

/** Writes a new open thread for the contact (call inside the transaction that adds its first message). */
async function newThread(
  tx: DbOrTx,
  workspaceId: string,
  contactId: string,
  options: { now: number; agentId?: string | null },
): Promise<ConversationRow> {
  const row = newThreadRow(workspaceId, contactId, options);
  const written = await threadStatements(tx).insert.all(row);
  if (written.length === 0) return await openThreadMadeMeanwhile(tx, workspaceId, contactId);
  return row;
}

/**
 * The open threads of many contacts of a workspace in one index search (a bulk sender's batch),
 * by contact id. A contact without one gets it from threadFrom.
 */
export async function openThreadsOf(tx: DbOrTx, workspaceId: string, contactIds: string[]) {
  const found = new Map<string, ConversationRow>();
  if (contactIds.length === 0) return found;
  const rows = await threadStatements(tx).openOfMany.all({
    workspaceId,
    contactIds: jsonList(contactIds),
  });
  for (const row of rows) if (!found.has(row.contactId)) found.set(row.contactId, row);
  return found;
}

/**
 * New open threads for the contacts of a batch that have none in `open` (its openThreadsOf), made
 * together and added to the map: on PostgreSQL one statement for the batch. A contact whose open
 * thread another transaction made meanwhile gets that one.
 */
export async function openThreadsFor(
  tx: DbOrTx,
  open: Map<string, ConversationRow>,
  workspaceId: string,
  contactIds: readonly string[],
  now: number,
): Promise<void> {
  const rows = [...new Set(contactIds)]
    .filter((contactId) => !open.has(contactId))
    .map((contactId) => newThreadRow(workspaceId, contactId, { now }));
  if (rows.length === 0) return;
  const written = await insertRowsReturning(
    tx,
    conversations,
    rows,
    "open-thread",
    { conflict: {}, returning: { id: conversations.id } },
    { searchKey: newSearchKey(tx) },
  );
  const made = new Set(written.map((row) => row.id));
  const lost: string[] = [];
  for (const row of rows) {
    if (made.has(row.id)) open.set(row.contactId, row);
    else lost.push(row.contactId);
  }
  if (lost.length > 0)
    for (const [contactId, row] of await openThreadsOf(tx, workspaceId, lost)) open.set(contactId, row);
}

/**
 * The contact's thread from a batch's openThreadsOf, else a new open thread (remembered in the
 * map): threadForContact without reopening, for the batch's contacts.
 */
export async function threadFrom(
  tx: DbOrTx,
  open: Map<string, ConversationRow>,
  workspaceId: string,
  contactId: string,
  now: number,
): Promise<ConversationRow> {
  const found = open.get(contactId);
  if (found) return found;
  const row = await newThread(tx, workspaceId, contactId, { now });
  open.set(contactId, row);
  return row;
}

/** touchConversation of many threads at one instant, in one statement. */
export async function touchConversations(tx: DbOrTx, conversationIds: readonly string[], at: number) {
  if (conversationIds.length === 0) return;
  await threadStatements(tx).touchMany.run({ ids: jsonList([...new Set(conversationIds)]), at });
}

/** Moves the thread's `last_message_at` forward (never back). */
export async function touchConversation(tx: DbOrTx, conversationId: string, at: number) {
  await threadStatements(tx).touch.run({ id: conversationId, at });
}

/**
 * Flags a thread for a human, saying why. Emits `conversation.needs_attention` when the flag turns
 * on (not again while it stays on). A possible opt-out replaces the reason of a thread already
 * flagged: it is the one a person must not miss.
 */
export async function flagNeedsAttention(
  tx: DbOrTx,
  conversation: ConversationRow,
  now: number,
  reason: AttentionReason,
) {
  if (conversation.needsAttention) {
    if (reason !== "possible_opt_out" || conversation.attentionReason === reason) return conversation;
    await tx
      .update(conversations)
      .set({ attentionReason: reason })
      .where(eq(conversations.id, conversation.id))
      .run();
    return { ...conversation, attentionReason: reason };
  }
  const updated = { ...conversation, needsAttention: true, attentionReason: reason, updatedAt: now };
  await tx
    .update(conversations)
    .set({ needsAttention: true, attentionReason: reason, updatedAt: now })
    .where(eq(conversations.id, conversation.id))
    .run();
  await emitEvent(
    tx,
    conversation.workspaceId,
    "conversation.needs_attention",
    conversationJson(updated),
    now,
  );
  return updated;
}

const filterConditions: Record<ConversationFilter, SQL | undefined> = {
  all: undefined,
  open: eq(conversations.status, "open"),
  closed: eq(conversations.status, "closed"),
  needs_attention: eq(conversations.needsAttention, true),
  assigned: isNotNull(conversations.assignedTo),
  unassigned: isNull(conversations.assignedTo),
  // Threads an agent is handling: it owns them and has not handed off or been paused by a reply.
  agent: and(isNotNull(conversations.agentId), eq(conversations.agentPaused, false)),
  // Stands for the viewer's own threads: replaced by `assigned_to = <user>` in filterCondition.
  mine: undefined,
};

function filterCondition(filter: ConversationFilter, viewer: InboxViewer): SQL | undefined {
  if (filter !== "mine") return filterConditions[filter];
  // An API key is no one: "mine" has no meaning for it, and an empty list would look like an answer.
  if (!viewer.userId) throw invalid("filter mine needs a signed-in user (an API key has none)");
  return eq(conversations.assignedTo, viewer.userId);
}

/** Inbox threads, most recently active first, narrowed by `filter` and searched by `q`. */
export async function listConversations(
  db: Db,
  workspaceId: string,
  query: { filter?: string; q?: string; limit: number; offset: number },
  viewer: InboxViewer = { userId: null },
) {
  const filter = (query.filter ?? "all") as ConversationFilter;
  if (!CONVERSATION_FILTERS.includes(filter))
    throw invalid(`filter must be one of ${CONVERSATION_FILTERS.join(", ")}`);
  const condition = filterCondition(filter, viewer);
  const q = query.q?.trim();
  if (q) {
    const found = await searchConversations(db, {
      workspaceId,
      text: q,
      where: condition,
      limit: query.limit,
      offset: query.offset,
    });
    return {
      conversations: await inboxRows(db, workspaceId, found.rows, viewer),
      total: found.total,
      limit: query.limit,
      offset: query.offset,
    };
  }
  const where = and(eq(conversations.workspaceId, workspaceId), condition);
  const rows = await db
    .select()
    .from(conversations)
    .where(where)
    .orderBy(nullsLast(desc(conversations.lastMessageAt)), desc(conversations.id))
    .limit(query.limit)
    .offset(query.offset)
    .all();
  const total = (await db.select({ n: count() }).from(conversations).where(where).get())?.n ?? 0;
  return {
    conversations: await inboxRows(db, workspaceId, rows, viewer),
    total,
    limit: query.limit,
    offset: query.offset,
  };
}

/**
 * The page's threads with their contact, latest message, unread count and assignee: one query for
 * the whole page (each part an indexed lookup per thread), never one request per row. `messages`
 * joined here is each thread's latest message (the subqueries name their own `m`).
 *
 * `unread` counts inbound messages after the viewer last opened the thread; for an API key (no
 * user), after any workspace user last opened it.
 */
async function inboxRows(db: Db, workspaceId: string, rows: ConversationRow[], viewer: InboxViewer) {
  if (rows.length === 0) return [];
  const readBy = viewer.userId ? sql`AND r.user_id = ${viewer.userId}` : sql``;
  const lastRead = sql`coalesce((SELECT max(r.read_at) FROM ${conversationReads} r WHERE r.conversation_id = ${conversations.id} ${readBy}), 0)`;
  const details = await db
    .select({
      id: conversations.id,
      contactId: contacts.id,
      firstName: contacts.firstName,
      lastName: contacts.lastName,
      phoneNumber: contacts.phoneNumber,
      optedIn: contacts.optedIn,
      lastBody: sql<string | null>`substr(${messages.body}, 1, ${LAST_MESSAGE_PREVIEW})`,
      lastDirection: messages.direction,
      lastSender: messages.sender,
      lastAt: messages.createdAt,
      unread:
        sql<number>`(SELECT count(*) FROM ${messages} m WHERE m.workspace_id = ${conversations.workspaceId} AND m.conversation_id = ${conversations.id} AND m.direction = 'inbound' AND m.created_at > ${lastRead})`.mapWith(
          Number,
        ),
      assigneeId: users.id,
      assigneeEmail: users.email,
      assigneeName: users.name,
    })
    .from(conversations)
    .leftJoin(
      contacts,
      and(eq(contacts.id, conversations.contactId), eq(contacts.workspaceId, conversations.workspaceId)),
    )
    .leftJoin(
      messages,
      eq(
        messages.id,
        sql`(SELECT m.id FROM ${messages} m WHERE m.workspace_id = ${conversations.workspaceId} AND m.conversation_id = ${conversations.id} ORDER BY m.created_at DESC, m.id DESC LIMIT 1)`,
      ),
    )
    .leftJoin(users, eq(users.id, conversations.assignedTo))
    .where(
      and(
        eq(conversations.workspaceId, workspaceId),
        inJsonList(
          conversations.id,
          rows.map((r) => r.id),
        ),
      ),
    )
    .all();
  const byId = new Map(details.map((d) => [d.id, d]));
  return rows.map((row) => {
    const d = byId.get(row.id);
    const extra: InboxDetailsJson = {
      contact:
        d?.contactId && d.phoneNumber !== null
          ? {
              id: d.contactId,
              first_name: d.firstName,
              last_name: d.lastName,
              phone_number: d.phoneNumber,
              opted_in: Boolean(d.optedIn),
            }
          : null,
      last_message:
        d?.lastAt != null && d.lastDirection !== null && d.lastSender !== null
          ? {
              body: d.lastBody ?? "",
              direction: d.lastDirection,
              sender: d.lastSender,
              created_at: toIso(d.lastAt) as string,
            }
          : null,
      unread: Number(d?.unread ?? 0),
      assignee:
        d?.assigneeId && d.assigneeEmail !== null && d.assigneeName !== null
          ? { id: d.assigneeId, email: d.assigneeEmail, name: d.assigneeName }
          : null,
    };
    return { ...conversationJson(row), ...extra };
  });
}

/**
 * One conversation with its full thread, oldest first: its messages and the team's notes
 * (`sender: "note"`). A signed-in user opening it marks it read for them (`unread` counts from here).
 */
export async function getConversation(
  db: Db,
  workspaceId: string,
  id: string,
  viewer: InboxViewer = { userId: null },
  now = Date.now(),
) {
  // The thread's entries first, then its row: each read sees at least what the one before it saw,
  // so a reply in the list comes with the thread state its transaction wrote (its intent, its
  // flag), never with the row as it was before it (PostgreSQL reads each statement afresh).
  const thread = await db
    .select()
    .from(messages)
    .where(and(eq(messages.workspaceId, workspaceId), eq(messages.conversationId, id)))
    .orderBy(messages.createdAt, messages.id)
    .all();
  const notes = await db
    .select()
    .from(conversationNotes)
    .where(and(eq(conversationNotes.workspaceId, workspaceId), eq(conversationNotes.conversationId, id)))
    .orderBy(conversationNotes.createdAt, conversationNotes.id)
    .all();
  const row = await findConversation(db, workspaceId, id);
  if (!row) throw notFound();
  if (viewer.userId) {
    const lastInbound = thread.reduce(
      (at, m) => (m.direction === "inbound" && m.createdAt > at ? m.createdAt : at),
      0,
    );
    if (lastInbound > 0) await markRead(db, workspaceId, row.id, viewer.userId, now, lastInbound);
  }
  const entries = [...thread.map(threadMessageJson), ...notes.map(noteEntryJson)].sort((a, b) =>
    a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1,
  );
  return { ...conversationJson(row), messages: entries };
}

/**
 * Records that the user opened the thread now, only when that changes what they have read: the
 * inbox polls an open thread every few seconds, and a poll that finds no inbound message newer than
 * the user's last read writes nothing (the `WHERE` of the upsert). Never moves a read mark back.
 */
async function markRead(
  db: Db,
  workspaceId: string,
  conversationId: string,
  userId: string,
  now: number,
  lastInbound: number,
) {
  await db
    .insert(conversationReads)
    .values({ conversationId, userId, workspaceId, readAt: now })
    .onConflictDoUpdate({
      target: [conversationReads.conversationId, conversationReads.userId],
      set: { readAt: greatest(conversationReads.readAt, sql`excluded.read_at`) },
      setWhere: sql`${conversationReads.readAt} < ${lastInbound}`,
    })
    .run();
}

function noteAuthor(row: ConversationNoteRow): NoteAuthorJson {
  return { user_id: row.authorUserId, name: row.authorName };
}

function noteJson(row: ConversationNoteRow): NoteJson {
  return { id: row.id, body: row.body, author: noteAuthor(row), created_at: toIso(row.createdAt) as string };
}

/** A note as an entry of the thread: never sent, so no direction out and no delivery status. */
function noteEntryJson(row: ConversationNoteRow): ThreadMessageJson {
  return {
    id: row.id,
    direction: "internal",
    sender: "note",
    body: row.body,
    status: "NOTE",
    call_id: null,
    created_at: toIso(row.createdAt) as string,
    author: noteAuthor(row),
  };
}

/**
 * Adds a private note to a thread (API.md §7.4). It is stored apart from messages, so no send,
 * webhook, analytics figure or agent context ever sees it; it does not move the thread in the inbox.
 */
export async function addNote(
  db: Db,
  workspaceId: string,
  conversationId: string,
  body: string,
  author: { userId: string | null; name: string },
  now: number,
): Promise<NoteJson> {
  const text = body.trim();
  if (!text) throw invalid("body is required");
  return await db.transaction(async (tx) => {
    const row = await findConversation(tx, workspaceId, conversationId);
    if (!row) throw notFound();
    const note: ConversationNoteRow = {
      id: newId(),
      workspaceId,
      conversationId: row.id,
      body: text,
      authorUserId: author.userId,
      authorName: author.name,
      createdAt: now,
    };
    await tx.insert(conversationNotes).values(note).run();
    return noteJson(note);
  });
}

/** The workspace's users a thread can be assigned to, by name (byte order, on both databases). */
export async function listAssignees(db: Db, workspaceId: string) {
  return await db
    .select({ id: users.id, email: users.email, name: users.name })
    .from(users)
    .innerJoin(memberships, and(eq(memberships.userId, users.id), eq(memberships.workspaceId, workspaceId)))
    .orderBy(byteOrder(users.name), byteOrder(users.email))
    .all();
}

/**
 * The workspace user `reference` names, by id or e-mail (any case): the id to store as the
 * assignee. Anyone else → 422 `assigned_to does not exist`.
 */
async function assigneeId(tx: DbOrTx, workspaceId: string, reference: string): Promise<string> {
  const byId = isUuid(reference) ? eq(users.id, reference) : undefined;
  const byEmail = reference.includes("@") ? eq(users.email, reference.trim().toLowerCase()) : undefined;
  const found =
    byId || byEmail
      ? await tx
          .select({ id: users.id })
          .from(users)
          .innerJoin(
            memberships,
            and(eq(memberships.userId, users.id), eq(memberships.workspaceId, workspaceId)),
          )
          .where(or(byId, byEmail))
          .get()
      : undefined;
  if (!found) throw invalid("assigned_to does not exist");
  return found.id;
}

export interface ConversationPatch {
  status?: string;
  assigned_to?: string | null;
  needs_attention?: boolean;
  agent_id?: string | null;
}

/** Inbox triage: status, assignee (a workspace user's id or e-mail, stored as the id) and the attention flag. */
export async function updateConversation(
  db: Db,
  workspaceId: string,
  id: string,
  patch: ConversationPatch,
  now = Date.now(),
) {
  if (patch.status !== undefined && !CONVERSATION_STATUSES.includes(patch.status as ConversationStatus))
    throw invalid(`status must be one of ${CONVERSATION_STATUSES.join(", ")}`);
  await db.transaction(async (tx) => {
    const row = await findConversation(tx, workspaceId, id);
    if (!row) throw notFound();
    // A contact has one open thread (conversations_open_contact_idx): an old one is not reopened
    // beside it.
    if (patch.status === "open" && row.status !== "open") {
      const open = await threadStatements(tx).open.get({ workspaceId, contactId: row.contactId });
      if (open) throw conflict("The contact has another open conversation");
    }
    const set: Partial<ConversationRow> = { updatedAt: now };
    if (patch.status !== undefined) set.status = patch.status;
    if (patch.assigned_to !== undefined)
      set.assignedTo =
        patch.assigned_to === null ? null : await assigneeId(tx, workspaceId, patch.assigned_to);
    if (patch.agent_id !== undefined) {
      // Giving the thread to an agent (or another one) makes it active there; null takes it away.
      if (patch.agent_id !== null) await smsAgentForReference(tx, workspaceId, patch.agent_id, "agent_id");
      set.agentId = patch.agent_id;
      set.agentPaused = false;
      set.draftReply = null;
    }
    await tx.update(conversations).set(set).where(eq(conversations.id, row.id)).run();
    if (patch.needs_attention === true) await flagNeedsAttention(tx, row, now, "manual");
    else if (patch.needs_attention === false)
      await tx
        .update(conversations)
        .set({ needsAttention: false, attentionReason: null })
        .where(eq(conversations.id, row.id))
        .run();
  });
}
