import { and, eq, gte, isNull, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { preparedPerConnection } from "../../db/prepared";
import { type RecipientSettlement, settleRecipients } from "../../db/recipient-outcomes";
import { type CampaignRow, campaignRecipients } from "../../db/schema";
import { campaignAttribution, variantAttribution } from "../attribution/campaign-figures";
import { onEventsEmitted } from "../events";

/** A window after the campaign message in which an inbound reply or opt-out counts for it. */
export const REPLY_WINDOW_MS = 7 * 86_400_000;

export interface VariantStats {
  name: string;
  recipients: number;
  sent: number;
  delivered: number;
  replied: number;
  clicked: number;
  conversions: number;
  revenue: number;
}

export interface CampaignStats {
  recipients: number;
  queued: number;
  deferred: number;
  sent: number;
  delivered: number;
  failed: number;
  suppressed: number;
  replied: number;
  opted_out: number;
  clicked: number;
  conversions: number;
  revenue: number;
  variants: VariantStats[];
  /** Voice campaigns: their calls by outcome (src/domain/calls/calls.ts campaignCallStats). */
  calls?: {
    placed: number;
    answered: number;
    voicemail: number;
    no_answer: number;
    busy: number;
    failed: number;
  };
}

/**
 * `stats` (API.md §3, §5): one grouped count over the covering index
 * (campaign_id, outcome, variant, handed_off_at, replied_at, opted_out_at), never the table.
 * `sent` counts every recipient whose message reached the carrier (delivered ⊆ sent);
 * `suppressed` counts skipped recipients. Clicks, conversions and revenue come from attribution
 * (src/domain/attribution/campaign-figures.ts), per variant by the recipient's variant.
 */
export async function campaignStats(
  db: DbOrTx,
  campaign: Pick<CampaignRow, "id" | "workspaceId" | "message">,
): Promise<CampaignStats> {
  const rows = await db
    .select({
      outcome: campaignRecipients.outcome,
      variant: campaignRecipients.variant,
      n: sql<number>`count(*)`.mapWith(Number),
      sent: sql<number>`count(${campaignRecipients.handedOffAt})`.mapWith(Number),
      replied: sql<number>`count(${campaignRecipients.repliedAt})`.mapWith(Number),
      optedOut: sql<number>`count(${campaignRecipients.optedOutAt})`.mapWith(Number),
    })
    .from(campaignRecipients)
    .where(eq(campaignRecipients.campaignId, campaign.id))
    .groupBy(campaignRecipients.outcome, campaignRecipients.variant)
    .all();
  const stats: CampaignStats = {
    recipients: 0,
    queued: 0,
    deferred: 0,
    sent: 0,
    delivered: 0,
    failed: 0,
    suppressed: 0,
    replied: 0,
    opted_out: 0,
    clicked: 0,
    conversions: 0,
    revenue: 0,
    variants: [],
  };
  const variants = new Map<string, VariantStats>();
  for (const v of campaign.message?.variants ?? []) {
    variants.set(v.name, {
      name: v.name,
      recipients: 0,
      sent: 0,
      delivered: 0,
      replied: 0,
      clicked: 0,
      conversions: 0,
      revenue: 0,
    });
  }
  for (const row of rows) {
    const n = Number(row.n);
    stats.recipients += n;
    stats.sent += Number(row.sent);
    stats.replied += Number(row.replied);
    stats.opted_out += Number(row.optedOut);
    if (row.outcome === "queued") stats.queued += n;
    else if (row.outcome === "deferred") stats.deferred += n;
    else if (row.outcome === "delivered") stats.delivered += n;
    else if (row.outcome === "failed") stats.failed += n;
    else if (row.outcome === "skipped") stats.suppressed += n;
    const variant = row.variant === null ? undefined : variants.get(row.variant);
    if (variant) {
      variant.recipients += n;
      variant.sent += Number(row.sent);
      variant.replied += Number(row.replied);
      if (row.outcome === "delivered") variant.delivered += n;
    }
  }
  if (variants.size > 0) {
    for (const [name, figures] of await variantAttribution(db, campaign.workspaceId, campaign.id)) {
      const variant = variants.get(name);
      if (variant) Object.assign(variant, figures);
    }
  }
  stats.variants = [...variants.values()];
  Object.assign(stats, await campaignAttribution(db, campaign.workspaceId, campaign.id));
  return stats;
}

// ---------------------------------------------------------------------------------------------
// Recipient outcomes follow their message, and replies/opt-outs are credited, in the transaction
// of the event that reports them (src/domain/events.ts listeners).

/**
 * The recipient follows its message (one update per status event where statements cost no round
 * trip, so prepared once): `sent` from queued/deferred, `delivered`/`failed` from any of those or
 * sent; the first hand-off time stays.
 */
const recipientStatements = preparedPerConnection((db: DbOrTx) => {
  const key = and(
    eq(campaignRecipients.campaignId, sql.placeholder("campaignId")),
    eq(campaignRecipients.contactId, sql.placeholder("contactId")),
    eq(campaignRecipients.messageId, sql.placeholder("messageId")),
  );
  const handedOffAt = sql`coalesce(${campaignRecipients.handedOffAt}, ${sql.placeholder("sentAt")})`;
  return {
    sent: db
      .update(campaignRecipients)
      .set({ outcome: "sent", reason: null, handedOffAt })
      .where(and(key, sql`${campaignRecipients.outcome} IN ('queued', 'deferred')`))
      .prepare(),
    settled: db
      .update(campaignRecipients)
      .set({
        outcome: sql`${sql.placeholder("outcome")}`,
        reason: sql`${sql.placeholder("reason")}`,
        handedOffAt,
      })
      .where(and(key, sql`${campaignRecipients.outcome} IN ('queued', 'deferred', 'sent')`))
      .prepare(),
  };
});

interface MessageData {
  id: string;
  contact_id: string | null;
  campaign_id: string | null;
  sent_at: string | null;
  error_code: string | null;
}

onEventsEmitted(async (tx, batch) => {
  const settlements: RecipientSettlement[] = [];
  for (const event of batch) {
    switch (event.type) {
      case "message.sent":
      case "message.delivered":
      case "message.failed": {
        const data = event.data as MessageData;
        if (!data.campaign_id || !data.contact_id) break;
        const outcome =
          event.type === "message.sent"
            ? "sent"
            : event.type === "message.delivered"
              ? "delivered"
              : "failed";
        settlements.push({
          campaignId: data.campaign_id,
          contactId: data.contact_id,
          messageId: data.id,
          outcome,
          reason: outcome === "failed" ? data.error_code : null,
          sentAt: data.sent_at ? Date.parse(data.sent_at) : null,
        });
        break;
      }
      case "message.received": {
        const data = event.data as MessageData;
        if (data.contact_id)
          await credit(tx, event.workspaceId, data.contact_id, "repliedAt", event.createdAt);
        break;
      }
      case "contact.opted_out":
        await credit(tx, event.workspaceId, (event.data as { id: string }).id, "optedOutAt", event.createdAt);
        break;
    }
  }
  // A batch of status events (a carrier's reports, a send batch's hand-offs) settles its
  // recipients together: one statement on PostgreSQL.
  await settleRecipients(tx, settlements, async ({ outcome, reason, sentAt, ...key }) => {
    const statements = recipientStatements(tx);
    if (outcome === "sent") await statements.sent.run({ ...key, sentAt });
    else await statements.settled.run({ ...key, outcome, reason, sentAt });
  });
});

/**
 * A voice campaign's recipient follows its call: `sent` once the provider took it (the hand-off
 * time stays), then `delivered` when answered or voicemail was reached, `failed` (reason the
 * status, lower-cased) when busy, unanswered or failed.
 */
export async function settleCallRecipient(
  tx: DbOrTx,
  call: { id: string; campaignId: string | null; contactId: string | null; status: string },
  now: number,
) {
  if (!call.campaignId || !call.contactId || call.status === "QUEUED") return;
  const reached = call.status === "COMPLETED" || call.status === "VOICEMAIL";
  const final = reached || ["BUSY", "NO_ANSWER", "FAILED"].includes(call.status);
  const outcome = !final ? "sent" : reached ? "delivered" : "failed";
  await tx
    .update(campaignRecipients)
    .set({
      outcome,
      reason: outcome === "failed" ? call.status.toLowerCase() : null,
      handedOffAt: sql`coalesce(${campaignRecipients.handedOffAt}, ${now})`,
    })
    .where(
      and(
        eq(campaignRecipients.campaignId, call.campaignId),
        eq(campaignRecipients.contactId, call.contactId),
        eq(campaignRecipients.callId, call.id),
        sql`${campaignRecipients.outcome} IN ('queued', 'deferred', 'sent')`,
      ),
    )
    .run();
}

/** Marks the contact's campaign messages of the last 7 days as replied to / opted out of. */
async function credit(
  tx: DbOrTx,
  workspaceId: string,
  contactId: string,
  column: "repliedAt" | "optedOutAt",
  now: number,
) {
  await tx
    .update(campaignRecipients)
    .set({ [column]: now })
    .where(
      and(
        eq(campaignRecipients.workspaceId, workspaceId),
        eq(campaignRecipients.contactId, contactId),
        isNull(campaignRecipients[column]),
        gte(campaignRecipients.handedOffAt, now - REPLY_WINDOW_MS),
      ),
    )
    .run();
}
