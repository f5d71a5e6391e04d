/**
 * Campaign benchmark (`npm run bench campaigns`, or `bun scripts/bench/campaigns.ts [throughput]
 * [scale] [preview] [accept]`), against the built binary `dist/outreach` (BENCH_SOURCE=1: from
 * source):
 *  1. throughput: a 100,000-recipient SMS campaign on the simulated carrier: launch → every
 *     recipient queued (its row written with its outcome, as the recipients list and `stats` show
 *     it), launch → every recipient's message written, and launch → last DELIVERED (msg/s
 *     sustained).
 *  2. scale: 1,000,000 recipients: completes, peak RSS of the server, and `GET /v1/me` sampled
 *     every 25 ms by probe.ts, a process of its own, while the campaign resolves and dispatches (p50/p99/max).
 *  3. preview: `GET /v1/campaigns/{id}/preview` first page on the 1,000,000-contact audience.
 *  4. accept: the messaging bench's `POST /v1/messages` versus raw Bun.serve hello, same run, in
 *     ACCEPT_ROUNDS pairs (default 5) on fresh servers; the verdict is the median ratio.
 *
 * Audiences are written straight into the database file with bun:sqlite before the campaign is
 * created (the API import would dominate the run). Contacts have California numbers (no state
 * rules) and the campaign sets quiet_hours {enabled:false}, so nothing is deferred whatever the
 * hour of the run. N_THROUGHPUT / N_SCALE override the sizes; FOLLOW_LIMIT_S stops following a
 * campaign after that many seconds (the figures then say how far it got).
 */

import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "bun";
import { ensureBinary, rssMb, type StartedServer, startBinary } from "./support";

const N_THROUGHPUT = Number(process.env.N_THROUGHPUT ?? 100_000);
const N_SCALE = Number(process.env.N_SCALE ?? 1_000_000);
const parts = process.argv.slice(2);
const run = (part: string) => parts.length === 0 || parts.includes(part);
const fromSource = process.env.BENCH_SOURCE === "1";
if (!fromSource) ensureBinary();

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
const load = () => spawnSync(["cat", "/proc/loadavg"]).stdout.toString().split(" ").slice(0, 3).join(" ");

async function api(server: StartedServer, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Writes `n` contacts (415/650 numbers, opted in) straight into the server's database. */
function seedContacts(dbPath: string, workspaceId: string, n: number) {
  const db = new Database(dbPath);
  db.exec("PRAGMA busy_timeout = 10000");
  const insert = db.prepare(
    "INSERT INTO contacts (id, workspace_id, phone_number, first_name, last_name, email, external_id, source, opted_in, timezone, fields, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, NULL, NULL, 'import', 1, 'America/Los_Angeles', '{}', ?, ?)",
  );
  const now = Date.now() - 86_400_000;
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

/** A server with `n` contacts, one number and a draft campaign to everyone. */
async function setUp(n: number, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "outreach-bench-campaigns-"));
  const server = await startBinary({
    dbPath: join(dir, "bench.db"),
    fromSource,
    env: {
      SIMULATED_DELIVERY_MS: "200",
      ...(process.env.WORKER_THREAD ? { WORKER_THREAD: process.env.WORKER_THREAD } : {}),
      ...env,
    },
  });
  const t0 = performance.now();
  seedContacts(server.dbPath, server.workspaceId, n);
  const seedSecs = (performance.now() - t0) / 1000;
  const ordered = await api(server, "POST", "/v1/numbers", { number: "+14155550100" });
  if (ordered.status !== 200) throw new Error(JSON.stringify(ordered.body));
  const segment = await api(server, "POST", "/v1/segments", { name: "Everyone", rules: { all: [] } });
  const created = await api(server, "POST", "/v1/campaigns", {
    name: "Bench",
    message: { body: "Hi {{first_name|there}}, spring sale this week. Reply STOP to opt out" },
    audience: { segment_ids: [(segment.body.segment as { id: string }).id] },
    quiet_hours: { enabled: false },
  });
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
  return { dir, server, campaignId: (created.body.campaign as { id: string }).id, seedSecs };
}

/** Progress of the campaign, read from the database file (read-only connection). */
function progress(dbPath: string, campaignId: string) {
  const db = new Database(dbPath, { readonly: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    const one = (sql: string) => (db.query(sql).get({ $c: campaignId }) as { n: number }).n;
    return {
      status: (
        db.query("SELECT status FROM campaigns WHERE id = $c").get({ $c: campaignId }) as { status: string }
      ).status,
      // Recipient rows written: each carries its outcome from the resolution on (`queued`,
      // `deferred` or `skipped`), as GET /v1/campaigns/{id}/recipients and `stats` show it.
      resolved: one("SELECT count(*) AS n FROM campaign_recipients WHERE campaign_id = $c"),
      queued: one(
        "SELECT count(*) AS n FROM campaign_recipients WHERE campaign_id = $c AND message_id IS NOT NULL",
      ),
      delivered: one(
        "SELECT count(*) AS n FROM campaign_recipients WHERE campaign_id = $c AND outcome = 'delivered'",
      ),
    };
  } finally {
    db.close();
  }
}

/**
 * Launches and follows the campaign to the last delivery, sampling RSS and (optionally)
 * `GET /v1/me` meanwhile.
 */
async function launchAndFollow(server: StartedServer, campaignId: string, n: number, sampleMe: boolean) {
  let rssPeak = rssMb(server.proc.pid);
  let done = false;
  const sampler = (async () => {
    while (!done) {
      rssPeak = Math.max(rssPeak, rssMb(server.proc.pid));
      await Bun.sleep(25);
    }
  })();
  // GET /v1/me from a process of its own (see probe.ts): progress() below blocks this thread.
  const probe = sampleMe
    ? Bun.spawn([process.execPath, join(import.meta.dir, "probe.ts"), server.url, server.key, "25"], {
        stdout: "pipe",
        stderr: "inherit",
      })
    : null;
  const launchedAt = performance.now();
  const launched = await api(server, "POST", `/v1/campaigns/${campaignId}/launch`);
  if (launched.status !== 200) throw new Error(JSON.stringify(launched.body));
  let resolvedAt = 0;
  let resolvedStats: unknown = null;
  let queuedAt = 0;
  let completedAt = 0;
  let state = progress(server.dbPath, campaignId);
  const limitS = Number(process.env.FOLLOW_LIMIT_S ?? 0);
  const deadline = launchedAt + (limitS > 0 ? limitS * 1000 : Math.max(600_000, n * 2));
  while (performance.now() < deadline) {
    state = progress(server.dbPath, campaignId);
    const t = performance.now();
    if (!resolvedAt && state.resolved >= n) {
      resolvedAt = t;
      // What a client sees at that moment.
      resolvedStats = (await api(server, "GET", `/v1/campaigns/${campaignId}`)).body.campaign;
    }
    if (!queuedAt && state.queued >= n) queuedAt = t;
    if (!completedAt && state.status === "completed") completedAt = t;
    if (state.delivered >= n) break;
    await Bun.sleep(200);
  }
  const deliveredAt = performance.now();
  done = true;
  await sampler;
  let meTimes: number[] = [];
  if (probe) {
    probe.kill("SIGTERM");
    meTimes = JSON.parse(await new Response(probe.stdout).text()) as number[];
  }
  const secs = (t: number) => (t ? (t - launchedAt) / 1000 : Number.NaN);
  return {
    followedSecs: (deliveredAt - launchedAt) / 1000,
    queued: state.queued,
    resolvedSecs: secs(resolvedAt),
    resolvedStats: (resolvedStats as { stats?: Record<string, unknown> } | null)?.stats ?? null,
    queuedSecs: secs(queuedAt),
    completedSecs: secs(completedAt),
    deliveredSecs: state.delivered >= n ? secs(deliveredAt) : Number.NaN,
    delivered: state.delivered,
    rssPeak,
    meTimes,
  };
}

const out: string[] = [
  `Campaigns benchmark, ${new Date().toISOString().slice(0, 16)}Z, ${fromSource ? "from source" : "dist/outreach"}, load average at start ${load()}`,
  "",
];

if (run("throughput")) {
  const { dir, server, campaignId, seedSecs } = await setUp(N_THROUGHPUT);
  const r = await launchAndFollow(server, campaignId, N_THROUGHPUT, true);
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
  out.push(
    `1. ${fmt(N_THROUGHPUT)} recipients (seeded in ${seedSecs.toFixed(1)} s), simulated carrier (200 ms delivery), quiet hours off, load average after ${load()}:`,
    `   - launch → every recipient resolved with its outcome (\`queued\` in the recipients list and \`stats\`): ${r.resolvedSecs.toFixed(1)} s (target ≤ 20 s); stats then: ${JSON.stringify(r.resolvedStats && { recipients: r.resolvedStats.recipients, queued: r.resolvedStats.queued, sent: r.resolvedStats.sent, delivered: r.resolvedStats.delivered })}`,
    `   - launch → every recipient's message written: ${r.queuedSecs.toFixed(1)} s`,
    `   - launch → completed: ${r.completedSecs.toFixed(1)} s; launch → last DELIVERED: ${r.deliveredSecs.toFixed(1)} s = ${fmt(N_THROUGHPUT / r.deliveredSecs)} msg/s (target ≥ 5,000)`,
    `   - peak RSS ${fmt(r.rssPeak)} MB`,
    `   - GET /v1/me meanwhile (${r.meTimes.length} samples every 25 ms): p50 ${quantile(r.meTimes, 0.5).toFixed(1)} ms, p99 ${quantile(r.meTimes, 0.99).toFixed(1)} ms, max ${Math.max(...r.meTimes).toFixed(0)} ms`,
  );
}

if (run("scale") || run("preview")) {
  const { dir, server, campaignId, seedSecs } = await setUp(N_SCALE);
  // 3. Preview first page on the whole audience, before the launch (cold, then repeated).
  const previewTimes: number[] = [];
  let previewTotal = 0;
  for (let i = 0; i < 6; i++) {
    const t = performance.now();
    const res = await api(server, "GET", `/v1/campaigns/${campaignId}/preview?limit=50`);
    previewTimes.push(performance.now() - t);
    previewTotal = (res.body.preview as { recipients: number }).recipients;
  }
  out.push(
    `3. GET /v1/campaigns/{id}/preview?limit=50 on ${fmt(previewTotal)} contacts: first ${previewTimes[0].toFixed(0)} ms, then median ${quantile(previewTimes.slice(1), 0.5).toFixed(0)} ms (target ≤ 300 ms)`,
  );
  if (run("scale")) {
    const r = await launchAndFollow(server, campaignId, N_SCALE, true);
    out.push(
      `2. ${fmt(N_SCALE)} recipients (seeded in ${seedSecs.toFixed(0)} s), load average after ${load()}:`,
      `   - launch → every recipient resolved ${r.resolvedSecs.toFixed(0)} s, every message written ${r.queuedSecs.toFixed(0)} s, completed ${r.completedSecs.toFixed(0)} s, last DELIVERED ${r.deliveredSecs.toFixed(0)} s (${fmt(r.delivered)} delivered, ${fmt(r.delivered / r.deliveredSecs)} msg/s)`,
      `   - followed for ${r.followedSecs.toFixed(0)} s: ${fmt(r.queued)} queued, ${fmt(r.delivered)} delivered${[r.queuedSecs, r.completedSecs, r.deliveredSecs].some(Number.isNaN) ? " (NaN above: not reached within FOLLOW_LIMIT_S)" : ""}`,
      `   - peak RSS ${fmt(r.rssPeak)} MB (target ≤ 500 MB)`,
      `   - GET /v1/me during the run (${r.meTimes.length} samples every 25 ms): p50 ${quantile(r.meTimes, 0.5).toFixed(1)} ms, p99 ${quantile(r.meTimes, 0.99).toFixed(1)} ms, max ${Math.max(...r.meTimes).toFixed(0)} ms (target p99 < 50 ms)`,
    );
  }
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}

if (run("accept")) {
  const result = spawnSync([process.execPath, join(import.meta.dir, "messaging.ts"), "accept"], {
    // Five hello-then-accept pairs by default: the verdict is their median ratio.
    env: {
      ...process.env,
      BENCH_BINARY: fromSource ? "0" : "1",
      SKIP_BUILD: "1",
      ACCEPT_ROUNDS: process.env.ACCEPT_ROUNDS ?? "5",
    },
    stdout: "pipe",
    stderr: "inherit",
  });
  const lines = [
    ...new Set(
      result.stdout
        .toString()
        .split("\n")
        .filter((line) => /hello|accepted/i.test(line)),
    ),
  ];
  out.push(
    "4. POST /v1/messages (scripts/bench/messaging.ts accept, target ≥ 0.06 × hello, median of the rounds):",
    ...lines.map((l) => `   ${l.trim()}`),
  );
}

console.log(out.join("\n"));
