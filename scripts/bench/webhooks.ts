/**
 * Webhook delivery benchmark (`bun scripts/bench/webhooks.ts`):
 *  1. drain: 100,000 events in the outbox for one endpoint; the server is started and delivers
 *     them to a local receiver. Reports deliveries/s and the server's RSS while draining.
 *  2. crash: the receiver is down, the first attempts fail and their retries are scheduled; the
 *     server is SIGKILLed, restarted, and the receiver comes back. Every event must arrive once,
 *     every attempt must be in the log.
 *  3. kill while draining: the server is SIGKILLed mid-drain with the receiver up, and restarted;
 *     counts events that arrived twice (the attempt in flight at the kill, at-least-once).
 * The server runs as a child process (dist/outreach if BENCH_BINARY=1 and built, else bun src/main.ts).
 */

import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Subprocess, spawn } from "bun";
import { count, eq } from "drizzle-orm";
import { openDatabase } from "../../src/db/client";
import { webhookAttempts, webhookDeliveries } from "../../src/db/schema";
import { emitEvent } from "../../src/domain/events";
import { createWebhook } from "../../src/domain/webhooks/webhooks";
import { prepareDatabase } from "../../src/server";

const root = join(import.meta.dir, "..", "..");
const binary = join(root, "dist", "outreach");
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const CRASH_EVENTS = Number(process.env.BENCH_CRASH_EVENTS ?? 2_000);

async function freePort(): Promise<number> {
  const server = Bun.serve({ port: 0, fetch: () => new Response("") });
  const port = server.port as number;
  server.stop(true);
  return port;
}

function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** CPU seconds (user + system) a process has used (Linux). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** A receiver counting requests per webhook-id. */
function startReceiver(port = 0) {
  const seen = new Map<string, number>();
  let total = 0;
  let first = 0;
  let last = 0;
  const server = Bun.serve({
    port,
    hostname: "127.0.0.1",
    async fetch(request) {
      await request.arrayBuffer();
      const id = request.headers.get("webhook-id") ?? "";
      seen.set(id, (seen.get(id) ?? 0) + 1);
      total++;
      last = performance.now();
      if (!first) first = last;
      return new Response("ok");
    },
  });
  return {
    port: server.port as number,
    url: `http://127.0.0.1:${server.port}/hook`,
    stats: () => ({
      total,
      unique: seen.size,
      twice: [...seen.values()].filter((n) => n > 1).length,
      first,
      last,
    }),
    stop: () => server.stop(true),
  };
}

/** A fresh database with one workspace, one `*` subscription to `url`, and `n` events in the outbox. */
async function seed(dir: string, url: string, n: number) {
  const dbPath = join(dir, "bench.db");
  const handle = await prepareDatabase({ dbPath }, () => {});
  const workspace = handle.sqlite!.query("SELECT id FROM workspaces LIMIT 1").get() as { id: string };
  await createWebhook(handle.db, workspace.id, { url, events: ["*"] });
  const now = Date.now();
  for (let done = 0; done < n; done += 1000) {
    await handle.db.transaction(async (tx) => {
      for (let i = done; i < Math.min(n, done + 1000); i++) {
        await emitEvent(
          tx,
          workspace.id,
          "message.delivered",
          { id: `m-${i}`, status: "DELIVERED", body: "hello" },
          now,
        );
      }
    });
  }
  await handle.close();
  return dbPath;
}

/** Cost of one emitEvent (outbox row + fan-out) in a workspace with no subscription and with one. */
async function fanOutCost() {
  const dir = mkdtempSync(join(tmpdir(), "outreach-bench-fanout-"));
  const handle = await prepareDatabase({ dbPath: join(dir, "fanout.db") }, () => {});
  const workspace = handle.sqlite!.query("SELECT id FROM workspaces LIMIT 1").get() as { id: string };
  const n = 20_000;
  const perEvent = async () => {
    const started = performance.now();
    for (let done = 0; done < n; done += 1000) {
      await handle.db.transaction(async (tx) => {
        for (let i = 0; i < 1000; i++)
          await emitEvent(tx, workspace.id, "message.sent", { id: `m-${done + i}` });
      });
    }
    return Math.round(((performance.now() - started) * 1000) / n);
  };
  const none = await perEvent();
  await createWebhook(handle.db, workspace.id, { url: "http://127.0.0.1:9/hook", events: ["*"] });
  const one = await perEvent();
  await handle.close();
  rmSync(dir, { recursive: true, force: true });
  const result = { emit_us_no_subscription: none, emit_us_one_subscription: one };
  console.log("fan-out", JSON.stringify(result));
  return result;
}

async function startServer(dbPath: string): Promise<Subprocess> {
  const port = await freePort();
  const command =
    process.env.BENCH_BINARY === "1" && existsSync(binary)
      ? [binary, "serve", "--port", String(port), "--db", dbPath]
      : [
          process.execPath,
          ...(process.env.BENCH_PROFILE_DIR
            ? ["--cpu-prof-md", `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]
            : []),
          "run",
          join(root, "src", "main.ts"),
          "serve",
          "--port",
          String(port),
          "--db",
          dbPath,
        ];
  const proc = spawn(command, {
    env: { ...process.env, RATE_LIMIT_RPS: "0", LOG_LEVEL: "error", WEBHOOK_ALLOW_PRIVATE: "true" },
    stdout: "ignore",
    stderr: "inherit",
  });
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return proc;
    } catch {
      await Bun.sleep(20);
    }
  }
  throw new Error("server did not start");
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, label: string) {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await Bun.sleep(20);
  }
}

async function deliveryCounts(dbPath: string) {
  const handle = openDatabase(dbPath, { readonly: true });
  try {
    const byStatus = await handle.db
      .select({ status: webhookDeliveries.status, n: count() })
      .from(webhookDeliveries)
      .groupBy(webhookDeliveries.status)
      .all();
    const attempts = await handle.db
      .select({ status: webhookAttempts.status, n: count() })
      .from(webhookAttempts)
      .groupBy(webhookAttempts.status)
      .all();
    const succeededAttempts =
      (
        await handle.db
          .select({ n: count() })
          .from(webhookAttempts)
          .where(eq(webhookAttempts.status, "succeeded"))
          .get()
      )?.n ?? 0;
    return {
      deliveries: Object.fromEntries(byStatus.map((r) => [r.status, r.n])) as Record<string, number>,
      attempts: Object.fromEntries(attempts.map((r) => [r.status, r.n])) as Record<string, number>,
      succeededAttempts,
    };
  } finally {
    handle.close();
  }
}

async function drain() {
  const dir = mkdtempSync(join(tmpdir(), "outreach-bench-webhooks-"));
  const receiver = startReceiver();
  const seedStart = performance.now();
  const dbPath = await seed(dir, receiver.url, EVENTS);
  console.log(
    `seeded ${EVENTS} events (+ deliveries and jobs) in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
  );
  const server = await startServer(dbPath);
  const rss: number[] = [];
  const sampler = setInterval(() => rss.push(rssMb(server.pid)), 500);
  await waitFor(() => receiver.stats().total > 0, 60_000, "the first delivery");
  const cpuStart = cpuSeconds(server.pid);
  await waitFor(() => receiver.stats().total >= EVENTS, 600_000, "the backlog to drain");
  const cpuUsed = cpuSeconds(server.pid) - cpuStart;
  clearInterval(sampler);
  const stats = receiver.stats();
  const seconds = (stats.last - stats.first) / 1000;
  await Bun.sleep(300);
  const counts = await deliveryCounts(dbPath);
  server.kill("SIGTERM");
  await server.exited;
  receiver.stop();
  rmSync(dir, { recursive: true, force: true });
  const quarter = Math.max(1, Math.floor(rss.length / 4));
  const result = {
    events: EVENTS,
    seconds: Number(seconds.toFixed(2)),
    deliveries_per_s: Math.round(stats.total / seconds),
    server_cpu_s: Number(cpuUsed.toFixed(1)),
    deliveries_per_server_cpu_s: Math.round(stats.total / cpuUsed),
    load_average: (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" "),
    received: stats.total,
    delivered_twice: stats.twice,
    deliveries: counts.deliveries,
    rss_mb: {
      first_quarter_max: Math.round(Math.max(...rss.slice(0, quarter))),
      last_quarter_max: Math.round(Math.max(...rss.slice(-quarter))),
      max: Math.round(Math.max(...rss)),
      samples: rss.length,
    },
  };
  console.log("drain", JSON.stringify(result));
  return result;
}

async function crash() {
  const dir = mkdtempSync(join(tmpdir(), "outreach-bench-webhooks-crash-"));
  const receiverPort = await freePort();
  const dbPath = await seed(dir, `http://127.0.0.1:${receiverPort}/hook`, CRASH_EVENTS);
  // 1. Receiver down: every first attempt fails; retries are scheduled ~5 s out.
  let server = await startServer(dbPath);
  await waitFor(
    async () => ((await deliveryCounts(dbPath)).attempts.failed ?? 0) >= CRASH_EVENTS,
    120_000,
    "first attempts",
  );
  const beforeKill = await deliveryCounts(dbPath);
  // 2. SIGKILL mid-schedule, receiver back, restart.
  server.kill("SIGKILL");
  await server.exited;
  const receiver = startReceiver(receiverPort);
  server = await startServer(dbPath);
  await waitFor(
    async () => ((await deliveryCounts(dbPath)).deliveries.succeeded ?? 0) >= CRASH_EVENTS,
    120_000,
    "redelivery",
  );
  await Bun.sleep(500);
  const after = await deliveryCounts(dbPath);
  const stats = receiver.stats();
  server.kill("SIGTERM");
  await server.exited;
  receiver.stop();
  rmSync(dir, { recursive: true, force: true });
  const result = {
    events: CRASH_EVENTS,
    failed_attempts_before_kill: beforeKill.attempts.failed ?? 0,
    received_after_restart: stats.total,
    unique_events_received: stats.unique,
    received_twice: stats.twice,
    deliveries: after.deliveries,
    attempts_logged: after.attempts,
    every_event_delivered_once: stats.unique === CRASH_EVENTS && stats.twice === 0,
    every_attempt_logged:
      (after.attempts.failed ?? 0) >= CRASH_EVENTS && after.succeededAttempts === stats.total,
  };
  console.log("crash", JSON.stringify(result));
  return result;
}

async function killWhileDraining() {
  const dir = mkdtempSync(join(tmpdir(), "outreach-bench-webhooks-kill-"));
  const receiver = startReceiver();
  const n = 20_000;
  const dbPath = await seed(dir, receiver.url, n);
  let server = await startServer(dbPath);
  await waitFor(() => receiver.stats().total >= n / 2, 120_000, "half the backlog");
  server.kill("SIGKILL");
  await server.exited;
  const atKill = receiver.stats().total;
  server = await startServer(dbPath);
  // The attempts in flight at the kill are taken again once their lease (60 s) runs out.
  await waitFor(
    async () => ((await deliveryCounts(dbPath)).deliveries.succeeded ?? 0) >= n,
    300_000,
    "every delivery to settle",
  );
  await Bun.sleep(500);
  const counts = await deliveryCounts(dbPath);
  server.kill("SIGTERM");
  await server.exited;
  const stats = receiver.stats();
  receiver.stop();
  rmSync(dir, { recursive: true, force: true });
  const result = {
    events: n,
    received_at_kill: atKill,
    unique_events_received: stats.unique,
    received_twice: stats.twice,
    deliveries: counts.deliveries,
  };
  console.log("kill-while-draining", JSON.stringify(result));
  return result;
}

const which = process.argv[2];
if (!which || which === "fanout") await fanOutCost();
if (!which || which === "drain") await drain();
if (!which || which === "crash") await crash();
if (!which || which === "kill") await killWhileDraining();
