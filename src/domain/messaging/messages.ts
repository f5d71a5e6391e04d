import { and, count, desc, eq, isNull, type SQL } from "drizzle-orm";
import {
  type Carrier,
  type CarrierMessageStatus,
  CarrierUnavailableError,
  type InboundSms,
  type OutboundSms,
  type StatusUpdate,
} from "../../carriers/carrier";
import type { Db, DbOrTx, Tx } from "../../db/client";
import { sqlFalse } from "../../db/dialect";
import { groupCommit } from "../../db/group-commit";
import { messageStatements } from "../../db/message-statements";
import { preparedPerConnection, rowPlaceholders } from "../../db/prepared";
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
import type { JobContext, JobPayloads } from "../../jobs/catalog";
import { JOB_POLICIES, RescheduleJob } from "../../jobs/catalog";
import { enqueueJob } from "../../jobs/queue";
import { invalid, notFound } from "../../lib/errors";
import { Gate } from "../../lib/gate";
import { isUuid, newId } from "../../lib/ids";
import { log } from "../../lib/log";
import { normalizePhone } from "../../lib/phone";
import { smsShape } from "../../lib/sms-encoding";
import { toIso } from "../../lib/time";
import { ensureContact } from "../audience/contacts";
import { canSendTo } from "../audience/suppression";
import { type HandOffRules, handOffDecision, isMarketingMessage } from "../campaigns/send-plan";
import { emitEvent } from "../events";
import { registeredNumberIds, senderSkip } from "../registration/sender-check";
import { spendDailyBudget } from "../workspace/daily-budgets";
import { findConversation, type MessageSender, threadForContact, touchConversation } from "./conversations";
import { reserveDailySend, resolveSender } from "./numbers";

export const MESSAGE_STATUSES = [
  "PENDING",
  "QUEUED",
  "SENT",
  "DELIVERED",
  "UNDELIVERED",
  "FAILED",
  "RECEIVED",
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];
export const MAX_BODY_LENGTH = 1600;

/** How far along a message is; a status update never moves a message to a lower rank. */
const STATUS_RANK: Record<string, number> = {
  PENDING: 0,
  QUEUED: 1,
  SENT: 2,
  DELIVERED: 3,
  UNDELIVERED: 3,
  FAILED: 3,
  RECEIVED: 3,
};
const NOT_YET_SENT = ["PENDING", "QUEUED"];

/** The Message record (API.md §3 Messages); also the data of `message.*` events. */
export interface MessageJson {
  id: string;
  direction: string;
  from: string;
  to: string;
  body: string;
  status: string;
  segments: number;
  encoding: string;
  contact_id: string | null;
  conversation_id: string | null;
  campaign_id: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  sent_at: string | null;
  delivered_at: string | null;
  send_at: string | null;
}

export function messageJson(row: MessageRow): MessageJson {
  return {
    id: row.id,
    direction: row.direction,
    from: row.fromNumber,
    to: row.toNumber,
    body: row.body,
    status: row.status,
    segments: row.segments,
    encoding: row.encoding,
    contact_id: row.contactId,
    conversation_id: row.conversationId,
    campaign_id: row.campaignId,
    error_code: row.errorCode,
    error_message: row.errorMessage,
    created_at: toIso(row.createdAt) as string,
    sent_at: toIso(row.sentAt),
    delivered_at: toIso(row.deliveredAt),
    send_at: toIso(row.sendAt),
  };
}

// ---------------------------------------------------------------------------------------------
// Runtime: the carrier each database's send jobs use (a process may serve several in tests).

interface MessagingRuntime {
  carrier: Carrier;
}
const runtimes = new WeakMap<Db, MessagingRuntime>();

/**
 * Wires messaging to a carrier at boot: send jobs on `db` hand off to `carrier`, and what the
 * carrier reports (status changes, inbound messages) is applied to `db`.
 */
export function startMessaging(
  db: Db,
  carrier: Carrier,
  options: { onInbound: (db: Db, sms: InboundSms) => unknown },
) {
  runtimes.set(db, { carrier });
  carrier.attachSinks({
    onStatus: async (updates) => await applyStatusUpdates(db, updates),
    onInbound: async (sms) => {
      await options.onInbound(db, sms);
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Accepting sends.

export interface OutboundInput {
  workspaceId: string;
  contact: ContactRow;
  conversationId: string | null;
  /**
   * The thread as the caller holds it (from threadForContact or threadFrom): a thread already
   * stamped with `now` — made by this write — is not written again to move its last message time.
   */
  thread?: Pick<ConversationRow, "lastMessageAt" | "updatedAt">;
  /** The sending number (row id and E.164). */
  numberId: string | null;
  from: string;
  body: string;
  sender: MessageSender;
  campaignId?: string | null;
  /** An agent's follow-up: counted by the frequency cap as a marketing send. */
  followup?: boolean;
  /** Only the STOP confirmation: the one message allowed to an opted-out number. */
  optOutConfirmation?: boolean;
  runAt?: number;
  /**
   * A bulk sender's batch: the message's id joins it instead of getting a send job of its own;
   * the caller enqueues the batch's one job (enqueueSendBatch) in the same transaction.
   */
  batch?: string[];
  /**
   * Deferred by the send-time rules until this instant (API.md §6.1): the message is recorded
   * QUEUED with `send_at` and no send job; its bulk path asks the rules again when it comes due and
   * then releases it (releaseDeferredMessage) or drops it (dropDeferredMessage).
   */
  deferredUntil?: number;
  now: number;
}

const insertMessage = preparedPerConnection((db) =>
  db.insert(messages).values(rowPlaceholders(messages)).prepare(),
);

/**
 * Records an outbound message (PENDING) and enqueues its durable send job in the caller's
 * transaction. Every outbound path (one-off, reply, keyword replies, campaigns, flows, agents)
 * comes through here, so the send-time checks and crash safety are the same for all.
 */
export async function queueOutboundMessage(tx: DbOrTx, input: OutboundInput): Promise<MessageRow> {
  const shape = smsShape(input.body);
  const row: MessageRow = {
    id: newId(),
    workspaceId: input.workspaceId,
    direction: "outbound",
    sender: input.sender,
    fromNumber: input.from,
    toNumber: input.contact.phoneNumber,
    body: input.body,
    status: input.deferredUntil !== undefined ? "QUEUED" : "PENDING",
    segments: shape.segments,
    encoding: shape.encoding,
    contactId: input.contact.id,
    conversationId: input.conversationId,
    campaignId: input.campaignId ?? null,
    callId: null,
    followup: input.followup ?? false,
    numberId: input.numberId,
    carrierMessageId: null,
    errorCode: null,
    errorMessage: null,
    handoffStartedAt: null,
    sendAt: input.deferredUntil ?? null,
    createdAt: input.now,
    sentAt: null,
    deliveredAt: null,
    updatedAt: input.now,
  };
  await insertMessage(tx).run(row);
  const stamped =
    input.thread !== undefined &&
    (input.thread.lastMessageAt ?? 0) >= input.now &&
    input.thread.updatedAt === input.now;
  if (input.conversationId && !stamped) await touchConversation(tx, input.conversationId, input.now);
  if (input.deferredUntil !== undefined) return row;
  if (input.batch) {
    input.batch.push(row.id);
    return row;
  }
  const payload: JobPayloads["messages.send"] = { message_id: row.id };
  if (input.optOutConfirmation) payload.opt_out_confirmation = true;
  await enqueueJob(tx, "messages.send", payload, {
    workspaceId: input.workspaceId,
    runAt: input.runAt,
    now: input.now,
  });
  return row;
}

/**
 * A deferred message (QUEUED, `send_at` set, no job) comes due and may go: it takes its sender
 * (picked now, with its daily send reserved by the caller) and today's merge of the body, keeps
 * `send_at` (when it was allowed to go) and gets its send job, all in the caller's transaction.
 */
export async function releaseDeferredMessage(
  tx: DbOrTx,
  input: {
    messageId: string;
    workspaceId: string;
    numberId: string;
    from: string;
    /** The body merged again at release; absent keeps the one written at deferral (a tracked link). */
    body?: string;
    /** The batch it joins (see OutboundInput.batch); else it gets a send job of its own. */
    batch?: string[];
    now: number;
  },
) {
  const shape = input.body === undefined ? null : smsShape(input.body);
  await tx
    .update(messages)
    .set({
      numberId: input.numberId,
      fromNumber: input.from,
      ...(input.body !== undefined && shape
        ? { body: input.body, segments: shape.segments, encoding: shape.encoding }
        : {}),
      updatedAt: input.now,
    })
    .where(and(eq(messages.id, input.messageId), eq(messages.status, "QUEUED")))
    .run();
  if (input.batch) input.batch.push(input.messageId);
  else
    await enqueueJob(
      tx,
      "messages.send",
      { message_id: input.messageId },
      { workspaceId: input.workspaceId, now: input.now },
    );
}

/** Enqueues the one send job of a bulk sender's batch (nothing for an empty batch). */
export async function enqueueSendBatch(tx: DbOrTx, workspaceId: string, batch: string[], now: number) {
  if (batch.length === 0) return;
  await enqueueJob(tx, "messages.send_batch", { message_ids: batch }, { workspaceId, now });
}

/** A deferred message waits longer: new `send_at` (and the sender it would use now). */
export async function redeferMessage(
  tx: DbOrTx,
  messageId: string,
  sendAt: number,
  from: string,
  now: number,
) {
  await tx
    .update(messages)
    .set({ sendAt, fromNumber: from, updatedAt: now })
    .where(and(eq(messages.id, messageId), eq(messages.status, "QUEUED")))
    .run();
}

/**
 * A deferred message that will never go (the contact opted out, a cap or a paused state when it
 * came due, or its campaign was canceled): FAILED with the reason as `error_code`, and
 * `message.failed`. Nothing reached the carrier.
 */
export async function dropDeferredMessage(
  tx: DbOrTx,
  messageId: string,
  errorCode: string,
  errorMessage: string,
  now: number,
) {
  const current = await tx.select().from(messages).where(eq(messages.id, messageId)).get();
  if (current?.status !== "QUEUED" || current.handoffStartedAt !== null) return;
  const next: MessageRow = { ...current, status: "FAILED", errorCode, errorMessage, updatedAt: now };
  await tx
    .update(messages)
    .set({ status: "FAILED", errorCode, errorMessage, updatedAt: now })
    .where(eq(messages.id, messageId))
    .run();
  await emitEvent(tx, current.workspaceId, "message.failed", messageJson(next), now);
}

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
  const permission = await canSendTo(db, workspaceId, phone);
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
    // The group's messages of this workspace go to the carrier in one send job.
    const batch = group.collect(
      `messages.send_batch:${workspaceId}`,
      (): string[] => [],
      async (tx, ids) => await enqueueSendBatch(tx, workspaceId, ids, now),
    );
    return await acceptOneOff(tx, workspaceId, checked, batch, now);
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

async function acceptOneOff(tx: Tx, workspaceId: string, input: CheckedOneOff, batch: string[], now: number) {
  // The workspace's daily budget first (429); any later refusal rolls the spend back with the rest.
  await spendDailyBudget(tx, workspaceId, "one_off_daily_limit", 1, now);
  const sender = await resolveSender(tx, workspaceId, input.from);
  // Counted first, so a full number is the answer whatever else is wrong; a later refusal rolls
  // the count back with the rest of this write.
  if (!(await reserveDailySend(tx, sender, now))) throw invalid("from has reached its daily_limit");
  if (senderSkip(await registeredNumberIds(tx, workspaceId), sender))
    throw invalid("from is not registered for A2P messaging");
  await assertCanSendTo(tx, workspaceId, input.to);
  const { contact, created } = await ensureContact(tx, workspaceId, input.to, "api", now);
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
    numberId: sender.id,
    from: sender.number,
    body: input.body,
    sender: "human",
    batch,
    now,
  });
  return { id: row.id, status: row.status };
}

// ---------------------------------------------------------------------------------------------
// Reading.

export async function getMessage(db: Db, workspaceId: string, id: string): Promise<MessageJson> {
  const row = await workspaceRow(db, messages, workspaceId, id);
  if (!row || row.callId !== null) throw notFound();
  return messageJson(row);
}

export interface MessageFilters {
  status?: string;
  direction?: string;
  contact_id?: string;
  campaign_id?: string;
  conversation_id?: string;
  limit: number;
  offset: number;
}

/** Messages newest first, filtered by status, direction, contact, campaign or conversation. */
export async function listMessages(db: Db, workspaceId: string, filters: MessageFilters) {
  // SMS only: a call's entry in its thread (status CALL) is not a message (GET /v1/calls has calls).
  const conditions: (SQL | undefined)[] = [eq(messages.workspaceId, workspaceId), isNull(messages.callId)];
  if (filters.status !== undefined) {
    if (!(MESSAGE_STATUSES as readonly string[]).includes(filters.status))
      throw invalid(`status must be one of ${MESSAGE_STATUSES.join(", ")}`);
    conditions.push(eq(messages.status, filters.status));
  }
  if (filters.direction !== undefined) {
    if (filters.direction !== "inbound" && filters.direction !== "outbound")
      throw invalid("direction must be one of outbound, inbound");
    conditions.push(eq(messages.direction, filters.direction));
  }
  // Ids that cannot exist match nothing (a filter is not a path id: no 404).
  const idFilter = (
    value: string | undefined,
    column: typeof messages.contactId | typeof messages.campaignId | typeof messages.conversationId,
  ) => {
    if (value === undefined) return;
    conditions.push(isUuid(value) ? eq(column, value) : sqlFalse());
  };
  idFilter(filters.contact_id, messages.contactId);
  idFilter(filters.campaign_id, messages.campaignId);
  idFilter(filters.conversation_id, messages.conversationId);
  const where = and(...conditions);
  const rows = await db
    .select()
    .from(messages)
    .where(where)
    .orderBy(desc(messages.createdAt), desc(messages.id))
    .limit(filters.limit)
    .offset(filters.offset)
    .all();
  const total = (await db.select({ n: count() }).from(messages).where(where).get())?.n ?? 0;
  return { messages: rows.map(messageJson), total, limit: filters.limit, offset: filters.offset };
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

// ---------------------------------------------------------------------------------------------
// The send job.

/** How much earlier than our marker a carrier's record of the send may be stamped (clock skew). */
const LOOKUP_SLACK_MS = 5 * 60_000;

/**
 * Collects work from send jobs running in the same turn of the event loop and applies it in one
 * transaction: the worker runs up to its concurrency of jobs at once, and one commit for all of
 * them is what keeps the per-message cost low.
 */
class TransactionBatcher<T> {
  private items: { item: T; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private scheduled = false;
  constructor(
    private readonly db: Db,
    private readonly apply: (tx: DbOrTx, item: T) => Promise<void> | void,
  ) {}
  push(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.items.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }
  private async flush() {
    const batch = this.items;
    this.items = [];
    this.scheduled = false;
    try {
      await this.db.transaction(async (tx) => {
        for (const entry of batch) await this.apply(tx, entry.item);
      });
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    for (const entry of batch) entry.resolve();
  }
}

/**
 * How a hand-off ended: settled (its outcome recorded, or nothing left to send), or held because
 * the send-time window of a marketing message is closed now: it waits, QUEUED, until `until`.
 */
type HandOffResult = { kind: "settled" } | { kind: "held"; until: number };
const SETTLED: HandOffResult = { kind: "settled" };

type Outcome =
  | { kind: "sent"; carrierMessageId: string; status: CarrierMessageStatus }
  | { kind: "failed"; errorCode: string; errorMessage: string };

interface Completion {
  /** The send job completed with the outcome; null for a batch's message (its job completes last). */
  ctx: JobContext | null;
  messageId: string;
  outcome: Outcome;
  at: number;
}

interface SendBatchers {
  markers: TransactionBatcher<{ messageId: string; at: number }>;
  completions: TransactionBatcher<Completion>;
  /**
   * The hand-offs of batch jobs in flight at once, across all of them: a carrier sees at most
   * HANDOFFS_AT_ONCE concurrent sends from them, as it did from the worker's one-message jobs.
   */
  handoffs: Gate;
}

/** Batch jobs' hand-offs in flight at once per database (the worker's job concurrency). */
const HANDOFFS_AT_ONCE = 128;
const batchers = new WeakMap<Db, SendBatchers>();

function batchersOf(db: Db): SendBatchers {
  let found = batchers.get(db);
  if (!found) {
    found = {
      handoffs: new Gate(HANDOFFS_AT_ONCE),
      markers: new TransactionBatcher(db, async (tx, { messageId, at }) => {
        await messageStatements(tx).markHandoffStarted.run({ id: messageId, now: at });
      }),
      // The job completes in the transaction that records the outcome; a job whose lease was lost
      // (another worker took it) records nothing.
      completions: new TransactionBatcher(db, async (tx, { ctx, messageId, outcome, at }) => {
        if (ctx && !(await ctx.completeIn(tx))) return;
        if (outcome.kind === "sent")
          await markHandedOff(tx, messageId, outcome.carrierMessageId, outcome.status, at);
        else await markFailed(tx, messageId, outcome.errorCode, outcome.errorMessage, at);
      }),
    };
    batchers.set(db, found);
  }
  return found;
}

/**
 * `messages.send`: hands one message to the carrier, exactly once.
 * 1. Skip messages already past QUEUED (a duplicate or late job).
 * 2. Re-check opt-out and suppression now: blocked → FAILED, nothing reaches the carrier.
 * 3. If an earlier attempt started a hand-off (marker set) and its outcome is unknown, ask the
 *    carrier for the send by our id; only when it has none do we send.
 * 4. Commit the marker (status QUEUED) before the hand-off.
 * 5. Record SENT (or FAILED on a rejection) and complete the job in one transaction.
 * A CarrierUnavailableError leaves the message QUEUED and retries with backoff.
 */
export async function sendMessageJob(payload: JobPayloads["messages.send"], ctx: JobContext) {
  const messageId = payload.message_id;
  const { completions } = batchersOf(ctx.db);
  const record = (outcome: Outcome) => completions.push({ ctx, messageId, outcome, at: ctx.clock.now() });
  let result: HandOffResult;
  try {
    result = await handOff(ctx, messageId, payload.opt_out_confirmation === true, record);
  } catch (error) {
    if (!(error instanceof CarrierUnavailableError)) throw error;
    if (ctx.job.attempts >= ctx.job.maxAttempts) {
      // Out of retries: the carrier never took it (or lookups could not tell); report it failed.
      await record({ kind: "failed", errorCode: "carrier_unavailable", errorMessage: error.message });
      return;
    }
    log.warn("carrier unavailable; send will be retried", { message_id: messageId, error: error.message });
    if (error.retryAfterMs) throw new RescheduleJob(ctx.clock.now() + error.retryAfterMs);
    throw error;
  }
  if (result.kind === "held") throw new RescheduleJob(result.until);
}

/**
 * `messages.send_batch`: steps 1–5 of `messages.send` for every message of the batch at once,
 * each outcome recorded as it comes (the batcher groups them into shared transactions). A message
 * the carrier cannot take now gets a `messages.send` job of its own, which retries it with the
 * send job's backoff; it is enqueued in the transaction that completes the batch. A crash
 * re-runs the batch: messages already handed off are skipped, and those with a marker looked up.
 */
export async function sendMessageBatchJob(payload: JobPayloads["messages.send_batch"], ctx: JobContext) {
  const { completions, handoffs } = batchersOf(ctx.db);
  const rules: HandOffRules = new Map();
  const now = ctx.clock.now();
  const backoff = JOB_POLICIES["messages.send"].backoffMs(1);
  /** Messages that go later, each as a send job of its own: the carrier could not take them, or their window is closed. */
  const later: { messageId: string; runAt: number }[] = [];
  let unavailable = 0;
  await Promise.all(
    payload.message_ids.map((messageId) =>
      handoffs.run(async () => {
        const record = (outcome: Outcome) =>
          completions.push({ ctx: null, messageId, outcome, at: ctx.clock.now() });
        try {
          const result = await handOff(ctx, messageId, false, record, rules);
          if (result.kind === "held") later.push({ messageId, runAt: result.until });
        } catch (error) {
          if (!(error instanceof CarrierUnavailableError)) throw error;
          unavailable++;
          later.push({ messageId, runAt: now + (error.retryAfterMs ?? backoff) });
        }
      }),
    ),
  );
  if (later.length === 0) return;
  if (unavailable > 0) log.warn("carrier unavailable; sends will be retried", { messages: unavailable });
  await ctx.completeWith(async (tx) => {
    for (const { messageId, runAt } of later)
      await enqueueJob(
        tx,
        "messages.send",
        { message_id: messageId },
        // A batch's messages are of its workspace (enqueueSendBatch).
        { workspaceId: ctx.job.workspaceId, runAt, now },
      );
  });
}

/**
 * Steps 1–5 of a send for one message: nothing for a message gone or already past QUEUED, else
 * `record` writes its outcome. Held when a marketing message's send-time window is closed; throws
 * CarrierUnavailableError when the carrier cannot take it now (the message stays QUEUED either way).
 */
async function handOff(
  ctx: JobContext,
  messageId: string,
  optOutConfirmation: boolean,
  record: (outcome: Outcome) => Promise<void>,
  rules: HandOffRules = new Map(),
): Promise<HandOffResult> {
  const { db } = ctx;
  const runtime = runtimes.get(db);
  if (!runtime) throw new Error("messaging is not started on this database");
  const message = await messageStatements(db).loadMessage.get({ id: messageId });
  if (!message || !NOT_YET_SENT.includes(message.status)) return SETTLED;
  const settle = async (outcome: Outcome): Promise<HandOffResult> => {
    await record(outcome);
    return SETTLED;
  };
  if (!optOutConfirmation) {
    const permission = await canSendTo(db, message.workspaceId, message.toNumber);
    if (!permission.allowed)
      return await settle({ kind: "failed", errorCode: permission.reason, errorMessage: permission.message });
  }
  const sms: OutboundSms = {
    messageId: message.id,
    workspaceId: message.workspaceId,
    from: message.fromNumber,
    to: message.toNumber,
    body: message.body,
    // Empty: the adapter builds its own callback URL (its route and public base) for the message.
    statusCallbackUrl: "",
  };
  const carrier = runtime.carrier;
  if (message.handoffStartedAt !== null) {
    const found = await carrier.lookupSend(sms, message.handoffStartedAt - LOOKUP_SLACK_MS);
    if (found.found)
      return await settle({ kind: "sent", carrierMessageId: found.carrierMessageId, status: found.status });
  }
  // A marketing message is asked the send-time rules again: the hand-off may run long after the
  // message was written (a retry, a restart), and it never goes inside the window.
  const window = isMarketingMessage(message)
    ? await handOffDecision(
        db,
        {
          channel: "sms",
          workspaceId: message.workspaceId,
          campaignId: message.campaignId,
          contactId: message.contactId,
          to: message.toNumber,
        },
        ctx.clock.now(),
        rules,
      )
    : null;
  if (window?.action === "defer") {
    await messageStatements(db).holdUntil.run({ id: message.id, sendAt: window.until, now: ctx.clock.now() });
    return { kind: "held", until: window.until };
  }
  if (window?.action === "skip")
    return await settle({
      kind: "failed",
      errorCode: window.reason,
      errorMessage: `Not sent: ${window.reason}`,
    });
  await batchersOf(db).markers.push({ messageId: message.id, at: ctx.clock.now() });
  const result = await carrier.sendSms(sms);
  return await settle(
    result.accepted
      ? { kind: "sent", carrierMessageId: result.carrierMessageId, status: result.status }
      : { kind: "failed", errorCode: result.errorCode, errorMessage: result.errorMessage },
  );
}

/** The carrier accepted the message: SENT (or further, if it already says so), `message.sent` once. */
async function markHandedOff(
  tx: DbOrTx,
  messageId: string,
  carrierMessageId: string,
  status: CarrierMessageStatus,
  now: number,
) {
  const current = await messageStatements(tx).loadMessage.get({ id: messageId });
  if (!current) return;
  const sent = STATUS_RANK[status] < STATUS_RANK.SENT ? "SENT" : status;
  await applyStatus(tx, current, { carrierMessageId, status: sent }, now);
}

async function markFailed(
  tx: DbOrTx,
  messageId: string,
  errorCode: string,
  errorMessage: string,
  now: number,
) {
  const current = await messageStatements(tx).loadMessage.get({ id: messageId });
  if (!current) return;
  await applyStatus(tx, current, { carrierMessageId: "", status: "FAILED", errorCode, errorMessage }, now);
}

/**
 * Moves one message forward to the reported status (never back), stamping sent_at/delivered_at
 * and emitting `message.sent` (when sent_at is first set), `message.delivered` or `message.failed`.
 * Also records the carrier's id for the message when it is first learnt.
 */
async function applyStatus(tx: DbOrTx, current: MessageRow, update: StatusUpdate, now: number) {
  if (current.direction !== "outbound") return;
  const learntId =
    current.carrierMessageId === null && update.carrierMessageId ? update.carrierMessageId : null;
  const from = STATUS_RANK[current.status] ?? 0;
  const to = STATUS_RANK[update.status] ?? 0;
  if (to <= from) {
    if (learntId)
      await messageStatements(tx).recordStatus.run(
        statusParams({ ...current, carrierMessageId: learntId }, now),
      );
    return;
  }
  const next: MessageRow = { ...current, status: update.status, updatedAt: now };
  if (learntId) next.carrierMessageId = learntId;
  const isFailure = update.status === "FAILED" || update.status === "UNDELIVERED";
  const reachedCarrier =
    update.status === "SENT" || update.status === "DELIVERED" || update.status === "UNDELIVERED";
  const firstSent = reachedCarrier && current.sentAt === null;
  if (firstSent) next.sentAt = now;
  if (update.status === "DELIVERED") next.deliveredAt = now;
  if (isFailure) {
    next.errorCode = update.errorCode ?? (update.status === "UNDELIVERED" ? "undelivered" : "failed");
    next.errorMessage = update.errorMessage ?? null;
  }
  const statements = messageStatements(tx);
  await (learntId ? statements.recordStatus : statements.recordStatusOnly).run(statusParams(next, now));
  if (firstSent)
    await emitEvent(
      tx,
      current.workspaceId,
      "message.sent",
      messageJson({ ...next, status: "SENT", deliveredAt: null }),
      now,
    );
  if (update.status === "DELIVERED")
    await emitEvent(tx, current.workspaceId, "message.delivered", messageJson(next), now);
  if (isFailure) await emitEvent(tx, current.workspaceId, "message.failed", messageJson(next), now);
}

function statusParams(row: MessageRow, now: number) {
  return {
    id: row.id,
    status: row.status,
    carrierMessageId: row.carrierMessageId,
    sentAt: row.sentAt,
    deliveredAt: row.deliveredAt,
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
    now,
  };
}

/**
 * Applies carrier status reports in one transaction. Idempotent: a repeated or late report
 * changes nothing (DELIVERED stays DELIVERED). Reports for unknown messages are ignored.
 */
export async function applyStatusUpdates(db: Db, updates: StatusUpdate[], now = Date.now()) {
  if (!updates.length) return;
  await db.transaction(async (tx) => {
    const statements = messageStatements(tx);
    for (const update of updates) {
      const current = update.messageId
        ? await statements.loadMessage.get({ id: update.messageId })
        : await statements.loadMessageByCarrierId.get({ carrierMessageId: update.carrierMessageId });
      if (!current) continue;
      await applyStatus(tx, current, update, now);
    }
  });
}
