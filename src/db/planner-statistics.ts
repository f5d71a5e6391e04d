import { sql } from "drizzle-orm";
import { log } from "../lib/log";
import { type Db, dialectOf } from "./client";

/** How often a server looks for tables whose statistics are behind (PostgreSQL only). */
export const STATISTICS_CHECK_MS = 5_000;
/** A table is analyzed again once this many rows changed since its last analysis… */
const MIN_CHANGED_ROWS = 1_000;
/** …and at least this share of the rows it had then. */
const CHANGED_SHARE = 0.5;
/** The transaction lock one server holds while it analyzes, so that servers do not analyze a table twice. */
const ANALYZE_LOCK = 4_180_511_962_310_780n;

/**
 * Keeps PostgreSQL's planner statistics up with tables that grow fast. PostgreSQL plans every
 * statement from statistics that autovacuum refreshes at best once a minute (`autovacuum_naptime`);
 * a table that grows from nothing to tens of thousands of rows inside that minute (a first
 * campaign's recipients, threads and messages) is planned as if it were nearly empty, and a read
 * of many keys then walks the wrong index: measured, a dispatch step's read of its recipients'
 * open threads took 14 ms at 20,000 threads instead of under 1 ms once analyzed. Every
 * `intervalMs`, one server at a time runs `ANALYZE` on the tables of the schema changed by more
 * than MIN_CHANGED_ROWS rows and CHANGED_SHARE of their size since they were last analyzed; the
 * cost grows with the number of analyses, which the share keeps logarithmic in a table's growth.
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
      log.debug("planner statistics deferred", { error: String(error) });
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
        AND s.n_mod_since_analyze >= ${MIN_CHANGED_ROWS}
        AND s.n_mod_since_analyze >= ${CHANGED_SHARE} * greatest(c.reltuples, 0)
      ORDER BY s.relname`);
    for (const { name } of behind) await tx.run(sql`ANALYZE ${sql.identifier(name)}`);
    return behind.map((row) => row.name);
  });
}
