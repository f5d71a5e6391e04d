import { and, asc, eq, lte, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { lockedForUpdate } from "../../db/dialect";
import { forEachRowApart } from "../../db/prepared";
import { type CampaignRow, campaignRecipients, campaigns, contacts } from "../../db/schema";
import type { JobContext, JobPayloads } from "../../jobs/catalog";
import { RescheduleJob } from "../../jobs/catalog";
import { enqueueJob } from "../../jobs/queue";
import { emitEvent } from "../events";
import { openThreadsFor, openThreadsOf } from "../messaging/conversations";
import { enqueueSendBatch } from "../messaging/outbound";
import { audiencePage, RESOLVE_CHUNK, writeRecipients } from "./audience";
import { campaignJson, startCampaign } from "./campaigns";
import {
  callRecipient,
  type DispatchContext,
  deferRecipient,
  outcomeStatements,
  planRecipient,
  type RecipientPlan,
  sendToRecipient,
  skipRecipient,
  writeStepRows,
} from "./dispatch-outcomes";
import { recipientFacts, SenderBook, sendRulesFor } from "./send-plan";

/**
 * Recipients handed off per dispatcher transaction. A step holds its thread's event loop for tens
 * of ms at most, and a pause bites at the next step. 250 rather than 100: on PostgreSQL the steps
 * of a campaign run one after another (its row is held), each waiting on a dozen round trips, and
 * they paced a 20,000-recipient campaign while the sends kept up (measured, alternately: 2,534 and
 * 2,671 msg/s at 100, 2,751 and 2,836 at 250; SQLite unchanged).
 */
export const DISPATCH_BATCH = 250;
/** How long one run of the dispatcher job goes on stepping while recipients are due at once. */
const STEPS_RUN_MS = 1_000;
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

/**
 * `campaigns.dispatch`: one step (a transaction of up to DISPATCH_BATCH recipients) after another
 * while more are due at once, for up to STEPS_RUN_MS and while the job's lease holds, then runs
 * again when the next recipient is due. Steps in one run skip a reschedule and a lease each, and
 * the wait for the worker to lease the job again behind the send batches the steps just queued.
 */
export async function dispatchCampaignJob(payload: JobPayloads["campaigns.dispatch"], ctx: JobContext) {
  const started = ctx.clock.now();
  for (;;) {
    const next = await dispatchStep(ctx.db, payload, ctx.clock.now());
    if (next === null) return;
    const now = ctx.clock.now();
    if (next > now || now - started >= STEPS_RUN_MS || !ctx.leaseHolds()) throw new RescheduleJob(next);
  }
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

/**
 * One dispatcher step, in one transaction: for up to DISPATCH_BATCH due recipients (and what the
 * throttle allows this minute), plan the recipient (`planRecipient`), then write the plan with the
 * function of its kind; a send writes the message (campaign_id, the merged body of the recipient's
 * variant), its place in the step's send batch and the recipient's outcome together,
 * so a crash can neither lose nor repeat a hand-off. Returns when to run again, or null to stop
 * (not active any more, a newer dispatcher took over, or the campaign completed).
 */
export async function dispatchStep(
  db: Db,
  payload: JobPayloads["campaigns.dispatch"],
  now: number,
): Promise<number | null> {
  return await db.transaction(async (tx) => {
    // The campaign row is held until the step commits: a step of the same campaign started
    // meanwhile (a lease that ran out, another process) waits, then sees this one's hand-offs and
    // throttle count, as SQLite's one writer gives.
    const campaign = await lockedForUpdate(
      tx.select().from(campaigns).where(eq(campaigns.id, payload.campaign_id)),
    ).get();
    if (campaign?.status !== "active" || campaign.dispatchGeneration !== payload.generation) return null;

    // 1. Throttle: a fixed one-minute window of hand-offs, opened by its first hand-off (a step
    //    that handed nothing off opens none: else the next window could open a moment after a
    //    late first burst, and two bursts land within a minute).
    let windowStart = campaign.throttleWindowStart;
    let windowCount = campaign.throttleWindowCount;
    let limit = DISPATCH_BATCH;
    if (campaign.throttlePerMinute !== null) {
      if (windowStart === null || windowCount === 0 || now - windowStart >= 60_000) {
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
    const present = due.flatMap((row) => (row.contact ? [row.contact] : []));
    const senders = new SenderBook(
      tx,
      campaign,
      now,
      present.map((contact) => contact.id),
    );
    const facts = await recipientFacts(tx, campaign.workspaceId, campaign.id, present, rules, now);
    const step: DispatchContext = {
      tx,
      campaign,
      now,
      outcomes: outcomeStatements(tx),
      threads:
        campaign.agentId || campaign.campaignType !== "sms"
          ? new Map()
          : await openThreadsOf(
              tx,
              campaign.workspaceId,
              present.map((contact) => contact.id),
            ),
      batch: [],
      rows: [],
      queued: [],
    };
    // Planned in order (each takes its sender from the book the ones before it used), then written:
    // each plan writes its own recipient's rows, so the writes go to the database together.
    const plans: RecipientPlan[] = [];
    for (const row of due) plans.push(await planRecipient(step, row, facts, rules, senders));
    // The step's daily sends and new pins, counted while planning, written once.
    await senders.flush();
    // The threads of the step's new messages, made together.
    if (!campaign.agentId && campaign.campaignType === "sms")
      await openThreadsFor(
        tx,
        step.threads,
        campaign.workspaceId,
        plans.flatMap((plan) =>
          (plan.kind === "send" || (plan.kind === "defer" && plan.from)) && !plan.waiting
            ? [plan.contact.id]
            : [],
        ),
        now,
      );
    let handedOff = 0;
    await forEachRowApart(tx, plans, async (plan) => {
      if (await writeOutcome(step, plan)) handedOff++;
    });
    await writeStepRows(step);
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
 * Writes one recipient's plan with the function of its kind. Returns whether it was handed off (a
 * message or a call queued): the throttle counts those.
 */
async function writeOutcome(step: DispatchContext, plan: RecipientPlan): Promise<boolean> {
  switch (plan.kind) {
    case "skip":
      await skipRecipient(step, plan);
      return false;
    case "defer":
      await deferRecipient(step, plan);
      return false;
    case "call":
      await callRecipient(step, plan);
      return true;
    case "send":
      await sendToRecipient(step, plan);
      return true;
  }
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
