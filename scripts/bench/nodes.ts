/**
 * One node against two on one PostgreSQL: `dist/outreach serve` once, then twice, on a fresh
 * database of a durable throwaway cluster (fsync and synchronous commit on), a campaign launched
 * through the first node, timed from launch to the last recipient delivered (simulated carrier,
 * 200 ms). Rounds alternate one node and two; each reports msg/s and the CPU the database and the
 * nodes spent per message. Then one counting round per shape runs with `log_statement = all`
 * (slower, not timed) to count what one message costs the database: statements, transactions,
 * WAL flushes and rows written. Then, unless `--statements false`, scripts/bench/statements.ts's
 * per-statement costs on the same cluster. The inputs of docs/scaling.md.
 *
 *   node_modules/.bin/bun scripts/bench/nodes.ts [--recipients 20000] [--rounds 3] [--campaigns 1]
 *     [--count true] [--statements true] [--seconds 3]
 *
 * `--campaigns K` splits the recipients over K campaigns (disjoint audiences) launched together:
 * one campaign's dispatch steps run one at a time whichever node claims them, K campaigns' need not.
 * `--own-numbers true` gives each campaign a pool of numbers of its own (else they share one).
 *
 * Needs Debian's postgresql; SKIP_BUILD=1 reuses an existing dist/outreach.
 */

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { dropDatabase, freshDatabase, type PgCluster, startPgCluster } from "../../test/support/postgres";
import { benchStatements, pgCpuSeconds, portOf, processCpuSeconds, statementsTable } from "./statements";
import { binary, ensureBinary, type ServeNode, startServeNode } from "./support";

const DELIVERY_MS = "200";
const IMPORT_CHUNK = 5_000;
/** The numbers the campaign's pool rotates over. */
const NUMBERS = ["+14155550101", "+14155550102", "+14155550103", "+14155550104"];
/** The bench's own sessions (the delivered count) are named so the statement count leaves them out. */
const BENCH_APP = "bench-nodes";

/** How the recipients are sent: in how many campaigns, and whether each has numbers of its own. */
interface Shape {
  campaigns: number;
  ownNumbers: boolean;
}

type Node = ServeNode;

export interface Round {
  nodes: number;
  recipients: number;
  seconds: number;
  msgPerSec: number;
  /** CPU seconds in the launch → delivered window: PostgreSQL's processes, and each node's. */
  pgCpu: number;
  nodeCpu: number[];
  /** Sessions each node held at the end (pg_stat_activity, by application name). */
  sessions: number[];
  waits: Waits;
}

export interface Count {
  nodes: number;
  recipients: number;
  /** Statements the nodes ran (log_statement = all), by first keyword. */
  statements: Record<string, number>;
  totalStatements: number;
  commits: number;
  rollbacks: number;
  walSyncs: number;
  walBytes: number;
  inserted: number;
  updated: number;
  deleted: number;
}

async function startNode(databaseUrl: string, dir: string, name: string): Promise<Node> {
  return await startServeNode([binary], name, databaseUrl, dir, {
    RATE_LIMIT_RPS: "0",
    LOG_LEVEL: "warn",
    SIMULATED_DELIVERY_MS: DELIVERY_MS,
    SHUTDOWN_GRACE_SEC: "2",
  });
}

async function stopNode(node: Node) {
  node.proc.kill("SIGTERM");
  await node.proc.exited;
}

/**
 * A fresh database, `nodes` nodes on it (the first alone: it migrates and announces the first
 * key), N contacts imported, a pool of numbers and a campaign to everyone; then `measure` around
 * the launch through the first node, waiting for every recipient delivered.
 */
async function withCampaign<T>(
  adminUrl: string,
  nodeCount: number,
  recipients: number,
  shape: Shape,
  around: {
    before(sql: postgres.Sql, nodes: Node[]): Promise<void>;
    after(sql: postgres.Sql, nodes: Node[], seconds: number, waits: Waits): Promise<T>;
  },
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "outreach-nodes-"));
  const databaseUrl = await freshDatabase(adminUrl);
  const sql = postgres(databaseUrl, {
    max: 1,
    onnotice: () => {},
    connection: { application_name: BENCH_APP },
  });
  const nodes: Node[] = [];
  try {
    nodes.push(await startNode(databaseUrl, dir, "a"));
    const key = readFileSync(nodes[0].logPath, "utf8").match(/opk_[0-9A-Za-z]{36}/)?.[0];
    if (!key) throw new Error("the first node announced no key");
    for (let i = 1; i < nodeCount; i++)
      nodes.push(await startNode(databaseUrl, dir, String.fromCharCode(97 + i)));
    const must = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${nodes[0].url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await res.json()) as Record<string, unknown>;
      if (res.status !== 200)
        throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
      return json;
    };

    const people = Array.from({ length: recipients }, (_, i) => ({
      phone_number: `+1415${String(3_000_000 + i).padStart(7, "0")}`,
      first_name: `P${i}`,
      opted_in: true,
      fields: { group: i % shape.campaigns },
    }));
    for (let i = 0; i < people.length; i += IMPORT_CHUNK)
      await must("POST", "/v1/contacts/import", { contacts: people.slice(i, i + IMPORT_CHUNK) });
    // One pool for all the campaigns, or (`ownNumbers`) a pool of other numbers for each.
    const pools: string[] = [];
    for (let k = 0; k < (shape.ownNumbers ? shape.campaigns : 1); k++) {
      const pool = (await must("POST", "/v1/pools", { name: `Pool ${k}` })).pool as { id: string };
      const numbers = NUMBERS.map((n) => `${n.slice(0, -2)}${k}${n.slice(-1)}`);
      await must("POST", "/v1/numbers", { numbers, pool_id: pool.id, daily_limit: recipients });
      pools.push(pool.id);
    }
    // With several campaigns, each has its own share of the contacts (fields.group): disjoint audiences.
    const campaignIds: string[] = [];
    for (let k = 0; k < shape.campaigns; k++) {
      const rules =
        shape.campaigns === 1 ? { all: [] } : { all: [{ field: "fields.group", op: "eq", value: k }] };
      const segment = (await must("POST", "/v1/segments", { name: `Group ${k}`, rules })).segment as {
        id: string;
      };
      const campaign = (
        await must("POST", "/v1/campaigns", {
          name: `Bench ${k}`,
          message: { body: "Hi {{first_name|there}}, spring sale this week. Reply STOP to opt out" },
          audience: { segment_ids: [segment.id] },
          pool_id: pools[k % pools.length],
          quiet_hours: { enabled: false },
        })
      ).campaign as { id: string };
      campaignIds.push(campaign.id);
    }

    await around.before(sql, nodes);
    const launchedAt = performance.now();
    for (const id of campaignIds) await must("POST", `/v1/campaigns/${id}/launch`);
    const deadline = launchedAt + Math.max(600_000, recipients * 20);
    let delivered = 0;
    const waits: Waits = { samples: 0, active: 0, byEvent: {} };
    while (performance.now() < deadline) {
      await sampleWaits(sql, waits);
      const rows = await sql`
        SELECT count(*)::int AS n FROM campaign_recipients
        WHERE campaign_id = ANY(${campaignIds}::text[]) AND outcome = 'delivered'`;
      delivered = rows[0].n;
      if (delivered >= recipients) break;
      await Bun.sleep(200);
    }
    const seconds = (performance.now() - launchedAt) / 1000;
    if (delivered < recipients)
      throw new Error(`${delivered} of ${recipients} delivered after ${seconds.toFixed(0)} s`);
    return await around.after(sql, nodes, seconds, waits);
  } finally {
    for (const node of nodes) await stopNode(node);
    await sql.end();
    await dropDatabase(adminUrl, databaseUrl);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What the nodes' sessions were doing, sampled every 200 ms: active ones, and what those waited on. */
export interface Waits {
  samples: number;
  active: number;
  byEvent: Record<string, number>;
}

async function sampleWaits(sql: postgres.Sql, waits: Waits) {
  const rows = await sql`
    SELECT coalesce(wait_event_type || ':' || wait_event, 'running') AS event, count(*)::int AS n
    FROM pg_stat_activity
    WHERE datname = current_database() AND state = 'active' AND application_name LIKE 'outreach %'
    GROUP BY 1`;
  waits.samples++;
  for (const row of rows) {
    waits.active += row.n;
    waits.byEvent[row.event] = (waits.byEvent[row.event] ?? 0) + row.n;
  }
}

/** Sessions per node, in the order the nodes were started (each names its sessions after its pid). */
async function sessionsOf(sql: postgres.Sql, nodes: Node[]): Promise<number[]> {
  const rows = await sql`
    SELECT application_name AS app, count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() GROUP BY 1`;
  return nodes.map((node) =>
    rows.filter((r) => String(r.app).startsWith(`outreach ${node.proc.pid}@`)).reduce((s, r) => s + r.n, 0),
  );
}

export async function timedRound(
  adminUrl: string,
  nodeCount: number,
  recipients: number,
  shape: Shape = { campaigns: 1, ownNumbers: false },
): Promise<Round> {
  const port = portOf(adminUrl);
  let pgBefore = 0;
  let nodesBefore: number[] = [];
  return withCampaign(adminUrl, nodeCount, recipients, shape, {
    async before(_sql, nodes) {
      pgBefore = pgCpuSeconds(port);
      nodesBefore = nodes.map((n) => processCpuSeconds(n.proc.pid));
    },
    async after(sql, nodes, seconds, waits) {
      const pgCpu = pgCpuSeconds(port) - pgBefore;
      const nodeCpu = nodes.map((n, i) => processCpuSeconds(n.proc.pid) - nodesBefore[i]);
      return {
        nodes: nodeCount,
        recipients,
        seconds,
        msgPerSec: recipients / seconds,
        pgCpu,
        nodeCpu,
        sessions: await sessionsOf(sql, nodes),
        waits,
      };
    },
  });
}

/**
 * One campaign with every statement logged: the log lines of the nodes' sessions counted between
 * launch and the last delivery, and pg_stat_database / pg_stat_wal read once the nodes have
 * flushed their statistics (a backend reports them at most once a second while busy, within
 * 10 s when idle: 12 s of settling, whose idle polling is counted too and is small).
 */
export async function countingRound(
  cluster: PgCluster,
  nodeCount: number,
  recipients: number,
  shape: Shape = { campaigns: 1, ownNumbers: false },
): Promise<Count> {
  const admin = postgres(cluster.url, { max: 1, onnotice: () => {} });
  const logPath = join(cluster.dir, "server.log");
  await admin`ALTER SYSTEM SET log_statement = 'all'`;
  await admin`ALTER SYSTEM SET log_line_prefix = '%m [%p] app=%a: '`;
  await admin`SELECT pg_reload_conf()`;
  type Stats = Record<string, number>;
  const read = async (sql: postgres.Sql): Promise<Stats> => {
    const [db] = await sql`
      SELECT xact_commit::bigint AS commits, xact_rollback::bigint AS rollbacks,
             tup_inserted::bigint AS inserted, tup_updated::bigint AS updated, tup_deleted::bigint AS deleted
      FROM pg_stat_database WHERE datname = current_database()`;
    const [wal] = await sql`SELECT wal_sync::bigint AS syncs, wal_bytes::bigint AS bytes FROM pg_stat_wal`;
    return Object.fromEntries(Object.entries({ ...db, ...wal }).map(([k, v]) => [k, Number(v)]));
  };
  let statsBefore: Stats = {};
  let logFrom = 0;
  try {
    return await withCampaign(cluster.url, nodeCount, recipients, shape, {
      async before(sql) {
        await Bun.sleep(12_000);
        statsBefore = await read(sql);
        logFrom = statSync(logPath).size;
      },
      async after(sql) {
        const logTo = statSync(logPath).size;
        await Bun.sleep(12_000);
        const stats = await read(sql);
        const delta = (k: string) => stats[k] - statsBefore[k];
        const text = readFileSync(logPath).subarray(logFrom, logTo).toString("utf8");
        // BENCH_STATEMENT_LOG=<file>: the counted part of the server's log kept, to read by hand.
        if (process.env.BENCH_STATEMENT_LOG)
          writeFileSync(`${process.env.BENCH_STATEMENT_LOG}.${nodeCount}`, text);
        const statements: Record<string, number> = {};
        let total = 0;
        for (const match of text.matchAll(
          /app=(outreach [^:]*): LOG: {2}(?:statement|execute [^:]+): \s*(?:\/\*[^*]*\*\/\s*)?\(?\s*(\w+)/g,
        )) {
          const word = match[2].toLowerCase();
          statements[word] = (statements[word] ?? 0) + 1;
          total++;
        }
        return {
          nodes: nodeCount,
          recipients,
          statements,
          totalStatements: total,
          commits: delta("commits"),
          rollbacks: delta("rollbacks"),
          walSyncs: delta("syncs"),
          walBytes: delta("bytes"),
          inserted: delta("inserted"),
          updated: delta("updated"),
          deleted: delta("deleted"),
        };
      },
    });
  } finally {
    await admin`ALTER SYSTEM RESET log_statement`;
    await admin`ALTER SYSTEM RESET log_line_prefix`;
    await admin`SELECT pg_reload_conf()`;
    await admin.end();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

export function roundsTable(rounds: Round[]): string {
  const lines = [
    "| round | nodes | msg/s | launch → all delivered (s) | PostgreSQL CPU per message (µs) | nodes' CPU per message (µs) | PostgreSQL + nodes CPU (cores) | sessions per node | nodes' sessions in a statement, mean (what they wait on) |",
    "|---:|---:|---:|---:|---:|---:|---:|---|---|",
  ];
  rounds.forEach((r, i) => {
    const nodeCpu = r.nodeCpu.reduce((a, b) => a + b, 0);
    lines.push(
      `| ${i + 1} | ${r.nodes} | ${fmt(r.msgPerSec)} | ${fmt(r.seconds, 1)} | ${fmt((r.pgCpu * 1e6) / r.recipients)} | ${fmt((nodeCpu * 1e6) / r.recipients)} | ${fmt((r.pgCpu + nodeCpu) / r.seconds, 2)} | ${r.sessions.join(" / ")} | ${waitsText(r.waits)} |`,
    );
  });
  return lines.join("\n");
}

function waitsText(waits: Waits): string {
  const per = (n: number) => fmt(n / Math.max(1, waits.samples), 2);
  const events = Object.entries(waits.byEvent)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([event, n]) => `${event} ${per(n)}`);
  return `${per(waits.active)} (${events.join(", ")})`;
}

export function countsTable(counts: Count[]): string {
  const per = (c: Count, n: number) => fmt(n / c.recipients, 2);
  const lines = [
    "| nodes | recipients | statements per message | of which begin / commit / select / insert / update / delete / other | transactions (xact_commit) per message | WAL flushes per message | WAL bytes per message | rows inserted / updated / deleted per message |",
    "|---:|---:|---:|---|---:|---:|---:|---|",
  ];
  for (const c of counts) {
    const s = c.statements;
    const named = ["begin", "commit", "select", "insert", "update", "delete"];
    const other = c.totalStatements - named.reduce((sum, k) => sum + (s[k] ?? 0), 0);
    lines.push(
      `| ${c.nodes} | ${fmt(c.recipients)} | ${per(c, c.totalStatements)} | ${[...named.map((k) => per(c, s[k] ?? 0)), per(c, other)].join(" / ")} | ${per(c, c.commits)} | ${per(c, c.walSyncs)} | ${fmt(c.walBytes / c.recipients)} | ${per(c, c.inserted)} / ${per(c, c.updated)} / ${per(c, c.deleted)} |`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const arg = (name: string, fallback: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  const recipients = Number(arg("recipients", "20000"));
  const roundCount = Number(arg("rounds", "3"));
  const shape: Shape = {
    campaigns: Number(arg("campaigns", "1")),
    ownNumbers: arg("own-numbers", "false") === "true",
  };
  const say = (line: string) => console.error(line);
  ensureBinary();
  const cluster = await startPgCluster({ durable: true });
  try {
    const version = await (async () => {
      const sql = postgres(cluster.url, { max: 1, onnotice: () => {} });
      try {
        const [row] = await sql`SELECT version() AS v, current_setting('fsync') AS f,
          current_setting('synchronous_commit') AS s, current_setting('shared_buffers') AS b`;
        return `${String(row.v).split(" on ")[0]}, fsync=${row.f}, synchronous_commit=${row.s}, shared_buffers=${row.b}`;
      } finally {
        await sql.end();
      }
    })();
    const rounds: Round[] = [];
    for (let r = 0; r < roundCount; r++) {
      // Alternating, and which goes first alternates too, so drift in the machine's load spreads evenly.
      for (const nodes of r % 2 === 0 ? [1, 2] : [2, 1]) {
        const round = await timedRound(cluster.url, nodes, recipients, shape);
        say(
          `round ${r + 1}, ${nodes} node(s): ${fmt(round.msgPerSec)} msg/s (${fmt(round.seconds, 1)} s), ` +
            `PostgreSQL CPU ${fmt(round.pgCpu, 1)} s, nodes ${round.nodeCpu.map((c) => fmt(c, 1)).join(" + ")} s`,
        );
        rounds.push(round);
      }
    }
    const counts: Count[] = [];
    if (arg("count", "true") !== "false")
      for (const nodes of [1, 2]) {
        const count = await countingRound(cluster, nodes, recipients, shape);
        say(
          `counted, ${nodes} node(s): ${fmt(count.totalStatements / recipients, 2)} statements per message`,
        );
        counts.push(count);
      }
    const statements =
      arg("statements", "true") !== "false"
        ? await benchStatements(cluster.url, { seconds: Number(arg("seconds", "3")), log: say })
        : [];

    const one = median(rounds.filter((r) => r.nodes === 1).map((r) => r.msgPerSec));
    const two = median(rounds.filter((r) => r.nodes === 2).map((r) => r.msgPerSec));
    console.log(
      `\nNodes run of ${new Date().toISOString().slice(0, 16)}Z: ${binary}; ${cpus().length} cores ` +
        `(${cpus()[0]?.model}), load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(" ")} at the end; ` +
        `${version}; ${fmt(recipients)} recipients per round in ${shape.campaigns} campaign(s) launched together, simulated carrier (${DELIVERY_MS} ms delivery), ` +
        `${shape.ownNumbers ? `a pool of ${NUMBERS.length} numbers of its own for each campaign` : `one pool of ${NUMBERS.length} numbers`}.\n`,
    );
    console.log(roundsTable(rounds));
    console.log(
      `\n| | 1 node | 2 nodes | two / one |\n|---|---:|---:|---:|\n| median msg/s | ${fmt(one)} | ${fmt(two)} | ${fmt(two / one, 2)} |`,
    );
    if (counts.length)
      console.log(`\n${countsTable(counts)}\n\nStatement counts, raw: ${JSON.stringify(counts)}`);
    if (statements.length) console.log(`\n${statementsTable(statements)}`);
  } finally {
    cluster.stop();
  }
}
