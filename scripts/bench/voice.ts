/**
 * A simulated voice campaign against the built binary (API.md §6.4; the voice issue's figures):
 *   RECIPIENTS (default 10,000) contacts imported, one `say` voice campaign at
 *   `throttle_per_minute` THROTTLE (default 6,000), SIMULATED_CALL_MS 2,000; KILLS (default 2)
 *   SIGKILLs of the server while calls are being placed, each followed by a restart on the same
 *   database. Then, read from the database file (not from the server):
 *   - every recipient's call placed once (the simulated line's ledger: one row per placement),
 *     none twice, none missing, every call final and every recipient settled;
 *   - the campaign completed;
 *   - RSS sampled every second of the last run (it should stay flat).
 *
 *   bun scripts/bench/voice.ts            (SKIP_BUILD=1 to reuse dist/outreach)
 */
import { Database } from "bun:sqlite";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBinary, rssMb, type StartedServer, startBinary } from "./support";

const RECIPIENTS = Number(process.env.RECIPIENTS ?? 10_000);
const THROTTLE = Number(process.env.THROTTLE ?? 6000);
const KILLS = Number(process.env.KILLS ?? 2);
const FROM = "+14155550100";
const ENV = { SIMULATED_CALL_MS: "2000" };

function ledger(dbPath: string, campaignId: string) {
  const db = new Database(dbPath, { readonly: true });
  try {
    const one = (sql: string) => (db.query(sql).get({ $c: campaignId }) as { n: number }).n;
    return {
      status: (
        db.query("SELECT status FROM campaigns WHERE id = $c").get({ $c: campaignId }) as { status: string }
      ).status,
      recipients: one("SELECT count(*) AS n FROM campaign_recipients WHERE campaign_id = $c"),
      calls: one("SELECT count(*) AS n FROM calls WHERE campaign_id = $c"),
      placements: one(
        "SELECT count(*) AS n FROM sandbox_calls s JOIN calls c ON c.id = s.call_id WHERE c.campaign_id = $c",
      ),
      twice: one(
        `SELECT count(*) AS n FROM (SELECT s.call_id FROM sandbox_calls s JOIN calls c ON c.id = s.call_id
           WHERE c.campaign_id = $c GROUP BY s.call_id HAVING count(*) > 1)`,
      ),
      // Contacts with more than one call of this campaign.
      contactsTwice: one(
        `SELECT count(*) AS n FROM (SELECT contact_id FROM calls WHERE campaign_id = $c
           GROUP BY contact_id HAVING count(*) > 1)`,
      ),
      notPlaced: one(
        `SELECT count(*) AS n FROM calls c WHERE c.campaign_id = $c
           AND NOT EXISTS (SELECT 1 FROM sandbox_calls s WHERE s.call_id = c.id)`,
      ),
      notFinal: one(
        "SELECT count(*) AS n FROM calls WHERE campaign_id = $c AND status IN ('QUEUED', 'RINGING', 'IN_PROGRESS')",
      ),
      unsettled: one(
        "SELECT count(*) AS n FROM campaign_recipients WHERE campaign_id = $c AND outcome IN ('queued', 'deferred', 'sent')",
      ),
      entries: one(
        "SELECT count(*) AS n FROM messages m JOIN calls c ON c.id = m.call_id WHERE c.campaign_id = $c",
      ),
    };
  } finally {
    db.close();
  }
}

ensureBinary();
const dbPath = join(mkdtempSync(join(tmpdir(), "outreach-voice-")), "voice.db");
let server: StartedServer = await startBinary({ dbPath, env: ENV });
const headers = { authorization: `Bearer ${server.key}`, "content-type": "application/json" };
const api = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(server.url + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200)
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
};

try {
  await api("POST", "/v1/numbers", { number: FROM });
  for (let i = 0; i < RECIPIENTS; i += 5000) {
    const contacts = Array.from({ length: Math.min(5000, RECIPIENTS - i) }, (_, j) => ({
      phone_number: `+1415${String(4000000 + i + j).padStart(7, "0")}`,
    }));
    await api("POST", "/v1/contacts/import", { contacts });
  }
  const segment = (await api("POST", "/v1/segments", { name: "Everyone", rules: { all: [] } })) as {
    segment: { id: string };
  };
  const created = (await api("POST", "/v1/campaigns", {
    name: "Voice bench",
    campaign_type: "voice",
    say: "This is a reminder of your appointment tomorrow.",
    audience: { segment_ids: [segment.segment.id] },
    // California numbers (no state rule), quiet hours off: nothing waits, whatever the hour.
    quiet_hours: { enabled: false },
    throttle_per_minute: THROTTLE,
  })) as { campaign: { id: string } };
  const campaignId = created.campaign.id;
  const launchedAt = performance.now();
  await api("POST", `/v1/campaigns/${campaignId}/launch`);
  console.log(`launched a voice campaign of ${RECIPIENTS} at ${THROTTLE} calls/min`);

  for (let k = 1; k <= KILLS; k++) {
    const before = ledger(dbPath, campaignId).placements;
    const target = before + Math.floor((RECIPIENTS - before) / (KILLS - k + 2));
    while (ledger(dbPath, campaignId).placements < target) await Bun.sleep(50);
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    const at = ledger(dbPath, campaignId);
    console.log(`kill ${k}: SIGKILL after ${at.placements} placements (${at.calls} calls written)`);
    server = await startBinary({ dbPath, env: ENV });
  }

  const rss: number[] = [];
  let state = ledger(dbPath, campaignId);
  const deadline = performance.now() + 20 * 60_000;
  while (
    performance.now() < deadline &&
    (state.status !== "completed" || state.notFinal > 0 || state.unsettled > 0)
  ) {
    await Bun.sleep(1000);
    rss.push(rssMb(server.proc.pid));
    state = ledger(dbPath, campaignId);
  }
  const seconds = (performance.now() - launchedAt) / 1000;
  console.log(JSON.stringify(state));
  console.log(
    `recipients ${state.recipients}: calls ${state.calls}, placements ${state.placements}, placed twice ${state.twice}, contacts called twice ${state.contactsTwice}, never placed ${state.notPlaced}, not final ${state.notFinal}, recipients unsettled ${state.unsettled}, thread entries ${state.entries}; campaign ${state.status} after ${seconds.toFixed(0)} s (${KILLS} kills)`,
  );
  if (rss.length) {
    const third = Math.floor(rss.length / 3);
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    console.log(
      `RSS over the last run (${rss.length} samples): first third ${avg(rss.slice(0, third)).toFixed(0)} MB, last third ${avg(rss.slice(-third)).toFixed(0)} MB, max ${Math.max(...rss).toFixed(0)} MB`,
    );
  }
} finally {
  await server.stop();
}
