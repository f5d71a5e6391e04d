/**
 * What PostgreSQL statements cost on this machine, with durable settings (fsync and synchronous
 * commit on): the inputs of docs/scaling.md's projection. One client process (postgres.js) runs
 * each statement back to back for a few seconds with 1, then 16, sessions, on throwaway tables in
 * a fresh database; the PostgreSQL processes' CPU time (from /proc) is read before and after, so
 * each figure comes with the server's CPU per statement beside the wall time.
 *
 *   node_modules/.bin/bun scripts/bench/statements.ts [--seconds 3] [--admin-url postgres://…]
 *
 * Needs Debian's postgresql (a durable throwaway cluster is started unless --admin-url names one).
 */

import { readdirSync, readFileSync } from "node:fs";
import type postgres from "postgres";
import { createPgClient } from "../../src/db/store/postgres";
import { dropDatabase, freshDatabase, startPgCluster } from "../../test/support/postgres";

/** Clock ticks per second of /proc's utime/stime (Linux's USER_HZ, 100 on every usual build). */
const TICKS = 100;

/**
 * CPU seconds used so far by a PostgreSQL cluster: the postmaster's own, its reaped children's,
 * and every live child's (backends, WAL writer, checkpointer …). The postmaster is found by the
 * port it listens on (its command line names the data folder given to pg_ctl).
 */
export function pgCpuSeconds(port: number): number {
  const postmaster = findPostmaster(port);
  if (postmaster === undefined) return Number.NaN;
  let ticks = 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (!stat) continue;
    if (stat.pid === postmaster) ticks += stat.utime + stat.stime + stat.cutime + stat.cstime;
    else if (stat.ppid === postmaster) ticks += stat.utime + stat.stime;
  }
  return ticks / TICKS;
}

/** CPU seconds used so far by one process (user + system). */
export function processCpuSeconds(pid: number): number {
  const stat = readStat(pid);
  return stat ? (stat.utime + stat.stime) / TICKS : Number.NaN;
}

function readStat(pid: number) {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined; // gone meanwhile
  }
  // The command name (field 2) is in parentheses and may hold spaces: fields count from its end.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return {
    pid,
    ppid: Number(fields[1]),
    utime: Number(fields[11]),
    stime: Number(fields[12]),
    cutime: Number(fields[13]),
    cstime: Number(fields[14]),
  };
}

const postmasters = new Map<number, number>();
function findPostmaster(port: number): number | undefined {
  const known = postmasters.get(port);
  if (known !== undefined) return known;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
    } catch {
      continue;
    }
    const args = cmdline.split("\0");
    if (!args[0]?.endsWith("/postgres")) continue;
    const p = args.indexOf("-p");
    if (p >= 0 && args[p + 1] === String(port)) {
      postmasters.set(port, Number(name));
      return Number(name);
    }
  }
  return undefined;
}

/** The port of a cluster from its admin URL. */
export function portOf(url: string): number {
  return Number(new URL(url).port || 5432);
}

export interface StatementFigure {
  name: string;
  concurrency: number;
  statements: number;
  seconds: number;
  perSecond: number;
  /** Mean wall time per statement as one session sees it. */
  microsPerStatement: number;
  /** PostgreSQL's CPU per statement (all its processes), and the machine's CPU seconds per second it used. */
  serverCpuMicros: number;
  serverCores: number;
  /** WAL flushes (pg_stat_wal.wal_sync) per statement: below 1 when commits share a flush. */
  walSyncs: number;
}

interface Case {
  name: string;
  /** Runs one statement (or one claim) for session `worker` (0-based) on its `i`th turn. */
  run(sql: postgres.Sql, worker: number, i: number): Promise<unknown>;
}

const KV_ROWS = 100_000;
const JOB_ROWS = 1_500_000;

async function setUp(sql: postgres.Sql) {
  await sql.unsafe(`
    CREATE TABLE bench_kv (id bigint PRIMARY KEY, v text NOT NULL, n bigint NOT NULL DEFAULT 0);
    INSERT INTO bench_kv SELECT g, 'value ' || g, 0 FROM generate_series(1, ${KV_ROWS}) g;
    CREATE TABLE bench_rows (id bigserial PRIMARY KEY, a bigint NOT NULL, b text NOT NULL, c bigint NOT NULL);
    CREATE TABLE bench_jobs (id bigint PRIMARY KEY, status text NOT NULL, run_at bigint NOT NULL, locked_by text);
    INSERT INTO bench_jobs SELECT g, 'queued', g, NULL FROM generate_series(1, ${JOB_ROWS}) g;
    CREATE INDEX bench_jobs_due ON bench_jobs (status, run_at);
  `);
  await sql.unsafe("VACUUM ANALYZE bench_kv");
  await sql.unsafe("VACUUM ANALYZE bench_jobs");
}

const random = (n: number) => 1 + Math.floor(Math.random() * n);

const CASES: Case[] = [
  {
    name: "primary-key select",
    run: (sql) => sql`SELECT v FROM bench_kv WHERE id = ${random(KV_ROWS)}`,
  },
  {
    name: "1-row insert, own transaction (commit)",
    run: (sql, w, i) => sql`INSERT INTO bench_rows (a, b, c) VALUES (${w}, ${`row ${i}`}, ${i})`,
  },
  {
    name: "100-row multi-row insert (own transaction)",
    run: (sql, w, i) =>
      sql`INSERT INTO bench_rows ${sql(
        Array.from({ length: 100 }, (_, k) => ({ a: w, b: `row ${i}.${k}`, c: k })),
        "a",
        "b",
        "c",
      )}`,
  },
  {
    // Each session updates ids of its own slice, so sessions never wait for each other's row locks.
    name: "100-id = ANY update (own transaction)",
    run: (sql, w, i) => {
      const slice = Math.floor(KV_ROWS / 16);
      const start = 1 + w * slice + ((i * 100) % (slice - 100));
      const ids = Array.from({ length: 100 }, (_, k) => start + k);
      return sql`UPDATE bench_kv SET n = n + 1 WHERE id = ANY(${ids}::bigint[])`;
    },
  },
  {
    // As the job queue claims: the due rows locked as read, skipping others' claims, then leased.
    name: "claim 100 rows: SELECT … FOR UPDATE SKIP LOCKED + UPDATE (one transaction)",
    run: (sql, w) =>
      sql.begin(async (tx) => {
        const rows = await tx`
          SELECT id FROM bench_jobs WHERE status = 'queued' AND run_at <= ${JOB_ROWS}
          ORDER BY run_at LIMIT 100 FOR UPDATE SKIP LOCKED`;
        const ids = rows.map((r) => Number(r.id));
        if (ids.length === 0) throw new Error("the job table ran dry: raise JOB_ROWS");
        await tx`UPDATE bench_jobs SET status = 'running', locked_by = ${`w${w}`} WHERE id = ANY(${ids}::bigint[])`;
      }),
  },
];

/** WAL flushes so far (pg_stat_wal, PostgreSQL 14 and later). */
export async function walSyncs(sql: postgres.Sql): Promise<number> {
  const rows = await sql`SELECT wal_sync FROM pg_stat_wal`;
  return Number(rows[0]?.wal_sync ?? Number.NaN);
}

async function measure(
  url: string,
  port: number,
  test: Case,
  concurrency: number,
  seconds: number,
): Promise<StatementFigure> {
  const sql = createPgClient(url, { max: concurrency });
  try {
    // Every session connected and every statement prepared before the clock starts.
    await Promise.all(Array.from({ length: concurrency }, (_, w) => test.run(sql, w, 0)));
    let statements = 0;
    const syncsBefore = await walSyncs(sql);
    const cpuBefore = pgCpuSeconds(port);
    const started = performance.now();
    const until = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async (_, w) => {
        for (let i = 1; performance.now() < until; i++) {
          await test.run(sql, w, i);
          statements++;
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    const cpu = pgCpuSeconds(port) - cpuBefore;
    const syncs = (await walSyncs(sql)) - syncsBefore;
    return {
      name: test.name,
      concurrency,
      statements,
      seconds: elapsed,
      perSecond: statements / elapsed,
      microsPerStatement: ((elapsed * 1e6) / statements) * concurrency,
      serverCpuMicros: (cpu * 1e6) / statements,
      serverCores: cpu / elapsed,
      walSyncs: syncs / statements,
    };
  } finally {
    await sql.end();
  }
}

export async function benchStatements(
  adminUrl: string,
  options: { seconds?: number; concurrencies?: number[]; log?: (line: string) => void } = {},
): Promise<StatementFigure[]> {
  const say = options.log ?? (() => {});
  const url = await freshDatabase(adminUrl);
  const port = portOf(adminUrl);
  const figures: StatementFigure[] = [];
  try {
    const setup = createPgClient(url, { max: 1 });
    await setup.unsafe("SET client_min_messages = warning");
    await setUp(setup);
    await setup.end();
    for (const test of CASES) {
      for (const concurrency of options.concurrencies ?? [1, 16]) {
        const figure = await measure(url, port, test, concurrency, options.seconds ?? 3);
        say(
          `${test.name}, ${concurrency} session(s): ${Math.round(figure.perSecond)}/s, ` +
            `${Math.round(figure.microsPerStatement)} µs each, server CPU ${Math.round(figure.serverCpuMicros)} µs`,
        );
        figures.push(figure);
      }
    }
  } finally {
    await dropDatabase(adminUrl, url);
  }
  return figures;
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

export function statementsTable(figures: StatementFigure[]): string {
  const lines = [
    "| statement | sessions | statements/s | µs per statement (wall, per session) | PostgreSQL CPU per statement (µs) | PostgreSQL CPU (cores) | WAL flushes per statement |",
    "|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const f of figures)
    lines.push(
      `| ${f.name} | ${f.concurrency} | ${fmt(f.perSecond)} | ${fmt(f.microsPerStatement)} | ${fmt(f.serverCpuMicros)} | ${f.serverCores.toFixed(2)} | ${f.walSyncs.toFixed(2)} |`,
    );
  return lines.join("\n");
}

if (import.meta.main) {
  const arg = (name: string, fallback: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  const given = arg("admin-url", "");
  const cluster = given ? null : await startPgCluster({ durable: true });
  try {
    const adminUrl = given || (cluster as { url: string }).url;
    const figures = await benchStatements(adminUrl, {
      seconds: Number(arg("seconds", "3")),
      log: (line) => console.error(line),
    });
    console.log(`\nStatements run of ${new Date().toISOString().slice(0, 16)}Z (durable cluster)\n`);
    console.log(statementsTable(figures));
  } finally {
    cluster?.stop();
  }
}
