import { and, asc, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { NUMBER_IS_ACTIVE, type NumberRow, numbers, poolStickySenders } from "../../db/schema";
import { areaCodeOf } from "../../lib/phone";
import { nextLocalMidnight, reserveDailySend, usageToday } from "./numbers";

export type PickedSender =
  | { sender: NumberRow; retryAt: null }
  /** Every number is at its cap: wait until `retryAt` (the earliest next local day); null = no numbers. */
  | { sender: null; retryAt: number | null };

/**
 * Picks the sending number for one bulk send from a pool and reserves one send against its
 * daily_limit (so the caller must use it or call releaseDailySend):
 * 1. the contact's sticky sender in this pool, while it is in the pool and under its cap;
 * 2. otherwise the least-used-today number under its cap, an area-code match with the contact
 *    winning ties (then the oldest number), which becomes the contact's sticky sender if it has none;
 * 3. every number capped → no sender, and the time the earliest of them starts a new local day.
 * A cap is never exceeded. Call it inside the transaction that accepts the send.
 */
export async function pickSender(
  tx: DbOrTx,
  workspaceId: string,
  poolId: string,
  contact: { id: string; phoneNumber: string },
  now = Date.now(),
): Promise<PickedSender> {
  const candidates = await tx
    .select()
    .from(numbers)
    .where(and(eq(numbers.workspaceId, workspaceId), eq(numbers.poolId, poolId), NUMBER_IS_ACTIVE))
    .orderBy(asc(numbers.createdAt), asc(numbers.id))
    .all();
  if (candidates.length === 0) return { sender: null, retryAt: null };

  // 1. Sticky sender.
  const sticky = await tx
    .select({ numberId: poolStickySenders.numberId })
    .from(poolStickySenders)
    .where(and(eq(poolStickySenders.poolId, poolId), eq(poolStickySenders.contactId, contact.id)))
    .get();
  const stickyRow = sticky ? candidates.find((row) => row.id === sticky.numberId) : undefined;
  if (stickyRow && (await reserveDailySend(tx, stickyRow, now))) return { sender: stickyRow, retryAt: null };

  // 2. Least used today under the cap; area-code match, then age, break ties.
  const contactArea = areaCodeOf(contact.phoneNumber);
  const usage = await usageToday(tx, candidates, now);
  const ranked = candidates
    .map((row, age) => ({ row, age, used: usage.get(row.id) ?? 0 }))
    .filter((c) => c.row.dailyLimit === null || c.used < c.row.dailyLimit)
    .sort((a, b) => {
      if (a.used !== b.used) return a.used - b.used;
      const aMatch = contactArea !== null && areaCodeOf(a.row.number) === contactArea ? 0 : 1;
      const bMatch = contactArea !== null && areaCodeOf(b.row.number) === contactArea ? 0 : 1;
      return aMatch !== bMatch ? aMatch - bMatch : a.age - b.age;
    });
  for (const candidate of ranked) {
    if (!(await reserveDailySend(tx, candidate.row, now))) continue;
    if (!stickyRow) {
      await tx
        .insert(poolStickySenders)
        .values({ workspaceId, poolId, contactId: contact.id, numberId: candidate.row.id, createdAt: now })
        .onConflictDoUpdate({
          target: [poolStickySenders.poolId, poolStickySenders.contactId],
          set: { numberId: candidate.row.id, createdAt: now },
        })
        .run();
    }
    return { sender: candidate.row, retryAt: null };
  }

  // 3. All capped: wait for the first number whose local day rolls over.
  const retryAt = Math.min(...candidates.map((row) => nextLocalMidnight(row.timezone, now)));
  return { sender: null, retryAt };
}
