import { and, eq, lt } from "drizzle-orm";
import type { Db } from "../../db/client";
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
    let row = await tx.select().from(idempotencyKeys).where(where).get();
    if (row && row.createdAt < now - TTL_MS) {
      await tx
        .delete(idempotencyKeys)
        .where(and(where, lt(idempotencyKeys.createdAt, now - TTL_MS)))
        .run();
      row = undefined;
    }
    if (!row) {
      await tx.insert(idempotencyKeys).values({ workspaceId, key, requestHash, createdAt: now }).run();
      return { kind: "new" } as const;
    }
    if (row.requestHash !== requestHash) return { kind: "mismatch" } as const;
    if (row.statusCode === null || row.responseBody === null) {
      if (row.createdAt >= now - IN_FLIGHT_TIMEOUT_MS) return { kind: "in_flight" } as const;
      await tx.update(idempotencyKeys).set({ createdAt: now }).where(where).run();
      return { kind: "new" } as const;
    }
    return { kind: "replay", status: row.statusCode, body: row.responseBody } as const;
  });
}

/** Stores the first response for replay. */
export async function storeIdempotentResponse(
  db: Db,
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
