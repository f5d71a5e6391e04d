/**
 * Crash test for the send pipeline: queue N messages, SIGKILL the server at random moments while
 * they are being sent, restart it on the same database each time, and check the simulated carrier's
 * ledger: every message handed off exactly once, none lost, none twice.
 *
 *   node_modules/.bin/bun scripts/crash-test.ts [--messages 10000] [--kills 5]
 *
 * Exits 0 when the ledger is exact, 1 otherwise. test/messages-crash.test.ts runs a small version.
 */

import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Subprocess, spawn } from "bun";
import { freePort } from "./bench/support";

const root = join(import.meta.dir, "..");
const bun = join(root, "node_modules", ".bin", "bun");
const FROM = "+14155550100";
/**
 * Delivery reports come later than the send job's lease (12 s), so a send orphaned by a kill is
 * recovered by the job itself (carrier lookup by our message id), not rescued by its delivery report.
 */
const deliveryMs = Number(process.env.CRASH_DELIVERY_MS ?? 15_000);

export interface CrashTestResult {
  messages: number;
  kills: number;
  /** Outbound messages in the database. */
  recorded: number;
  /** Ledger rows (hand-offs the carrier accepted). */
  handoffs: number;
  /** Messages handed off more than once. */
  duplicated: number;
  /** Messages never handed off. */
  missing: number;
  /** Messages still PENDING or QUEUED at the end. */
  unsent: number;
  /** Sends whose outcome a kill left unknown, settled by asking the carrier (no second hand-off). */
  reconciled: number;
  seconds: number;
}

interface Child {
  proc: Subprocess;
  url: string;
}

async function startChild(dbPath: string, logPath: string, env: Record<string, string> = {}): Promise<Child> {
  const port = await freePort();
  const proc = spawn([bun, "run", "src/main.ts", "serve", "--port", String(port), "--db", dbPath], {
    cwd: root,
    env: {
      ...process.env,
      RATE_LIMIT_RPS: "0",
      LOG_LEVEL: "error",
      SIMULATED_DELIVERY_MS: String(deliveryMs),
      ...env,
    },
    stdout: Bun.file(logPath),
    stderr: "ignore",
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    try {
      if ((await fetch(`${url}/healthz`)).status === 200) return { proc, url };
    } catch {
      // not up yet
    }
    await Bun.sleep(20);
  }
  proc.kill("SIGKILL");
  throw new Error("server did not start");
}

async function kill(child: Child) {
  child.proc.kill("SIGKILL");
  await child.proc.exited;
}

/** Counts straight from the database file (read-only), so the check does not trust the server. */
function ledger(dbPath: string) {
  const db = new Database(dbPath, { readonly: true });
  try {
    const one = (sql: string) => (db.query(sql).get() as { n: number }).n;
    return {
      recorded: one("SELECT count(*) AS n FROM messages WHERE direction = 'outbound'"),
      handoffs: one("SELECT count(*) AS n FROM sandbox_sends"),
      duplicated: one(
        "SELECT count(*) AS n FROM (SELECT message_id FROM sandbox_sends GROUP BY message_id HAVING count(*) > 1)",
      ),
      missing: one(
        "SELECT count(*) AS n FROM messages m WHERE m.direction = 'outbound' AND NOT EXISTS (SELECT 1 FROM sandbox_sends s WHERE s.message_id = m.id)",
      ),
      unsettled: one("SELECT count(*) AS n FROM messages WHERE status IN ('PENDING', 'QUEUED')"),
      // Recorded SENT long after the carrier accepted it: a kill cut the job between hand-off and
      // record, and the retried job found the send at the carrier instead of sending again.
      reconciled: one(
        "SELECT count(*) AS n FROM messages m JOIN sandbox_sends s ON s.message_id = m.id WHERE m.sent_at - s.accepted_at > 5000",
      ),
      undelivered: one(
        "SELECT count(*) AS n FROM messages WHERE direction = 'outbound' AND status <> 'DELIVERED'",
      ),
    };
  } finally {
    db.close();
  }
}

/** The send jobs of messages still unsent, for diagnosis. */
function stuckJobs(dbPath: string) {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db
      .query(
        `SELECT m.id, m.status, m.handoff_started_at, j.status AS job_status, j.attempts, j.run_at, j.lease_until, j.last_error
         FROM messages m LEFT JOIN jobs j ON j.kind = 'messages.send' AND json_extract(j.payload, '$.message_id') = m.id
         WHERE m.status IN ('PENDING', 'QUEUED') LIMIT 10`,
      )
      .all();
  } finally {
    db.close();
  }
}

export async function runCrashTest(
  options: { messages: number; kills: number; log?: (line: string) => void } = { messages: 10_000, kills: 5 },
): Promise<CrashTestResult> {
  const say = options.log ?? (() => {});
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "outreach-crash-"));
  const dbPath = join(dir, "crash.db");
  try {
    // 1. Queue every message with the worker off, so all of them are waiting when sending starts.
    let child = await startChild(dbPath, join(dir, "serve-0.log"), { WORKER: "false" });
    const key = readFileSync(join(dir, "serve-0.log"), "utf8").match(/opk_[0-9A-Za-z]{36}/)?.[0];
    if (!key) throw new Error("no bootstrap key announced");
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const ordered = await fetch(`${child.url}/v1/numbers`, {
      method: "POST",
      headers,
      body: JSON.stringify({ number: FROM }),
    });
    if (ordered.status !== 200) throw new Error(`ordering a number failed: ${await ordered.text()}`);
    say(`queueing ${options.messages} messages`);
    let next = 0;
    const post = async () => {
      while (next < options.messages) {
        const i = next++;
        const to = `+1415${String(2000000 + i).padStart(7, "0")}`;
        const answer = await fetch(`${child.url}/v1/messages`, {
          method: "POST",
          headers,
          body: JSON.stringify({ to, body: `crash test ${i}` }),
        });
        if (answer.status !== 200) throw new Error(`POST /v1/messages answered ${answer.status}`);
      }
    };
    await Promise.all(Array.from({ length: 32 }, post));
    child.proc.kill("SIGTERM");
    await child.proc.exited;

    // 2. Start sending; SIGKILL at a random point of the run (after a random number of hand-offs,
    //    so every kill lands mid-flight), restart on the same database, repeat.
    for (let k = 1; k <= options.kills; k++) {
      child = await startChild(dbPath, join(dir, `serve-${k}.log`));
      const before = ledger(dbPath);
      const remaining = options.messages - before.handoffs;
      const target =
        before.handoffs + 1 + Math.floor(Math.random() * Math.max(1, remaining / (options.kills - k + 2)));
      const until = performance.now() + 30_000;
      let now = before;
      while (now.handoffs < target && performance.now() < until) {
        await Bun.sleep(2);
        now = ledger(dbPath);
      }
      await kill(child);
      const after = ledger(dbPath);
      say(
        `kill ${k}: SIGKILL after ${after.handoffs} hand-offs, ${after.unsettled} messages not yet marked sent`,
      );
    }
    child = await startChild(dbPath, join(dir, "serve-last.log"));

    // 3. Let the last run finish (orphaned leases expire after the send job's timeout).
    const deadline = performance.now() + Number(process.env.CRASH_WAIT_MS ?? 120_000) + options.messages * 10;
    let state = ledger(dbPath);
    while (performance.now() < deadline && state.unsettled > 0) {
      await Bun.sleep(250);
      state = ledger(dbPath);
    }
    child.proc.kill("SIGTERM");
    await child.proc.exited;
    state = ledger(dbPath);
    if (state.unsettled > 0) say(`unsent at the end: ${JSON.stringify(stuckJobs(dbPath))}`);
    return {
      messages: options.messages,
      kills: options.kills,
      recorded: state.recorded,
      handoffs: state.handoffs,
      duplicated: state.duplicated,
      missing: state.missing,
      unsent: state.unsettled,
      reconciled: state.reconciled,
      seconds: Math.round((performance.now() - started) / 100) / 10,
    };
  } finally {
    if (process.env.CRASH_KEEP) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const arg = (name: string, fallback: number) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const result = await runCrashTest({
    messages: arg("messages", 10_000),
    kills: arg("kills", 5),
    log: (line) => console.log(line),
  });
  console.log(JSON.stringify(result, null, 2));
  const exact =
    result.recorded === result.messages &&
    result.handoffs === result.messages &&
    result.duplicated === 0 &&
    result.missing === 0 &&
    result.unsent === 0;
  console.log(exact ? "OK: every message handed off exactly once" : "FAILED: the ledger is not exact");
  process.exit(exact ? 0 : 1);
}
