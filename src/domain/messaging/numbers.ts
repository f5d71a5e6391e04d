import { and, asc, eq, inArray, lt, sql } from "drizzle-orm";
import {
  type AvailableNumber,
  type Carrier,
  CarrierUnavailableError,
  type NumberSearch,
  type NumberType,
} from "../../carriers/carrier";
import type { Db, DbOrTx } from "../../db/client";
import { newestFirstPage } from "../../db/paging";
import { forEachRowApart, insertRowsReturning, preparedPerConnection } from "../../db/prepared";
import {
  NUMBER_IS_ACTIVE,
  type NumberRow,
  numberDailyUsage,
  numberOrderClaims,
  numbers,
  poolStickySenders,
  pools,
  workspaces,
} from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { timezoneForPhone } from "../../lib/area-codes";
import { AppError, conflict, invalid, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { log } from "../../lib/log";
import { normalizePhone } from "../../lib/phone";
import { smsAgentForReference } from "../agents/agents";
import { refundDailyBudget, spendDailyBudget } from "../workspace/daily-budgets";
import { registerDefaultNumberCheck } from "../workspace/settings";

/** A number as the API shows it (API.md §3 Numbers). */
export interface PhoneNumberRecord {
  id: string;
  number: string;
  pool_id: string | null;
  daily_limit: number | null;
  sent_today: number;
  agent_id: string | null;
  status: "active" | "released";
  /** True when this is the workspace's default sending number (settings.default_number_id). */
  default: boolean;
  created_at: string;
}

export const carrierUnavailable = () => new AppError("unavailable", "Carrier unavailable: try again later");

// ---------------------------------------------------------------------------------------------
// Local days: a number's daily counter resets at midnight in the number's zone.

const dayFormatters = new Map<string, Intl.DateTimeFormat>();
function dayFormatter(zone: string): Intl.DateTimeFormat {
  let formatter = dayFormatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-CA", {
      timeZone: zone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
    });
    dayFormatters.set(zone, formatter);
  }
  return formatter;
}

function localParts(zone: string, ms: number) {
  const parts: Record<string, number> = {};
  for (const part of dayFormatter(zone).formatToParts(ms)) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  return parts as { year: number; month: number; day: number; hour: number; minute: number; second: number };
}

/** The last local day computed per zone, with the instants it spans (every send asks for it). */
const knownDays = new Map<string, { day: string; from: number; until: number }>();

/** `YYYY-MM-DD` of `ms` in `zone`. */
export function localDay(zone: string, ms: number): string {
  const known = knownDays.get(zone);
  if (known && ms >= known.from && ms < known.until) return known.day;
  const day = dayOf(zone, ms);
  // Kept for the span from `ms` (not from midnight) to the next local midnight, when the instant
  // just before that midnight is still this day (it is, unless a zone's rules are unusual there).
  const until = nextLocalMidnight(zone, ms);
  if (until > ms && dayOf(zone, until - 1) === day) knownDays.set(zone, { day, from: ms, until });
  return day;
}

function dayOf(zone: string, ms: number): string {
  const p = localParts(zone, ms);
  return `${p.year}-${String(p.month).padStart(2, "0")}-${String(p.day).padStart(2, "0")}`;
}

/** The instant the day after `ms` begins in `zone` (next local midnight). */
export function nextLocalMidnight(zone: string, ms: number): number {
  const p = localParts(zone, ms);
  const wallNow = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  const offset = wallNow - Math.floor(ms / 1000) * 1000;
  const wallMidnight = Date.UTC(p.year, p.month - 1, p.day + 1);
  let guess = wallMidnight - offset;
  // Correct once for an offset change (DST) between now and midnight.
  const q = localParts(zone, guess);
  const wallGuess = Date.UTC(q.year, q.month - 1, q.day, q.hour, q.minute, q.second);
  guess += wallMidnight - wallGuess;
  return guess;
}

// ---------------------------------------------------------------------------------------------
// Prepared statements of the send path (every accepted message runs them).

const senderStatements = preparedPerConnection((db) => {
  const ph = sql.placeholder;
  const upsertUsage = (capped: boolean) =>
    db
      .insert(numberDailyUsage)
      .values({ numberId: ph("numberId"), workspaceId: ph("workspaceId"), day: ph("day"), count: 1 })
      .onConflictDoUpdate({
        target: [numberDailyUsage.numberId, numberDailyUsage.day],
        set: { count: sql`${numberDailyUsage.count} + 1` },
        setWhere: capped ? sql`${numberDailyUsage.count} < ${ph("limit")}` : undefined,
      })
      .returning({ count: numberDailyUsage.count })
      .prepare();
  return {
    defaultNumberId: db
      .select({ id: workspaces.defaultNumberId })
      .from(workspaces)
      .where(eq(workspaces.id, ph("workspaceId")))
      .prepare(),
    activeByNumber: db
      .select()
      .from(numbers)
      .where(
        and(eq(numbers.workspaceId, ph("workspaceId")), eq(numbers.number, ph("number")), NUMBER_IS_ACTIVE),
      )
      .prepare(),
    activeById: db
      .select()
      .from(numbers)
      .where(and(eq(numbers.workspaceId, ph("workspaceId")), eq(numbers.id, ph("id")), NUMBER_IS_ACTIVE))
      .prepare(),
    oldestActive: db
      .select()
      .from(numbers)
      .where(and(eq(numbers.workspaceId, ph("workspaceId")), NUMBER_IS_ACTIVE))
      .orderBy(asc(numbers.createdAt), asc(numbers.id))
      .limit(1)
      .prepare(),
    byId: db
      .select()
      .from(numbers)
      .where(eq(numbers.id, ph("id")))
      .prepare(),
    reserveCapped: upsertUsage(true),
    reserveUncapped: upsertUsage(false),
    addSends: db
      .update(numberDailyUsage)
      .set({ count: sql`${numberDailyUsage.count} + ${ph("n")}` })
      .where(and(eq(numberDailyUsage.numberId, ph("numberId")), eq(numberDailyUsage.day, ph("day"))))
      .prepare(),
  };
});

// ---------------------------------------------------------------------------------------------
// Records.

/** Sends counted today (each number's local day) for several numbers, in one query. */
export async function usageToday(db: DbOrTx, rows: NumberRow[], now: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (rows.length === 0) return out;
  const days = new Map(rows.map((row) => [row.id, localDay(row.timezone, now)]));
  const found = await db
    .select()
    .from(numberDailyUsage)
    .where(
      and(
        inArray(
          numberDailyUsage.numberId,
          rows.map((row) => row.id),
        ),
        inArray(numberDailyUsage.day, [...new Set(days.values())]),
      ),
    )
    .all();
  for (const usage of found) {
    if (days.get(usage.numberId) === usage.day) out.set(usage.numberId, usage.count);
  }
  return out;
}

async function defaultNumberIdOf(db: DbOrTx, workspaceId: string): Promise<string | null> {
  return (await senderStatements(db).defaultNumberId.get({ workspaceId }))?.id ?? null;
}

async function toRecords(
  db: DbOrTx,
  workspaceId: string,
  rows: NumberRow[],
  now: number,
): Promise<PhoneNumberRecord[]> {
  const usage = await usageToday(db, rows, now);
  const defaultId = await defaultNumberIdOf(db, workspaceId);
  return rows.map((row) => ({
    id: row.id,
    number: row.number,
    pool_id: row.poolId,
    daily_limit: row.dailyLimit,
    sent_today: usage.get(row.id) ?? 0,
    agent_id: row.agentId,
    status: row.status as "active" | "released",
    default: row.id === defaultId && row.status === "active",
    created_at: new Date(row.createdAt).toISOString(),
  }));
}

async function findNumber(db: DbOrTx, workspaceId: string, id: string): Promise<NumberRow> {
  const row = await workspaceRow(db, numbers, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

async function poolExists(db: DbOrTx, workspaceId: string, poolId: string): Promise<boolean> {
  return (await workspaceRow(db, pools, workspaceId, poolId)) !== undefined;
}

function checkDailyLimit(value: number | null | undefined) {
  if (value === undefined || value === null) return;
  if (!Number.isInteger(value) || value < 0 || value > 1_000_000) {
    throw invalid("daily_limit must be an integer between 0 and 1000000, or null");
  }
}

// ---------------------------------------------------------------------------------------------
// Search and order.

/** Available numbers from the carrier, without the ones some workspace of this server already has. */
export async function searchAvailableNumbers(
  db: Db,
  carrier: Carrier,
  search: { country?: string; area_code?: string; contains?: string; type?: string; limit?: string },
): Promise<AvailableNumber[]> {
  const country = (search.country ?? "US").trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(country)) throw invalid("country must be a two-letter ISO country code");
  const areaCode = search.area_code?.trim() || undefined;
  if (areaCode !== undefined && !/^[2-9]\d\d$/.test(areaCode)) {
    throw invalid("area_code must be a three-digit area code");
  }
  const contains = search.contains?.trim() || undefined;
  if (contains !== undefined && !/^[0-9*]{1,10}$/.test(contains)) {
    throw invalid("contains must be digits (with * as a wildcard), at most 10");
  }
  const type = (search.type ?? "local") as NumberType;
  if (type !== "local" && type !== "toll_free") throw invalid("type must be one of local, toll_free");
  let limit = 20;
  if (search.limit !== undefined && search.limit !== "") {
    if (!/^\d+$/.test(search.limit) || Number(search.limit) < 1) {
      throw invalid("limit must be a positive integer");
    }
    limit = Math.min(50, Number(search.limit));
  }
  const query: NumberSearch = { country, areaCode, contains, type, limit };
  let found: AvailableNumber[];
  try {
    found = await carrier.searchNumbers(query);
  } catch (error) {
    if (error instanceof CarrierUnavailableError) throw carrierUnavailable();
    throw error;
  }
  if (found.length === 0) return found;
  const taken = new Set(
    (
      await db
        .select({ number: numbers.number })
        .from(numbers)
        .where(
          and(
            NUMBER_IS_ACTIVE,
            inArray(
              numbers.number,
              found.map((n) => n.number),
            ),
          ),
        )
        .all()
    ).map((row) => row.number),
  );
  return found.filter((n) => !taken.has(n.number));
}

export interface OrderInput {
  number?: string;
  numbers?: string[];
  pool_id?: string | null;
  daily_limit?: number | null;
}

export interface OrderOutcome {
  /** The records newly ordered, in request order. */
  ordered: PhoneNumberRecord[];
  added: number;
  skipped: number;
}

/**
 * A claim on a number older than this belongs to an order whose process died before it recorded
 * the number or gave the claim back: the number may be claimed again. An order holds its claims
 * for one carrier request per number, far less than this.
 */
const ORDER_CLAIM_TIMEOUT_MS = 10 * 60_000;

/**
 * Claims `wanted` for an order taken at `now` (table number_order_claims) and answers the numbers
 * claimed. A number another order holds, in this process or another, is not claimed: that order
 * asks the carrier for it, this one skips it. A stale claim is taken over (compare-and-set on its
 * time, so of two takers one wins).
 */
async function claimNumbersToOrder(db: Db, wanted: string[], now: number): Promise<Set<string>> {
  if (wanted.length === 0) return new Set();
  const claimed = await db.transaction(
    async (tx) =>
      await tx
        .insert(numberOrderClaims)
        .values(wanted.map((number) => ({ number, claimedAt: now })))
        .onConflictDoUpdate({
          target: numberOrderClaims.number,
          set: { claimedAt: now },
          setWhere: lt(numberOrderClaims.claimedAt, now - ORDER_CLAIM_TIMEOUT_MS),
        })
        .returning({ number: numberOrderClaims.number })
        .all(),
  );
  return new Set(claimed.map((row) => row.number));
}

/** Gives back the claims an order taken at `claimedAt` holds on `claimed` (not a taker's newer ones). */
async function releaseNumberClaims(tx: DbOrTx, claimed: string[], claimedAt: number) {
  if (claimed.length === 0) return;
  await tx
    .delete(numberOrderClaims)
    .where(and(inArray(numberOrderClaims.number, claimed), eq(numberOrderClaims.claimedAt, claimedAt)))
    .run();
}

/**
 * POST /v1/numbers: orders each number not already held by a workspace of this server.
 * Skipped (never charged): numbers already in this or another workspace, numbers another order is
 * asking the carrier for right now (on any server sharing the database), numbers the carrier says
 * are not available. 1. validate everything, 2. claim the numbers, 3. order the rest from the
 * carrier one by one, 4. record the ones it granted and give the claims back in one transaction.
 * Carrier down before anything was granted → 503.
 */
export async function orderNumbers(
  db: Db,
  carrier: Carrier,
  workspaceId: string,
  input: OrderInput,
  now = Date.now(),
): Promise<OrderOutcome> {
  // 1. Validation: nothing reaches the carrier when any field is wrong.
  const requested: string[] = [];
  if (input.numbers !== undefined) {
    if (input.numbers.length === 0) throw invalid("numbers must not be empty");
    input.numbers.forEach((raw, i) => {
      const e164 = normalizePhone(raw);
      if (!e164) throw invalid(`numbers[${i}] must be a valid phone number`);
      requested.push(e164);
    });
  }
  if (input.number !== undefined) {
    const e164 = normalizePhone(input.number);
    if (!e164) throw invalid("number must be a valid phone number");
    requested.unshift(e164);
  }
  if (requested.length === 0) throw invalid("number is required");
  checkDailyLimit(input.daily_limit);
  const poolId = input.pool_id ?? null;
  if (poolId !== null && !(await poolExists(db, workspaceId, poolId)))
    throw invalid("pool_id does not exist");

  const unique = [...new Set(requested)];
  let skipped = requested.length - unique.length;
  const activeAmong = async (list: string[]) =>
    new Set(
      (
        await db
          .select({ number: numbers.number })
          .from(numbers)
          .where(and(NUMBER_IS_ACTIVE, inArray(numbers.number, list)))
          .all()
      ).map((row) => row.number),
    );
  const held = await activeAmong(unique);
  const free = unique.filter((number) => !held.has(number));
  skipped += held.size;

  // 2. The claims: a number another order holds is skipped. The claim comes before the second
  // look at the active numbers, so an order that recorded a number and gave its claim back since
  // the first look is seen here.
  const claimed = [...(await claimNumbersToOrder(db, free, now))];
  skipped += free.length - claimed.length;
  let recorded = false;
  let spent = 0;
  try {
    const recordedMeanwhile = claimed.length > 0 ? await activeAmong(claimed) : new Set<string>();
    const toOrder = claimed.filter((number) => !recordedMeanwhile.has(number));
    skipped += recordedMeanwhile.size;

    // The workspace's daily budget, spent for every number about to be ordered before the carrier
    // is asked (429: nothing ordered); what the carrier does not grant is given back in 4.
    if (toOrder.length > 0)
      await db.transaction(
        async (tx) =>
          await spendDailyBudget(tx, workspaceId, "number_orders_daily_limit", toOrder.length, now),
      );
    spent = toOrder.length;

    // 3. The carrier, one number at a time; the claims keep a parallel order off them.
    const granted: { number: string; carrierNumberId: string; voiceCapable: boolean }[] = [];
    let outage = false;
    for (const number of toOrder) {
      try {
        const result = await carrier.orderNumber(number);
        if (result.ok)
          granted.push({
            number,
            carrierNumberId: result.carrierNumberId,
            voiceCapable: result.capabilities?.voice ?? true,
          });
        else skipped++;
      } catch (error) {
        if (!(error instanceof CarrierUnavailableError)) throw error;
        log.warn("number order: carrier unavailable", { number, error: error.message });
        outage = true;
        skipped++;
      }
    }

    // 4. Record what was granted, give back the budget of the rest and the claims, in one
    // transaction: an order that claims a number afterwards finds it active.
    const workspace = await db.select().from(workspaces).where(eq(workspaces.id, workspaceId)).get();
    if (!workspace) throw notFound();
    const rows: NumberRow[] = granted.map((g) => ({
      id: newId(),
      workspaceId,
      number: g.number,
      poolId,
      dailyLimit: input.daily_limit ?? null,
      agentId: null,
      voiceCapable: g.voiceCapable,
      status: "active",
      carrierNumberId: g.carrierNumberId,
      timezone: timezoneForPhone(g.number) ?? workspace.timezone,
      createdAt: now,
      updatedAt: now,
      releasedAt: null,
    }));
    await db.transaction(async (tx) => {
      if (rows.length) await tx.insert(numbers).values(rows).run();
      await refundDailyBudget(
        tx,
        workspaceId,
        "number_orders_daily_limit",
        toOrder.length - rows.length,
        now,
      );
      await releaseNumberClaims(tx, claimed, now);
    });
    recorded = true;
    if (rows.length === 0 && outage) throw carrierUnavailable();
    return { ordered: await toRecords(db, workspaceId, rows, now), added: rows.length, skipped };
  } finally {
    // A failure before the record (429, an unexpected carrier error): nothing was recorded, so
    // the whole spend and the claims go back.
    if (!recorded && (spent > 0 || claimed.length > 0))
      await db.transaction(async (tx) => {
        if (spent > 0) await refundDailyBudget(tx, workspaceId, "number_orders_daily_limit", spent, now);
        await releaseNumberClaims(tx, claimed, now);
      });
  }
}

// ---------------------------------------------------------------------------------------------
// List, get, update, release.

export async function listNumbers(
  db: DbOrTx,
  workspaceId: string,
  filters: { status?: string; pool_id?: string },
  page: { limit: number; offset: number },
  now = Date.now(),
): Promise<{ numbers: PhoneNumberRecord[]; total: number }> {
  const status = filters.status ?? "active";
  if (status !== "active" && status !== "released") throw invalid("status must be one of active, released");
  const conditions = [eq(numbers.workspaceId, workspaceId), eq(numbers.status, status)];
  if (filters.pool_id) conditions.push(eq(numbers.poolId, filters.pool_id));
  const where = and(...conditions);
  const { rows, total } = await newestFirstPage(db, numbers, where, [numbers.createdAt, numbers.id], page);
  return { numbers: await toRecords(db, workspaceId, rows, now), total };
}

export async function getNumber(
  db: DbOrTx,
  workspaceId: string,
  id: string,
  now = Date.now(),
): Promise<PhoneNumberRecord> {
  return (await toRecords(db, workspaceId, [await findNumber(db, workspaceId, id)], now))[0];
}

export interface NumberPatch {
  pool_id?: string | null;
  daily_limit?: number | null;
  default?: boolean;
  agent_id?: string | null;
}

/** PATCH /v1/numbers/{id}: pool, daily cap, default flag, answering agent. */
export async function updateNumber(
  db: Db,
  workspaceId: string,
  id: string,
  patch: NumberPatch,
  now = Date.now(),
): Promise<PhoneNumberRecord> {
  checkDailyLimit(patch.daily_limit);
  return await db.transaction(async (tx) => {
    const row = await findNumber(tx, workspaceId, id);
    if (
      patch.pool_id !== undefined &&
      patch.pool_id !== null &&
      !(await poolExists(tx, workspaceId, patch.pool_id))
    ) {
      throw invalid("pool_id does not exist");
    }
    if (patch.agent_id !== undefined && patch.agent_id !== null)
      await smsAgentForReference(tx, workspaceId, patch.agent_id, "agent_id");
    if (row.status !== "active") throw conflict("Number is released");
    const changes: Partial<NumberRow> = { updatedAt: now };
    if (patch.agent_id !== undefined) changes.agentId = patch.agent_id;
    if (patch.pool_id !== undefined) changes.poolId = patch.pool_id;
    if (patch.daily_limit !== undefined) changes.dailyLimit = patch.daily_limit;
    await tx.update(numbers).set(changes).where(eq(numbers.id, row.id)).run();
    if (patch.pool_id !== undefined && patch.pool_id !== row.poolId && row.poolId) {
      // Leaving a pool: the contacts it was sticky for there get a new sender next time.
      await tx
        .delete(poolStickySenders)
        .where(and(eq(poolStickySenders.poolId, row.poolId), eq(poolStickySenders.numberId, row.id)))
        .run();
    }
    if (patch.default === true) {
      await tx
        .update(workspaces)
        .set({ defaultNumberId: row.id, updatedAt: now })
        .where(eq(workspaces.id, workspaceId))
        .run();
    } else if (patch.default === false) {
      await tx
        .update(workspaces)
        .set({ defaultNumberId: null, updatedAt: now })
        .where(and(eq(workspaces.id, workspaceId), eq(workspaces.defaultNumberId, row.id)))
        .run();
    }
    return (await toRecords(tx, workspaceId, [{ ...row, ...changes }], now))[0];
  });
}

/**
 * DELETE /v1/numbers/{id}: releases the number at the carrier, then marks it released, takes it
 * out of its pool's sticky assignments and clears it as the workspace default. Carrier down → 503,
 * nothing changed.
 */
export async function releaseNumber(
  db: Db,
  carrier: Carrier,
  workspaceId: string,
  id: string,
  now = Date.now(),
): Promise<PhoneNumberRecord> {
  const row = await findNumber(db, workspaceId, id);
  if (row.status !== "active") throw conflict("Number is already released");
  try {
    await carrier.releaseNumber(row.number, row.carrierNumberId);
  } catch (error) {
    if (error instanceof CarrierUnavailableError) throw carrierUnavailable();
    throw error;
  }
  return await db.transaction(async (tx) => {
    const changes = { status: "released", releasedAt: now, updatedAt: now };
    await tx
      .update(numbers)
      .set(changes)
      .where(and(eq(numbers.id, row.id), NUMBER_IS_ACTIVE))
      .run();
    await tx.delete(poolStickySenders).where(eq(poolStickySenders.numberId, row.id)).run();
    await tx
      .update(workspaces)
      .set({ defaultNumberId: null, updatedAt: now })
      .where(and(eq(workspaces.id, workspaceId), eq(workspaces.defaultNumberId, row.id)))
      .run();
    return (await toRecords(tx, workspaceId, [{ ...row, ...changes }], now))[0];
  });
}

// settings.default_number_id must name an active number of the workspace.
registerDefaultNumberCheck(async (db, workspaceId, numberId) => {
  if (!isUuid(numberId)) return "default_number_id does not exist";
  const row = await db
    .select({ id: numbers.id })
    .from(numbers)
    .where(and(eq(numbers.workspaceId, workspaceId), eq(numbers.id, numberId), NUMBER_IS_ACTIVE))
    .get();
  return row ? null : "default_number_id does not exist";
});

// ---------------------------------------------------------------------------------------------
// Senders and daily caps (used by every send path).

/** The workspace's active number `number` (E.164), if it has it. */
export async function activeNumberOf(
  tx: DbOrTx,
  workspaceId: string,
  number: string,
): Promise<NumberRow | undefined> {
  return await senderStatements(tx).activeByNumber.get({ workspaceId, number });
}

/** The default sender rule: `settings.default_number_id` when active, else the oldest active number. */
export async function defaultSender(
  tx: DbOrTx,
  workspaceId: string,
  /** `settings.default_number_id` when the caller has read it already (send-settings.ts). */
  known?: { defaultNumberId: string | null },
): Promise<NumberRow | undefined> {
  const statements = senderStatements(tx);
  const defaultId = known ? known.defaultNumberId : await defaultNumberIdOf(tx, workspaceId);
  const byDefault = defaultId ? await statements.activeById.get({ workspaceId, id: defaultId }) : undefined;
  return byDefault ?? (await statements.oldestActive.get({ workspaceId }));
}

/**
 * The number a one-off send goes from: `from` when given (it must be an active number of the
 * workspace), else `settings.default_number_id`, else the oldest active number. 422 with the
 * contract's message when there is none or `from` is foreign. Its daily_limit is the caller's
 * next step: `reserveDailySend` in the same transaction, which checks and counts at once.
 */
export async function resolveSender(
  tx: DbOrTx,
  workspaceId: string,
  from?: string | null,
  known?: { defaultNumberId: string | null },
): Promise<NumberRow> {
  let row: NumberRow | undefined;
  if (from) {
    row = await activeNumberOf(tx, workspaceId, from);
    if (!row) throw invalid("from is not a number of this workspace");
  } else {
    row = await defaultSender(tx, workspaceId, known);
    if (!row) throw invalid("No sending number: order one with POST /v1/numbers");
  }
  return row;
}

/**
 * Counts one send against the number's daily_limit in its local day, atomically: the counter is
 * only raised while it is under the cap. Returns false (nothing counted) when the number is at its
 * cap; `evenOverCap` counts it regardless (compliance replies). Call it in the transaction that
 * accepts the send.
 */
export async function reserveDailySend(
  tx: DbOrTx,
  sender: NumberRow | string,
  now = Date.now(),
  options: { evenOverCap?: boolean } = {},
): Promise<boolean> {
  const statements = senderStatements(tx);
  const row = typeof sender === "string" ? await statements.byId.get({ id: sender }) : sender;
  if (!row) return false;
  const limit = options.evenOverCap ? null : row.dailyLimit;
  if (limit !== null && limit <= 0) return false;
  const usage = { numberId: row.id, workspaceId: row.workspaceId, day: localDay(row.timezone, now) };
  const inserted =
    limit === null
      ? await statements.reserveUncapped.all(usage)
      : await statements.reserveCapped.all({ ...usage, limit });
  return inserted.length > 0;
}

/**
 * The daily sends of one transaction that plans many sends at once (a campaign's dispatch step, a
 * preview page), counted as `reserveDailySend` does but in a statement per number instead of one
 * per send: a number's counter is read and held (written without change, which locks it until
 * the transaction ends, so no other transaction counts on it meanwhile) the first time it is
 * needed; reservations are then counted here against its cap, and `flush` adds them to the
 * counters before the transaction commits. A plan that is rolled back (the preview) never flushes.
 */
export class DailySendBook {
  private readonly counters = new Map<string, { day: string; used: number; added: number }>();
  constructor(
    private readonly tx: DbOrTx,
    private readonly now: number,
  ) {}

  /** Reads and holds the counters of `rows` not held yet (one statement on PostgreSQL). */
  async hold(rows: readonly NumberRow[]): Promise<void> {
    const missing = new Map<string, NumberRow>();
    for (const row of rows) if (!this.counters.has(row.id)) missing.set(row.id, row);
    if (missing.size === 0) return;
    // Sorted, so two transactions holding overlapping sets lock them in the same order.
    const values = [...missing.values()]
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((row) => ({
        numberId: row.id,
        workspaceId: row.workspaceId,
        day: localDay(row.timezone, this.now),
        count: 0,
      }));
    const held = await insertRowsReturning(this.tx, numberDailyUsage, values, "hold-counter", {
      conflict: {
        target: [numberDailyUsage.numberId, numberDailyUsage.day],
        set: { count: sql`${numberDailyUsage.count}` },
      },
      returning: { numberId: numberDailyUsage.numberId, count: numberDailyUsage.count },
    });
    const counts = new Map(held.map((row) => [row.numberId, Number(row.count)]));
    for (const value of values)
      this.counters.set(value.numberId, { day: value.day, used: counts.get(value.numberId) ?? 0, added: 0 });
  }

  /** Sends counted today for each of `rows` (held first), this transaction's reservations included. */
  async usage(rows: readonly NumberRow[]): Promise<Map<string, number>> {
    await this.hold(rows);
    const out = new Map<string, number>();
    for (const row of rows) {
      const counter = this.counters.get(row.id);
      if (counter) out.set(row.id, counter.used + counter.added);
    }
    return out;
  }

  /** `reserveDailySend` against the held counter: false when the number is at its cap. */
  async reserve(row: NumberRow): Promise<boolean> {
    if (row.dailyLimit !== null && row.dailyLimit <= 0) return false;
    await this.hold([row]);
    const counter = this.counters.get(row.id);
    if (!counter) return false;
    if (row.dailyLimit !== null && counter.used + counter.added >= row.dailyLimit) return false;
    counter.added++;
    return true;
  }

  /** Gives back one send reserved here. */
  release(row: NumberRow): void {
    const counter = this.counters.get(row.id);
    if (counter && counter.added > 0) counter.added--;
  }

  /** Adds this transaction's reservations to the counters (one update per number that sent). */
  async flush(): Promise<void> {
    const statement = senderStatements(this.tx).addSends;
    const sent = [...this.counters].filter(([, counter]) => counter.added > 0);
    await forEachRowApart(this.tx, sent, async ([numberId, counter]) => {
      const n = counter.added;
      counter.used += n;
      counter.added = 0;
      await statement.run({ numberId, day: counter.day, n });
    });
  }
}

/** Gives back one reserved send (a send that was accepted and then refused before hand-off). */
export async function releaseDailySend(tx: DbOrTx, sender: NumberRow, reservedAt: number) {
  await tx
    .update(numberDailyUsage)
    .set({
      count: sql`case when ${numberDailyUsage.count} > 0 then ${numberDailyUsage.count} - 1 else 0 end`,
    })
    .where(
      and(
        eq(numberDailyUsage.numberId, sender.id),
        eq(numberDailyUsage.day, localDay(sender.timezone, reservedAt)),
      ),
    )
    .run();
}

export type { NumberRow };
