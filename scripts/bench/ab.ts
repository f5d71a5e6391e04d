/**
 * A/B comparison of two built binaries, measured alternately in one run so that the machine's noise
 * falls on both alike (a storage-layer change is judged "within 10 % of before"):
 *
 *   BEFORE=/path/to/old/outreach [AFTER=/path/to/new/outreach] \
 *     node_modules/.bin/bun scripts/bench/ab.ts [--rounds 3] [--seconds 8] [--campaign 100000]
 *
 * AFTER defaults to dist/outreach of this checkout. Each round measures, figure by figure, BEFORE then
 * AFTER, each on a fresh temp database and a freshly started server (never two servers at once):
 *  - a raw Bun.serve hello (scripts/bench/hello-server.ts), once a round: the reference;
 *  - GET /v1/me with an API key (foundation.ts);
 *  - POST /v1/messages accepted, 64 concurrent posts to 50,000 distinct recipients, worker on
 *    (messaging.ts accept), with the share of the accepted messages the worker handed to the
 *    carrier by the run's end; then the same with the worker off (WORKER=false): the accept alone;
 *  - GET /r/{code} redirects over 1,001 tracked links, then POST /v1/conversion on the same server,
 *    100,000 contacts, 20,000 clicks and 5,000 visitors seeded (attribution.ts http);
 *  - a campaign to --campaign recipients (contacts written into the database file, simulated carrier
 *    with 200 ms delivery, quiet hours off): launch → last DELIVERED (campaigns.ts throughput).
 * wrk runs with 1 thread and 64 connections, --seconds per figure after a 1 s warm-up. `--only` takes a
 * comma-separated subset of me, messages, links (redirects and conversions), campaign. A measurement
 * that fails is shown as "—" with its error, and the run goes on. Progress goes to stderr; the markdown
 * table for docs/benchmarks.md goes to stdout at the end.
 *
 * `--databases` compares ONE binary (AFTER, else dist/outreach) on SQLite against the same binary on
 * PostgreSQL, alternately, with the same figures (campaign default 20,000):
 *
 *   node_modules/.bin/bun scripts/bench/ab.ts --databases [--rounds 3] [--seconds 8] [--campaign 20000]
 *
 * PostgreSQL is a throwaway cluster the script starts (test/support/postgres.ts, durable: fsync,
 * synchronous_commit and full_page_writes on; locale C) and stops; each PostgreSQL measurement gets a
 * fresh database (CREATE DATABASE, migrated by the server it is handed to in DATABASE_URL, dropped
 * afterwards). The seed rows go into either database alike (bun:sqlite or postgres.js), and campaign
 * progress is read from either. The server, PostgreSQL and wrk share the machine's cores.
 * `AB_PG_URL=<admin URL>` runs the PostgreSQL side on that server instead (its settings as they are;
 * the databases the script creates are dropped, the server is left running).
 */

import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createPgClient } from "../../src/db/store/postgres";
import { dropDatabase, freshDatabase, type PgCluster, startPgCluster } from "../../test/support/postgres";
import {
  conversionScript,
  binary as defaultBinary,
  redirectScript,
  type StartedServer,
  startBinary,
  startHelloServer,
  wrk,
} from "./support";

// ---------------------------------------------------------------------------------------------
// Arguments
// ---------------------------------------------------------------------------------------------

function option(name: string, fallback: number): number {
  const args = process.argv.slice(2);
  const at = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (at < 0) return fallback;
  const raw = args[at]?.includes("=") ? args[at]?.split("=")[1] : args[at + 1];
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`--${name} wants a positive number, got ${raw}`);
    process.exit(2);
  }
  return value;
}

/** `--databases`: one binary on SQLite against the same binary on PostgreSQL. */
const DATABASES = process.argv.slice(2).includes("--databases");
const ROUNDS = Math.round(option("rounds", 3));
const SECONDS = option("seconds", 8);
const CAMPAIGN = Math.round(option("campaign", DATABASES ? 20_000 : 100_000));
/** `--only me,messages,links,campaign`: a subset of the figures (all by default). */
const PARTS = ["me", "messages", "links", "campaign"];
const onlyAt = process.argv.findIndex((a) => a === "--only" || a.startsWith("--only="));
const only =
  onlyAt < 0 ? PARTS : (process.argv[onlyAt]?.split("=")[1] ?? process.argv[onlyAt + 1] ?? "").split(",");
if (only.some((part) => !PARTS.includes(part))) {
  console.error(`--only wants a comma-separated subset of ${PARTS.join(",")}, got ${only.join(",")}`);
  process.exit(2);
}
const run = (part: string) => only.includes(part);

/** A side of the comparison: a binary on one of the two databases. */
interface Side {
  name: string;
  binary: string;
  engine: "sqlite" | "postgres";
}
const afterBinary = resolve(process.env.AFTER ?? defaultBinary);
const sides: Side[] = DATABASES
  ? [
      { name: "SQLite", binary: afterBinary, engine: "sqlite" },
      { name: "PostgreSQL", binary: afterBinary, engine: "postgres" },
    ]
  : [
      { name: "BEFORE", binary: process.env.BEFORE ? resolve(process.env.BEFORE) : "", engine: "sqlite" },
      { name: "AFTER", binary: afterBinary, engine: "sqlite" },
    ];
for (const side of sides) {
  if (!side.binary || !existsSync(side.binary)) {
    const name = DATABASES ? "AFTER" : side.name;
    console.error(
      `${name}=${side.binary || "(unset)"}: no such binary. Usage: BEFORE=/path/to/old/outreach ` +
        "[AFTER=/path/to/new/outreach] bun scripts/bench/ab.ts [--rounds 3] [--seconds 8] [--campaign 100000] " +
        "[--only me,messages,links,campaign], or [AFTER=/path/to/outreach] bun scripts/bench/ab.ts --databases " +
        "[--rounds 3] [--seconds 8] [--campaign 20000] [--only …]",
    );
    process.exit(2);
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "—");
const fmt1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "—");
const median = (values: number[]) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const log = (line: string) => console.error(line);
const DAY = 86_400_000;
const phoneOf = (i: number) => `+1415${String(2_000_000 + i).padStart(7, "0")}`;
const idAt = (ms: number) => Bun.randomUUIDv7("hex", ms);

async function api(server: StartedServer, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** One measurement: a value (NaN when it failed) and a note for the per-round column. */
interface Sample {
  value: number;
  note?: string;
}

/** Non-2xx/3xx answers and requests wrk gave up on (its 2 s timeout), for the note of a figure. */
function wrkNote(run: ReturnType<typeof wrk>): string | undefined {
  const timeouts = Number(run.raw.match(/Socket errors:.*timeout (\d+)/)?.[1] ?? 0);
  const notes = [
    run.non2xx > 0 ? `${fmt(run.non2xx)} non-2xx` : "",
    timeouts > 0 ? `${fmt(timeouts)} timed out` : "",
  ].filter(Boolean);
  return notes.length ? notes.join(", ") : undefined;
}

/** wrk with a 1 s warm-up; non-2xx/3xx answers and timeouts are noted next to the figure. */
function measure(url: string, options: Parameters<typeof wrk>[1] = {}): Sample {
  wrk(url, { ...options, seconds: 1 });
  const run = wrk(url, { ...options, seconds: SECONDS });
  return { value: run.rps, note: wrkNote(run) };
}

/** A fresh directory per measurement, removed afterwards whatever happens. */
async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "outreach-bench-ab-"));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The PostgreSQL cluster of `--databases` (started below, before the rounds). */
let cluster: PgCluster | null = null;

/**
 * One measurement's database: a file in a temp folder, or (PostgreSQL) a fresh database on the
 * cluster, named by `url`. The folder also holds the wrk scripts and the server's stdout.
 */
interface Target {
  dir: string;
  dbPath: string;
  url: string | null;
}

/** A fresh database for one measurement, removed (the file, or DROP DATABASE) afterwards. */
function withTarget<T>(side: Side, name: string, fn: (target: Target) => Promise<T>): Promise<T> {
  return inTempDir(async (dir) => {
    const dbPath = join(dir, `${name}.db`);
    if (side.engine === "sqlite") return fn({ dir, dbPath, url: null });
    if (!cluster) throw new Error("no PostgreSQL cluster");
    const adminUrl = cluster.url;
    const url = await freshDatabase(adminUrl);
    try {
      return await fn({ dir, dbPath, url });
    } finally {
      await dropDatabase(adminUrl, url).catch((error) =>
        log(`  dropping ${url}: ${(error as Error).message}`),
      );
    }
  });
}

async function withServer<T>(
  side: Side,
  target: Target,
  env: Record<string, string>,
  fn: (server: StartedServer) => Promise<T>,
): Promise<T> {
  // An empty DATABASE_URL is the SQLite file, whatever the caller's environment says.
  const server = await startBinary({
    binary: side.binary,
    dbPath: target.dbPath,
    env: { ...env, DATABASE_URL: target.url ?? "" },
  });
  try {
    return await fn(server);
  } finally {
    await server.stop();
  }
}

type Row = Record<string, string | number | boolean | null>;

/**
 * Seed rows written straight into a measurement's database, the same rows on either: bun:sqlite
 * (booleans as 1/0) or postgres.js (JSON columns as JSON text). Each `insert` is one transaction;
 * the rows of one call share the first row's columns.
 */
interface Seeder {
  insert(table: string, rows: Row[]): Promise<void>;
  close(): Promise<void>;
}

function openSeeder(target: Target): Seeder {
  if (target.url) {
    const sql = createPgClient(target.url, { max: 1 });
    return {
      async insert(table, rows) {
        if (rows.length === 0) return;
        const columns = Object.keys(rows[0] as Row);
        // Under PostgreSQL's 65,535 parameters a statement.
        const chunk = Math.floor(30_000 / columns.length);
        await sql.begin(async (tx) => {
          for (let i = 0; i < rows.length; i += chunk)
            await tx`INSERT INTO ${tx(table)} ${tx(rows.slice(i, i + chunk), ...columns)}`;
        });
      },
      close: () => sql.end(),
    };
  }
  const db = new Database(target.dbPath);
  db.exec("PRAGMA busy_timeout = 10000");
  return {
    async insert(table, rows) {
      if (rows.length === 0) return;
      const columns = Object.keys(rows[0] as Row);
      const statement = db.prepare(
        `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
      );
      db.transaction(() => {
        for (const row of rows)
          statement.run(
            ...columns.map((column) => {
              const value = row[column] ?? null;
              return typeof value === "boolean" ? Number(value) : value;
            }),
          );
      })();
    },
    async close() {
      db.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 1. GET /v1/me (foundation.ts)
// ---------------------------------------------------------------------------------------------

function benchMe(side: Side): Promise<Sample> {
  return withTarget(side, "me", (target) =>
    withServer(side, target, {}, async (server) =>
      measure(`${server.url}/v1/me`, { headers: [`Authorization: Bearer ${server.key}`] }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// 2. POST /v1/messages accepted (messaging.ts accept)
// ---------------------------------------------------------------------------------------------

/**
 * `POST /v1/messages` accepted, and how many of the messages on the database at the end of the run
 * (the warm-up's included) left the queue for the carrier meanwhile (status past QUEUED): the
 * background worker competes with the accepts for the write lock and the cores, so an accept rate
 * is read with what was sent beside it. `worker: false` runs the server with `WORKER=false`: the
 * accept path alone.
 */
interface MessagesSample {
  accepted: Sample;
  handedOff: Sample;
}

function benchMessages(side: Side, options: { worker: boolean }): Promise<MessagesSample> {
  return withTarget(side, options.worker ? "messages" : "messages-alone", async (target) => {
    const script = join(target.dir, "post.lua");
    writeFileSync(
      script,
      [
        'wrk.method = "POST"',
        'wrk.headers["Content-Type"] = "application/json"',
        "local n = 0",
        "request = function()",
        "  n = n + 1",
        '  local body = string.format(\'{"to":"+1415%07d","body":"Your order has shipped"}\', 3000000 + (n % 50000))',
        "  return wrk.format(nil, nil, nil, body)",
        "end",
      ].join("\n"),
    );
    const env: Record<string, string> = options.worker ? {} : { WORKER: "false" };
    return withServer(side, target, env, async (server) => {
      const ordered = await api(server, "POST", "/v1/numbers", { number: "+14155550100" });
      if (ordered.status !== 200) throw new Error(`ordering a number: ${JSON.stringify(ordered.body)}`);
      // Far more than a day's one-off budget (API.md §7.2): lifted, as messaging.ts does.
      const lifted = await api(server, "PATCH", "/v1/settings", { one_off_daily_limit: null });
      if (lifted.status !== 200) throw new Error(`lifting the daily budget: ${JSON.stringify(lifted.body)}`);
      const accepted = measure(`${server.url}/v1/messages`, {
        headers: [`Authorization: Bearer ${server.key}`],
        script,
      });
      const reader = countsReader(target);
      const counts = await reader.read(MESSAGE_COUNTS).finally(() => reader.close());
      const total = counts.total ?? 0;
      const share = total > 0 ? (100 * (counts.handed_off ?? 0)) / total : Number.NaN;
      return {
        accepted,
        handedOff: { value: share, note: `${fmt(counts.handed_off ?? 0)} of ${fmt(total)}` },
      };
    });
  });
}

const MESSAGE_COUNTS =
  "SELECT count(*) AS total, count(*) FILTER (WHERE status NOT IN ('PENDING', 'QUEUED')) AS handed_off FROM messages";

// ---------------------------------------------------------------------------------------------
// 3–4. Redirects and conversions (attribution.ts http)
// ---------------------------------------------------------------------------------------------

const CONTACTS = 100_000;
const LINKS = 1000;
const CLICKS = 20_000;
const VISITORS = 5000;

function benchAttribution(side: Side): Promise<{ redirects: Sample; conversions: Sample }> {
  return withTarget(side, "attribution", async (target) => {
    const dir = target.dir;
    // The key is announced on the first start only: kept for the restarted server.
    const { key, workspaceId, offerId, offerCode } = await withServer(side, target, {}, async (server) => {
      const offer = await api(server, "POST", "/v1/offers", {
        name: "Spring sale",
        destination_url: "https://shop.example.com/spring?utm_source=sms",
        value: 49.9,
      });
      if (offer.status !== 200) throw new Error(`creating the offer: ${JSON.stringify(offer.body)}`);
      const row = offer.body.offer as { id: string; tracking_url: string };
      return {
        key: server.key,
        workspaceId: server.workspaceId,
        offerId: row.id,
        offerCode: row.tracking_url.split("/r/")[1] as string,
      };
    });

    // Contacts, per-recipient links, clicks and visitors, straight into the database (server stopped).
    const now = Date.now();
    const contacts: Row[] = [];
    const links: Row[] = [];
    const clicks: Row[] = [];
    const visitors: Row[] = [];
    const contactIds: string[] = [];
    const codes: string[] = [offerCode];
    const clickIds: string[] = [];
    const vids: string[] = [];
    const campaignId = idAt(now - 10 * DAY);
    for (let i = 0; i < CONTACTS; i++) {
      const at = now - 60 * DAY + i;
      const id = idAt(at);
      contactIds.push(id);
      contacts.push({
        id,
        workspace_id: workspaceId,
        phone_number: phoneOf(i),
        first_name: `Name${i}`,
        email: `user${i}@example.com`,
        external_id: `crm-${i}`,
        source: "import",
        opted_in: true,
        fields: "{}",
        created_at: at,
        updated_at: at,
      });
    }
    for (let i = 0; i < LINKS; i++) {
      const code = `Bench${String(i).padStart(5, "0")}`;
      codes.push(code);
      links.push({
        code,
        workspace_id: workspaceId,
        offer_id: offerId,
        contact_id: contactIds[i * 7] as string,
        campaign_id: campaignId,
        message_id: idAt(now - DAY),
        number_id: null,
        created_at: now - DAY,
      });
    }
    for (let i = 0; i < CLICKS; i++) {
      const at = now - 20 * DAY + i * 60_000;
      const id = idAt(at);
      clickIds.push(id);
      clicks.push({
        id,
        workspace_id: workspaceId,
        offer_id: offerId,
        code: offerCode,
        contact_id: contactIds[(i * 5) % CONTACTS] as string,
        campaign_id: campaignId,
        message_id: idAt(at - 1000),
        number_id: null,
        created_at: at,
      });
    }
    for (let i = 0; i < VISITORS; i++) {
      const vid = crypto.randomUUID();
      vids.push(vid);
      visitors.push({
        workspace_id: workspaceId,
        vid,
        contact_id: contactIds[(i * 11) % CONTACTS] as string,
        click_id: clickIds[i % CLICKS] as string,
        created_at: now,
        updated_at: now,
      });
    }
    const seeder = openSeeder(target);
    try {
      await seeder.insert("contacts", contacts);
      await seeder.insert("tracked_links", links);
      await seeder.insert("clicks", clicks);
      await seeder.insert("visitors", visitors);
    } finally {
      await seeder.close();
    }

    const redirectLua = redirectScript(dir, codes);
    const conversionLua = (prefix: string) =>
      conversionScript(dir, prefix, { contacts: CONTACTS, clickIds, vids });

    return withServer(side, target, {}, async (server) => {
      const redirects = measure(`${server.url}/r/x`, { script: redirectLua });
      const auth = [`Authorization: Bearer ${key}`];
      wrk(`${server.url}/v1/conversion`, { seconds: 1, headers: auth, script: conversionLua("warm") });
      const run = wrk(`${server.url}/v1/conversion`, {
        seconds: SECONDS,
        headers: auth,
        script: conversionLua("bench"),
      });
      const conversions: Sample = { value: run.rps, note: wrkNote(run) };
      return { redirects, conversions };
    });
  });
}

// ---------------------------------------------------------------------------------------------
// 5. Campaign launch → last DELIVERED (campaigns.ts throughput)
// ---------------------------------------------------------------------------------------------

/** Writes `n` contacts (415/650 numbers, opted in) straight into the server's database. */
async function seedContacts(target: Target, workspaceId: string, n: number) {
  const seeder = openSeeder(target);
  const now = Date.now() - DAY;
  try {
    for (let from = 0; from < n; from += 20_000) {
      const rows: Row[] = [];
      for (let i = from; i < Math.min(n, from + 20_000); i++) {
        const createdAt = now + Math.floor(i / 10);
        const phone = `+1${i < 5_000_000 ? "415" : "650"}${String(2_000_000 + (i % 5_000_000)).padStart(7, "0")}`;
        rows.push({
          id: Bun.randomUUIDv7("hex", createdAt),
          workspace_id: workspaceId,
          phone_number: phone,
          first_name: `P${i}`,
          last_name: null,
          email: null,
          external_id: null,
          source: "import",
          opted_in: true,
          timezone: "America/Los_Angeles",
          fields: "{}",
          created_at: createdAt,
          updated_at: createdAt,
        });
      }
      await seeder.insert("contacts", rows);
    }
  } finally {
    await seeder.close();
  }
}

const DELIVERED =
  "SELECT count(*) AS n FROM campaign_recipients WHERE campaign_id = $1 AND outcome = 'delivered'";

/**
 * One row of counts (numbers by column) read from the database beside the server: the file
 * (read-only, a connection per read) or PostgreSQL (one connection until `close`). Queries take
 * PostgreSQL's `$1`, `$2`… parameters; SQLite reads them as `?1`, `?2`….
 */
function countsReader(target: Target) {
  const numbers = (row: Record<string, unknown> | undefined) =>
    Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
  if (target.url) {
    const sql = createPgClient(target.url, { max: 1 });
    return {
      read: async (query: string, params: string[] = []) => numbers((await sql.unsafe(query, params))[0]),
      close: () => sql.end(),
    };
  }
  return {
    async read(query: string, params: string[] = []) {
      const db = new Database(target.dbPath, { readonly: true });
      try {
        db.exec("PRAGMA busy_timeout = 5000");
        const row = db.query(query.replace(/\$(\d+)/g, "?$1")).get(...params);
        return numbers(row as Record<string, unknown>);
      } finally {
        db.close();
      }
    },
    async close() {},
  };
}

interface CampaignSample {
  msgPerSec: Sample;
  seconds: Sample;
}

function benchCampaign(side: Side, n: number): Promise<CampaignSample> {
  return withTarget(side, "campaign", (target) =>
    withServer(side, target, { SIMULATED_DELIVERY_MS: "200" }, async (server) => {
      await seedContacts(target, server.workspaceId, n);
      const ordered = await api(server, "POST", "/v1/numbers", { number: "+14155550100" });
      if (ordered.status !== 200) throw new Error(`ordering a number: ${JSON.stringify(ordered.body)}`);
      const segment = await api(server, "POST", "/v1/segments", { name: "Everyone", rules: { all: [] } });
      if (segment.status !== 200) throw new Error(`creating the segment: ${JSON.stringify(segment.body)}`);
      const created = await api(server, "POST", "/v1/campaigns", {
        name: "Bench",
        message: { body: "Hi {{first_name|there}}, spring sale this week. Reply STOP to opt out" },
        audience: { segment_ids: [(segment.body.segment as { id: string }).id] },
        quiet_hours: { enabled: false },
      });
      if (created.status !== 200) throw new Error(`creating the campaign: ${JSON.stringify(created.body)}`);
      const campaignId = (created.body.campaign as { id: string }).id;

      const launchedAt = performance.now();
      const launched = await api(server, "POST", `/v1/campaigns/${campaignId}/launch`);
      if (launched.status !== 200) throw new Error(`launching: ${JSON.stringify(launched.body)}`);
      const deadline = launchedAt + Math.max(600_000, n * 2);
      let delivered = 0;
      const reader = countsReader(target);
      try {
        while (performance.now() < deadline) {
          delivered = (await reader.read(DELIVERED, [campaignId])).n;
          if (delivered >= n) break;
          await Bun.sleep(200);
        }
      } finally {
        await reader.close();
      }
      const secs = (performance.now() - launchedAt) / 1000;
      if (delivered < n) {
        const note = `${fmt(delivered)} of ${fmt(n)} delivered after ${secs.toFixed(0)} s`;
        return { msgPerSec: { value: Number.NaN, note }, seconds: { value: Number.NaN, note } };
      }
      return { msgPerSec: { value: n / secs }, seconds: { value: secs } };
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// The rounds
// ---------------------------------------------------------------------------------------------

interface Figure {
  name: string;
  /** false for durations: AFTER/BEFORE above 1 is then the worse side. */
  higherIsBetter: boolean;
  digits: (n: number) => string;
  /** Each side's samples, by side name. */
  values: Record<string, Sample[]>;
  /**
   * `--databases`: the least PostgreSQL/SQLite rate ratio that meets the target (for a duration,
   * the PostgreSQL/SQLite ratio must stay at or under 1 / target); none: reported only.
   */
  target?: number;
}

const figure = (name: string, higherIsBetter = true, digits = fmt, target?: number): Figure => ({
  name,
  higherIsBetter,
  digits,
  values: Object.fromEntries(sides.map((side) => [side.name, []])),
  target,
});
const me = figure("`GET /v1/me` req/s", true, fmt, 0.8);
const meRatio = figure("`GET /v1/me` ÷ hello of the same round", true, (n) =>
  Number.isFinite(n) ? n.toFixed(2) : "—",
);
const messages = figure("`POST /v1/messages` accepted req/s", true, fmt, 0.5);
const handedOff = figure(
  "`POST /v1/messages`: % of the messages handed off by the run's end (worker on)",
  true,
  fmt1,
);
const messagesAlone = figure("`POST /v1/messages` accepted req/s, worker off (`WORKER=false`)", true, fmt);
const redirects = figure("`GET /r/{code}` redirects/s", true, fmt, 0.5);
const conversions = figure("`POST /v1/conversion` req/s");
const campaignRate = figure(
  `campaign, ${fmt(CAMPAIGN)} recipients: launch → last DELIVERED, msg/s`,
  true,
  fmt,
  0.5,
);
const campaignSecs = figure(
  `campaign, ${fmt(CAMPAIGN)} recipients: launch → last DELIVERED, s`,
  false,
  fmt1,
  0.5,
);
const figures = [
  me,
  meRatio,
  messages,
  handedOff,
  messagesAlone,
  redirects,
  conversions,
  campaignRate,
  campaignSecs,
];
const hello: number[] = [];
const loads: string[] = [];

/** Runs one side's measurement; a failure is recorded as NaN with its message, and the run goes on. */
async function attempt<T>(label: string, side: Side, fn: () => Promise<T>): Promise<T | Error> {
  const t0 = performance.now();
  try {
    const result = await fn();
    log(`  ${side.name} ${label}: ${describe(result)} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    return result;
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    log(`  ${side.name} ${label}: FAILED ${failure.message}`);
    return failure;
  }
}

function describe(result: unknown): string {
  if (result && typeof result === "object" && "value" in result) {
    const sample = result as Sample;
    const value = Math.abs(sample.value) < 100 ? fmt1(sample.value) : fmt(sample.value);
    return `${value}${sample.note ? ` (${sample.note})` : ""}`;
  }
  if (result && typeof result === "object")
    return Object.entries(result)
      .map(([k, v]) => `${k} ${describe(v)}`)
      .join(", ");
  return String(result);
}

const failed = (error: Error): Sample => ({
  value: Number.NaN,
  note: `failed: ${error.message.slice(0, 80)}`,
});

const startedAt = new Date();
for (const side of DATABASES ? sides.slice(1) : sides) {
  const stat = statSync(side.binary);
  log(
    `${DATABASES ? "binary" : side.name}: ${side.binary} (${fmt(stat.size / 1e6)} MB, modified ${stat.mtime.toISOString()})`,
  );
}

/** What the PostgreSQL side runs on, as the cluster reports it (for the settings line). */
let pgSettings = "";
if (DATABASES) {
  try {
    // AB_PG_URL: a PostgreSQL server of the caller's (an admin URL), kept running afterwards.
    const given = process.env.AB_PG_URL;
    cluster = given
      ? {
          url: given,
          dir: `(AB_PG_URL) ${new URL(given).host}`,
          port: Number(new URL(given).port),
          stop() {},
        }
      : await startPgCluster({ durable: true });
  } catch (error) {
    console.error(`--databases: cannot start PostgreSQL: ${(error as Error).message}`);
    process.exit(1);
  }
  const started = cluster;
  // Stopped however the run ends (Ctrl-C included).
  process.on("exit", () => started.stop());
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => {
      started.stop();
      process.exit(130);
    });
  const sql = createPgClient(cluster.url, { max: 1 });
  try {
    const rows = await sql`
      SELECT name, setting, unit FROM pg_settings
      WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'full_page_writes', 'lc_collate',
                     'shared_buffers', 'wal_level', 'max_connections')`;
    const get = (name: string) => rows.find((r) => r.name === name);
    const buffers = get("shared_buffers");
    pgSettings =
      `PostgreSQL ${get("server_version")?.setting}, fsync=${get("fsync")?.setting}, ` +
      `synchronous_commit=${get("synchronous_commit")?.setting}, full_page_writes=${get("full_page_writes")?.setting}, ` +
      `lc_collate=${get("lc_collate")?.setting}, wal_level=${get("wal_level")?.setting}, ` +
      `shared_buffers=${fmt((Number(buffers?.setting) * 8) / 1024)} MB, max_connections=${get("max_connections")?.setting}`;
  } finally {
    await sql.end();
  }
  log(`${pgSettings}; cluster in ${cluster.dir}`);
}

for (let round = 1; round <= ROUNDS; round++) {
  loads.push(loadavg()[0]?.toFixed(2) ?? "?");
  log(
    `round ${round}/${ROUNDS}, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  const helloServer = await startHelloServer();
  try {
    wrk(helloServer.url, { seconds: 1 });
    hello.push(wrk(helloServer.url, { seconds: SECONDS }).rps);
  } finally {
    await helloServer.stop();
  }
  const helloRps = hello.at(-1) as number;
  log(`  hello: ${fmt(helloRps)}`);

  for (const side of run("me") ? sides : []) {
    const result = await attempt("GET /v1/me", side, () => benchMe(side));
    const sample = result instanceof Error ? failed(result) : result;
    me.values[side.name].push(sample);
    meRatio.values[side.name].push({ value: sample.value / helloRps });
  }
  for (const side of run("messages") ? sides : []) {
    const result = await attempt("POST /v1/messages", side, () => benchMessages(side, { worker: true }));
    messages.values[side.name].push(result instanceof Error ? failed(result) : result.accepted);
    handedOff.values[side.name].push(result instanceof Error ? failed(result) : result.handedOff);
  }
  for (const side of run("messages") ? sides : []) {
    const result = await attempt("POST /v1/messages, worker off", side, () =>
      benchMessages(side, { worker: false }),
    );
    messagesAlone.values[side.name].push(result instanceof Error ? failed(result) : result.accepted);
  }
  for (const side of run("links") ? sides : []) {
    const result = await attempt("redirects, conversions", side, () => benchAttribution(side));
    redirects.values[side.name].push(result instanceof Error ? failed(result) : result.redirects);
    conversions.values[side.name].push(result instanceof Error ? failed(result) : result.conversions);
  }
  for (const side of run("campaign") ? sides : []) {
    const result = await attempt(`campaign of ${fmt(CAMPAIGN)}`, side, () => benchCampaign(side, CAMPAIGN));
    campaignRate.values[side.name].push(result instanceof Error ? failed(result) : result.msgPerSec);
    campaignSecs.values[side.name].push(result instanceof Error ? failed(result) : result.seconds);
  }
}

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

const cell = (f: Figure, samples: Sample[]) =>
  samples.map((s) => `${f.digits(s.value)}${s.note ? ` (${s.note})` : ""}`).join(" / ");
const [first, second] = sides as [Side, Side];
const measured = figures.filter((f) => (f.values[first.name] ?? []).length > 0);
const medians = (f: Figure) => {
  const a = median((f.values[first.name] ?? []).map((s) => s.value));
  const b = median((f.values[second.name] ?? []).map((s) => s.value));
  return { a, b, ratio: b / a };
};
const ratioText = (ratio: number) => (Number.isFinite(ratio) ? ratio.toFixed(2) : "—");
const reference =
  `Reference, raw \`Bun.serve\` hello req/s once a round: ${hello.map(fmt).join(" / ")} (median ${fmt(median(hello))}); ` +
  `load average (1 min) at each round's start: ${loads.join(" / ")}.`;
const campaignSettings = run("campaign")
  ? `; campaign of ${fmt(CAMPAIGN)} recipients, simulated carrier (200 ms delivery).`
  : ".";

if (DATABASES) {
  const rows = measured.map((f) => {
    const { a, b, ratio } = medians(f);
    let target = "report";
    let met = "—";
    if (f.target !== undefined) {
      target = f.higherIsBetter ? `≥ ${f.target.toFixed(1)}` : `≤ ${(1 / f.target).toFixed(1)}`;
      if (Number.isFinite(ratio))
        met = (f.higherIsBetter ? ratio >= f.target : ratio <= 1 / f.target) ? "yes" : "**no**";
    } else if (f === meRatio) target = "—";
    return `| ${f.name} | ${f.digits(a)} | ${f.digits(b)} | ${ratioText(ratio)} | ${target} | ${met} | ${cell(f, f.values[first.name] ?? [])} | ${cell(f, f.values[second.name] ?? [])} |`;
  });
  console.log(
    [
      `Databases run of ${startedAt.toISOString().slice(0, 16)}Z: \`${afterBinary}\` on SQLite (a temp file) and on PostgreSQL ` +
        `(a throwaway cluster started by the script: ${pgSettings}); ` +
        `${ROUNDS} round${ROUNDS > 1 ? "s" : ""}, each figure measured on SQLite then on PostgreSQL, each time on a fresh database ` +
        `(a new file; CREATE DATABASE, migrated by the server) and a freshly started server; ` +
        `the server, PostgreSQL and wrk share this machine's ${cpus().length} cores; ` +
        `wrk -t1 -c64 -d${SECONDS}s after a 1 s warm-up${campaignSettings}`,
      "",
      "| figure | SQLite median | PostgreSQL median | PostgreSQL/SQLite | target | met | SQLite per round | PostgreSQL per round |",
      "|---|---|---|---|---|---|---|---|",
      ...rows,
      "",
      reference,
    ].join("\n"),
  );
} else {
  const rows = measured.map((f) => {
    const { a: before, b: after, ratio } = medians(f);
    const within = !Number.isFinite(ratio)
      ? "—"
      : (f.higherIsBetter ? ratio >= 0.9 : ratio <= 1.1)
        ? "yes"
        : "**no**";
    return `| ${f.name} | ${f.digits(before)} | ${f.digits(after)} | ${ratioText(ratio)} | ${within} | ${cell(f, f.values[first.name] ?? [])} | ${cell(f, f.values[second.name] ?? [])} |`;
  });
  console.log(
    [
      `A/B run of ${startedAt.toISOString().slice(0, 16)}Z: BEFORE \`${first.binary}\`, AFTER \`${second.binary}\`; ` +
        `${ROUNDS} round${ROUNDS > 1 ? "s" : ""}, each figure measured BEFORE then AFTER on a fresh database and server; ` +
        `wrk -t1 -c64 -d${SECONDS}s after a 1 s warm-up${campaignSettings}`,
      "",
      "| figure | BEFORE median | AFTER median | AFTER/BEFORE | within 10 % | BEFORE per round | AFTER per round |",
      "|---|---|---|---|---|---|---|",
      ...rows,
      "",
      reference,
    ].join("\n"),
  );
}
