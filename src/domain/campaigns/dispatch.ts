import { and, asc, eq, lte, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { preparedPerConnection } from "../../db/prepared";
import {
  type CampaignRow,
  type ContactRow,
  type ConversationRow,
  campaignRecipients,
  campaigns,
  contacts,
  type NumberRow,
} from "../../db/schema";
import type { JobContext, JobPayloads } from "../../jobs/catalog";
import { RescheduleJob } from "../../jobs/catalog";
import { enqueueJob } from "../../jobs/queue";
import { handContactToAgent } from "../agents/runtime";
import { campaignLinkBase, createRecipientLink, newRecipientLink } from "../attribution/offers";
import { queueCall } from "../calls/calls";
import { emitEvent } from "../events";
import { openThreadsOf, threadForContact, threadFrom } from "../messaging/conversations";
import {
  dropDeferredMessage,
  enqueueSendBatch,
  queueOutboundMessage,
  redeferMessage,
  releaseDeferredMessage,
} from "../messaging/outbound";
import { audiencePage, RESOLVE_CHUNK, writeRecipients } from "./audience";
import { campaignJson, startCampaign } from "./campaigns";
import { bodyFor, planSend, recipientFacts, SenderBook, sendRulesFor } from "./send-plan";

const NO_FACTS = { suppression: null, recentSends: [] };

/**
 * Writes one recipient's campaign message (sent now, or QUEUED until `deferredUntil`). With an
 * offer, `{{offer_url}}` becomes a tracked link of the recipient's own, written with the message,
 * so a click knows its contact, campaign, message and number.
 */
async function writeCampaignMessage(
  tx: DbOrTx,
  campaign: CampaignRow,
  contact: ContactRow,
  input: { numberId: string | null; from: string; body: string; deferredUntil?: number },
  step: StepWrites,
  now: number,
): Promise<string> {
  // With an agent, the campaign gives the recipient's thread to it: the agent answers the replies.
  const conversation = campaign.agentId
    ? await handContactToAgent(tx, {
        workspaceId: campaign.workspaceId,
        contact,
        agentId: campaign.agentId,
        now,
        greet: false,
      })
    : await threadFrom(tx, step.threads, campaign.workspaceId, contact.id, now);
  const link = campaign.offerId ? newRecipientLink(await campaignLinkBase(tx, campaign)) : null;
  const message = await queueOutboundMessage(tx, {
    workspaceId: campaign.workspaceId,
    contact,
    conversationId: conversation.id,
    thread: conversation,
    numberId: input.numberId,
    from: input.from,
    body: link ? bodyFor(campaign, contact, { offerUrl: link.url }).body : input.body,
    sender: "campaign",
    campaignId: campaign.id,
    batch: step.batch,
    ...(input.deferredUntil === undefined ? {} : { deferredUntil: input.deferredUntil }),
    now,
  });
  if (link && campaign.offerId)
    await createRecipientLink(
      tx,
      {
        workspaceId: campaign.workspaceId,
        offerId: campaign.offerId,
        contactId: contact.id,
        campaignId: campaign.id,
        messageId: message.id,
        numberId: input.numberId,
        code: link.code,
      },
      now,
    );
  return message.id;
}

/**
 * Writes one recipient's call (QUEUED, with its `calls.place` job): the campaign's voice agent
 * talks, else its `say` text is spoken. The finished call lands in the recipient's thread.
 */
async function writeCampaignCall(
  tx: DbOrTx,
  campaign: CampaignRow,
  contact: ContactRow,
  sender: NumberRow,
  now: number,
): Promise<string> {
  const conversation = await threadForContact(tx, campaign.workspaceId, contact.id, { reopen: false, now });
  return (
    await queueCall(tx, {
      workspaceId: campaign.workspaceId,
      contact,
      conversationId: conversation.id,
      sender,
      agentId: campaign.agentId,
      say: campaign.agentId ? null : campaign.say,
      campaignId: campaign.id,
      now,
    })
  ).id;
}

/**
 * What one dispatcher step shares between its recipients: their open threads (read in one
 * search) and the batch of messages handed to the carrier by one `messages.send_batch` job.
 */
interface StepWrites {
  threads: Map<string, ConversationRow>;
  batch: string[];
}

/** Recipients handed off per dispatcher transaction: a step holds the event loop for tens of ms at most, and a pause bites at once. */
export const DISPATCH_BATCH = 100;
/** How often the dispatcher looks again while recipients are still being resolved. */
const RESOLVING_POLL_MS = 200;
/** The longest the dispatcher sleeps, so a changed setting or a cap reset is noticed. */
const MAX_SLEEP_MS = 60_000;

// ---------------------------------------------------------------------------------------------
// Jobs.

async function loadCampaign(tx: DbOrTx, id: string): Promise<CampaignRow | undefined> {
  return await tx.select().from(campaigns).where(eq(campaigns.id, id)).get();
}

/** `campaigns.start`: a scheduled campaign becomes active at its send_at. */
export async function startScheduledJob(payload: JobPayloads["campaigns.start"], ctx: JobContext) {
  const now = ctx.clock.now();
  const row = await loadCampaign(ctx.db, payload.campaign_id);
  if (row?.status !== "scheduled") return;
  if (row.sendAt !== null && row.sendAt > now) throw new RescheduleJob(row.sendAt);
  await ctx.completeWith(async (tx) => {
    const current = await loadCampaign(tx, payload.campaign_id);
    if (current?.status === "scheduled") await startCampaign(tx, current, now);
  });
}

/**
 * `campaigns.resolve`: writes the recipients of the next RESOLVE_CHUNK audience contacts (in
 * (created_at, id) order, after `after`) and queues the following chunk in the same transaction as its own completion, so
 * a crash replays at most one chunk (its rows are ignored as duplicates). The last chunk stamps
 * `resolved_at`. Segments are evaluated as of the launch.
 */
export async function resolveRecipientsJob(payload: JobPayloads["campaigns.resolve"], ctx: JobContext) {
  const now = ctx.clock.now();
  await ctx.completeWith(async (tx) => {
    const row = await loadCampaign(tx, payload.campaign_id);
    if (!row || (row.status !== "active" && row.status !== "paused") || row.resolvedAt !== null) return;
    const page = await audiencePage(tx, row, row.launchedAt ?? now, {
      after: payload.after,
      limit: RESOLVE_CHUNK,
    });
    await writeRecipients(tx, row, page, now);
    if (page.length === RESOLVE_CHUNK) {
      await enqueueJob(
        tx,
        "campaigns.resolve",
        {
          campaign_id: row.id,
          after: { created_at: page[page.length - 1].createdAt, id: page[page.length - 1].id },
        },
        { workspaceId: row.workspaceId, now },
      );
    } else {
      await tx.update(campaigns).set({ resolvedAt: now }).where(eq(campaigns.id, row.id)).run();
    }
  });
}

/** `campaigns.dispatch`: one batch per run, then runs again when the next recipient is due. */
export async function dispatchCampaignJob(payload: JobPayloads["campaigns.dispatch"], ctx: JobContext) {
  const next = await dispatchStep(ctx.db, payload, ctx.clock.now());
  if (next !== null) throw new RescheduleJob(next);
}

/**
 * Recipients not yet handed off: queued ones without a message, and deferred ones (with their
 * waiting QUEUED message, or without one when no sender was known). Written with literals, as
 * the partial index campaign_recipients_pending_idx is: SQLite uses a partial index only when the
 * query repeats its WHERE, and a bound parameter in place of 'queued' does not (the step would
 * then read and sort every recipient of the campaign).
 */
const PENDING = sql.raw(
  `((message_id IS NULL AND call_id IS NULL AND outcome = 'queued') OR outcome = 'deferred')`,
);
const dueCondition = (campaignId: string) => and(eq(campaignRecipients.campaignId, campaignId), PENDING);

/** A recipient's outcome after its step, one prepared update each (they run per recipient). */
const outcomeStatements = preparedPerConnection((db: DbOrTx) => {
  const key = and(
    eq(campaignRecipients.campaignId, sql.placeholder("campaignId")),
    eq(campaignRecipients.contactId, sql.placeholder("contactId")),
  );
  return {
    skipped: db
      .update(campaignRecipients)
      .set({ outcome: "skipped", reason: sql`${sql.placeholder("reason")}` })
      .where(key)
      .prepare(),
    deferred: db
      .update(campaignRecipients)
      .set({
        outcome: "deferred",
        reason: sql`${sql.placeholder("reason")}`,
        sendAt: sql`${sql.placeholder("sendAt")}`,
        dueAt: sql`${sql.placeholder("sendAt")}`,
        messageId: sql`${sql.placeholder("messageId")}`,
      })
      .where(key)
      .prepare(),
    queued: db
      .update(campaignRecipients)
      .set({ outcome: "queued", reason: null, messageId: sql`${sql.placeholder("messageId")}` })
      .where(key)
      .prepare(),
    called: db
      .update(campaignRecipients)
      .set({ outcome: "queued", reason: null, callId: sql`${sql.placeholder("callId")}` })
      .where(key)
      .prepare(),
  };
});

/**
 * One dispatcher step, in one transaction: for up to DISPATCH_BATCH due recipients (and what the
 * throttle allows this minute), plan the send; a send writes the message (campaign_id, the merged
 * body of the recipient's variant), its `messages.send` job and the recipient's outcome together,
 * so a crash can neither lose nor repeat a hand-off. Returns when to run again, or null to stop
 * (not active any more, a newer dispatcher took over, or the campaign completed).
 */
export async function dispatchStep(
  db: Db,
  payload: JobPayloads["campaigns.dispatch"],
  now: number,
): Promise<number | null> {
  return await db.transaction(async (tx) => {
    const campaign = await loadCampaign(tx, payload.campaign_id);
    if (campaign?.status !== "active" || campaign.dispatchGeneration !== payload.generation) return null;

    // 1. Throttle: a fixed one-minute window of hand-offs.
    let windowStart = campaign.throttleWindowStart;
    let windowCount = campaign.throttleWindowCount;
    let limit = DISPATCH_BATCH;
    if (campaign.throttlePerMinute !== null) {
      if (windowStart === null || now - windowStart >= 60_000) {
        windowStart = now;
        windowCount = 0;
      }
      const allowance = campaign.throttlePerMinute - windowCount;
      if (allowance <= 0) return windowStart + 60_000;
      limit = Math.min(limit, allowance);
    }

    // 2. Due recipients in (due time, contact id) order, with their contacts.
    const due = await tx
      .select({ recipient: campaignRecipients, contact: contacts })
      .from(campaignRecipients)
      .leftJoin(contacts, eq(contacts.id, campaignRecipients.contactId))
      .where(and(dueCondition(campaign.id), lte(campaignRecipients.dueAt, now)))
      .orderBy(asc(campaignRecipients.dueAt), asc(campaignRecipients.contactId))
      .limit(limit)
      .all();
    const rules = await sendRulesFor(tx, campaign);
    const senders = new SenderBook(tx, campaign);
    const present = due.flatMap((row) => (row.contact ? [row.contact] : []));
    const facts = await recipientFacts(tx, campaign.workspaceId, campaign.id, present, rules, now);
    const outcomes = outcomeStatements(tx);
    const step: StepWrites = {
      threads:
        campaign.agentId || campaign.campaignType !== "sms"
          ? new Map()
          : await openThreadsOf(
              tx,
              campaign.workspaceId,
              present.map((contact) => contact.id),
            ),
      batch: [],
    };
    let handedOff = 0;
    for (const { recipient, contact } of due) {
      const key = { campaignId: campaign.id, contactId: recipient.contactId };
      const waiting = recipient.messageId; // a deferred message written earlier
      const plan = contact
        ? await planSend(tx, campaign, contact, facts.get(contact.id) ?? NO_FACTS, rules, senders, now)
        : ({ outcome: "skip", reason: "no_phone", variant: recipient.variant } as const);
      if (plan.outcome === "skip") {
        if (waiting) await dropDeferredMessage(tx, waiting, plan.reason, `Not sent: ${plan.reason}`, now);
        await outcomes.skipped.run({ ...key, reason: plan.reason });
      } else if (plan.outcome === "defer") {
        // The contract's deferral (API.md §6.1): a QUEUED message with send_at, visible in
        // GET /v1/messages, asked again when it comes due. Without any sender yet, the row waits alone.
        let messageId = waiting;
        if (waiting && plan.from) await redeferMessage(tx, waiting, plan.sendAt, plan.from, now);
        // A call waits as the recipient row alone: the call is written when it may be placed.
        else if (!waiting && plan.from && contact && campaign.campaignType === "sms") {
          messageId = await writeCampaignMessage(
            tx,
            campaign,
            contact,
            { numberId: null, from: plan.from, body: plan.body, deferredUntil: plan.sendAt },
            step,
            now,
          );
        }
        await outcomes.deferred.run({
          ...key,
          reason: plan.reason,
          sendAt: plan.sendAt,
          messageId: messageId ?? null,
        });
      } else if (contact && campaign.campaignType === "voice") {
        const callId = await writeCampaignCall(tx, campaign, contact, plan.sender, now);
        await outcomes.called.run({ ...key, callId });
        handedOff++;
      } else if (contact) {
        let messageId = waiting;
        if (waiting)
          await releaseDeferredMessage(tx, {
            messageId: waiting,
            workspaceId: campaign.workspaceId,
            numberId: plan.sender.id,
            from: plan.sender.number,
            // A body with a tracked link keeps its link: the one written at deferral.
            body: campaign.offerId ? undefined : plan.body,
            batch: step.batch,
            now,
          });
        else
          messageId = await writeCampaignMessage(
            tx,
            campaign,
            contact,
            { numberId: plan.sender.id, from: plan.sender.number, body: plan.body },
            step,
            now,
          );
        await outcomes.queued.run({ ...key, messageId: messageId ?? null });
        handedOff++;
      }
    }
    await enqueueSendBatch(tx, campaign.workspaceId, step.batch, now);
    if (campaign.throttlePerMinute !== null)
      await tx
        .update(campaigns)
        .set({ throttleWindowStart: windowStart, throttleWindowCount: windowCount + handedOff })
        .where(eq(campaigns.id, campaign.id))
        .run();

    // 3. When to look again; complete once everyone is resolved and handed off (or skipped).
    if (due.length === limit) return now;
    const next = (
      await tx
        .select({ at: sql<number | null>`min(${campaignRecipients.dueAt})`.mapWith(Number) })
        .from(campaignRecipients)
        .where(dueCondition(campaign.id))
        .get()
    )?.at;
    if (campaign.resolvedAt === null) return now + RESOLVING_POLL_MS;
    if (next === null || next === undefined) {
      await completeCampaign(tx, campaign, now);
      return null;
    }
    return Math.min(Math.max(next, now), now + MAX_SLEEP_MS);
  });
}

/**
 * Every recipient is handed off or skipped: completed, with `campaign.completed`. Delivery reports
 * arriving later still update the stats; the campaign does not wait for them.
 */
async function completeCampaign(tx: DbOrTx, campaign: CampaignRow, now: number) {
  const done = await tx
    .update(campaigns)
    .set({ status: "completed", completedAt: now, updatedAt: now })
    .where(and(eq(campaigns.id, campaign.id), eq(campaigns.status, "active")))
    .returning({ id: campaigns.id })
    .all();
  if (done.length === 0) return;
  const row: CampaignRow = { ...campaign, status: "completed", completedAt: now, updatedAt: now };
  await emitEvent(tx, campaign.workspaceId, "campaign.completed", await campaignJson(tx, row), now);
}
