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
 *    (messaging.ts accept);
 *  - GET /r/{code} redirects over 1,001 tracked links, then POST /v1/conversion on the same server,
 *    100,000 contacts, 20,000 clicks and 5,000 visitors seeded (attribution.ts http);
 *  - a campaign to --campaign recipients (contacts written into the database file, simulated carrier
 *    with 200 ms delivery, quiet hours off): launch → last DELIVERED (campaigns.ts throughput).
 * wrk runs with 1 thread and 64 connections, --seconds per figure after a 1 s warm-up. `--only` takes a
 * comma-separated subset of me, messages, links (redirects and conversions), campaign. A measurement
 * that fails is shown as "—" with its error, and the run goes on. Progress goes to stderr; the markdown
 * table for docs/benchmarks.md goes to stdout at the end.
 */

import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { binary as defaultBinary, type StartedServer, startBinary, startHelloServer, wrk } from "./support";

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

const ROUNDS = Math.round(option("rounds", 3));
const SECONDS = option("seconds", 8);
const CAMPAIGN = Math.round(option("campaign", 100_000));
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
const sides = [
  { name: "BEFORE", binary: process.env.BEFORE ? resolve(process.env.BEFORE) : "" },
  { name: "AFTER", binary: resolve(process.env.AFTER ?? defaultBinary) },
] as const;
for (const side of sides) {
  if (!side.binary || !existsSync(side.binary)) {
    console.error(
      `${side.name}=${side.binary || "(unset)"}: no such binary. Usage: BEFORE=/path/to/old/outreach ` +
        "[AFTER=/path/to/new/outreach] bun scripts/bench/ab.ts [--rounds 3] [--seconds 8] [--campaign 100000] " +
        "[--only me,messages,links,campaign]",
    );
    process.exit(2);
  }
}
type Side = (typeof sides)[number];

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
const lua = (values: string[]) => `{${values.map((v) => JSON.stringify(v)).join(",")}}`;

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

/** wrk with a 1 s warm-up; non-2xx/3xx answers are noted next to the figure. */
function measure(url: string, options: Parameters<typeof wrk>[1] = {}): Sample {
  wrk(url, { ...options, seconds: 1 });
  const run = wrk(url, { ...options, seconds: SECONDS });
  return { value: run.rps, note: run.non2xx > 0 ? `${fmt(run.non2xx)} non-2xx` : undefined };
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

async function withServer<T>(
  side: Side,
  dbPath: string,
  env: Record<string, string>,
  fn: (server: StartedServer) => Promise<T>,
): Promise<T> {
  const server = await startBinary({ binary: side.binary, dbPath, env });
  try {
    return await fn(server);
  } finally {
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 1. GET /v1/me (foundation.ts)
// ---------------------------------------------------------------------------------------------

function benchMe(side: Side): Promise<Sample> {
  return inTempDir((dir) =>
    withServer(side, join(dir, "me.db"), {}, async (server) =>
      measure(`${server.url}/v1/me`, { headers: [`Authorization: Bearer ${server.key}`] }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// 2. POST /v1/messages accepted (messaging.ts accept)
// ---------------------------------------------------------------------------------------------

function benchMessages(side: Side): Promise<Sample> {
  return inTempDir(async (dir) => {
    const script = join(dir, "post.lua");
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
    return withServer(side, join(dir, "messages.db"), {}, async (server) => {
      const ordered = await api(server, "POST", "/v1/numbers", { number: "+14155550100" });
      if (ordered.status !== 200) throw new Error(`ordering a number: ${JSON.stringify(ordered.body)}`);
      // Far more than a day's one-off budget (API.md §7.2): lifted, as messaging.ts does.
      const lifted = await api(server, "PATCH", "/v1/settings", { one_off_daily_limit: null });
      if (lifted.status !== 200) throw new Error(`lifting the daily budget: ${JSON.stringify(lifted.body)}`);
      return measure(`${server.url}/v1/messages`, {
        headers: [`Authorization: Bearer ${server.key}`],
        script,
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// 3–4. Redirects and conversions (attribution.ts http)
// ---------------------------------------------------------------------------------------------

const CONTACTS = 100_000;
const LINKS = 1000;
const CLICKS = 20_000;
const VISITORS = 5000;

function benchAttribution(side: Side): Promise<{ redirects: Sample; conversions: Sample }> {
  return inTempDir(async (dir) => {
    const dbPath = join(dir, "attribution.db");
    // The key is announced on the first start only: kept for the restarted server.
    const { key, workspaceId, offerId, offerCode } = await withServer(side, dbPath, {}, async (server) => {
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

    // Contacts, per-recipient links, clicks and visitors, straight into the file (server stopped).
    const now = Date.now();
    const db = new Database(dbPath);
    db.exec("PRAGMA busy_timeout = 10000");
    const insertContact = db.prepare(
      "INSERT INTO contacts (id, workspace_id, phone_number, first_name, email, external_id, source, opted_in, fields, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'import', 1, '{}', ?, ?)",
    );
    const insertLink = db.prepare(
      "INSERT INTO tracked_links (code, workspace_id, offer_id, contact_id, campaign_id, message_id, number_id, created_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
    );
    const insertClick = db.prepare(
      "INSERT INTO clicks (id, workspace_id, offer_id, code, contact_id, campaign_id, message_id, number_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)",
    );
    const insertVisitor = db.prepare(
      "INSERT INTO visitors (workspace_id, vid, contact_id, click_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
    );
    const contactIds: string[] = [];
    const codes: string[] = [offerCode];
    const clickIds: string[] = [];
    const vids: string[] = [];
    const campaignId = idAt(now - 10 * DAY);
    db.transaction(() => {
      for (let i = 0; i < CONTACTS; i++) {
        const at = now - 60 * DAY + i;
        const id = idAt(at);
        contactIds.push(id);
        insertContact.run(
          id,
          workspaceId,
          phoneOf(i),
          `Name${i}`,
          `user${i}@example.com`,
          `crm-${i}`,
          at,
          at,
        );
      }
      for (let i = 0; i < LINKS; i++) {
        const code = `Bench${String(i).padStart(5, "0")}`;
        codes.push(code);
        insertLink.run(code, workspaceId, offerId, contactIds[i * 7], campaignId, idAt(now - DAY), now - DAY);
      }
      for (let i = 0; i < CLICKS; i++) {
        const at = now - 20 * DAY + i * 60_000;
        const id = idAt(at);
        clickIds.push(id);
        const contact = contactIds[(i * 5) % CONTACTS];
        insertClick.run(id, workspaceId, offerId, offerCode, contact, campaignId, idAt(at - 1000), at);
      }
      for (let i = 0; i < VISITORS; i++) {
        const vid = crypto.randomUUID();
        vids.push(vid);
        insertVisitor.run(workspaceId, vid, contactIds[(i * 11) % CONTACTS], clickIds[i % CLICKS], now, now);
      }
    })();
    db.close();

    const redirectScript = join(dir, "redirect.lua");
    writeFileSync(
      redirectScript,
      [
        `local codes = ${lua(codes)}`,
        "local n = 0",
        "request = function()",
        "  n = n + 1",
        '  return wrk.format("GET", "/r/" .. codes[(n % #codes) + 1])',
        "end",
      ].join("\n"),
    );
    // A distinct txn per request (a run prefix, then a counter; the warm-up has its own prefix);
    // identifiers rotate over phone, email, external_id, vcx and vid.
    const conversionScript = (prefix: string) => {
      const file = join(dir, `conversion-${prefix}.lua`);
      writeFileSync(
        file,
        [
          'wrk.method = "POST"',
          'wrk.headers["Content-Type"] = "application/json"',
          `local clicks = ${lua(clickIds.slice(0, 2000))}`,
          `local vids = ${lua(vids.slice(0, 2000))}`,
          "local n = 0",
          "request = function()",
          "  n = n + 1",
          `  local i = (n * 7919) % ${CONTACTS}`,
          "  local kind = n % 5",
          "  local id",
          '  if kind == 0 then id = string.format(\'"phone":"+1415%07d"\', 2000000 + i)',
          '  elseif kind == 1 then id = string.format(\'"email":"USER%d@Example.com"\', i)',
          '  elseif kind == 2 then id = string.format(\'"external_id":"crm-%d"\', i)',
          "  elseif kind == 3 then id = '\"vcx\":\"' .. clicks[(n % #clicks) + 1] .. '\"'",
          "  else id = '\"vid\":\"' .. vids[(n % #vids) + 1] .. '\"' end",
          `  local body = string.format('{"txn":"${prefix}-%d","value":%d.50,"currency":"usd",%s}', n, n % 200, id)`,
          "  return wrk.format(nil, nil, nil, body)",
          "end",
        ].join("\n"),
      );
      return file;
    };

    return withServer(side, dbPath, {}, async (server) => {
      const redirects = measure(`${server.url}/r/x`, { script: redirectScript });
      const auth = [`Authorization: Bearer ${key}`];
      wrk(`${server.url}/v1/conversion`, { seconds: 1, headers: auth, script: conversionScript("warm") });
      const run = wrk(`${server.url}/v1/conversion`, {
        seconds: SECONDS,
        headers: auth,
        script: conversionScript("bench"),
      });
      const conversions: Sample = {
        value: run.rps,
        note: run.non2xx > 0 ? `${fmt(run.non2xx)} non-2xx` : undefined,
      };
      return { redirects, conversions };
    });
  });
}

// ---------------------------------------------------------------------------------------------
// 5. Campaign launch → last DELIVERED (campaigns.ts throughput)
// ---------------------------------------------------------------------------------------------

/** Writes `n` contacts (415/650 numbers, opted in) straight into the server's database. */
function seedContacts(dbPath: string, workspaceId: string, n: number) {
  const db = new Database(dbPath);
  db.exec("PRAGMA busy_timeout = 10000");
  const insert = db.prepare(
    "INSERT INTO contacts (id, workspace_id, phone_number, first_name, last_name, email, external_id, source, opted_in, timezone, fields, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, NULL, NULL, 'import', 1, 'America/Los_Angeles', '{}', ?, ?)",
  );
  const now = Date.now() - DAY;
  const write = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const createdAt = now + Math.floor(i / 10);
      const phone = `+1${i < 5_000_000 ? "415" : "650"}${String(2_000_000 + (i % 5_000_000)).padStart(7, "0")}`;
      insert.run(Bun.randomUUIDv7("hex", createdAt), workspaceId, phone, `P${i}`, createdAt, createdAt);
    }
  });
  for (let i = 0; i < n; i += 20_000) write(i, Math.min(n, i + 20_000));
  db.close();
}

/** Delivered recipients and the campaign's status, read from the database file (read-only). */
function progress(dbPath: string, campaignId: string) {
  const db = new Database(dbPath, { readonly: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    const delivered = (
      db
        .query(
          "SELECT count(*) AS n FROM campaign_recipients WHERE campaign_id = $c AND outcome = 'delivered'",
        )
        .get({ $c: campaignId }) as { n: number }
    ).n;
    return { delivered };
  } finally {
    db.close();
  }
}

interface CampaignSample {
  msgPerSec: Sample;
  seconds: Sample;
}

function benchCampaign(side: Side, n: number): Promise<CampaignSample> {
  return inTempDir((dir) =>
    withServer(side, join(dir, "campaign.db"), { SIMULATED_DELIVERY_MS: "200" }, async (server) => {
      seedContacts(server.dbPath, server.workspaceId, n);
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
      while (performance.now() < deadline) {
        delivered = progress(server.dbPath, campaignId).delivered;
        if (delivered >= n) break;
        await Bun.sleep(200);
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
  values: Record<Side["name"], Sample[]>;
}

const figure = (name: string, higherIsBetter = true, digits = fmt): Figure => ({
  name,
  higherIsBetter,
  digits,
  values: { BEFORE: [], AFTER: [] },
});
const me = figure("`GET /v1/me` req/s");
const meRatio = figure("`GET /v1/me` ÷ hello of the same round", true, (n) =>
  Number.isFinite(n) ? n.toFixed(2) : "—",
);
const messages = figure("`POST /v1/messages` accepted req/s");
const redirects = figure("`GET /r/{code}` redirects/s");
const conversions = figure("`POST /v1/conversion` req/s");
const campaignRate = figure(`campaign, ${fmt(CAMPAIGN)} recipients: launch → last DELIVERED, msg/s`);
const campaignSecs = figure(`campaign, ${fmt(CAMPAIGN)} recipients: launch → last DELIVERED, s`, false, fmt1);
const figures = [me, meRatio, messages, redirects, conversions, campaignRate, campaignSecs];
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
for (const side of sides) {
  const stat = statSync(side.binary);
  log(`${side.name}: ${side.binary} (${fmt(stat.size / 1e6)} MB, modified ${stat.mtime.toISOString()})`);
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
    const result = await attempt("POST /v1/messages", side, () => benchMessages(side));
    messages.values[side.name].push(result instanceof Error ? failed(result) : result);
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
const rows = figures
  .filter((f) => f.values.BEFORE.length > 0)
  .map((f) => {
    const before = median(f.values.BEFORE.map((s) => s.value));
    const after = median(f.values.AFTER.map((s) => s.value));
    const ratio = after / before;
    const within = !Number.isFinite(ratio)
      ? "—"
      : (f.higherIsBetter ? ratio >= 0.9 : ratio <= 1.1)
        ? "yes"
        : "**no**";
    return `| ${f.name} | ${f.digits(before)} | ${f.digits(after)} | ${Number.isFinite(ratio) ? ratio.toFixed(2) : "—"} | ${within} | ${cell(f, f.values.BEFORE)} | ${cell(f, f.values.AFTER)} |`;
  });
console.log(
  [
    `A/B run of ${startedAt.toISOString().slice(0, 16)}Z: BEFORE \`${sides[0].binary}\`, AFTER \`${sides[1].binary}\`; ` +
      `${ROUNDS} round${ROUNDS > 1 ? "s" : ""}, each figure measured BEFORE then AFTER on a fresh database and server; ` +
      `wrk -t1 -c64 -d${SECONDS}s after a 1 s warm-up` +
      (run("campaign")
        ? `; campaign of ${fmt(CAMPAIGN)} recipients, simulated carrier (200 ms delivery).`
        : "."),
    "",
    "| figure | BEFORE median | AFTER median | AFTER/BEFORE | within 10 % | BEFORE per round | AFTER per round |",
    "|---|---|---|---|---|---|---|",
    ...rows,
    "",
    `Reference, raw \`Bun.serve\` hello req/s once a round: ${hello.map(fmt).join(" / ")} (median ${fmt(median(hello))}); ` +
      `load average (1 min) at each round's start: ${loads.join(" / ")}.`,
  ].join("\n"),
);
