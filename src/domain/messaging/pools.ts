import { and, count, eq, inArray, isNull, ne, or } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { containsText } from "../../db/dialect";
import { newestFirstPage } from "../../db/paging";
import { NUMBER_IS_ACTIVE, numbers, type PoolRow, poolStickySenders, pools } from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";

/** A pool as the API shows it: `numbers` is the count of active numbers in it. */
export interface PoolRecord {
  id: string;
  name: string;
  description: string | null;
  numbers: number;
  created_at: string;
}

async function countsOf(db: DbOrTx, workspaceId: string, poolIds: string[]): Promise<Map<string, number>> {
  if (poolIds.length === 0) return new Map();
  const rows = await db
    .select({ poolId: numbers.poolId, n: count() })
    .from(numbers)
    .where(and(eq(numbers.workspaceId, workspaceId), NUMBER_IS_ACTIVE, inArray(numbers.poolId, poolIds)))
    .groupBy(numbers.poolId)
    .all();
  return new Map(rows.map((row) => [row.poolId as string, row.n]));
}

async function toRecords(db: DbOrTx, workspaceId: string, rows: PoolRow[]): Promise<PoolRecord[]> {
  const counts = await countsOf(
    db,
    workspaceId,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    numbers: counts.get(row.id) ?? 0,
    created_at: new Date(row.createdAt).toISOString(),
  }));
}

async function findPool(db: DbOrTx, workspaceId: string, id: string): Promise<PoolRow> {
  const row = await workspaceRow(db, pools, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

export async function createPool(
  db: DbOrTx,
  workspaceId: string,
  input: { name: string; description?: string | null },
  now = Date.now(),
): Promise<PoolRecord> {
  const row: PoolRow = {
    id: newId(),
    workspaceId,
    name: input.name,
    description: input.description ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await db.insert(pools).values(row).run();
  return (await toRecords(db, workspaceId, [row]))[0];
}

export async function listPools(
  db: DbOrTx,
  workspaceId: string,
  filters: { q?: string },
  page: { limit: number; offset: number },
): Promise<{ pools: PoolRecord[]; total: number }> {
  const { rows, total } = await newestFirstPage(
    db,
    pools,
    and(eq(pools.workspaceId, workspaceId), containsText(pools.name, filters.q)),
    [pools.createdAt, pools.id],
    page,
  );
  return { pools: await toRecords(db, workspaceId, rows), total };
}

export async function getPool(db: DbOrTx, workspaceId: string, id: string): Promise<PoolRecord> {
  return (await toRecords(db, workspaceId, [await findPool(db, workspaceId, id)]))[0];
}

export async function updatePool(
  db: Db,
  workspaceId: string,
  id: string,
  patch: { name?: string; description?: string | null },
  now = Date.now(),
): Promise<PoolRecord> {
  return await db.transaction(async (tx) => {
    const row = await findPool(tx, workspaceId, id);
    const changes: Partial<PoolRow> = { updatedAt: now };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.description !== undefined) changes.description = patch.description;
    await tx.update(pools).set(changes).where(eq(pools.id, row.id)).run();
    return (await toRecords(tx, workspaceId, [{ ...row, ...changes }]))[0];
  });
}

/** DELETE /v1/pools/{id}: the pool goes; its numbers stay in the workspace with no pool (seed rule 3). */
export async function deletePool(db: Db, workspaceId: string, id: string, now = Date.now()) {
  await db.transaction(async (tx) => {
    const row = await findPool(tx, workspaceId, id);
    await tx
      .update(numbers)
      .set({ poolId: null, updatedAt: now })
      .where(and(eq(numbers.workspaceId, workspaceId), eq(numbers.poolId, row.id)))
      .run();
    await tx.delete(poolStickySenders).where(eq(poolStickySenders.poolId, row.id)).run();
    await tx.delete(pools).where(eq(pools.id, row.id)).run();
  });
}

/**
 * POST /v1/pools/{id}/numbers: moves active numbers of the workspace into the pool. Unknown,
 * foreign or released ids and numbers already in the pool are counted in `skipped`.
 */
export async function addNumbersToPool(
  db: Db,
  workspaceId: string,
  id: string,
  numberIds: string[],
  now = Date.now(),
): Promise<{ added: number; skipped: number }> {
  return await db.transaction(async (tx) => {
    const pool = await findPool(tx, workspaceId, id);
    const wanted = [...new Set(numberIds.filter(isUuid))];
    const movable = wanted.length
      ? await tx
          .select({ id: numbers.id, poolId: numbers.poolId })
          .from(numbers)
          .where(
            and(
              eq(numbers.workspaceId, workspaceId),
              NUMBER_IS_ACTIVE,
              inArray(numbers.id, wanted),
              or(isNull(numbers.poolId), ne(numbers.poolId, pool.id)),
            ),
          )
          .all()
      : [];
    if (movable.length) {
      const ids = movable.map((row) => row.id);
      await tx.update(numbers).set({ poolId: pool.id, updatedAt: now }).where(inArray(numbers.id, ids)).run();
      // Sticky assignments in the pools they left no longer apply.
      await tx
        .delete(poolStickySenders)
        .where(and(inArray(poolStickySenders.numberId, ids), ne(poolStickySenders.poolId, pool.id)))
        .run();
    }
    return { added: movable.length, skipped: numberIds.length - movable.length };
  });
}

/** DELETE /v1/pools/{id}/numbers: takes numbers out of the pool (they stay in the workspace). */
export async function removeNumbersFromPool(
  db: Db,
  workspaceId: string,
  id: string,
  numberIds: string[],
  now = Date.now(),
): Promise<{ removed: number }> {
  return await db.transaction(async (tx) => {
    const pool = await findPool(tx, workspaceId, id);
    const wanted = [...new Set(numberIds.filter(isUuid))];
    if (wanted.length === 0) return { removed: 0 };
    const members = (
      await tx
        .select({ id: numbers.id })
        .from(numbers)
        .where(
          and(eq(numbers.workspaceId, workspaceId), eq(numbers.poolId, pool.id), inArray(numbers.id, wanted)),
        )
        .all()
    ).map((row) => row.id);
    if (members.length) {
      await tx
        .update(numbers)
        .set({ poolId: null, updatedAt: now })
        .where(inArray(numbers.id, members))
        .run();
      await tx
        .delete(poolStickySenders)
        .where(and(eq(poolStickySenders.poolId, pool.id), inArray(poolStickySenders.numberId, members)))
        .run();
    }
    return { removed: members.length };
  });
}
