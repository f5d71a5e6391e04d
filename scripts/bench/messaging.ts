/**
 * Messaging benchmark (`node_modules/.bin/bun scripts/bench/messaging.ts [accept] [pipeline] [search]`):
 *  1. accept: wrk against a raw Bun.serve hello server, then against `POST /v1/messages` (worker on,
 *     same run): accepted req/s and the ratio to hello; ACCEPT_ROUNDS=N repeats the pair on fresh
 *     servers and reports the median ratio.
 *  2. pipeline: 100,000 messages accepted through `POST /v1/messages` with the worker off, then the
 *     server restarts with the worker on: time until every message is DELIVERED (simulated carrier).
 *  3. search: 100,000 threads / 1,000,000 messages seeded into the database file, then
 *     `GET /v1/conversations?q=` latency for name, phone and message-text queries.
 * The server runs as a child process: dist/outreach if BENCH_BINARY=1 and built, else bun src/main.ts.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Subprocess, spawn } from "bun";
import { freePort, startHelloServer, wrk } from "./support";

const root = join(import.meta.dir, "..", "..");
const binary = join(root, "dist", "outreach");
const PIPELINE_MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100_000);
/** Hello-then-accept pairs of the accept bench (ACCEPT_ROUNDS, default 1). */
const ACCEPT_ROUNDS = Math.max(1, Number(process.env.ACCEPT_ROUNDS ?? 1));
const THREADS = Number(process.env.BENCH_THREADS ?? 100_000);
const MESSAGES_PER_THREAD = 10;
const FROM = "+14155550100";

interface Child {
  proc: Subprocess;
  url: string;
  logPath: string;
}

async function startServer(dbPath: string, env: Record<string, string> = {}): Promise<Child> {
  const port = await freePort();
  const command =
    process.env.BENCH_BINARY === "1" && existsSync(binary)
      ? [binary, "serve", "--port", String(port), "--db", dbPath]
      : [
          process.execPath,
          // BENCH_CPU_PROF=<dir> (from source only): a markdown CPU profile of the server, written on exit.
          ...(process.env.BENCH_CPU_PROF
            ? ["--cpu-prof-md", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
            : []),
          "run",
          "src/main.ts",
          "serve",
          "--port",
          String(port),
          "--db",
          dbPath,
        ];
  const logPath = `${dbPath}.${port}.log`;
  const proc = spawn(command, {
    cwd: root,
    env: { ...process.env, RATE_LIMIT_RPS: "0", LOG_LEVEL: "error", ...env },
    stdout: Bun.file(logPath),
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    try {
      if ((await fetch(`${url}/healthz`)).status === 200) return { proc, url, logPath };
    } catch {
      // not up yet
    }
    await Bun.sleep(20);
  }
  throw new Error("server did not start");
}

async function stop(child: Child) {
  child.proc.kill("SIGTERM");
  await child.proc.exited;
}

function keyOf(child: Child): string {
  const key = readFileSync(child.logPath, "utf8").match(/opk_[0-9A-Za-z]{36}/)?.[0];
  if (!key) throw new Error("no bootstrap key announced");
  return key;
}

async function orderSender(child: Child, key: string) {
  const answer = await fetch(`${child.url}/v1/numbers`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ number: FROM }),
  });
  if (answer.status !== 200) throw new Error(`ordering a number failed: ${await answer.text()}`);
  // The bench sends far more than a day's one-off budget (API.md §7.2): lift it.
  const lifted = await fetch(`${child.url}/v1/settings`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ one_off_daily_limit: null }),
  });
  if (lifted.status !== 200) throw new Error(`lifting the daily budget failed: ${await lifted.text()}`);
}

const results: string[] = [];
const report = (line: string) => {
  console.log(line);
  results.push(line);
};

// 1. Accepted req/s against the hello baseline: ACCEPT_ROUNDS pairs (hello, then a fresh server),
// each pair's ratio reported, and their median (one pair moves ±15 % with the host).
async function benchAccept(dir: string) {
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
  const ratios: number[] = [];
  for (let round = 1; round <= ACCEPT_ROUNDS; round++) {
    const hello = await startHelloServer();
    const baseline = wrk(hello.url, { seconds: 10, connections: 64 });
    await hello.stop();
    const child = await startServer(join(dir, `accept-${round}.db`));
    const key = keyOf(child);
    await orderSender(child, key);
    const accepted = wrk(`${child.url}/v1/messages`, {
      seconds: 10,
      connections: 64,
      headers: [`Authorization: Bearer ${key}`],
      script,
    });
    await stop(child);
    const ratio = accepted.rps / baseline.rps;
    ratios.push(ratio);
    const label = ACCEPT_ROUNDS > 1 ? ` (round ${round})` : "";
    report(`- raw Bun.serve hello${label}: ${Math.round(baseline.rps)} req/s (wrk, 64 connections, 10 s)`);
    report(
      `- POST /v1/messages accepted${label}: ${Math.round(accepted.rps)} req/s (${accepted.non2xx} non-2xx), ` +
        `${ratio.toFixed(3)} × hello (target ≥ 0.06 ×, set by the campaigns issue; the messaging issue asked 0.25 ×); worker sending at the same time`,
    );
  }
  if (ACCEPT_ROUNDS > 1) {
    const sorted = [...ratios].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    const median =
      sorted.length % 2 ? sorted[mid] : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
    report(
      `- accepted vs hello over ${ACCEPT_ROUNDS} rounds: median ${(median as number).toFixed(3)} ×, ` +
        `range ${(sorted[0] as number).toFixed(3)}–${(sorted.at(-1) as number).toFixed(3)} ×, ` +
        `${ratios.filter((r) => r >= 0.06).length} of ${ACCEPT_ROUNDS} at or above 0.06 ×`,
    );
  }
}

// 2. Created → DELIVERED over PIPELINE_MESSAGES.
async function benchPipeline(dir: string) {
  const dbPath = join(dir, "pipeline.db");
  let child = await startServer(dbPath, { WORKER: "false" });
  const key = keyOf(child);
  await orderSender(child, key);
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  let next = 0;
  const acceptStarted = performance.now();
  const post = async () => {
    while (next < PIPELINE_MESSAGES) {
      const i = next++;
      const answer = await fetch(`${child.url}/v1/messages`, {
        method: "POST",
        headers,
        body: JSON.stringify({ to: `+1415${String(2000000 + i).padStart(7, "0")}`, body: `Hello ${i}` }),
      });
      if (answer.status !== 200) throw new Error(`POST /v1/messages answered ${answer.status}`);
    }
  };
  await Promise.all(Array.from({ length: 64 }, post));
  const acceptSeconds = (performance.now() - acceptStarted) / 1000;
  await stop(child);

  const db = new Database(dbPath, { readonly: true });
  const delivered = () =>
    (db.query("SELECT count(*) AS n FROM messages WHERE status = 'DELIVERED'").get() as { n: number }).n;
  const started = performance.now();
  child = await startServer(dbPath);
  const samples: { t: number; n: number }[] = [];
  let n = 0;
  while (n < PIPELINE_MESSAGES && performance.now() - started < 600_000) {
    await Bun.sleep(250);
    n = delivered();
    samples.push({ t: (performance.now() - started) / 1000, n });
  }
  const seconds = (performance.now() - started) / 1000;
  await stop(child);
  db.close();
  // Sustained rate: the slowest 5-second window after the first delivery.
  let slowest = Number.POSITIVE_INFINITY;
  const firstDelivery = samples.find((s) => s.n > 0)?.t ?? 0;
  for (const a of samples) {
    if (a.t < firstDelivery) continue;
    const b = samples.find((s) => s.t >= a.t + 5);
    if (!b || b.n >= PIPELINE_MESSAGES) break;
    slowest = Math.min(slowest, (b.n - a.n) / (b.t - a.t));
  }
  report(
    `- ${PIPELINE_MESSAGES} one-off messages accepted over HTTP in ${acceptSeconds.toFixed(1)} s ` +
      `(${Math.round(PIPELINE_MESSAGES / acceptSeconds)} msg/s, 64 concurrent clients, worker off)`,
  );
  report(
    `- created → DELIVERED: ${n} of ${PIPELINE_MESSAGES} delivered ${seconds.toFixed(1)} s after the server started ` +
      `(boot included): ${Math.round(n / seconds)} msg/s overall` +
      (Number.isFinite(slowest) ? `, slowest 5 s window ${Math.round(slowest)} msg/s` : "") +
      " (target ≥ 5,000 msg/s)",
  );
}

// 3. Conversation search over THREADS threads / THREADS × 10 messages.
async function benchSearch(dir: string) {
  const dbPath = join(dir, "search.db");
  let child = await startServer(dbPath, { WORKER: "false" });
  const key = keyOf(child);
  await stop(child);
  const db = new Database(dbPath);
  const workspaceId = (db.query("SELECT id FROM workspaces LIMIT 1").get() as { id: string }).id;
  const words = (
    "order shipped thanks question delivery tomorrow price refund coupon store hours pickup " +
    "appointment reschedule confirm cancel address payment invoice receipt weekend sale discount"
  ).split(" ");
  const firstNames = ["Ana", "Ben", "Chloe", "Dev", "Elif", "Femi", "Gus", "Hana", "Ivan", "Jade"];
  const seeded = performance.now();
  const now = Date.now();
  const insertContact = db.prepare(
    "INSERT INTO contacts (id, workspace_id, phone_number, first_name, last_name, source, opted_in, fields, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'import', 1, '{}', ?, ?)",
  );
  const insertConversation = db.prepare(
    "INSERT INTO conversations (id, workspace_id, contact_id, status, needs_attention, agent_paused, last_message_at, created_at, updated_at) VALUES (?, ?, ?, 'open', ?, 0, ?, ?, ?)",
  );
  const insertMessage = db.prepare(
    "INSERT INTO messages (id, workspace_id, direction, sender, from_number, to_number, body, status, segments, encoding, contact_id, conversation_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, 'GSM-7', ?, ?, ?, ?)",
  );
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const contactId = Bun.randomUUIDv7();
      const conversationId = Bun.randomUUIDv7();
      const phone = `+1212${String(1000000 + i).padStart(7, "0")}`;
      const at = now - (THREADS - i) * 1000;
      insertContact.run(contactId, workspaceId, phone, firstNames[i % 10], `Seed${i}`, at, at);
      insertConversation.run(conversationId, workspaceId, contactId, i % 7 === 0 ? 1 : 0, at, at, at);
      for (let m = 0; m < MESSAGES_PER_THREAD; m++) {
        const inbound = m % 2 === 0;
        const body = `${words[(i + m) % words.length]} ${words[(i * 7 + m * 3) % words.length]} message ${i}-${m}${
          i % 1000 === 0 && m === 3 ? " zebracorn" : ""
        }`;
        insertMessage.run(
          Bun.randomUUIDv7(),
          workspaceId,
          inbound ? "inbound" : "outbound",
          inbound ? "contact" : "human",
          inbound ? phone : FROM,
          inbound ? FROM : phone,
          body,
          inbound ? "RECEIVED" : "DELIVERED",
          contactId,
          conversationId,
          at - (MESSAGES_PER_THREAD - m),
          at,
        );
      }
    }
  });
  for (let i = 0; i < THREADS; i += 5000) batch(i, Math.min(THREADS, i + 5000));
  db.close();
  const seedSeconds = (performance.now() - seeded) / 1000;

  child = await startServer(dbPath, { WORKER: "false" });
  const headers = { authorization: `Bearer ${key}` };
  const time = async (q: string) => {
    const url = `${child.url}/v1/conversations?q=${encodeURIComponent(q)}`;
    await fetch(url, { headers }); // warm
    const times: number[] = [];
    let total = 0;
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      const answer = await fetch(url, { headers });
      const body = (await answer.json()) as { total: number };
      times.push(performance.now() - t0);
      total = body.total;
    }
    times.sort((a, b) => a - b);
    return { q, total, median: times[10], p95: times[18], max: times[19] };
  };
  const queries = [
    "zebracorn",
    "refund",
    "refund coupon",
    "Chloe",
    "Seed4242",
    "2121004242",
    "nothingmatches",
  ];
  report(
    `- search corpus: ${THREADS} threads, ${THREADS * MESSAGES_PER_THREAD} messages (seeded in ${seedSeconds.toFixed(0)} s)`,
  );
  for (const q of queries) {
    const r = await time(q);
    report(
      `  - q=${JSON.stringify(q)}: ${r.total} threads, median ${r.median.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms, max ${r.max.toFixed(1)} ms`,
    );
  }
  await stop(child);
}

const wanted = process.argv.slice(2);
const run = (name: string) => wanted.length === 0 || wanted.includes(name);
const dir = mkdtempSync(join(tmpdir(), "outreach-bench-messaging-"));
try {
  if (run("accept")) await benchAccept(dir);
  if (run("pipeline")) await benchPipeline(dir);
  if (run("search")) await benchSearch(dir);
} finally {
  if (process.env.BENCH_KEEP) console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
console.log(`\n${results.join("\n")}`);
