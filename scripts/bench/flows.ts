/**
 * A flow at scale against the built binary (the flows issue's figures):
 *   CONTACTS (default 100,000) imported, then added to a list in requests of 10,000; an active
 *   flow triggered by that list: send → wait 1 minute → send. KILLS (default 3) SIGKILLs of the
 *   server while the flow runs, each followed by a restart on the same database. Measured from the
 *   database file (not asked of the server):
 *   - enrolment: from the first list request to every contact having a run;
 *   - flow steps per second (node visits finished), sustained from the first to the last;
 *   - every contact got exactly two messages, each handed to the carrier once.
 *
 *   bun scripts/bench/flows.ts            (SKIP_BUILD=1 to reuse dist/outreach)
 */
import { Database } from "bun:sqlite";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBinary, type StartedServer, startBinary } from "./support";

const CONTACTS = Number(process.env.CONTACTS ?? 100_000);
const KILLS = Number(process.env.KILLS ?? 3);
const FROM = "+14155550100";

function ledger(dbPath: string, flowId: string) {
  const db = new Database(dbPath, { readonly: true });
  try {
    const one = (sql: string) => (db.query(sql).get({ $f: flowId }) as { n: number | null }).n ?? 0;
    return {
      runs: one("SELECT count(*) AS n FROM flow_runs WHERE flow_id = $f"),
      completed: one("SELECT count(*) AS n FROM flow_runs WHERE flow_id = $f AND status = 'completed'"),
      steps: one("SELECT count(*) AS n FROM flow_steps WHERE flow_id = $f AND finished_at IS NOT NULL"),
      firstStep: one("SELECT min(finished_at) AS n FROM flow_steps WHERE flow_id = $f"),
      lastStep: one("SELECT max(finished_at) AS n FROM flow_steps WHERE flow_id = $f"),
      firstRun: one("SELECT min(started_at) AS n FROM flow_runs WHERE flow_id = $f"),
      lastRun: one("SELECT max(started_at) AS n FROM flow_runs WHERE flow_id = $f"),
      messages: one("SELECT count(*) AS n FROM messages WHERE sender = 'flow'"),
      handoffs: one(
        "SELECT sum(s.handoffs) AS n FROM sandbox_sends s JOIN messages m ON m.id = s.message_id WHERE m.sender = 'flow'",
      ),
      notTwo: one(
        `SELECT count(*) AS n FROM (SELECT c.id FROM contacts c LEFT JOIN messages m ON m.contact_id = c.id AND m.sender = 'flow'
           GROUP BY c.id HAVING count(m.id) <> 2)`,
      ),
      // The ledger counts a repeated hand-off of a message in its one row.
      sentTwice: one("SELECT count(*) AS n FROM sandbox_sends WHERE handoffs > 1"),
      unsent: one(
        "SELECT count(*) AS n FROM messages WHERE sender = 'flow' AND status IN ('PENDING', 'QUEUED')",
      ),
    };
  } finally {
    db.close();
  }
}

ensureBinary();
const dbPath = join(mkdtempSync(join(tmpdir(), "outreach-flows-")), "flows.db");
let server: StartedServer = await startBinary({ dbPath });
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
  // Nothing waits for quiet hours or a cap, whatever the hour of the run: this measures the runner.
  await api("PATCH", "/v1/settings", { quiet_hours: { enabled: false }, frequency_cap: { enabled: false } });
  for (let i = 0; i < CONTACTS; i += 5000) {
    const contacts = Array.from({ length: Math.min(5000, CONTACTS - i) }, (_, j) => ({
      phone_number: `+1415${String(5000000 + i + j).padStart(7, "0")}`,
      first_name: `P${i + j}`,
    }));
    await api("POST", "/v1/contacts/import", { contacts });
  }
  const ids: string[] = [];
  for (let offset = 0; ids.length < CONTACTS; offset += 200) {
    const page = (await api("GET", `/v1/contacts?limit=200&offset=${offset}`)) as {
      contacts: { id: string }[];
    };
    if (page.contacts.length === 0) break;
    for (const c of page.contacts) ids.push(c.id);
  }
  const list = (await api("POST", "/v1/lists", { name: "Bench" })) as { list: { id: string } };
  const flow = (await api("POST", "/v1/flows", {
    name: "Bench flow",
    status: "active",
    definition: {
      nodes: [
        {
          id: "t",
          type: "trigger",
          position: { x: 0, y: 0 },
          data: { event: "added_to_list", list_id: list.list.id },
        },
        {
          id: "s1",
          type: "send_sms",
          position: { x: 0, y: 100 },
          data: { body: "Hello {{first_name|there}}" },
        },
        { id: "w", type: "wait", position: { x: 0, y: 200 }, data: { minutes: 1 } },
        {
          id: "s2",
          type: "send_sms",
          position: { x: 0, y: 300 },
          data: { body: "Still there, {{first_name}}?" },
        },
      ],
      edges: [
        { id: "e1", source: "t", target: "s1" },
        { id: "e2", source: "s1", target: "w" },
        { id: "e3", source: "w", target: "s2" },
      ],
    },
  })) as { flow: { id: string } };
  const flowId = flow.flow.id;

  const enrolStart = Date.now();
  for (let i = 0; i < ids.length; i += 10_000)
    await api("POST", `/v1/lists/${list.list.id}/contacts`, { contact_ids: ids.slice(i, i + 10_000) });
  const enrolled = ledger(dbPath, flowId);
  console.log(
    `enrolment: ${enrolled.runs} runs in ${((Date.now() - enrolStart) / 1000).toFixed(1)} s (list additions of 10,000, the runs written in the same transactions)`,
  );

  const total = CONTACTS * 4; // trigger, send, wait, send
  for (let k = 1; k <= KILLS; k++) {
    const target = Math.floor((total * k) / (KILLS + 1));
    while (ledger(dbPath, flowId).steps < target) await Bun.sleep(100);
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    const at = ledger(dbPath, flowId);
    console.log(
      `kill ${k}: SIGKILL after ${at.steps} steps, ${at.messages} messages, ${at.handoffs} hand-offs`,
    );
    server = await startBinary({ dbPath });
  }
  let state = ledger(dbPath, flowId);
  const deadline = Date.now() + 30 * 60_000;
  while (
    Date.now() < deadline &&
    (state.completed < CONTACTS || state.unsent > 0 || state.handoffs < state.messages)
  ) {
    await Bun.sleep(1000);
    state = ledger(dbPath, flowId);
  }
  const seconds = (state.lastStep - state.firstStep) / 1000;
  console.log(JSON.stringify(state));
  // The two busy phases: trigger + first send for everyone, then (a minute later) wait + second send.
  const db = new Database(dbPath, { readonly: true });
  const phase = (nodes: string[]) =>
    db
      .query(
        `SELECT count(*) AS n, min(finished_at) AS a, max(finished_at) AS b FROM flow_steps
          WHERE flow_id = $f AND node_id IN (${nodes.map((n) => `'${n}'`).join(",")}) AND finished_at IS NOT NULL`,
      )
      .get({ $f: flowId }) as { n: number; a: number; b: number };
  for (const [name, nodes] of [
    ["trigger + first send", ["t", "s1"]],
    ["wait + second send", ["w", "s2"]],
  ] as const) {
    const p = phase([...nodes]);
    const span = Math.max(1, p.b - p.a) / 1000;
    console.log(`${name}: ${p.n} steps in ${span.toFixed(1)} s = ${(p.n / span).toFixed(0)} steps/s`);
  }
  db.close();
  console.log(
    `steps: ${state.steps} in ${seconds.toFixed(1)} s = ${(state.steps / seconds).toFixed(0)} steps/s sustained (includes the 1-minute wait and ${KILLS} restarts)`,
  );
  console.log(
    `messages: ${state.messages} (${CONTACTS * 2} expected), contacts without exactly two: ${state.notTwo}, hand-offs ${state.handoffs}, handed off twice: ${state.sentTwice}, unsent: ${state.unsent}; runs completed ${state.completed}`,
  );
} finally {
  await server.stop();
}
