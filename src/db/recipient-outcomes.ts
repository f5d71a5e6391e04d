import { sql } from "drizzle-orm";
import { type DbOrTx, dialectOf } from "./client";
import { withJsonRows } from "./prepared";

/** A campaign recipient following its message's status event. */
export interface RecipientSettlement {
  campaignId: string;
  contactId: string;
  messageId: string;
  /** `sent` (from queued or deferred), or `delivered`/`failed` (from those or sent). */
  outcome: "sent" | "delivered" | "failed";
  reason: string | null;
  /** The message's sent_at: the recipient's first hand-off time, kept once set. */
  sentAt: number | null;
}

/**
 * The settlements of one batch of status events on PostgreSQL, in one `UPDATE … FROM
 * json_to_recordset(…)` instead of a round trip each. One statement updates a row once, so a recipient's
 * settlements are folded first into the one the sequence ends with (its outcome and reason, the
 * first sent_at), applied where any of them would apply. SQLite (or a single settlement): `each`,
 * one prepared statement per settlement, in order.
 */
export async function settleRecipients(
  tx: DbOrTx,
  settlements: readonly RecipientSettlement[],
  each: (settlement: RecipientSettlement) => Promise<unknown>,
): Promise<void> {
  if (dialectOf(tx) === "sqlite" || settlements.length < 2) {
    for (const settlement of settlements) await each(settlement);
    return;
  }
  const folded = new Map<string, RecipientSettlement & { from: "sent" | "settled" }>();
  for (const s of settlements) {
    const key = `${s.campaignId}\u0000${s.contactId}\u0000${s.messageId}`;
    const before = folded.get(key);
    folded.set(key, {
      ...s,
      sentAt: before?.sentAt ?? s.sentAt,
      // The fold applies where any of its settlements would: a `delivered` after a `sent` also
      // moves a recipient already sent.
      from: before?.from === "settled" || s.outcome !== "sent" ? "settled" : "sent",
    });
  }
  await withJsonRows(
    [...folded.values()],
    [
      ["campaign_id", "text"],
      ["contact_id", "text"],
      ["message_id", "text"],
      ["outcome", "text"],
      ["reason", "text"],
      ["sent_at", "bigint"],
      ["also_from_sent", "boolean"],
    ],
    (s) => [s.campaignId, s.contactId, s.messageId, s.outcome, s.reason, s.sentAt, s.from === "settled"],
    async (v) =>
      await tx.run(sql`
        UPDATE campaign_recipients AS r SET
          outcome = v.outcome, reason = v.reason, handed_off_at = coalesce(r.handed_off_at, v.sent_at)
        FROM ${v}
        WHERE r.campaign_id = v.campaign_id AND r.contact_id = v.contact_id AND r.message_id = v.message_id
          AND (r.outcome IN ('queued', 'deferred') OR (v.also_from_sent AND r.outcome = 'sent'))`),
  );
}
