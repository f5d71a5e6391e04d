import { sql } from "drizzle-orm";
import { errorText, log } from "../lib/log";
import { type Db, dialectOf } from "./client";

/** How often a server looks for tables whose statistics are behind (PostgreSQL only). */
export const STATISTICS_CHECK_MS = 1_000;
/** A table is analyzed again once it has this many rows more than at its last analysis… */
const MIN_GROWN_ROWS = 1_000;
/** …and at least this share more. */
const GROWN_SHARE = 0.5;
/**
 * Tables left to autovacuum. The thread search's: analyzing its tsvector column costs ~300 ms at
 * 40,000 rows (a core's worth of PostgreSQL, measured during a campaign), and no hot statement's
 * plan depends on it (its inserts do not read, and a search goes through the GIN index).
 */
const LEFT_TO_AUTOVACUUM = ["conversation_search"];
/** The statistics target of these analyses (PostgreSQL's default: 100, a sample of 300 times it). */
const QUICK_TARGET = 10;
/** The transaction lock one server holds while it analyzes, so that servers do not analyze a table twice. */
const ANALYZE_LOCK = 4_180_511_962_310_780n;

/**
 * Keeps PostgreSQL's planner statistics up with tables that grow fast. PostgreSQL plans every
 * statement from statistics that autovacuum refreshes at best once a minute (`autovacuum_naptime`);
 * a table that grows from nothing to tens of thousands of rows inside that minute (a first
 * campaign's recipients, threads and messages) is planned as if it were nearly empty, and a read
 * of many keys then walks the wrong index: measured, a dispatch step's read of its recipients'
 * open threads took 14 ms at 20,000 threads instead of under 1 ms once analyzed, and a one-off
 * send's read of its recipients' contacts 4.8 ms instead of 0.2 ms at 19,000 contacts. Every
 * `intervalMs` (a second: a benchmark's or a first campaign's tables grow that fast), one server at
 * a time runs `ANALYZE` on the tables of the schema that grew by more than MIN_GROWN_ROWS rows and
 * GROWN_SHARE of their size since they were last analyzed; the cost grows with the number of
 * analyses, which the share keeps logarithmic in a table's growth. Growth, not changed rows: a
 * message is written four times (insert, then three statuses), and counting its updates analyzed
 * `messages` again every few hundred sends without changing a plan.
 * Nothing on SQLite, whose planner does not need row counts to pick these indexes.
 */
export function startPlannerStatistics(db: Db, intervalMs = STATISTICS_CHECK_MS): { stop(): void } {
  if (dialectOf(db) !== "postgres") return { stop() {} };
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const tick = async () => {
    if (stopped) return;
    try {
      await analyzeBehindTables(db);
    } catch (error) {
      // The database is away or closing: the next tick tries again.
      log.debug("planner statistics deferred", { error: errorText(error) });
    }
    if (!stopped) timer = setTimeout(tick, intervalMs);
  };
  timer = setTimeout(tick, intervalMs);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/** One round: the tables behind, analyzed by whichever server takes the lock; answers their names. */
export async function analyzeBehindTables(db: Db): Promise<string[]> {
  return await db.transaction(async (tx) => {
    const lock = await tx.all<{ held: boolean }>(
      sql`SELECT pg_try_advisory_xact_lock(${ANALYZE_LOCK}) AS held`,
    );
    if (!lock[0]?.held) return [];
    const behind = await tx.all<{ name: string }>(sql`
      SELECT s.relname AS name
      FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.schemaname = current_schema()
        AND s.relname NOT IN (${sql.join(
          LEFT_TO_AUTOVACUUM.map((name) => sql`${name}`),
          sql`, `,
        )})
        AND s.n_live_tup - greatest(c.reltuples, 0) >= ${MIN_GROWN_ROWS}
        AND s.n_live_tup >= ${1 + GROWN_SHARE} * greatest(c.reltuples, 0)
      ORDER BY s.relname`);
    // A coarse sample (3,000 rows instead of 30,000) is enough to plan by a table's size, at a
    // tenth of the cost; autovacuum's own analysis refines it within its next rounds.
    if (behind.length > 0)
      await tx.run(sql`SET LOCAL default_statistics_target = ${sql.raw(String(QUICK_TARGET))}`);
    for (const { name } of behind) await tx.run(sql`ANALYZE ${sql.identifier(name)}`);
    return behind.map((row) => row.name);
  });
}
