import { and, asc, count, eq, inArray, isNotNull, type SQL, sql } from "drizzle-orm";
import { TransactionRollbackError } from "drizzle-orm/errors";
import { capLookbackMs, type LintWarning, lintContent } from "../../compliance";
import type { Db, DbOrTx } from "../../db/client";
import {
  audienceVersions,
  type CampaignRow,
  type ContactRow,
  calls,
  campaignRecipients,
  contacts,
  messages,
  sendClassArea,
  suppressions,
} from "../../db/schema";
import { invalid, notFound } from "../../lib/errors";
import { toIso } from "../../lib/time";
import { campaignLinkBase, previewRecipientLink } from "../attribution/offers";
import { nextLocalMidnight, usageToday } from "../messaging/numbers";
import { poolCandidates } from "../messaging/senders";
import { audienceCondition, audiencePage } from "./audience";
import { findCampaign } from "./campaigns";
import {
  bodyFor,
  complianceDecision,
  marketingCallsSince,
  marketingSendsSince,
  planSend,
  recipientFacts,
  SenderBook,
  type SendRules,
  sendRulesFor,
} from "./send-plan";

/** Nominal hand-off rate for the completion estimate when the campaign sets no throttle. */
const NOMINAL_PER_MINUTE = 60_000;
/** Suppressed contacts and contacts with recent marketing sends are decided one by one, this many per batch. */
const TOTALS_BATCH = 1000;

export interface PreviewContact {
  contact_id: string;
  phone_number: string;
  outcome: "send" | "defer" | "skip";
  reason: string | null;
  send_at: string | null;
  from: string | null;
  body: string | null;
  variant: string | null;
}

interface Totals {
  recipients: number;
  sendable: number;
  deferred: number;
  skipped: Record<string, number>;
  lastDeferral: number;
}

/**
 * GET /v1/campaigns/{id}/preview: a dry run of the campaign as if it started now (or at its
 * send_at), in any state, writing nothing.
 *
 * The page: each contact is planned by `planSend` — the dispatcher's own function, with facts
 * (suppression, recent marketing sends) loaded in batch the same way — inside a transaction that
 * is rolled back, so rotation and daily caps are simulated exactly.
 *
 * The totals: every contact gets the compliance module's decision (`complianceDecision`, the call
 * `planSend` starts with), computed without reading a million rows into memory: the audience is
 * counted by send class along an index (see previewTotals), the module is asked once per class,
 * and the few contacts whose facts differ (suppressed, or messaged within the caps' lookback) are
 * asked one by one. Then the senders' daily capacity (the pool's numbers, or the fixed sender)
 * turns the sends beyond it into daily_limit deferrals, as the run would.
 */
export async function previewCampaign(
  db: Db,
  workspaceId: string,
  id: string,
  page: { limit: number; offset: number },
  now = Date.now(),
  /** Plan only this contact of the workspace (404 for anyone else's): as it would get the campaign. */
  contactId?: string,
) {
  const campaign = await findCampaign(db, workspaceId, id);
  if (contactId !== undefined) {
    const contact = await db
      .select({ id: contacts.id })
      .from(contacts)
      .where(and(eq(contacts.workspaceId, workspaceId), eq(contacts.id, contactId)))
      .get();
    if (!contact) throw notFound();
  }
  const startsAt =
    campaign.status === "draft" || campaign.status === "scheduled"
      ? Math.max(campaign.sendAt ?? now, now)
      : now;
  const rules = await sendRulesFor(db, campaign);

  // 1. Totals (cached briefly: see cachedTotals).
  const totals = { ...(await cachedTotals(db, campaign, rules, startsAt, now)) };
  // Sends beyond the senders' remaining daily capacity wait for the next day, as in the run.
  const capacity = await dailyCapacity(db, campaign, startsAt);
  if (capacity !== null && totals.sendable > capacity.left) {
    const over = totals.sendable - capacity.left;
    totals.sendable -= over;
    totals.deferred += over;
    totals.lastDeferral = Math.max(totals.lastDeferral, capacity.nextDay);
  }
  const perMinute = campaign.throttlePerMinute ?? NOMINAL_PER_MINUTE;
  const estimatedCompletion = Math.max(
    startsAt + Math.ceil((totals.sendable / perMinute) * 60_000),
    totals.deferred > 0 ? totals.lastDeferral + Math.ceil((totals.deferred / perMinute) * 60_000) : 0,
  );

  // 2. The page, planned exactly as the dispatcher would, then rolled back.
  const planned: PreviewContact[] = [];
  try {
    await db.transaction(async (tx) => {
      const rows = await audiencePage(tx, campaign, startsAt, {
        limit: page.limit,
        offset: page.offset,
        contactId,
      });
      const facts = await recipientFacts(tx, workspaceId, campaign.id, rows, rules, startsAt);
      const senders = new SenderBook(
        tx,
        campaign,
        startsAt,
        rows.map((row) => row.id),
      );
      // `{{offer_url}}` on the domain the links will use, as long as a recipient's own link.
      const linkBase = campaign.offerId ? await campaignLinkBase(tx, campaign) : "";
      for (const contact of rows) {
        const plan = await planSend(
          campaign,
          contact,
          facts.get(contact.id) ?? NO_FACTS,
          rules,
          senders,
          startsAt,
        );
        planned.push({
          contact_id: contact.id,
          phone_number: contact.phoneNumber,
          outcome: plan.outcome,
          reason: plan.outcome === "send" ? null : plan.reason,
          send_at:
            plan.outcome === "defer" ? toIso(plan.sendAt) : plan.outcome === "send" ? toIso(startsAt) : null,
          from: plan.outcome === "send" ? plan.sender.number : plan.outcome === "defer" ? plan.from : null,
          body:
            plan.outcome === "skip"
              ? null
              : campaign.offerId
                ? bodyFor(campaign, contact, { offerUrl: previewRecipientLink(linkBase) }).body
                : plan.body,
          variant: plan.variant,
        });
      }
      tx.rollback();
    });
  } catch (error) {
    if (!(error instanceof TransactionRollbackError)) throw error;
  }

  return {
    recipients: totals.recipients,
    sendable: totals.sendable,
    deferred: totals.deferred,
    skipped: totals.skipped,
    starts_at: toIso(startsAt) as string,
    estimated_completion_at: toIso(estimatedCompletion) as string,
    warnings: campaignWarnings(campaign),
    contacts: planned,
    total: totals.recipients,
    limit: page.limit,
    offset: page.offset,
  };
}

const NO_FACTS = { suppression: null, recentSends: [] };

/**
 * Content lint of the campaign's bodies (the message, or each variant's, named): warnings, never
 * blocking. A campaign message is counted as a first marketing message (opt-out wording wanted).
 */
export function campaignWarnings(
  campaign: Pick<CampaignRow, "message" | "say" | "campaignType">,
): LintWarning[] {
  if (campaign.campaignType !== "sms") return [];
  const bodies: { label: string | null; body: string }[] = campaign.message?.variants?.length
    ? campaign.message.variants.map((v) => ({ label: v.name, body: v.body }))
    : campaign.message?.body
      ? [{ label: null, body: campaign.message.body }]
      : [];
  const seen = new Set<string>();
  const warnings: LintWarning[] = [];
  for (const { label, body } of bodies) {
    for (const warning of lintContent(body, { firstMarketingMessage: true })) {
      const message = label === null ? warning.message : `Variant ${label}: ${warning.message}`;
      if (seen.has(message)) continue;
      seen.add(message);
      warnings.push({ code: warning.code, message });
    }
  }
  return warnings;
}

/**
 * Totals read every contact of the audience (about a second per million), so they are kept for
 * TOTALS_TTL_MS per campaign, and recomputed at once when anything they depend on changes besides
 * the clock and other campaigns' sends: the campaign, the workspace's settings, the audience
 * (contacts and list memberships, by the audience version the triggers bump) or the suppression
 * list. Within those 30 s, a deferral boundary passing or another campaign's sends are not seen.
 */
const TOTALS_TTL_MS = 30_000;
const totalsCache = new Map<string, { key: string; at: number; totals: Totals }>();
const TOTALS_CACHE_LIMIT = 200;

async function cachedTotals(
  db: Db,
  campaign: CampaignRow,
  rules: SendRules,
  startsAt: number,
  now: number,
): Promise<Totals> {
  const version =
    (
      await db
        .select({ v: audienceVersions.version })
        .from(audienceVersions)
        .where(eq(audienceVersions.workspaceId, campaign.workspaceId))
        .get()
    )?.v ?? 0;
  const blocked = await db
    .select({ n: count(), last: sql<number | null>`max(${suppressions.createdAt})`.mapWith(Number) })
    .from(suppressions)
    .where(eq(suppressions.workspaceId, campaign.workspaceId))
    .get();
  const key = JSON.stringify([
    campaign.updatedAt,
    campaign.status,
    rules,
    version,
    blocked?.n,
    blocked?.last,
    startsAt > now,
  ]);
  const hit = totalsCache.get(campaign.id);
  if (hit && hit.key === key && now - hit.at < TOTALS_TTL_MS) return hit.totals;
  const totals = await previewTotals(db, campaign, rules, startsAt);
  totalsCache.delete(campaign.id);
  totalsCache.set(campaign.id, { key, at: now, totals });
  if (totalsCache.size > TOTALS_CACHE_LIMIT) {
    const oldest = totalsCache.keys().next().value;
    if (oldest !== undefined) totalsCache.delete(oldest);
  }
  return totals;
}

/** A number's class as `sendClassArea` computes it in SQL: "+1NPA" for a twelve-character +1 number. */
const sendClassAreaOf = (phone: string) =>
  phone.length === 12 && phone.startsWith("+1") ? phone.slice(0, 5) : phone;
const groupKey = (timezone: string | null, state: string | null, area: string, optedIn: boolean) =>
  `${timezone ?? ""}\u0000${timezone === null ? 0 : 1}\u0000${state ?? ""}\u0000${state === null ? 0 : 1}\u0000${area}\u0000${optedIn ? 1 : 0}`;

/**
 * The audience (`where`) counted by send class: zone, `sendClassArea` of the number and opted_in,
 * read along contacts_workspace_send_class_idx in its order (test/campaign-plans.test.ts pins it).
 */
export function audienceClasses(db: DbOrTx, where: SQL | undefined) {
  const area = sendClassArea(contacts.phoneNumber);
  return db
    .select({
      timezone: contacts.timezone,
      state: contacts.state,
      area: sql<string>`${area}`,
      optedIn: contacts.optedIn,
      n: count(),
    })
    .from(contacts)
    .where(where)
    .groupBy(contacts.timezone, contacts.state, area, contacts.optedIn);
}

/**
 * The preview's totals; see previewCampaign. Two passes:
 *  1. Every audience contact counted by class — zone, `sendClassArea` of the number, opted_in —
 *     along contacts_workspace_send_class_idx, which delivers the classes in order (no sort).
 *  2. The exceptions — audience contacts on the suppression list or with a marketing send or call
 *     in the caps' lookback — found from the small side (the suppression list's numbers and the window's
 *     recipients, looked up by the contacts' unique keys), decided one by one with their facts,
 *     and taken out of their class.
 * Every other contact of a class gets the same answer, asked of the module once per class with a
 * number of that class.
 */
async function previewTotals(db: Db, campaign: CampaignRow, rules: SendRules, at: number): Promise<Totals> {
  const where = await audienceCondition(db, campaign.workspaceId, campaign.audience, at);
  const classes = await audienceClasses(db, where).all();
  const remaining = new Map<
    string,
    { timezone: string | null; state: string | null; area: string; optedIn: boolean; n: number }
  >();
  for (const row of classes)
    remaining.set(groupKey(row.timezone, row.state, row.area, row.optedIn), { ...row });

  const totals: Totals = { recipients: 0, sendable: 0, deferred: 0, skipped: {}, lastDeferral: at };
  const channel = campaign.campaignType === "voice" ? "voice" : "sms";
  const tally = (decision: ReturnType<typeof complianceDecision>, n: number) => {
    if (decision.action === "send") totals.sendable += n;
    else if (decision.action === "defer") {
      totals.deferred += n;
      totals.lastDeferral = Math.max(totals.lastDeferral, decision.until);
    } else totals.skipped[decision.reason] = (totals.skipped[decision.reason] ?? 0) + n;
  };

  // 2. The exceptions, from the small side: the suppression list's numbers and the window's
  // recipients, looked up among the audience a batch at a time through the contacts' unique keys
  // (never a walk of the whole audience), then decided with their facts.
  const decided = new Set<string>();
  const decide = async (batch: ContactRow[]) => {
    const fresh = batch.filter((contact) => !decided.has(contact.id));
    const facts = await recipientFacts(db, campaign.workspaceId, campaign.id, fresh, rules, at);
    for (const contact of fresh) {
      decided.add(contact.id);
      const group = remaining.get(
        groupKey(contact.timezone, contact.state, sendClassAreaOf(contact.phoneNumber), contact.optedIn),
      );
      if (group) group.n -= 1;
      totals.recipients += 1;
      tally(complianceDecision(contact, facts.get(contact.id) ?? NO_FACTS, rules, at, channel), 1);
    }
  };
  const decideAmong = async (key: typeof contacts.phoneNumber | typeof contacts.id, values: string[]) => {
    for (let i = 0; i < values.length; i += TOTALS_BATCH)
      await decide(
        await db
          .select()
          .from(contacts)
          .where(and(where, inArray(key, values.slice(i, i + TOTALS_BATCH))))
          .all(),
      );
  };
  await decideAmong(
    contacts.phoneNumber,
    (
      await db
        .select({ phone: suppressions.phoneNumber })
        .from(suppressions)
        .where(eq(suppressions.workspaceId, campaign.workspaceId))
        .all()
    ).map((row) => row.phone),
  );
  const since = at - capLookbackMs({ frequency_cap: rules.frequencyCap });
  await decideAmong(
    contacts.id,
    (
      await db
        .selectDistinct({ id: sql<string>`${messages.contactId}` })
        .from(messages)
        .where(
          and(marketingSendsSince(campaign.workspaceId, campaign.id, since), isNotNull(messages.contactId)),
        )
        .all()
    ).map((row) => row.id),
  );
  await decideAmong(
    contacts.id,
    (
      await db
        .selectDistinct({ id: sql<string>`${calls.contactId}` })
        .from(calls)
        .where(and(marketingCallsSince(campaign.workspaceId, campaign.id, since), isNotNull(calls.contactId)))
        .all()
    ).map((row) => row.id),
  );

  // 1. Everyone else, once per class.
  for (const group of remaining.values()) {
    if (group.n <= 0) continue;
    totals.recipients += group.n;
    // Only the area code of a twelve-character +1 number is read, so any number of the class will do.
    const phoneNumber = group.area.length === 5 ? `${group.area}0000000` : group.area;
    tally(
      complianceDecision(
        { phoneNumber, timezone: group.timezone, state: group.state, optedIn: group.optedIn },
        NO_FACTS,
        rules,
        at,
        channel,
      ),
      group.n,
    );
  }
  return totals;
}

/**
 * How many more sends the campaign's senders take today (null: no cap): the pool's active
 * numbers, or the fixed sender; no sender at all is 0 (the sends wait as no_sending_number).
 */
async function dailyCapacity(
  db: DbOrTx,
  campaign: CampaignRow,
  at: number,
): Promise<{ left: number; nextDay: number } | null> {
  const senders = new SenderBook(db, campaign, at);
  const rows = campaign.poolId
    ? await poolCandidates(db, campaign.workspaceId, campaign.poolId)
    : [await senders.fixedSender()].flatMap((row) => (row ? [row] : []));
  if (rows.length === 0) return { left: 0, nextDay: at };
  if (rows.some((row) => row.dailyLimit === null)) return null;
  const usage = await usageToday(db, rows, at);
  let left = 0;
  for (const row of rows) left += Math.max(0, (row.dailyLimit ?? 0) - (usage.get(row.id) ?? 0));
  return { left, nextDay: Math.min(...rows.map((row) => nextLocalMidnight(row.timezone, at))) };
}

export const RECIPIENT_OUTCOMES = ["queued", "deferred", "sent", "delivered", "failed", "skipped"] as const;

/** GET /v1/campaigns/{id}/recipients: who the launched campaign resolved to, in contact-id order. */
export async function listRecipients(
  db: Db,
  workspaceId: string,
  id: string,
  filters: { outcome?: string },
  page: { limit: number; offset: number },
) {
  if (filters.outcome !== undefined && !(RECIPIENT_OUTCOMES as readonly string[]).includes(filters.outcome))
    throw invalid(`outcome must be one of ${RECIPIENT_OUTCOMES.join(", ")}`);
  const campaign = await findCampaign(db, workspaceId, id);
  const where = and(
    eq(campaignRecipients.campaignId, campaign.id),
    filters.outcome ? eq(campaignRecipients.outcome, filters.outcome) : undefined,
  );
  const rows = await db
    .select()
    .from(campaignRecipients)
    .where(where)
    .orderBy(asc(campaignRecipients.contactId))
    .limit(page.limit)
    .offset(page.offset)
    .all();
  const total = (await db.select({ n: count() }).from(campaignRecipients).where(where).get())?.n ?? 0;
  return {
    recipients: rows.map((row) => ({
      contact_id: row.contactId,
      phone_number: row.phoneNumber,
      outcome: row.outcome,
      reason: row.reason,
      send_at: toIso(row.sendAt),
      message_id: row.messageId,
      call_id: row.callId,
      variant: row.variant,
    })),
    total,
    limit: page.limit,
    offset: page.offset,
  };
}
