import { and, eq, sql } from "drizzle-orm";
import { unregisteredSender } from "../../compliance";
import type { DbOrTx } from "../../db/client";
import { preparedPerConnection } from "../../db/prepared";
import { tendlcCampaignNumbers, tendlcCampaigns, workspaces } from "../../db/schema";

/**
 * The workspace's numbers in an APPROVED 10DLC campaign, when it requires registration
 * (`settings.require_registration`); null when it does not (every sender may send).
 */
export async function registeredNumberIds(
  tx: DbOrTx,
  workspaceId: string,
  /** `settings.require_registration` when the caller has read it already (send-settings.ts). */
  known?: { requireRegistration: boolean },
): Promise<Set<string> | null> {
  // Asked on every send (one-off, campaign, flow): prepared once per connection.
  const statements = registrationStatements(tx);
  const required = known
    ? known.requireRegistration
    : (await statements.required.get({ workspaceId }))?.required;
  if (!required) return null;
  return new Set((await statements.approvedNumbers.all({ workspaceId })).map((r) => r.numberId));
}

const registrationStatements = preparedPerConnection((db: DbOrTx) => ({
  required: db
    .select({ required: workspaces.requireRegistration })
    .from(workspaces)
    .where(eq(workspaces.id, sql.placeholder("workspaceId")))
    .prepare(),
  approvedNumbers: db
    .select({ numberId: tendlcCampaignNumbers.numberId })
    .from(tendlcCampaignNumbers)
    .innerJoin(tendlcCampaigns, eq(tendlcCampaigns.id, tendlcCampaignNumbers.campaignId))
    .where(
      and(
        eq(tendlcCampaignNumbers.workspaceId, sql.placeholder("workspaceId")),
        eq(tendlcCampaigns.status, "APPROVED"),
      ),
    )
    .prepare(),
}));

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
