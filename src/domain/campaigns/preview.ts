import { and, asc, count, eq, type SQL, sql } from "drizzle-orm";
import { TransactionRollbackError } from "drizzle-orm/errors";
import type { Db } from "../../db/client";
import { campaignRecipients, contacts, suppressions } from "../../db/schema";
import { invalid } from "../../lib/errors";
import { toIso } from "../../lib/time";
import { audienceCondition, audiencePage } from "./audience";
import { findCampaign } from "./campaigns";
import { planSend, quietHoursFor } from "./dispatch";
import { decideSend } from "./send-decision";

/** Nominal hand-off rate for the completion estimate when the campaign sets no throttle. */
const NOMINAL_PER_MINUTE = 60_000;

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

/**
 * GET /v1/campaigns/{id}/preview: a dry run of the campaign as if it were sent now, in any state.
 * The page of contacts is planned by `planSend`, the function the dispatcher uses, inside a
 * transaction that is rolled back (so sender rotation and daily caps are simulated exactly and
 * nothing is written). Totals count the whole audience with one grouped query: suppression and
 * opt-out per contact, the send-time decision once per (zone, area code) group.
 */
export function previewCampaign(
  db: Db,
  workspaceId: string,
  id: string,
  page: { limit: number; offset: number },
  now = Date.now(),
) {
  const campaign = findCampaign(db, workspaceId, id);
  const startsAt =
    campaign.status === "draft" || campaign.status === "scheduled"
      ? Math.max(campaign.sendAt ?? now, now)
      : now;
  const quietHours = quietHoursFor(db, campaign);
  const where = audienceCondition(db, workspaceId, campaign.audience, startsAt);

  // 1. Totals.
  const blocked: SQL = sql`CASE WHEN ${contacts.optedIn} = 0 OR ${suppressions.reason} = 'opt_out' THEN 'opted_out' WHEN ${suppressions.reason} IS NOT NULL THEN 'suppressed' END`;
  const groups = db
    .select({
      timezone: contacts.timezone,
      phone: sql<string>`min(${contacts.phoneNumber})`,
      area: sql<string>`substr(${contacts.phoneNumber}, 1, 5)`,
      blocked: sql<string | null>`${blocked}`,
      n: count(),
    })
    .from(contacts)
    .leftJoin(
      suppressions,
      and(
        eq(suppressions.workspaceId, contacts.workspaceId),
        eq(suppressions.phoneNumber, contacts.phoneNumber),
      ),
    )
    .where(where)
    .groupBy(contacts.timezone, sql`substr(${contacts.phoneNumber}, 1, 5)`, blocked)
    .all();
  let recipients = 0;
  let sendable = 0;
  let deferred = 0;
  let lastDeferral = startsAt;
  const skipped: Record<string, number> = {};
  for (const group of groups) {
    recipients += group.n;
    if (group.blocked) {
      skipped[group.blocked] = (skipped[group.blocked] ?? 0) + group.n;
      continue;
    }
    const decision = decideSend({
      phoneNumber: group.phone,
      timezone: group.timezone,
      quietHours,
      now: startsAt,
    });
    if (decision.action === "send") sendable += group.n;
    else if (decision.action === "defer") {
      deferred += group.n;
      lastDeferral = Math.max(lastDeferral, decision.until);
    } else skipped[decision.reason] = (skipped[decision.reason] ?? 0) + group.n;
  }
  const perMinute = campaign.throttlePerMinute ?? NOMINAL_PER_MINUTE;
  const estimatedCompletion = Math.max(
    startsAt + Math.ceil((sendable / perMinute) * 60_000),
    deferred > 0 ? lastDeferral + Math.ceil((deferred / perMinute) * 60_000) : 0,
  );

  // 2. The page, planned exactly as the dispatcher would, then rolled back.
  const planned: PreviewContact[] = [];
  try {
    db.transaction((tx) => {
      const rows = audiencePage(tx, campaign, startsAt, { limit: page.limit, offset: page.offset });
      for (const contact of rows) {
        const plan = planSend(tx, campaign, contact, quietHours, startsAt);
        planned.push({
          contact_id: contact.id,
          phone_number: contact.phoneNumber,
          outcome: plan.outcome,
          reason: plan.outcome === "send" ? null : plan.reason,
          send_at:
            plan.outcome === "defer" ? toIso(plan.sendAt) : plan.outcome === "send" ? toIso(startsAt) : null,
          from: plan.outcome === "send" ? plan.sender.number : plan.outcome === "defer" ? plan.from : null,
          body: plan.outcome === "skip" ? null : plan.body,
          variant: plan.variant,
        });
      }
      tx.rollback();
    });
  } catch (error) {
    if (!(error instanceof TransactionRollbackError)) throw error;
  }

  return {
    recipients,
    sendable,
    deferred,
    skipped,
    starts_at: toIso(startsAt) as string,
    estimated_completion_at: toIso(estimatedCompletion) as string,
    // Content lint belongs to the compliance module (API.md §6.1); none until it is merged.
    warnings: [] as { code: string; message: string }[],
    contacts: planned,
    total: recipients,
    limit: page.limit,
    offset: page.offset,
  };
}

export const RECIPIENT_OUTCOMES = ["queued", "deferred", "sent", "delivered", "failed", "skipped"] as const;

/** GET /v1/campaigns/{id}/recipients: who the launched campaign resolved to, in contact-id order. */
export function listRecipients(
  db: Db,
  workspaceId: string,
  id: string,
  filters: { outcome?: string },
  page: { limit: number; offset: number },
) {
  if (filters.outcome !== undefined && !(RECIPIENT_OUTCOMES as readonly string[]).includes(filters.outcome))
    throw invalid(`outcome must be one of ${RECIPIENT_OUTCOMES.join(", ")}`);
  const campaign = findCampaign(db, workspaceId, id);
  const where = and(
    eq(campaignRecipients.campaignId, campaign.id),
    filters.outcome ? eq(campaignRecipients.outcome, filters.outcome) : undefined,
  );
  const rows = db
    .select()
    .from(campaignRecipients)
    .where(where)
    .orderBy(asc(campaignRecipients.contactId))
    .limit(page.limit)
    .offset(page.offset)
    .all();
  const total = db.select({ n: count() }).from(campaignRecipients).where(where).get()?.n ?? 0;
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
