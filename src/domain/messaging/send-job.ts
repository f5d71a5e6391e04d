import { and, eq, sql } from "drizzle-orm";
import {
  type Carrier,
  type CarrierMessageStatus,
  CarrierUnavailableError,
  type InboundSms,
  type OutboundSms,
  SendWithdrawnError,
  type StatusUpdate,
} from "../../carriers/carrier";
import type { Db, DbOrTx } from "../../db/client";
import { inJsonListParam, jsonList } from "../../db/dialect";
import { messageStatements } from "../../db/message-statements";
import { forEachRowApart, preparedPerConnection } from "../../db/prepared";
import { contacts, type MessageRow } from "../../db/schema";
import type { JobContext, JobPayloads } from "../../jobs/catalog";
import { JOB_POLICIES, RescheduleJob } from "../../jobs/catalog";
import { enqueueJob, updateLeasedPayload } from "../../jobs/queue";
import { Gate } from "../../lib/gate";
import { log } from "../../lib/log";
import { canSendTo, type KnownRecipient, suppressionReasons } from "../audience/suppression";
import {
  type ContactZone,
  type HandOffRules,
  handOffDecision,
  isMarketingMessage,
} from "../campaigns/send-plan";
import { applyStatus, applyStatusesTo, applyStatusUpdates, STATUS_RANK } from "./status-updates";

const NOT_YET_SENT = ["PENDING", "QUEUED"];

/** How much earlier than our marker a carrier's record of the send may be stamped (clock skew). */
const LOOKUP_SLACK_MS = 5 * 60_000;

/**
 * Collects work from send jobs running in the same turn of the event loop and applies it in one
 * transaction: the worker runs up to its concurrency of jobs at once, and one commit for all of
 * them is what keeps the per-message cost low. `apply` gets the turn's items together, so that
 * their writes can be statements for many (one round trip on PostgreSQL).
 */
class TransactionBatcher<T> {
  private items: { item: T; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private scheduled = false;
  constructor(
    private readonly db: Db,
    private readonly apply: (tx: DbOrTx, items: T[]) => Promise<void>,
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
      await this.db.transaction(
        async (tx) =>
          await this.apply(
            tx,
            batch.map((entry) => entry.item),
          ),
      );
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    for (const entry of batch) entry.resolve();
  }
}

/**
 * How a hand-off ended: settled (its outcome recorded, or nothing left to send), or held: the
 * send-time window of a marketing message is closed now, or the job's lease is running out (see
 * handOff); it waits, QUEUED, until `until`.
 */
type HandOffResult = { kind: "settled" } | { kind: "held"; until: number };
const SETTLED: HandOffResult = { kind: "settled" };

type Outcome =
  | {
      kind: "sent";
      carrierMessageId: string;
      status: CarrierMessageStatus;
      /**
       * The message as its hand-off left it (a batch's: the batch's read, with the marker's
       * changes); absent, it is read again where the outcome is recorded.
       */
      message?: MessageRow;
    }
  | { kind: "failed"; errorCode: string; errorMessage: string };

interface Completion {
  /** The send job completed with the outcome; null for a batch's message (its job completes last). */
  ctx: JobContext | null;
  messageId: string;
  outcome: Outcome;
  at: number;
}

/**
 * Messaging on one database, built at boot by startMessaging with what it uses: the carrier its
 * send jobs hand off to, and the batchers that group those jobs' writes into shared transactions.
 */
interface Messaging {
  carrier: Carrier;
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

/**
 * Each database's Messaging (a process may serve several in tests). The job handlers are wired
 * once for all databases (src/jobs/handlers.ts) and receive only the job's context, so the two
 * send jobs find theirs here by the job's database; nothing else in messaging keeps state.
 */
const started = new WeakMap<Db, Messaging>();

/**
 * Wires messaging to a carrier at boot: send jobs on `db` hand off to `carrier`, and what the
 * carrier reports (status changes, inbound messages) is applied to `db`.
 */
export function startMessaging(
  db: Db,
  carrier: Carrier,
  options: { onInbound: (db: Db, sms: InboundSms) => unknown },
) {
  started.set(db, {
    carrier,
    handoffs: new Gate(HANDOFFS_AT_ONCE),
    // A turn's markers in one statement, stamped with the latest of their times: each is
    // committed before its own hand-off starts, so no marker is later than its send.
    markers: new TransactionBatcher(db, async (tx, items) => {
      await messageStatements(tx).markHandoffsStarted.run({
        ids: jsonList(items.map((item) => item.messageId)),
        now: Math.max(...items.map((item) => item.at)),
      });
    }),
    // The job completes in the transaction that records the outcome; a job whose lease was lost
    // (another worker took it) records nothing. A batch's SENT outcomes on the rows their
    // hand-offs left are applied together (applyStatusesTo); the others one by one.
    completions: new TransactionBatcher(db, async (tx, items) => {
      const known: Parameters<typeof applyStatusesTo>[1][number][] = [];
      await forEachRowApart(tx, items, async ({ ctx, messageId, outcome, at }) => {
        if (ctx && !(await ctx.completeIn(tx))) return;
        if (outcome.kind === "sent" && outcome.message)
          known.push({ current: outcome.message, update: handedOff(outcome), at });
        else if (outcome.kind === "sent")
          await markHandedOff(tx, messageId, outcome.carrierMessageId, outcome.status, at);
        else await markFailed(tx, messageId, outcome.errorCode, outcome.errorMessage, at);
      });
      await applyStatusesTo(tx, known);
    }),
  });
  carrier.attachSinks({
    onStatus: async (updates) => await applyStatusUpdates(db, updates),
    onInbound: async (sms) => {
      await options.onInbound(db, sms);
    },
  });
}

function messagingOf(db: Db): Messaging {
  const messaging = started.get(db);
  if (!messaging) throw new Error("messaging is not started on this database");
  return messaging;
}

/**
 * `messages.send`: hands one message to the carrier, exactly once.
 * 1. Skip messages already past QUEUED (a duplicate or late job).
 * 2. Re-check opt-out and suppression now: blocked → FAILED, nothing reaches the carrier.
 * 3. If an earlier attempt started a hand-off (marker set) and its outcome is unknown, ask the
 *    carrier for the send by our id; only when it has none do we send.
 * 4. Commit the marker (status QUEUED) before the hand-off; hand off only while the job's lease
 *    holds (another worker may take a job whose lease ran out, and must not meet a send in flight).
 * 5. Record SENT (or FAILED on a rejection) and complete the job in one transaction.
 * A CarrierUnavailableError leaves the message QUEUED and retries with backoff.
 */
export async function sendMessageJob(payload: JobPayloads["messages.send"], ctx: JobContext) {
  const messageId = payload.message_id;
  const messaging = messagingOf(ctx.db);
  const record = (outcome: Outcome) =>
    messaging.completions.push({ ctx, messageId, outcome, at: ctx.clock.now() });
  let result: HandOffResult;
  try {
    result = await handOff(ctx, messaging, messageId, payload.opt_out_confirmation === true, record);
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
 * each outcome recorded as it comes (the batcher groups them into shared transactions). Step 2's
 * checks and the send-time rules' contact zones are read for the whole batch at once, right
 * before its first hand-off (readChecksAhead), instead of per message. A message
 * the carrier cannot take now gets a `messages.send` job of its own, which retries it with the
 * send job's backoff; it is enqueued in the transaction that completes the batch. The batch's
 * hand-off marker is on its job (JobMarker), committed before its first hand-off. A crash re-runs
 * the batch: messages already handed off are skipped, and the others looked up first.
 */
export async function sendMessageBatchJob(payload: JobPayloads["messages.send_batch"], ctx: JobContext) {
  const messaging = messagingOf(ctx.db);
  const { completions, handoffs } = messaging;
  const rules: HandOffRules = new Map();
  const now = ctx.clock.now();
  const backoff = JOB_POLICIES["messages.send"].backoffMs(1);
  /**
   * Messages that go later, each as a send job of its own: the carrier could not take them
   * (`tried`: their hand-off was attempted), or their window is closed.
   */
  const later: { messageId: string; runAt: number; tried: boolean }[] = [];
  let unavailable = 0;
  // The batch's messages read in one statement, then what their checks read (opt-out,
  // suppression, the contact's zone) for all of them, right before any of them is handed off.
  const rows = await messageStatements(ctx.db).loadMessages.all({ ids: jsonList(payload.message_ids) });
  const loaded = new Map(rows.map((row) => [row.id, row]));
  const jobMarker: JobMarker = { earlier: payload.handoff_started_at ?? null };
  if (jobMarker.earlier === null && rows.some((row) => NOT_YET_SENT.includes(row.status))) {
    // The batch's hand-off marker, committed before its first hand-off; a lost lease leaves the
    // batch to the worker that took it.
    const marked = { ...payload, handoff_started_at: now };
    if (!(await updateLeasedPayload(ctx.db, ctx.job, marked, now))) return;
  }
  const checks = await readChecksAhead(ctx.db, rows);
  await Promise.all(
    payload.message_ids.map((messageId) =>
      handoffs.run(async () => {
        const record = (outcome: Outcome) =>
          completions.push({ ctx: null, messageId, outcome, at: ctx.clock.now() });
        try {
          const result = await handOff(
            ctx,
            messaging,
            messageId,
            false,
            record,
            rules,
            loaded.get(messageId) ?? null,
            checks.get(messageId),
            jobMarker,
          );
          if (result.kind === "held") later.push({ messageId, runAt: result.until, tried: false });
        } catch (error) {
          if (!(error instanceof CarrierUnavailableError)) throw error;
          unavailable++;
          later.push({ messageId, runAt: now + (error.retryAfterMs ?? backoff), tried: true });
        }
      }),
    ),
  );
  if (later.length === 0) return;
  if (unavailable > 0) log.warn("carrier unavailable; sends will be retried", { messages: unavailable });
  // A message leaving the batch takes the marker with it when it may have reached the carrier (its
  // hand-off was tried, or an earlier attempt's may have been), so its own job asks first.
  const marked = later
    .filter((item) => item.tried || jobMarker.earlier !== null)
    .map((item) => item.messageId);
  await ctx.completeWith(async (tx) => {
    if (marked.length > 0)
      await messageStatements(tx).keepHandoffsStarted.run({
        ids: jsonList(marked),
        now: jobMarker.earlier ?? now,
      });
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
 * The reads of a batch's checks, prepared once per connection: made per message they were three
 * statements of every hand-off (three round trips on PostgreSQL). The numbers and contact ids
 * travel as JSON lists.
 */
const checkStatements = preparedPerConnection((db: DbOrTx) => {
  const ph = sql.placeholder;
  const contact = {
    id: contacts.id,
    phone: contacts.phoneNumber,
    optedIn: contacts.optedIn,
    timezone: contacts.timezone,
    state: contacts.state,
  };
  return {
    contactsByPhone: db
      .select(contact)
      .from(contacts)
      .where(and(eq(contacts.workspaceId, ph("ws")), inJsonListParam(contacts.phoneNumber, "phones")))
      .prepare(),
    contactsById: db.select(contact).from(contacts).where(inJsonListParam(contacts.id, "ids")).prepare(),
  };
});

/** What a batch read for one message's checks, so its hand-off does not read it again. */
interface ChecksAhead {
  /** The contact and the suppression of the message's number (canSendTo). */
  recipient: KnownRecipient;
  /** The zone of the message's contact, null when it has none (handOffDecision). */
  zone: ContactZone | null;
}

/**
 * What the checks of the batch's messages not sent yet read, in two statements per workspace (a
 * batch has one) and a third only for contacts whose number is not the message's (changed since).
 * The same reads as each hand-off's own (canSendTo by workspace and number, the zone by contact id).
 */
async function readChecksAhead(db: Db, rows: readonly MessageRow[]): Promise<Map<string, ChecksAhead>> {
  const pending = rows.filter((row) => NOT_YET_SENT.includes(row.status));
  const phonesOf = new Map<string, Set<string>>();
  for (const row of pending) {
    const phones = phonesOf.get(row.workspaceId) ?? new Set();
    phones.add(row.toNumber);
    phonesOf.set(row.workspaceId, phones);
  }
  const statements = checkStatements(db);
  type ContactRead = Awaited<ReturnType<typeof statements.contactsById.all>>[number];
  const contactOf = new Map<string, ContactRead>();
  const byId = new Map<string, ContactRead>();
  const suppressionOf = new Map<string, string>();
  for (const [ws, phones] of phonesOf) {
    const [found, blocked] = await Promise.all([
      statements.contactsByPhone.all({ ws, phones: jsonList([...phones]) }),
      suppressionReasons(db, ws, phones),
    ]);
    for (const contact of found) {
      contactOf.set(`${ws}:${contact.phone}`, contact);
      byId.set(contact.id, contact);
    }
    for (const [phone, reason] of blocked) suppressionOf.set(`${ws}:${phone}`, reason);
  }
  const missing = [
    ...new Set(pending.flatMap((row) => (row.contactId && !byId.has(row.contactId) ? [row.contactId] : []))),
  ];
  if (missing.length > 0)
    for (const contact of await statements.contactsById.all({ ids: jsonList(missing) }))
      byId.set(contact.id, contact);
  const ahead = new Map<string, ChecksAhead>();
  for (const row of pending) {
    const key = `${row.workspaceId}:${row.toNumber}`;
    const zone = row.contactId ? byId.get(row.contactId) : undefined;
    ahead.set(row.id, {
      recipient: { contact: contactOf.get(key), suppression: suppressionOf.get(key) ?? null },
      zone: zone ? { timezone: zone.timezone, state: zone.state } : null,
    });
  }
  return ahead;
}

/**
 * Steps 1–5 of a send for one message: nothing for a message gone or already past QUEUED, else
 * `record` writes its outcome. Held when a marketing message's send-time window is closed; throws
 * CarrierUnavailableError when the carrier cannot take it now (the message stays QUEUED either way).
 */
async function handOff(
  ctx: JobContext,
  messaging: Messaging,
  messageId: string,
  optOutConfirmation: boolean,
  record: (outcome: Outcome) => Promise<void>,
  rules: HandOffRules = new Map(),
  /** The message as its batch read it (null: not found then); absent, it is read here. */
  loaded?: MessageRow | null,
  /** What its batch read for the message's checks; absent, each check reads its own. */
  ahead?: ChecksAhead,
  /** A batch's: its hand-off marker is on its job (the message writes none of its own). */
  jobMarker?: JobMarker,
): Promise<HandOffResult> {
  const { db } = ctx;
  const batchRead = loaded !== undefined;
  const message = batchRead ? loaded : await messageStatements(db).loadMessage.get({ id: messageId });
  if (!message || !NOT_YET_SENT.includes(message.status)) return SETTLED;
  const settle = async (outcome: Outcome): Promise<HandOffResult> => {
    await record(outcome);
    return SETTLED;
  };
  if (!optOutConfirmation) {
    const permission = await canSendTo(db, message.workspaceId, message.toNumber, ahead?.recipient);
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
  const { carrier } = messaging;
  const startedBefore = earliest(message.handoffStartedAt, jobMarker?.earlier ?? null);
  if (startedBefore !== null) {
    const found = await carrier.lookupSend(sms, startedBefore - LOOKUP_SLACK_MS);
    if (found.found)
      return await settle({
        kind: "sent",
        carrierMessageId: found.carrierMessageId,
        status: found.status,
        message: batchRead ? message : undefined,
      });
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
          zone: ahead?.zone,
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
  const markedAt = ctx.clock.now();
  if (!jobMarker) await messaging.markers.push({ messageId: message.id, at: markedAt });
  // Last, right before the carrier: a job whose lease is running out (its node was frozen past it,
  // or the batch is slow) leaves the hand-off to whoever takes the job next, who finds the marker
  // and asks the carrier first. A hand-off started here ends before that worker may begin.
  if (!ctx.leaseHolds()) return { kind: "held", until: ctx.clock.now() };
  let result: Awaited<ReturnType<typeof carrier.sendSms>>;
  try {
    // Asked again by the adapter as the send leaves (after its own batching, if any).
    result = await carrier.sendSms({ ...sms, stillOurs: ctx.leaseHolds, lease: ctx.job });
  } catch (error) {
    if (error instanceof SendWithdrawnError) return { kind: "held", until: ctx.clock.now() };
    throw error;
  }
  return await settle(
    result.accepted
      ? {
          kind: "sent",
          carrierMessageId: result.carrierMessageId,
          status: result.status,
          message: jobMarker
            ? message
            : batchRead
              ? { ...message, status: "QUEUED", handoffStartedAt: markedAt, updatedAt: markedAt }
              : undefined,
        }
      : { kind: "failed", errorCode: result.errorCode, errorMessage: result.errorMessage },
  );
}

/**
 * A send batch's hand-off marker, kept in its job's payload (`handoff_started_at`): committed once
 * for the batch before its first hand-off, instead of once per message. `earlier` is the marker an
 * earlier attempt of the job left (null on its first): every message still unsent may then have
 * reached the carrier, and is looked up before it is sent.
 */
interface JobMarker {
  earlier: number | null;
}

function earliest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}

/** The status update of a hand-off the carrier accepted: SENT, or further if it already says so. */
function handedOff(outcome: { carrierMessageId: string; status: CarrierMessageStatus }): StatusUpdate {
  return {
    carrierMessageId: outcome.carrierMessageId,
    status: STATUS_RANK[outcome.status] < STATUS_RANK.SENT ? "SENT" : outcome.status,
  };
}

/**
 * The carrier accepted the message: SENT (or further, if it already says so), `message.sent` once,
 * on the message as read now. A batch's hand-offs pass the row they left instead (applyStatusesTo:
 * its status is compared and set, and a message another writer moved first is read again; its
 * other columns are the ones the carrier was handed, which no writer changes on a QUEUED message
 * in a batch: the dispatcher releases and re-defers only deferred ones, before they join a batch).
 */
async function markHandedOff(
  tx: DbOrTx,
  messageId: string,
  carrierMessageId: string,
  status: CarrierMessageStatus,
  now: number,
) {
  const current = await messageStatements(tx).loadMessage.get({ id: messageId });
  if (!current) return;
  await applyStatus(tx, current, handedOff({ carrierMessageId, status }), now);
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
