import { and, eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { clicks, conversions } from "../../db/schema";

/**
 * A campaign's `stats.clicked` (recipients who clicked its links at least once), `conversions`
 * and `revenue` (conversions attributed to it), each from an index alone
 * (clicks_workspace_campaign_idx, conversions_workspace_campaign_idx).
 */
export function campaignAttribution(
  db: DbOrTx,
  workspaceId: string,
  campaignId: string,
): { clicked: number; conversions: number; revenue: number } {
  const clicked =
    db
      .select({ n: sql<number>`count(DISTINCT ${clicks.contactId})` })
      .from(clicks)
      .where(and(eq(clicks.workspaceId, workspaceId), eq(clicks.campaignId, campaignId)))
      .get()?.n ?? 0;
  const converted = db
    .select({ n: sql<number>`count(*)`, revenue: sql<number>`coalesce(sum(${conversions.value}), 0)` })
    .from(conversions)
    .where(and(eq(conversions.workspaceId, workspaceId), eq(conversions.campaignId, campaignId)))
    .get();
  return {
    clicked: Number(clicked),
    conversions: Number(converted?.n ?? 0),
    revenue: roundMoney(Number(converted?.revenue ?? 0)),
  };
}

/** Sums of doubles to cents' precision and a little more (no 0.30000000000000004 in answers). */
export function roundMoney(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
