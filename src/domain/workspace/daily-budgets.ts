/**
 * Daily budgets of a workspace (API.md §7.2): how many one-off sends (POST /v1/messages and
 * POST /v1/calls) and how many numbers ordered a workspace may make per UTC day, so that a leaked
 * key cannot run up the bill. Campaigns, flows and agents have their own caps and are not counted.
 *
 * A budget is spent in the transaction that writes the send or the order: one conditional upsert
 * counts the spend only while it stays within the setting, so concurrent requests never overshoot
 * it, and a later refusal in the same transaction gives the spend back with the rest.
 */
import { and, eq, lt, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { preparedPerConnection } from "../../db/prepared";
import { dailyBudgetUsage, workspaces } from "../../db/schema";
import { AppError } from "../../lib/errors";

export const DAILY_BUDGETS = ["one_off_daily_limit", "number_orders_daily_limit"] as const;
export type DailyBudget = (typeof DAILY_BUDGETS)[number];

const DAY_MS = 86_400_000;

/** The UTC day of `now`, as days since 1970-01-01. */
export function utcDay(now: number): number {
  return Math.floor(now / DAY_MS);
}

const statements = preparedPerConnection((db: DbOrTx) => {
  const ph = sql.placeholder;
  // Adds `n` to the day's count; capped, an existing count is raised only while it stays within
  // `limit` (nothing is returned then). A first spend over the limit is refused before this runs.
  const spend = (capped: boolean) =>
    db
      .insert(dailyBudgetUsage)
      .values({ workspaceId: ph("workspaceId"), budget: ph("budget"), day: ph("day"), count: ph("n") })
      .onConflictDoUpdate({
        target: [dailyBudgetUsage.workspaceId, dailyBudgetUsage.budget, dailyBudgetUsage.day],
        set: { count: sql`${dailyBudgetUsage.count} + excluded.count` },
        setWhere: capped ? sql`${dailyBudgetUsage.count} + excluded.count <= ${ph("limit")}` : undefined,
      })
      .returning({ count: dailyBudgetUsage.count })
      .prepare();
  return {
    limits: db
      .select({
        one_off_daily_limit: workspaces.oneOffDailyLimit,
        number_orders_daily_limit: workspaces.numberOrdersDailyLimit,
      })
      .from(workspaces)
      .where(eq(workspaces.id, ph("workspaceId")))
      .prepare(),
    spendCapped: spend(true),
    spendUncapped: spend(false),
    // The day's count, its row written without change (which holds it until the transaction ends).
    hold: db
      .insert(dailyBudgetUsage)
      .values({ workspaceId: ph("workspaceId"), budget: ph("budget"), day: ph("day"), count: 0 })
      .onConflictDoUpdate({
        target: [dailyBudgetUsage.workspaceId, dailyBudgetUsage.budget, dailyBudgetUsage.day],
        set: { count: sql`${dailyBudgetUsage.count}` },
      })
      .returning({ count: dailyBudgetUsage.count })
      .prepare(),
  };
});

/**
 * Spends `n` of the workspace's `budget` for the UTC day of `now`, in the caller's transaction.
 * Throws 429 `Daily limit reached: <budget> is <limit>` (nothing counted) when the day's spend
 * would pass the setting; a null setting counts without a limit.
 */
export async function spendDailyBudget(
  tx: DbOrTx,
  workspaceId: string,
  budget: DailyBudget,
  n: number,
  now: number,
  /** The workspace's limits when the caller has read them already (send-settings.ts). */
  known?: Record<DailyBudget, number | null>,
) {
  if (n <= 0) return;
  const limits = known ?? (await statements(tx).limits.get({ workspaceId }));
  const limit = limits ? limits[budget] : null;
  const usage = { workspaceId, budget, day: utcDay(now), n };
  const counted =
    limit === null || limit === undefined
      ? await statements(tx).spendUncapped.all(usage)
      : n <= limit
        ? await statements(tx).spendCapped.all({ ...usage, limit })
        : [];
  if (counted.length === 0) throw dailyLimitReached(budget, limit ?? 0, now);
}

/**
 * One workspace's budget for a batch of spends in one transaction (a group of POST /v1/messages):
 * spent one at a time as `spendDailyBudget` would, the first refusal the same, against the day's
 * count read once and held (its row locked) until the transaction ends, then written once.
 * A spend whose send is refused later is given back with `release`.
 */
export class DailyBudgetBook {
  private used: number | undefined;
  private added = 0;
  constructor(
    private readonly tx: DbOrTx,
    private readonly workspaceId: string,
    private readonly budget: DailyBudget,
    /** The setting (null: no limit, only counted). */
    private readonly limit: number | null,
    private readonly now: number,
  ) {}

  /** Spends one: false (nothing spent) when the day's spend would pass the setting. */
  async spend(): Promise<boolean> {
    if (this.limit === null) {
      this.added++;
      return true;
    }
    if (this.used === undefined) {
      const [held] = await statements(this.tx).hold.all(this.usage(0));
      this.used = Number(held?.count ?? 0);
    }
    if (this.used + this.added + 1 > this.limit) return false;
    this.added++;
    return true;
  }

  /** Gives back one spend made here. */
  release(): void {
    if (this.added > 0) this.added--;
  }

  /** The 429 of a refused spend. */
  refusal(): AppError {
    return dailyLimitReached(this.budget, this.limit ?? 0, this.now);
  }

  /** Adds the spends to the day's count (checked against the held count already). */
  async flush(): Promise<void> {
    if (this.added === 0) return;
    await statements(this.tx).spendUncapped.all(this.usage(this.added));
    this.used = (this.used ?? 0) + this.added;
    this.added = 0;
  }

  private usage(n: number) {
    return { workspaceId: this.workspaceId, budget: this.budget, day: utcDay(this.now), n };
  }
}

/** Gives back `n` of a spend that did not happen after all (numbers the carrier did not grant). */
export async function refundDailyBudget(
  tx: DbOrTx,
  workspaceId: string,
  budget: DailyBudget,
  n: number,
  spentAt: number,
) {
  if (n <= 0) return;
  await tx
    .update(dailyBudgetUsage)
    .set({
      count: sql`case when ${dailyBudgetUsage.count} > ${n} then ${dailyBudgetUsage.count} - ${n} else 0 end`,
    })
    .where(
      and(
        eq(dailyBudgetUsage.workspaceId, workspaceId),
        eq(dailyBudgetUsage.budget, budget),
        eq(dailyBudgetUsage.day, utcDay(spentAt)),
      ),
    )
    .run();
}

/** 429 naming the setting and its value; `retry_after` is the time to the next UTC midnight. */
function dailyLimitReached(budget: DailyBudget, limit: number, now: number): AppError {
  const retryAfter = Math.max(1, Math.ceil(((utcDay(now) + 1) * DAY_MS - now) / 1000));
  return new AppError("rate_limited", `Daily limit reached: ${budget} is ${limit}`, {
    retry_after: retryAfter,
  });
}

/** Deletes the counts of days before yesterday (UTC): only today's is ever read. */
export async function pruneDailyBudgets(tx: DbOrTx, now: number) {
  await tx
    .delete(dailyBudgetUsage)
    .where(lt(dailyBudgetUsage.day, utcDay(now) - 1))
    .run();
}
