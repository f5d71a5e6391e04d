import { and, eq } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { idempotencyKeys } from "../../db/schema";

const TTL_MS = 86_400_000;
/**
 * A claim with no stored answer after this long belongs to a request whose process died (a
 * request is answered well within it): the key may be claimed again instead of answering 409
 * for the rest of the day.
 */
const IN_FLIGHT_TIMEOUT_MS = 60_000;

export type IdempotencyClaim =
  | { kind: "new" }
  | { kind: "replay"; status: number; body: string }
  | { kind: "mismatch" }
  | { kind: "in_flight" };

/**
 * Claims `key` for a request with fingerprint `requestHash`: the first caller inserts a pending
 * row and goes on; later callers get the stored response, or a conflict.
 */
export async function claimIdempotencyKey(
  db: Db,
  workspaceId: string,
  key: string,
  requestHash: string,
  now = Date.now(),
): Promise<IdempotencyClaim> {
  return await db.transaction(async (tx) => {
    const where = and(eq(idempotencyKeys.workspaceId, workspaceId), eq(idempotencyKeys.key, key));
    // Insert first: of concurrent claims of one key (two processes, a client's retry racing its
    // first try) one inserts, and the others' inserts do nothing (on PostgreSQL they wait for the
    // first's commit) and read what it stored; none fails on the key.
    const inserted = await tx
      .insert(idempotencyKeys)
      .values({ workspaceId, key, requestHash, createdAt: now })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key })
      .all();
    if (inserted.length > 0) return NEW;
    const row = await tx.select().from(idempotencyKeys).where(where).get();
    // Released meanwhile (its request failed on our side): the client may retry.
    if (!row) return IN_FLIGHT;
    // Taken over with compare-and-set on the claim's time: one of several takers wins.
    const takeOver = async () =>
      (
        await tx
          .update(idempotencyKeys)
          .set({ requestHash, statusCode: null, responseBody: null, createdAt: now })
          .where(and(where, eq(idempotencyKeys.createdAt, row.createdAt)))
          .returning({ key: idempotencyKeys.key })
          .all()
      ).length > 0;
    // A day old: the key is new again, whatever it was used for.
    if (row.createdAt < now - TTL_MS) return (await takeOver()) ? NEW : IN_FLIGHT;
    if (row.requestHash !== requestHash) return { kind: "mismatch" } as const;
    if (row.statusCode === null || row.responseBody === null) {
      if (row.createdAt >= now - IN_FLIGHT_TIMEOUT_MS) return IN_FLIGHT;
      return (await takeOver()) ? NEW : IN_FLIGHT;
    }
    return { kind: "replay", status: row.statusCode, body: row.responseBody } as const;
  });
}

const NEW: IdempotencyClaim = { kind: "new" };
const IN_FLIGHT: IdempotencyClaim = { kind: "in_flight" };

/**
 * Stores the first response for replay: after the request, or in the transaction of its effect
 * (then the later store writes the same answer again).
 */
export async function storeIdempotentResponse(
  db: DbOrTx,
  workspaceId: string,
  key: string,
  status: number,
  body: string,
) {
  await db
    .update(idempotencyKeys)
    .set({ statusCode: status, responseBody: body })
    .where(and(eq(idempotencyKeys.workspaceId, workspaceId), eq(idempotencyKeys.key, key)))
    .run();
}

/** Forgets a claim whose request failed on our side (5xx), so the client may retry it. */
export async function releaseIdempotencyKey(db: Db, workspaceId: string, key: string) {
  await db
    .delete(idempotencyKeys)
    .where(and(eq(idempotencyKeys.workspaceId, workspaceId), eq(idempotencyKeys.key, key)))
    .run();
}
