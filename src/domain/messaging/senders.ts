import { and, asc, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { NUMBER_IS_ACTIVE, type NumberRow, numbers, poolStickySenders } from "../../db/schema";
import { areaCodeOf } from "../../lib/phone";
import { nextLocalMidnight, releaseDailySend, reserveDailySend, usageToday } from "./numbers";

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
 * A cap is never exceeded. Call it inside the transaction that accepts the send. Two transactions
 * pinning a sender for one contact at once (two servers on PostgreSQL) agree: the second takes
 * the number the first pinned, while it is under its cap.
 */
export async function pickSender(
  tx: DbOrTx,
  workspaceId: string,
  poolId: string,
  contact: { id: string; phoneNumber: string },
  now = Date.now(),
): Promise<PickedSender> {
  const candidates = await poolCandidates(tx, workspaceId, poolId);
  if (candidates.length === 0) return { sender: null, retryAt: null };
  const sticky = await tx
    .select({ numberId: poolStickySenders.numberId })
    .from(poolStickySenders)
    .where(and(eq(poolStickySenders.poolId, poolId), eq(poolStickySenders.contactId, contact.id)))
    .get();
  return await pickFrom(
    {
      candidates,
      sticky: sticky?.numberId,
      reserve: async (row) => await reserveDailySend(tx, row, now),
      release: async (row) => await releaseDailySend(tx, row, now),
      usage: async () => await usageToday(tx, candidates, now),
      pin: async (numberId) =>
        await pinStickySender(tx, workspaceId, poolId, contact.id, numberId, sticky, now),
    },
    contact,
    now,
  );
}

/** A pool's active numbers, oldest first: the candidates of a pick. */
export async function poolCandidates(tx: DbOrTx, workspaceId: string, poolId: string): Promise<NumberRow[]> {
  return await tx
    .select()
    .from(numbers)
    .where(and(eq(numbers.workspaceId, workspaceId), eq(numbers.poolId, poolId), NUMBER_IS_ACTIVE))
    .orderBy(asc(numbers.createdAt), asc(numbers.id))
    .all();
}

/**
 * What a pick reads and writes, so that one pick (pickSender: statements as it goes) and a batch
 * of picks (a dispatch step: counters held once, pins written together) share the rules.
 */
export interface PickState {
  /** The pool's active numbers, oldest first (not empty). */
  candidates: NumberRow[];
  /** The contact's pinned number in the pool, if any. */
  sticky: string | undefined;
  reserve(row: NumberRow): Promise<boolean>;
  release(row: NumberRow): Promise<void>;
  /** Sends counted today per candidate. */
  usage(): Promise<Map<string, number>>;
  /** Pins `numberId` unless another is pinned meanwhile; answers the number pinned now. */
  pin(numberId: string): Promise<string | undefined>;
}

/** pickSender's rules over a PickState: sticky, then least used (area code, then age), else the retry time. */
export async function pickFrom(
  state: PickState,
  contact: { phoneNumber: string },
  now: number,
): Promise<PickedSender> {
  const { candidates } = state;
  // 1. Sticky sender.
  const stickyRow = state.sticky ? candidates.find((row) => row.id === state.sticky) : undefined;
  if (stickyRow && (await state.reserve(stickyRow))) return { sender: stickyRow, retryAt: null };

  // 2. Least used today under the cap; area-code match, then age, break ties.
  const contactArea = areaCodeOf(contact.phoneNumber);
  const usage = await state.usage();
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
    if (!(await state.reserve(candidate.row))) continue;
    if (stickyRow) return { sender: candidate.row, retryAt: null };
    const pinned = await state.pin(candidate.row.id);
    if (pinned === candidate.row.id) return { sender: candidate.row, retryAt: null };
    // Another transaction pinned another number meanwhile: send from it, as the next send will.
    const winner = candidates.find((row) => row.id === pinned);
    if (winner && (await state.reserve(winner))) {
      await state.release(candidate.row);
      return { sender: winner, retryAt: null };
    }
    return { sender: candidate.row, retryAt: null };
  }

  // 3. All capped: wait for the first number whose local day rolls over.
  const retryAt = Math.min(...candidates.map((row) => nextLocalMidnight(row.timezone, now)));
  return { sender: null, retryAt };
}

/**
 * Pins `numberId` as the contact's sticky sender in the pool unless another is pinned, and answers
 * the number pinned now. `stale` is the pin read before, whose number has left the pool: it is
 * replaced only if still the same (compare-and-set), so of two transactions pinning at once the
 * first wins and the second reads its number.
 */
export async function pinStickySender(
  tx: DbOrTx,
  workspaceId: string,
  poolId: string,
  contactId: string,
  numberId: string,
  stale: { numberId: string } | undefined,
  now: number,
): Promise<string | undefined> {
  const key = and(eq(poolStickySenders.poolId, poolId), eq(poolStickySenders.contactId, contactId));
  const pinned = stale
    ? await tx
        .update(poolStickySenders)
        .set({ numberId, createdAt: now })
        .where(and(key, eq(poolStickySenders.numberId, stale.numberId)))
        .returning({ numberId: poolStickySenders.numberId })
        .all()
    : await tx
        .insert(poolStickySenders)
        .values({ workspaceId, poolId, contactId, numberId, createdAt: now })
        .onConflictDoNothing({ target: [poolStickySenders.poolId, poolStickySenders.contactId] })
        .returning({ numberId: poolStickySenders.numberId })
        .all();
  if (pinned.length > 0) return numberId;
  return (await tx.select({ numberId: poolStickySenders.numberId }).from(poolStickySenders).where(key).get())
    ?.numberId;
}
