import { and, eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { campaignRecipients, clicks, conversions } from "../../db/schema";

/**
 * A campaign's `stats.clicked` (recipients who clicked its links at least once), `conversions`
 * and `revenue` (conversions attributed to it), each from an index alone
 * (clicks_workspace_campaign_idx, conversions_workspace_campaign_idx).
 */
export async function campaignAttribution(
  db: DbOrTx,
  workspaceId: string,
  campaignId: string,
): Promise<{ clicked: number; conversions: number; revenue: number }> {
  const clicked =
    (
      await db
        .select({ n: sql<number>`count(DISTINCT ${clicks.contactId})`.mapWith(Number) })
        .from(clicks)
        .where(and(eq(clicks.workspaceId, workspaceId), eq(clicks.campaignId, campaignId)))
        .get()
    )?.n ?? 0;
  const converted = await db
    .select({
      n: sql<number>`count(*)`.mapWith(Number),
      revenue: sql<number>`coalesce(sum(${conversions.value}), 0)`.mapWith(Number),
    })
    .from(conversions)
    .where(and(eq(conversions.workspaceId, workspaceId), eq(conversions.campaignId, campaignId)))
    .get();
  return {
    clicked: Number(clicked),
    conversions: Number(converted?.n ?? 0),
    revenue: roundMoney(Number(converted?.revenue ?? 0)),
  };
}

/**
 * The same figures per A/B variant: clicks and conversions of the campaign joined to its
 * recipients (campaign_recipients_campaign_contact_idx) by contact, grouped by the variant the
 * recipient got.
 */
export async function variantAttribution(
  db: DbOrTx,
  workspaceId: string,
  campaignId: string,
): Promise<Map<string, { clicked: number; conversions: number; revenue: number }>> {
  const byVariant = new Map<string, { clicked: number; conversions: number; revenue: number }>();
  const entry = (variant: string) => {
    let found = byVariant.get(variant);
    if (!found) {
      found = { clicked: 0, conversions: 0, revenue: 0 };
      byVariant.set(variant, found);
    }
    return found;
  };
  const recipientOf = (contactId: typeof clicks.contactId | typeof conversions.contactId) =>
    and(eq(campaignRecipients.campaignId, campaignId), eq(campaignRecipients.contactId, contactId));
  const clickedRows = await db
    .select({
      variant: campaignRecipients.variant,
      n: sql<number>`count(DISTINCT ${clicks.contactId})`.mapWith(Number),
    })
    .from(clicks)
    .innerJoin(campaignRecipients, recipientOf(clicks.contactId))
    .where(and(eq(clicks.workspaceId, workspaceId), eq(clicks.campaignId, campaignId)))
    .groupBy(campaignRecipients.variant)
    .all();
  for (const row of clickedRows) if (row.variant !== null) entry(row.variant).clicked = Number(row.n);
  const convertedRows = await db
    .select({
      variant: campaignRecipients.variant,
      n: sql<number>`count(*)`.mapWith(Number),
      revenue: sql<number>`coalesce(sum(${conversions.value}), 0)`.mapWith(Number),
    })
    .from(conversions)
    .innerJoin(campaignRecipients, recipientOf(conversions.contactId))
    .where(and(eq(conversions.workspaceId, workspaceId), eq(conversions.campaignId, campaignId)))
    .groupBy(campaignRecipients.variant)
    .all();
  for (const row of convertedRows) {
    if (row.variant === null) continue;
    const found = entry(row.variant);
    found.conversions = Number(row.n);
    found.revenue = roundMoney(Number(row.revenue));
  }
  return byVariant;
}

/** Sums of doubles to cents' precision and a little more (no 0.30000000000000004 in answers). */
export function roundMoney(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
