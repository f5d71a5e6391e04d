import { and, desc, eq } from "drizzle-orm";
import type { Db, DbOrTx, Tx } from "../../db/client";
import { type BatchOutcome, groupBatch } from "../../db/group-commit";
import { allOver, insertRows } from "../../db/prepared";
import {
  type ContactRow,
  type ConversationRow,
  contacts,
  conversations,
  type MessageRow,
  messages,
  NUMBER_IS_ACTIVE,
  numbers,
} from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { invalid, notFound } from "../../lib/errors";
import { normalizePhone } from "../../lib/phone";
import { ensureContacts, findContactsByPhones } from "../audience/contacts";
import { canSendTo, suppressionReasons } from "../audience/suppression";
import { registeredNumberIds, senderSkip } from "../registration/sender-check";
import { DailyBudgetBook, spendDailyBudget } from "../workspace/daily-budgets";
import { sendSettingsOf } from "../workspace/send-settings";
import {
  findConversation,
  openThreadsFor,
  openThreadsOf,
  threadForContact,
  touchConversations,
} from "./conversations";
import { MAX_BODY_LENGTH } from "./message-json";
import { DailySendBook, type NumberRow, reserveDailySend, resolveSender } from "./numbers";
import { enqueueSendBatch, queueOutboundMessage } from "./outbound";

export interface OneOffInput {
  to: string;
  body: string;
  from?: string;
}

/** Validates the body text of any outbound message (1..1600 characters, not only blanks). */
export function checkBody(body: string) {
  if (body.trim() === "") throw invalid("body is required");
  if (body.length > MAX_BODY_LENGTH) throw invalid(`body is too long (max ${MAX_BODY_LENGTH})`);
}

/** Throws 422 `Recipient has opted out` / `Recipient is suppressed` when `phone` may not be sent to. */
export async function assertCanSendTo(db: DbOrTx, workspaceId: string, phone: string) {
  refuseUnless(await canSendTo(db, workspaceId, phone));
}

/** 422 with the permission's own message when it does not allow the send. */
function refuseUnless(permission: Awaited<ReturnType<typeof canSendTo>>) {
  if (!permission.allowed) throw invalid(permission.message);
}

/**
 * POST /v1/messages: one SMS now. Spends one of the workspace's one-off daily budget (429 past
 * it), resolves the sender, reserves its daily cap, checks registration, opt-out and suppression,
 * creates the contact and conversation if new, and records the message PENDING with its send
 * job; nothing is written when any check fails. The sends of one event-loop turn are accepted
 * together (groupBatch, src/db/group-commit.ts: one transaction, and a statement per batch
 * instead of per send), and the promise settles after the commit. Input errors throw at once,
 * before anything is queued.
 */
export async function submitOneOffMessage(
  db: Db,
  workspaceId: string,
  input: OneOffInput,
  now = Date.now(),
): Promise<{ id: string; status: string }> {
  const checked = checkOneOff(input);
  return await groupBatch(db, "messages.one_off", { workspaceId, input: checked, now }, acceptOneOffs);
}

interface CheckedOneOff {
  to: string;
  from: string | undefined;
  body: string;
}

function checkOneOff(input: OneOffInput): CheckedOneOff {
  const to = normalizePhone(input.to);
  if (!to) throw invalid("to must be a valid phone number");
  checkBody(input.body);
  let from: string | undefined;
  if (input.from !== undefined && input.from !== null) {
    from = normalizePhone(input.from) ?? undefined;
    if (!from) throw invalid("from must be a valid phone number");
  }
  return { to, from, body: input.body };
}

interface OneOffSend {
  workspaceId: string;
  input: CheckedOneOff;
  now: number;
}

type Accepted = { id: string; status: string };

/** The one-off sends of a group, workspace by workspace; each answers its message or its refusal. */
async function acceptOneOffs(tx: Tx, sends: OneOffSend[]): Promise<BatchOutcome<Accepted>[]> {
  const outcomes: BatchOutcome<Accepted>[] = new Array(sends.length);
  const byWorkspace = Map.groupBy(sends.keys(), (i) => sends[i].workspaceId);
  for (const [workspaceId, at] of byWorkspace)
    await acceptForWorkspace(
      tx,
      workspaceId,
      at.map((i) => sends[i].input),
      Math.max(...at.map((i) => sends[i].now)),
    ).then((answers) =>
      answers.forEach((answer, n) => {
        outcomes[at[n]] = answer;
      }),
    );
  return outcomes;
}

/**
 * One workspace's one-off sends of a group, at one instant `now` (the latest of their requests),
 * with the checks of each made in the order a single send makes them, so the first refusal is the
 * same: the daily budget (429), the sender, its daily cap, its registration, then opt-out and
 * suppression. What they read is read once for all of them (settings, contacts, suppressions,
 * senders, counters held until the commit), and what the accepted ones write is written together.
 */
async function acceptForWorkspace(
  tx: Tx,
  workspaceId: string,
  sends: CheckedOneOff[],
  now: number,
): Promise<BatchOutcome<Accepted>[]> {
  const phones = [...new Set(sends.map((send) => send.to))];
  const [settings, contactOf, suppressionOf] = await Promise.all([
    sendSettingsOf(tx, workspaceId),
    findContactsByPhones(tx, workspaceId, phones),
    suppressionReasons(tx, workspaceId, phones),
  ]);
  const senders = new Map<string, Promise<NumberRow>>();
  const senderOf = (from: string | undefined) => {
    let sender = senders.get(from ?? "");
    if (!sender) {
      sender = startedEarly(resolveSender(tx, workspaceId, from, settings));
      senders.set(from ?? "", sender);
    }
    return sender;
  };
  // Started together (one round trip on PostgreSQL); refusals are taken send by send below.
  for (const send of sends) void senderOf(send.from);
  const registered = startedEarly(registeredNumberIds(tx, workspaceId, settings));
  // No settings: the workspace is gone (its sender cannot be resolved either); no limit to read.
  const limit = settings?.limits.one_off_daily_limit ?? null;
  const budget = new DailyBudgetBook(tx, workspaceId, "one_off_daily_limit", limit, now);
  const caps = new DailySendBook(tx, now);

  /** The checks after the budget's: the sender, with its daily send reserved, or the refusal. */
  const senderFor = async (send: CheckedOneOff): Promise<{ from: NumberRow } | { refusal: unknown }> => {
    let from: NumberRow;
    try {
      from = await senderOf(send.from);
    } catch (refusal) {
      return { refusal };
    }
    if (!(await caps.reserve(from))) return { refusal: invalid("from has reached its daily_limit") };
    // canSendTo with what was read for the batch: no statement of its own.
    const permission = await canSendTo(tx, workspaceId, send.to, {
      contact: contactOf.get(send.to),
      suppression: suppressionOf.get(send.to) ?? null,
    });
    const refusal = senderSkip(await registered, from)
      ? invalid("from is not registered for A2P messaging")
      : permission.allowed
        ? null
        : invalid(permission.message);
    if (!refusal) return { from };
    caps.release(from);
    return { refusal };
  };

  const outcomes: BatchOutcome<Accepted>[] = [];
  const accepted: { at: number; send: CheckedOneOff; from: NumberRow }[] = [];
  for (const send of sends) {
    if (!(await budget.spend())) {
      outcomes.push({ ok: false, error: budget.refusal() });
      continue;
    }
    const checked = await senderFor(send);
    if ("refusal" in checked) {
      budget.release();
      outcomes.push({ ok: false, error: checked.refusal });
      continue;
    }
    accepted.push({ at: outcomes.length, send, from: checked.from });
    outcomes.push({ ok: true, value: { id: "", status: "" } });
  }
  if (accepted.length === 0) return outcomes;

  // The accepted sends' writes: new contacts (and their contact.created), threads, messages.
  const ensured = await ensureContacts(
    tx,
    workspaceId,
    accepted.map(({ send }) => send.to),
    contactOf,
    "api",
    now,
  );
  const threads = await threadsFor(tx, workspaceId, ensured, now);
  const rows: MessageRow[] = [];
  const batch: string[] = [];
  for (const { at, send, from } of accepted) {
    const contact = ensured.byPhone.get(send.to) as ContactRow;
    const thread = threads.get(contact.id) as ConversationRow;
    const row = await queueOutboundMessage(tx, {
      workspaceId,
      contact,
      conversationId: thread.id,
      thread,
      numberId: from.id,
      from: from.number,
      body: send.body,
      sender: "human",
      rows,
      batch,
      now,
    });
    outcomes[at] = { ok: true, value: { id: row.id, status: row.status } };
  }
  // Independent writes, sent together (one round trip on PostgreSQL); all of them are over before
  // a failure is thrown, so none runs after the batch's savepoint is rolled back.
  await allOver([
    insertRows(tx, messages, rows),
    enqueueSendBatch(tx, workspaceId, batch, now),
    caps.flush(),
    budget.flush(),
  ]);
  return outcomes;
}

/**
 * Each contact's thread to write into, as threadForContact with `reopen` finds or makes it: a new
 * contact's is made (all in one statement), another's is its open one (all read at once), else
 * its latest closed one reopened, else a new one. Every thread comes back stamped with `now` as
 * its last message (the messages written next).
 */
async function threadsFor(
  tx: Tx,
  workspaceId: string,
  ensured: { byPhone: Map<string, ContactRow>; created: Set<string> },
  now: number,
): Promise<Map<string, ConversationRow>> {
  const ids = [...new Set([...ensured.byPhone.values()].map((contact) => contact.id))];
  const known = ids.filter((id) => !ensured.created.has(id));
  const threads = await openThreadsOf(tx, workspaceId, known);
  const stamped = new Set([...threads.values()].map((thread) => thread.id));
  for (const id of known)
    if (!threads.has(id)) threads.set(id, await threadForContact(tx, workspaceId, id, { reopen: true, now }));
  await openThreadsFor(
    tx,
    threads,
    workspaceId,
    ids.filter((id) => ensured.created.has(id)),
    now,
  );
  // The open threads found get their last message now (new and reopened ones wrote it already
  // or are touched by queueOutboundMessage).
  await touchConversations(tx, [...stamped], now);
  for (const [contactId, thread] of threads)
    if (stamped.has(thread.id))
      threads.set(contactId, {
        ...thread,
        lastMessageAt: Math.max(thread.lastMessageAt ?? 0, now),
        updatedAt: now,
      });
  return threads;
}

/**
 * A read started before its answer is needed: a refusal taken earlier leaves it unawaited, so its
 * own failure (the transaction is rolled back anyway) must not count as unhandled.
 */
function startedEarly<T>(read: Promise<T>): Promise<T> {
  read.catch(() => {});
  return read;
}

// ---------------------------------------------------------------------------------------------
// Human replies into a thread.

/**
 * POST /v1/conversations/{id}: the team answers in a thread. The reply goes out from the number
 * the thread last used (else the workspace default), pauses the thread's agent and clears
 * `needs_attention`. Suppression and opt-out apply (422). A reply is a one-off send: it spends the
 * workspace's `one_off_daily_limit` (429 past it, nothing written), or a leaked key could text one
 * thread without bound.
 */
export async function replyToConversation(
  db: Db,
  workspaceId: string,
  conversationId: string,
  body: string,
  now = Date.now(),
) {
  checkBody(body);
  await db.transaction(async (tx) => {
    const conversation = await findConversation(tx, workspaceId, conversationId);
    if (!conversation) throw notFound();
    // The daily budget first (429); any later refusal rolls the spend back with the rest.
    await spendDailyBudget(tx, workspaceId, "one_off_daily_limit", 1, now);
    const contact = await contactOf(tx, workspaceId, conversation.contactId);
    const sender = await resolveSender(tx, workspaceId, await threadNumber(tx, workspaceId, conversation.id));
    if (!(await reserveDailySend(tx, sender, now))) throw invalid("from has reached its daily_limit");
    await assertCanSendTo(tx, workspaceId, contact.phoneNumber);
    await queueOutboundMessage(tx, {
      workspaceId,
      contact,
      conversationId: conversation.id,
      numberId: sender.id,
      from: sender.number,
      body,
      sender: "human",
      now,
    });
    await pauseAgentAndClearAttention(tx, conversation.id, now);
  });
}

async function contactOf(tx: DbOrTx, workspaceId: string, contactId: string): Promise<ContactRow> {
  const contact = await workspaceRow(tx, contacts, workspaceId, contactId);
  // A thread whose contact was deleted cannot be answered.
  if (!contact) throw invalid("The conversation's contact no longer exists");
  return contact;
}

/** The workspace number the thread last used (sent from or received on), if still active. */
export async function threadNumber(
  tx: DbOrTx,
  workspaceId: string,
  conversationId: string,
): Promise<string | undefined> {
  const last = await tx
    .select({ numberId: messages.numberId })
    .from(messages)
    .innerJoin(numbers, eq(numbers.id, messages.numberId))
    .where(
      and(
        eq(messages.workspaceId, workspaceId),
        eq(messages.conversationId, conversationId),
        NUMBER_IS_ACTIVE,
      ),
    )
    .orderBy(desc(messages.createdAt))
    .limit(1)
    .get();
  if (!last?.numberId) return undefined;
  return (
    await tx.select({ number: numbers.number }).from(numbers).where(eq(numbers.id, last.numberId)).get()
  )?.number;
}

async function pauseAgentAndClearAttention(tx: DbOrTx, conversationId: string, now: number) {
  const row = await tx.select().from(conversations).where(eq(conversations.id, conversationId)).get();
  if (!row) return;
  await tx
    .update(conversations)
    .set({
      needsAttention: false,
      attentionReason: null,
      agentPaused: row.agentId !== null ? true : row.agentPaused,
      draftReply: null,
      updatedAt: now,
    })
    .where(eq(conversations.id, conversationId))
    .run();
}
