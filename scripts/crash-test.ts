/**
 * Crash test for the send pipeline: queue N messages, SIGKILL the server at random moments while
 * they are being sent, restart it on the same database each time, and check the simulated carrier's
 * ledger: every message handed off exactly once, none lost, none twice.
 *
 *   node_modules/.bin/bun scripts/crash-test.ts [--messages 10000] [--kills 5]
 *   node_modules/.bin/bun scripts/crash-test.ts campaign [--recipients 5000] [--kills 5]
 *
 * The campaign mode launches one SMS campaign over an imported audience (a few of its contacts
 * suppressed or opted out), kills the server during resolution and during dispatch, and checks
 * that every sendable recipient got exactly one message, the others none, and the campaign
 * completed.
 *
 * Exits 0 when the ledger is exact, 1 otherwise. test/messages-crash.test.ts and
 * test/campaigns-crash.test.ts run small versions.
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

/**
 * The first server on a fresh database, with the worker off (work waits in the queue), and the
 * request headers carrying the bootstrap key it announced.
 */
async function startFirstChild(dbPath: string, dir: string) {
  const logPath = join(dir, "serve-0.log");
  const child = await startChild(dbPath, logPath, { WORKER: "false" });
  const key = readFileSync(logPath, "utf8").match(/opk_[0-9A-Za-z]{36}/)?.[0];
  if (!key) throw new Error("no bootstrap key announced");
  return { child, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } };
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
      // The ledger keeps one row per message and counts a repeated hand-off in it (handoffs > 1).
      handoffs: one("SELECT coalesce(sum(handoffs), 0) AS n FROM sandbox_sends"),
      duplicated: one("SELECT count(*) AS n FROM sandbox_sends WHERE handoffs > 1"),
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
    let { child, headers } = await startFirstChild(dbPath, dir);
    const ordered = await fetch(`${child.url}/v1/numbers`, {
      method: "POST",
      headers,
      body: JSON.stringify({ number: FROM }),
    });
    if (ordered.status !== 200) throw new Error(`ordering a number failed: ${await ordered.text()}`);
    // More messages than a day's one-off budget (API.md §7.2) may be queued: lift it.
    const lifted = await fetch(`${child.url}/v1/settings`, {
      method: "PATCH",
      headers,
      body: JSON.stringify({ one_off_daily_limit: null }),
    });
    if (lifted.status !== 200) throw new Error(`lifting the daily budget failed: ${await lifted.text()}`);
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

// ---------------------------------------------------------------------------------------------
// Campaign mode.

export interface CampaignCrashResult {
  recipients: number;
  /** Recipients that may be sent to (not suppressed or opted out). */
  sendable: number;
  kills: number;
  /** What each kill interrupted: recipient rows written and hand-offs made when it landed. */
  killedAt: { resolved: number; handoffs: number }[];
  status: string;
  /** Recipient rows written (the audience as resolved). */
  resolved: number;
  /** Campaign messages recorded, and hand-offs (ledger rows) of them. */
  messages: number;
  handoffs: number;
  /** Sendable recipients with no hand-off, with more than one, and skipped ones that got one. */
  missing: number;
  duplicated: number;
  wronglySent: number;
  seconds: number;
}

/** The campaign's progress, read from the database file (read-only). */
function campaignLedger(dbPath: string, campaignId: string) {
  const db = new Database(dbPath, { readonly: true });
  try {
    const one = (sql: string) => (db.query(sql).get({ $c: campaignId }) as { n: number }).n;
    return {
      status: (
        db.query("SELECT status FROM campaigns WHERE id = $c").get({ $c: campaignId }) as { status: string }
      ).status,
      resolved: one("SELECT count(*) AS n FROM campaign_recipients WHERE campaign_id = $c"),
      messages: one("SELECT count(*) AS n FROM messages WHERE campaign_id = $c"),
      handoffs: one(
        "SELECT coalesce(sum(s.handoffs), 0) AS n FROM sandbox_sends s JOIN messages m ON m.id = s.message_id WHERE m.campaign_id = $c",
      ),
      unsettled: one(
        "SELECT count(*) AS n FROM messages WHERE campaign_id = $c AND status IN ('PENDING', 'QUEUED')",
      ),
      // Per contact: hand-offs to the contact's number for this campaign.
      missing: one(
        `SELECT count(*) AS n FROM campaign_recipients r WHERE r.campaign_id = $c AND r.outcome <> 'skipped'
           AND (SELECT count(*) FROM sandbox_sends s JOIN messages m ON m.id = s.message_id
                WHERE m.campaign_id = $c AND m.contact_id = r.contact_id) = 0`,
      ),
      // Two messages to one contact (each sent once) or one message handed over twice.
      duplicated: one(
        `SELECT count(*) AS n FROM (SELECT m.contact_id FROM sandbox_sends s JOIN messages m ON m.id = s.message_id
           WHERE m.campaign_id = $c GROUP BY m.contact_id HAVING sum(s.handoffs) > 1)`,
      ),
      wronglySent: one(
        `SELECT count(*) AS n FROM campaign_recipients r WHERE r.campaign_id = $c AND r.outcome = 'skipped'
           AND EXISTS (SELECT 1 FROM sandbox_sends s JOIN messages m ON m.id = s.message_id
                       WHERE m.campaign_id = $c AND m.contact_id = r.contact_id)`,
      ),
    };
  } finally {
    db.close();
  }
}

export async function runCampaignCrashTest(
  options: {
    recipients: number;
    kills: number;
    /** How many of the kills land during resolution (right after a chunk of rows commits); default 1. */
    resolutionKills?: number;
    log?: (line: string) => void;
  } = {
    recipients: 5000,
    kills: 5,
  },
): Promise<CampaignCrashResult> {
  const say = options.log ?? (() => {});
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), "outreach-crash-campaign-"));
  const dbPath = join(dir, "crash.db");
  try {
    // 1. Audience and campaign, launched with the worker off: the resolve job waits in the queue.
    let { child, headers } = await startFirstChild(dbPath, dir);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${child.url}${path}`, {
        method,
        headers,
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = (await res.json()) as Record<string, unknown> & { ok: boolean };
      if (res.status !== 200)
        throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
      return json;
    };
    await call("POST", "/v1/numbers", { number: FROM });
    const people = Array.from({ length: options.recipients }, (_, i) => ({
      phone_number: `+1415${String(3000000 + i).padStart(7, "0")}`,
      first_name: `P${i}`,
      // Every 50th contact opted out, every 100th (not opted out) suppressed below.
      opted_in: i % 50 !== 7,
    }));
    const imported = (await call("POST", "/v1/contacts/import", { contacts: people })) as {
      created?: number;
    };
    if (imported.created !== options.recipients) throw new Error(`imported ${imported.created}`);
    let blocked = people.filter((p) => !p.opted_in).length;
    for (let i = 3; i < options.recipients; i += 100) {
      await call("POST", "/v1/suppression", { phone_number: people[i].phone_number, reason: "complaint" });
      blocked++;
    }
    const segment = (await call("POST", "/v1/segments", { name: "Everyone", rules: { all: [] } })) as {
      segment?: { id: string };
    };
    const created = (await call("POST", "/v1/campaigns", {
      name: "Crash",
      message: { body: "Hello {{first_name}}, reply STOP to opt out" },
      audience: { segment_ids: [segment.segment?.id] },
      // Quiet hours off, and a California area code (no state rules): nothing defers, whatever the hour.
      quiet_hours: { enabled: false },
    })) as { campaign?: { id: string } };
    const campaignId = created.campaign?.id as string;
    await call("POST", `/v1/campaigns/${campaignId}/launch`);
    child.proc.kill("SIGTERM");
    await child.proc.exited;
    const sendable = options.recipients - blocked;

    // 2. Kills: the first `resolutionKills` land during resolution (right after a chunk of
    //    recipient rows commits), the others after a random number of hand-offs.
    const killedAt: { resolved: number; handoffs: number }[] = [];
    for (let k = 1; k <= options.kills; k++) {
      child = await startChild(dbPath, join(dir, `serve-${k}.log`));
      const before = campaignLedger(dbPath, campaignId);
      const until = performance.now() + 30_000;
      let now = before;
      if (k <= (options.resolutionKills ?? 1) && before.resolved < options.recipients) {
        while (now.resolved === before.resolved && performance.now() < until) {
          await Bun.sleep(1);
          now = campaignLedger(dbPath, campaignId);
        }
      } else {
        const remaining = sendable - before.handoffs;
        const target =
          before.handoffs + 1 + Math.floor(Math.random() * Math.max(1, remaining / (options.kills - k + 2)));
        while (now.handoffs < target && performance.now() < until) {
          await Bun.sleep(2);
          now = campaignLedger(dbPath, campaignId);
        }
      }
      await kill(child);
      const after = campaignLedger(dbPath, campaignId);
      killedAt.push({ resolved: after.resolved, handoffs: after.handoffs });
      say(`kill ${k}: SIGKILL with ${after.resolved} recipients resolved, ${after.handoffs} hand-offs`);
    }
    child = await startChild(dbPath, join(dir, "serve-last.log"));

    // 3. Let the last run finish: completed, and every campaign message handed off.
    const deadline =
      performance.now() + Number(process.env.CRASH_WAIT_MS ?? 120_000) + options.recipients * 10;
    let state = campaignLedger(dbPath, campaignId);
    while (performance.now() < deadline && (state.status !== "completed" || state.unsettled > 0)) {
      await Bun.sleep(250);
      state = campaignLedger(dbPath, campaignId);
    }
    child.proc.kill("SIGTERM");
    await child.proc.exited;
    state = campaignLedger(dbPath, campaignId);
    return {
      recipients: options.recipients,
      sendable,
      kills: options.kills,
      killedAt,
      status: state.status,
      resolved: state.resolved,
      messages: state.messages,
      handoffs: state.handoffs,
      missing: state.missing,
      duplicated: state.duplicated,
      wronglySent: state.wronglySent,
      seconds: Math.round((performance.now() - started) / 100) / 10,
    };
  } finally {
    if (process.env.CRASH_KEEP) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** Every sendable recipient handed off exactly once, nobody else, and the campaign completed. */
export function campaignLedgerExact(result: CampaignCrashResult): boolean {
  return (
    result.status === "completed" &&
    result.resolved === result.recipients &&
    result.messages === result.sendable &&
    result.handoffs === result.sendable &&
    result.missing === 0 &&
    result.duplicated === 0 &&
    result.wronglySent === 0
  );
}

if (import.meta.main) {
  const arg = (name: string, fallback: number) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  if (process.argv[2] === "campaign") {
    const result = await runCampaignCrashTest({
      recipients: arg("recipients", 5000),
      kills: arg("kills", 5),
      resolutionKills: 2,
      log: (line) => console.log(line),
    });
    console.log(JSON.stringify(result, null, 2));
    const exact = campaignLedgerExact(result);
    console.log(
      exact
        ? "OK: every sendable recipient got exactly one message, the campaign completed"
        : "FAILED: the campaign ledger is not exact",
    );
    process.exit(exact ? 0 : 1);
  }
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
