/**
 * The write floor of a campaign message: the statements one message costs from dispatch to
 * DELIVERED (its thread, the message, the recipient's updates, the sandbox ledger row, two status
 * changes and their events, and optionally its send job), run bare through bun:sqlite on the real
 * schema (the embedded migrations) in transactions of 500, with no server and no JavaScript
 * besides the loop. What the server does per message cannot cost less than this.
 *
 *   bun scripts/bench/write-floor.ts            (N=50000, JOBS=1 to add the job row's insert and delete)
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../../src/db/migrate";

const N = Number(process.env.N ?? 50_000);
const BATCH = 500;
const withJobs = process.env.JOBS === "1";

const dir = mkdtempSync(join(tmpdir(), "outreach-floor-"));
const db = new Database(join(dir, "floor.db"));
db.run("PRAGMA journal_mode = WAL");
db.run("PRAGMA synchronous = NORMAL");
db.run("PRAGMA cache_size = -16000");
migrate(db);
db.run("PRAGMA foreign_keys = OFF"); // no workspace, campaign or contact rows: only the message's own writes count

const ws = crypto.randomUUID();
const campaign = crypto.randomUUID();
const contactIds = Array.from({ length: N }, () => crypto.randomUUID());
const s = {
  recipient: db.prepare(
    "INSERT INTO campaign_recipients (campaign_id, contact_id, workspace_id, phone_number, outcome, due_at, created_at) VALUES (?, ?, ?, ?, 'queued', 0, 0)",
  ),
  thread: db.prepare(
    "INSERT INTO conversations (id, workspace_id, contact_id, status, needs_attention, agent_paused, last_message_at, created_at, updated_at) VALUES (?, ?, ?, 'open', 0, 0, ?, ?, ?)",
  ),
  message: db.prepare(
    "INSERT INTO messages (id, workspace_id, direction, sender, from_number, to_number, body, status, segments, encoding, contact_id, conversation_id, campaign_id, number_id, created_at, updated_at) VALUES (?, ?, 'outbound', 'campaign', '+14155550000', ?, ?, 'PENDING', 1, 'GSM-7', ?, ?, ?, ?, ?, ?)",
  ),
  recipientMessage: db.prepare(
    "UPDATE campaign_recipients SET message_id = ? WHERE campaign_id = ? AND contact_id = ?",
  ),
  recipientHandedOff: db.prepare(
    "UPDATE campaign_recipients SET handed_off_at = ? WHERE campaign_id = ? AND contact_id = ?",
  ),
  job: db.prepare(
    "INSERT INTO jobs (id, workspace_id, kind, payload, status, run_at, attempts, max_attempts, created_at, updated_at) VALUES (?, ?, 'messages.send', ?, 'queued', 0, 0, 5, 0, 0)",
  ),
  jobDone: db.prepare("DELETE FROM jobs WHERE id = ?"),
  ledger: db.prepare(
    "INSERT INTO sandbox_sends (id, workspace_id, message_id, from_number, to_number, body, carrier_message_id, accepted_at, deliver_at, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'delivered')",
  ),
  sent: db.prepare(
    "UPDATE messages SET status = 'SENT', carrier_message_id = ?, sent_at = ?, updated_at = ? WHERE id = ?",
  ),
  delivered: db.prepare(
    "UPDATE messages SET status = 'DELIVERED', delivered_at = ?, updated_at = ? WHERE id = ?",
  ),
  event: db.prepare(
    "INSERT INTO events (id, workspace_id, type, data, created_at, dispatched_at) VALUES (?, ?, ?, ?, ?, ?)",
  ),
};
db.transaction(() => {
  for (let i = 0; i < N; i++)
    s.recipient.run(campaign, contactIds[i], ws, `+1415555${String(i).padStart(4, "0")}`);
})();

const body = "Hello there, this is a campaign message with a link https://example.com/r/abc";
const eventData = JSON.stringify({
  id: crypto.randomUUID(),
  direction: "outbound",
  from: "+14155550000",
  to: "+14155551234",
  body,
  status: "SENT",
  segments: 1,
  encoding: "GSM-7",
  contact_id: crypto.randomUUID(),
  conversation_id: crypto.randomUUID(),
  campaign_id: campaign,
  error_code: null,
  error_message: null,
  created_at: "2026-01-01T00:00:00.000Z",
  sent_at: null,
  delivered_at: null,
  send_at: null,
});
const spent: Record<string, number> = {};
const step = (name: string, work: () => void) => {
  const t = performance.now();
  db.transaction(work)();
  spent[name] = (spent[name] ?? 0) + performance.now() - t;
};

const started = performance.now();
for (let from = 0; from < N; from += BATCH) {
  const to = Math.min(from + BATCH, N);
  const now = Date.now();
  const threads: string[] = [];
  const ids: string[] = [];
  const jobs: string[] = [];
  step("thread insert", () => {
    for (let i = from; i < to; i++) {
      const id = Bun.randomUUIDv7();
      threads.push(id);
      s.thread.run(id, ws, contactIds[i], now, now, now);
    }
  });
  step("message insert", () => {
    for (let i = from; i < to; i++) {
      const id = Bun.randomUUIDv7();
      ids.push(id);
      s.message.run(
        id,
        ws,
        `+1415555${i}`,
        body,
        contactIds[i],
        threads[i - from],
        campaign,
        "number",
        now,
        now,
      );
    }
  });
  step("recipient update (+ job)", () => {
    for (let i = from; i < to; i++) {
      s.recipientMessage.run(ids[i - from], campaign, contactIds[i]);
      if (withJobs) {
        const job = Bun.randomUUIDv7();
        jobs.push(job);
        s.job.run(job, ws, JSON.stringify({ message_id: ids[i - from] }));
      }
    }
  });
  step("hand-off: ledger, SENT, event, recipient", () => {
    for (let i = from; i < to; i++) {
      const id = ids[i - from];
      if (withJobs) s.jobDone.run(jobs[i - from]);
      s.ledger.run(Bun.randomUUIDv7(), ws, id, "+14155550000", `+1415555${i}`, body, `SM${id}`, now, now);
      s.sent.run(`SM${id}`, now, now, id);
      s.event.run(Bun.randomUUIDv7(), ws, "message.sent", eventData, now, now);
      s.recipientHandedOff.run(now, campaign, contactIds[i]);
    }
  });
  step("DELIVERED, event", () => {
    for (let i = from; i < to; i++) {
      s.delivered.run(now, now, ids[i - from]);
      s.event.run(Bun.randomUUIDv7(), ws, "message.delivered", eventData, now, now);
    }
  });
}
const ms = performance.now() - started;
db.close();
rmSync(dir, { recursive: true, force: true });
console.log(
  `write floor, ${N} messages${withJobs ? " (with job rows)" : ""}: ${((ms * 1000) / N).toFixed(0)} µs a message, ${((N / ms) * 1000).toFixed(0)} msg/s on one core`,
);
for (const [name, total] of Object.entries(spent))
  console.log(`  ${name}: ${((total * 1000) / N).toFixed(0)} µs`);
