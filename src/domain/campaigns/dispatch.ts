import { and, asc, eq, inArray, isNull, lte, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import {
  type CampaignRow,
  type ContactRow,
  campaignRecipients,
  campaigns,
  contacts,
  type NumberRow,
  numbers,
  workspaces,
} from "../../db/schema";
import type { JobContext, JobPayloads } from "../../jobs/catalog";
import { RescheduleJob } from "../../jobs/catalog";
import { enqueueJob } from "../../jobs/queue";
import { createRecipientLink, newRecipientLink } from "../attribution/offers";
import { canSendTo } from "../audience/suppression";
import { emitEvent } from "../events";
import { threadForContact } from "../messaging/conversations";
import { queueOutboundMessage } from "../messaging/messages";
import { nextLocalMidnight, reserveDailySend } from "../messaging/numbers";
import { pickSender } from "../messaging/senders";
import { audiencePage, RESOLVE_CHUNK, variantFor, writeRecipients } from "./audience";
import { campaignJson, startCampaign } from "./campaigns";
import { mergeBody } from "./merge";
import { decideSend } from "./send-decision";

/** Recipients handed off per dispatcher transaction: small enough that a pause bites within a second. */
export const DISPATCH_BATCH = 250;
/** How often the dispatcher looks again while recipients are still being resolved. */
const RESOLVING_POLL_MS = 200;
/** The longest the dispatcher sleeps, so a changed setting or a cap reset is noticed. */
const MAX_SLEEP_MS = 60_000;

/** What happens to one recipient now: the same answer for the real run and the preview. */
export type SendPlan =
  | { outcome: "send"; sender: NumberRow; body: string; variant: string | null }
  | {
      outcome: "defer";
      reason: string;
      sendAt: number;
      variant: string | null;
      body: string;
      from: string | null;
    }
  | { outcome: "skip"; reason: string; variant: string | null };

type QuietHours = { enabled: boolean; start_hour: number; end_hour: number };

export function quietHoursFor(tx: DbOrTx, campaign: CampaignRow): QuietHours {
  if (campaign.quietHours) return campaign.quietHours;
  const ws = tx
    .select({
      enabled: workspaces.quietHoursEnabled,
      start: workspaces.quietStartHour,
      end: workspaces.quietEndHour,
    })
    .from(workspaces)
    .where(eq(workspaces.id, campaign.workspaceId))
    .get();
  return ws
    ? { enabled: ws.enabled, start_hour: ws.start, end_hour: ws.end }
    : { enabled: true, start_hour: 21, end_hour: 8 };
}

/** The body a contact gets: its variant's, merged. */
export function bodyFor(
  campaign: CampaignRow,
  contact: ContactRow,
  extra: { offerUrl?: string } = {},
): { body: string; variant: string | null } {
  const variant = variantFor(campaign, contact.id);
  const template =
    variant !== null
      ? (campaign.message?.variants?.find((v) => v.name === variant)?.body ?? "")
      : (campaign.message?.body ?? campaign.say ?? "");
  return { body: mergeBody(template, contact, extra), variant };
}

/** The campaign's fixed sender (`from`, else the workspace default, else its oldest active number). */
function fixedSender(tx: DbOrTx, campaign: CampaignRow): NumberRow | undefined {
  const active = and(eq(numbers.workspaceId, campaign.workspaceId), eq(numbers.status, "active"));
  if (campaign.fromNumber)
    return tx
      .select()
      .from(numbers)
      .where(and(active, eq(numbers.number, campaign.fromNumber)))
      .get();
  const defaultId = tx
    .select({ id: workspaces.defaultNumberId })
    .from(workspaces)
    .where(eq(workspaces.id, campaign.workspaceId))
    .get()?.id;
  const byDefault = defaultId
    ? tx
        .select()
        .from(numbers)
        .where(and(active, eq(numbers.id, defaultId)))
        .get()
    : undefined;
  return (
    byDefault ??
    tx.select().from(numbers).where(active).orderBy(asc(numbers.createdAt), asc(numbers.id)).limit(1).get()
  );
}

/**
 * Decides one recipient's send at `now`, in order: opt-out and suppression (skip), the send-time
 * rules (defer or skip), then the sender — pool rotation (sticky, least used, area code) or the
 * fixed sender — with one send reserved against its daily_limit; every number at its cap defers
 * to the next local day. Reservations and sticky senders are written in `tx`: the dispatcher
 * commits them with the message, the preview rolls them back.
 */
export function planSend(
  tx: DbOrTx,
  campaign: CampaignRow,
  contact: ContactRow,
  quietHours: QuietHours,
  now: number,
): SendPlan {
  const variant = variantFor(campaign, contact.id);
  const permission = canSendTo(tx, campaign.workspaceId, contact.phoneNumber);
  if (!permission.allowed) return { outcome: "skip", reason: permission.reason, variant };
  const { body } = bodyFor(campaign, contact);
  const decision = decideSend({
    phoneNumber: contact.phoneNumber,
    timezone: contact.timezone,
    quietHours,
    now,
  });
  if (decision.action === "skip") return { outcome: "skip", reason: decision.reason, variant };
  if (decision.action === "defer")
    return { outcome: "defer", reason: decision.reason, sendAt: decision.until, variant, body, from: null };
  if (campaign.poolId) {
    const picked = pickSender(tx, campaign.workspaceId, campaign.poolId, contact, now);
    if (picked.sender) return { outcome: "send", sender: picked.sender, body, variant };
    if (picked.retryAt === null) return { outcome: "skip", reason: "no_sending_number", variant };
    return { outcome: "defer", reason: "daily_limit", sendAt: picked.retryAt, variant, body, from: null };
  }
  const sender = fixedSender(tx, campaign);
  if (!sender) return { outcome: "skip", reason: "no_sending_number", variant };
  if (!reserveDailySend(tx, sender, now))
    return {
      outcome: "defer",
      reason: "daily_limit",
      sendAt: nextLocalMidnight(sender.timezone, now),
      variant,
      body,
      from: sender.number,
    };
  return { outcome: "send", sender, body, variant };
}

// ---------------------------------------------------------------------------------------------
// Jobs.

function loadCampaign(tx: DbOrTx, id: string): CampaignRow | undefined {
  return tx.select().from(campaigns).where(eq(campaigns.id, id)).get();
}

/** `campaigns.start`: a scheduled campaign becomes active at its send_at. */
export function startScheduledJob(payload: JobPayloads["campaigns.start"], ctx: JobContext) {
  const now = ctx.clock.now();
  const row = loadCampaign(ctx.db, payload.campaign_id);
  if (row?.status !== "scheduled") return;
  if (row.sendAt !== null && row.sendAt > now) throw new RescheduleJob(row.sendAt);
  ctx.completeWith((tx) => {
    const current = loadCampaign(tx, payload.campaign_id);
    if (current?.status === "scheduled") startCampaign(tx, current, now);
  });
}

/**
 * `campaigns.resolve`: writes the recipients of the next RESOLVE_CHUNK audience contacts (in
 * (created_at, id) order, after `after`) and queues the following chunk in the same transaction as its own completion, so
 * a crash replays at most one chunk (its rows are ignored as duplicates). The last chunk stamps
 * `resolved_at`. Segments are evaluated as of the launch.
 */
export function resolveRecipientsJob(payload: JobPayloads["campaigns.resolve"], ctx: JobContext) {
  const now = ctx.clock.now();
  ctx.completeWith((tx) => {
    const row = loadCampaign(tx, payload.campaign_id);
    if (!row || (row.status !== "active" && row.status !== "paused") || row.resolvedAt !== null) return;
    const page = audiencePage(tx, row, row.launchedAt ?? now, {
      after: payload.after,
      limit: RESOLVE_CHUNK,
    });
    writeRecipients(tx, row, page, now);
    if (page.length === RESOLVE_CHUNK) {
      enqueueJob(
        tx,
        "campaigns.resolve",
        {
          campaign_id: row.id,
          after: { created_at: page[page.length - 1].createdAt, id: page[page.length - 1].id },
        },
        { workspaceId: row.workspaceId, now },
      );
    } else {
      tx.update(campaigns).set({ resolvedAt: now }).where(eq(campaigns.id, row.id)).run();
    }
  });
}

/** `campaigns.dispatch`: one batch per run, then runs again when the next recipient is due. */
export function dispatchCampaignJob(payload: JobPayloads["campaigns.dispatch"], ctx: JobContext) {
  const next = dispatchStep(ctx.db, payload, ctx.clock.now());
  if (next !== null) throw new RescheduleJob(next);
}

const dueCondition = (campaignId: string) =>
  and(
    eq(campaignRecipients.campaignId, campaignId),
    isNull(campaignRecipients.messageId),
    inArray(campaignRecipients.outcome, ["queued", "deferred"]),
  );

/**
 * One dispatcher step, in one transaction: for up to DISPATCH_BATCH due recipients (and what the
 * throttle allows this minute), plan the send; a send writes the message (campaign_id, the merged
 * body of the recipient's variant), its `messages.send` job and the recipient's outcome together,
 * so a crash can neither lose nor repeat a hand-off. Returns when to run again, or null to stop
 * (not active any more, a newer dispatcher took over, or the campaign completed).
 */
export function dispatchStep(db: Db, payload: JobPayloads["campaigns.dispatch"], now: number): number | null {
  return db.transaction((tx) => {
    const campaign = loadCampaign(tx, payload.campaign_id);
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
    const due = tx
      .select({ recipient: campaignRecipients, contact: contacts })
      .from(campaignRecipients)
      .leftJoin(contacts, eq(contacts.id, campaignRecipients.contactId))
      .where(and(dueCondition(campaign.id), lte(campaignRecipients.dueAt, now)))
      .orderBy(asc(campaignRecipients.dueAt), asc(campaignRecipients.contactId))
      .limit(limit)
      .all();
    const quietHours = quietHoursFor(tx, campaign);
    let handedOff = 0;
    for (const { recipient, contact } of due) {
      const key = and(
        eq(campaignRecipients.campaignId, campaign.id),
        eq(campaignRecipients.contactId, recipient.contactId),
      );
      if (!contact) {
        tx.update(campaignRecipients).set({ outcome: "skipped", reason: "no_phone" }).where(key).run();
        continue;
      }
      const plan = planSend(tx, campaign, contact, quietHours, now);
      if (plan.outcome === "skip") {
        tx.update(campaignRecipients).set({ outcome: "skipped", reason: plan.reason }).where(key).run();
      } else if (plan.outcome === "defer") {
        tx.update(campaignRecipients)
          .set({ outcome: "deferred", reason: plan.reason, sendAt: plan.sendAt, dueAt: plan.sendAt })
          .where(key)
          .run();
      } else {
        const conversation = threadForContact(tx, campaign.workspaceId, contact.id, { reopen: false, now });
        // {{offer_url}}: a link of the recipient's own, written with the message.
        const link = campaign.offerId ? newRecipientLink() : null;
        const message = queueOutboundMessage(tx, {
          workspaceId: campaign.workspaceId,
          contact,
          conversationId: conversation.id,
          numberId: plan.sender.id,
          from: plan.sender.number,
          body: link ? bodyFor(campaign, contact, { offerUrl: link.url }).body : plan.body,
          sender: "campaign",
          campaignId: campaign.id,
          now,
        });
        tx.update(campaignRecipients)
          .set({ outcome: "queued", reason: null, messageId: message.id })
          .where(key)
          .run();
        if (link && campaign.offerId)
          createRecipientLink(
            tx,
            {
              workspaceId: campaign.workspaceId,
              offerId: campaign.offerId,
              contactId: contact.id,
              campaignId: campaign.id,
              messageId: message.id,
              numberId: plan.sender.id,
              code: link.code,
            },
            now,
          );
        handedOff++;
      }
    }
    if (campaign.throttlePerMinute !== null)
      tx.update(campaigns)
        .set({ throttleWindowStart: windowStart, throttleWindowCount: windowCount + handedOff })
        .where(eq(campaigns.id, campaign.id))
        .run();

    // 3. When to look again; complete once everyone is resolved and handed off (or skipped).
    if (due.length === limit) return now;
    const next = tx
      .select({ at: sql<number | null>`min(${campaignRecipients.dueAt})` })
      .from(campaignRecipients)
      .where(dueCondition(campaign.id))
      .get()?.at;
    if (campaign.resolvedAt === null) return now + RESOLVING_POLL_MS;
    if (next === null || next === undefined) {
      completeCampaign(tx, campaign, now);
      return null;
    }
    return Math.min(Math.max(next, now), now + MAX_SLEEP_MS);
  });
}

/**
 * Every recipient is handed off or skipped: completed, with `campaign.completed`. Delivery reports
 * arriving later still update the stats; the campaign does not wait for them.
 */
function completeCampaign(tx: DbOrTx, campaign: CampaignRow, now: number) {
  const done = tx
    .update(campaigns)
    .set({ status: "completed", completedAt: now, updatedAt: now })
    .where(and(eq(campaigns.id, campaign.id), eq(campaigns.status, "active")))
    .returning({ id: campaigns.id })
    .all();
  if (done.length === 0) return;
  const row: CampaignRow = { ...campaign, status: "completed", completedAt: now, updatedAt: now };
  emitEvent(tx, campaign.workspaceId, "campaign.completed", campaignJson(tx, row), now);
}
