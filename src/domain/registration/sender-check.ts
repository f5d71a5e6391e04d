import { and, eq } from "drizzle-orm";
import { unregisteredSender } from "../../compliance";
import type { DbOrTx } from "../../db/client";
import { tendlcCampaignNumbers, tendlcCampaigns, workspaces } from "../../db/schema";

/**
 * The workspace's numbers in an APPROVED 10DLC campaign, when it requires registration
 * (`settings.require_registration`); null when it does not (every sender may send).
 */
export function registeredNumberIds(tx: DbOrTx, workspaceId: string): Set<string> | null {
  const ws = tx
    .select({ required: workspaces.requireRegistration })
    .from(workspaces)
    .where(eq(workspaces.id, workspaceId))
    .get();
  if (!ws?.required) return null;
  const rows = tx
    .select({ numberId: tendlcCampaignNumbers.numberId })
    .from(tendlcCampaignNumbers)
    .innerJoin(tendlcCampaigns, eq(tendlcCampaigns.id, tendlcCampaignNumbers.campaignId))
    .where(and(eq(tendlcCampaignNumbers.workspaceId, workspaceId), eq(tendlcCampaigns.status, "APPROVED")))
    .all();
  return new Set(rows.map((r) => r.numberId));
}

/** The compliance module's sender check for one sender, given the set above. */
export function senderSkip(
  registered: Set<string> | null,
  sender: { id: string; number: string },
): "unregistered_number" | null {
  return unregisteredSender({
    required: registered !== null,
    number: sender.number,
    registered: registered?.has(sender.id) ?? true,
  });
}
