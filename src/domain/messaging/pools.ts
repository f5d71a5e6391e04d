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

function countsOf(db: DbOrTx, workspaceId: string, poolIds: string[]): Map<string, number> {
  if (poolIds.length === 0) return new Map();
  const rows = db
    .select({ poolId: numbers.poolId, n: count() })
    .from(numbers)
    .where(and(eq(numbers.workspaceId, workspaceId), NUMBER_IS_ACTIVE, inArray(numbers.poolId, poolIds)))
    .groupBy(numbers.poolId)
    .all();
  return new Map(rows.map((row) => [row.poolId as string, row.n]));
}

function toRecords(db: DbOrTx, workspaceId: string, rows: PoolRow[]): PoolRecord[] {
  const counts = countsOf(
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

function findPool(db: DbOrTx, workspaceId: string, id: string): PoolRow {
  const row = workspaceRow(db, pools, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

export function createPool(
  db: DbOrTx,
  workspaceId: string,
  input: { name: string; description?: string | null },
  now = Date.now(),
): PoolRecord {
  const row: PoolRow = {
    id: newId(),
    workspaceId,
    name: input.name,
    description: input.description ?? null,
    createdAt: now,
    updatedAt: now,
  };
  db.insert(pools).values(row).run();
  return toRecords(db, workspaceId, [row])[0];
}

export function listPools(
  db: DbOrTx,
  workspaceId: string,
  filters: { q?: string },
  page: { limit: number; offset: number },
): { pools: PoolRecord[]; total: number } {
  const { rows, total } = newestFirstPage(
    db,
    pools,
    and(eq(pools.workspaceId, workspaceId), containsText(pools.name, filters.q)),
    [pools.createdAt, pools.id],
    page,
  );
  return { pools: toRecords(db, workspaceId, rows), total };
}

export function getPool(db: DbOrTx, workspaceId: string, id: string): PoolRecord {
  return toRecords(db, workspaceId, [findPool(db, workspaceId, id)])[0];
}

export function updatePool(
  db: Db,
  workspaceId: string,
  id: string,
  patch: { name?: string; description?: string | null },
  now = Date.now(),
): PoolRecord {
  return db.transaction((tx) => {
    const row = findPool(tx, workspaceId, id);
    const changes: Partial<PoolRow> = { updatedAt: now };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.description !== undefined) changes.description = patch.description;
    tx.update(pools).set(changes).where(eq(pools.id, row.id)).run();
    return toRecords(tx, workspaceId, [{ ...row, ...changes }])[0];
  });
}

/** DELETE /v1/pools/{id}: the pool goes; its numbers stay in the workspace with no pool (seed rule 3). */
export function deletePool(db: Db, workspaceId: string, id: string, now = Date.now()) {
  db.transaction((tx) => {
    const row = findPool(tx, workspaceId, id);
    tx.update(numbers)
      .set({ poolId: null, updatedAt: now })
      .where(and(eq(numbers.workspaceId, workspaceId), eq(numbers.poolId, row.id)))
      .run();
    tx.delete(poolStickySenders).where(eq(poolStickySenders.poolId, row.id)).run();
    tx.delete(pools).where(eq(pools.id, row.id)).run();
  });
}

/**
 * POST /v1/pools/{id}/numbers: moves active numbers of the workspace into the pool. Unknown,
 * foreign or released ids and numbers already in the pool are counted in `skipped`.
 */
export function addNumbersToPool(
  db: Db,
  workspaceId: string,
  id: string,
  numberIds: string[],
  now = Date.now(),
): { added: number; skipped: number } {
  return db.transaction((tx) => {
    const pool = findPool(tx, workspaceId, id);
    const wanted = [...new Set(numberIds.filter(isUuid))];
    const movable = wanted.length
      ? tx
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
      tx.update(numbers).set({ poolId: pool.id, updatedAt: now }).where(inArray(numbers.id, ids)).run();
      // Sticky assignments in the pools they left no longer apply.
      tx.delete(poolStickySenders)
        .where(and(inArray(poolStickySenders.numberId, ids), ne(poolStickySenders.poolId, pool.id)))
        .run();
    }
    return { added: movable.length, skipped: numberIds.length - movable.length };
  });
}

/** DELETE /v1/pools/{id}/numbers: takes numbers out of the pool (they stay in the workspace). */
export function removeNumbersFromPool(
  db: Db,
  workspaceId: string,
  id: string,
  numberIds: string[],
  now = Date.now(),
): { removed: number } {
  return db.transaction((tx) => {
    const pool = findPool(tx, workspaceId, id);
    const wanted = [...new Set(numberIds.filter(isUuid))];
    if (wanted.length === 0) return { removed: 0 };
    const members = tx
      .select({ id: numbers.id })
      .from(numbers)
      .where(
        and(eq(numbers.workspaceId, workspaceId), eq(numbers.poolId, pool.id), inArray(numbers.id, wanted)),
      )
      .all()
      .map((row) => row.id);
    if (members.length) {
      tx.update(numbers).set({ poolId: null, updatedAt: now }).where(inArray(numbers.id, members)).run();
      tx.delete(poolStickySenders)
        .where(and(eq(poolStickySenders.poolId, pool.id), inArray(poolStickySenders.numberId, members)))
        .run();
    }
    return { removed: members.length };
  });
}
