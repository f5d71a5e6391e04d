import { and, desc, eq } from "drizzle-orm";
import type { Db, DbOrTx, Tx } from "../../db/client";
import { groupCommit } from "../../db/group-commit";
import { insertRows } from "../../db/prepared";
import {
  type ContactRow,
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
import { ensureContact, findContactByPhone } from "../audience/contacts";
import { canSendTo } from "../audience/suppression";
import { registeredNumberIds, senderSkip } from "../registration/sender-check";
import { spendDailyBudget } from "../workspace/daily-budgets";
import { sendSettingsOf } from "../workspace/send-settings";
import { findConversation, threadForContact } from "./conversations";
import { MAX_BODY_LENGTH } from "./message-json";
import { reserveDailySend, resolveSender } from "./numbers";
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
 * POST /v1/messages: one SMS now. In one savepoint: spend one of the workspace's one-off daily
 * budget (429 past it), resolve the sender, check opt-out and suppression, create the contact and
 * conversation if new, reserve the number's daily cap, record the message PENDING and enqueue its send; nothing is written when any check fails. The savepoint is
 * part of a transaction shared with the other sends of this event-loop turn (the group commit,
 * src/db/group-commit.ts), and the promise settles after its commit. Input errors throw at once,
 * before anything is queued.
 */
export async function submitOneOffMessage(
  db: Db,
  workspaceId: string,
  input: OneOffInput,
  now = Date.now(),
): Promise<{ id: string; status: string }> {
  const checked = checkOneOff(input);
  return await groupCommit(db, async (tx, group) => {
    // The group's messages are written in one statement, then go to the carrier in one send job
    // per workspace.
    const rows = group.collect(
      "messages.rows",
      (): MessageRow[] => [],
      async (tx, rows) => await insertRows(tx, messages, rows),
    );
    const batch = group.collect(
      `messages.send_batch:${workspaceId}`,
      (): string[] => [],
      async (tx, ids) => await enqueueSendBatch(tx, workspaceId, ids, now),
    );
    return await acceptOneOff(tx, workspaceId, checked, { batch, rows }, now);
  });
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

async function acceptOneOff(
  tx: Tx,
  workspaceId: string,
  input: CheckedOneOff,
  group: { batch: string[]; rows: MessageRow[] },
  now: number,
) {
  // The workspace's settings and the recipient's contact are each read once for all the checks,
  // and the reads that wait on nothing are started together (one round trip on PostgreSQL, whose
  // connection runs them in order); their answers are still taken in the order of the checks, so
  // the first refusal is the same one.
  const [settings, existing] = await Promise.all([
    sendSettingsOf(tx, workspaceId),
    findContactByPhone(tx, workspaceId, input.to),
  ]);
  const known = { contact: existing };
  const permission = startedEarly(canSendTo(tx, workspaceId, input.to, known));
  const sender = startedEarly(resolveSender(tx, workspaceId, input.from, settings));
  // The workspace's daily budget first (429); any later refusal rolls the spend back with the rest.
  await spendDailyBudget(tx, workspaceId, "one_off_daily_limit", 1, now, settings?.limits);
  const from = await sender;
  const registered = startedEarly(registeredNumberIds(tx, workspaceId, settings));
  // Counted first, so a full number is the answer whatever else is wrong; a later refusal rolls
  // the count back with the rest of this write.
  if (!(await reserveDailySend(tx, from, now))) throw invalid("from has reached its daily_limit");
  if (senderSkip(await registered, from)) throw invalid("from is not registered for A2P messaging");
  refuseUnless(await permission);
  const { contact, created } = await ensureContact(tx, workspaceId, input.to, "api", now, known);
  const conversation = await threadForContact(tx, workspaceId, contact.id, {
    reopen: true,
    now,
    newContact: created,
  });
  const row = await queueOutboundMessage(tx, {
    workspaceId,
    contact,
    conversationId: conversation.id,
    thread: conversation,
    numberId: from.id,
    from: from.number,
    body: input.body,
    sender: "human",
    ...group,
    now,
  });
  return { id: row.id, status: row.status };
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
