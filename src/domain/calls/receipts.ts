import { lt } from "drizzle-orm";
import type { Db } from "../../db/client";
import { webhookReceipts } from "../../db/schema";

/** How long an accepted signature is remembered: the providers' 5-minute tolerance, with slack. */
export const RECEIPT_TTL_MS = 10 * 60_000;

/**
 * Records a provider webhook's signature as accepted; false when it was accepted before (a replay).
 * The row is the lock, so two servers sharing the database cannot both accept the same request.
 * Old receipts are pruned as new ones arrive.
 */
export async function acceptWebhookReceipt(db: Db, signature: string, now: number): Promise<boolean> {
  if (!signature) return false;
  return await db.transaction(async (tx) => {
    await tx
      .delete(webhookReceipts)
      .where(lt(webhookReceipts.receivedAt, now - RECEIPT_TTL_MS))
      .run();
    const inserted = await tx
      .insert(webhookReceipts)
      .values({ signature, receivedAt: now })
      .onConflictDoNothing()
      .returning({ signature: webhookReceipts.signature })
      .all();
    return inserted.length === 1;
  });
}
