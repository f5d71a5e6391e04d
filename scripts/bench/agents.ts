/**
 * SMS agents under load, against the built binary (offline engine, simulated carrier):
 *   2,000 threads (THREADS) each get a burst of 2 inbound messages through the sandbox at about
 *   the same time, on a number an agent answers with a fixed reply delay (DELAY_S, default 10 s,
 *   so every burst is in before the first reply is due). Then:
 *   - every thread answered exactly once per burst;
 *   - p50/p99 from each reply's due time (first message of the burst + the delay) to its carrier
 *     hand-off (the sandbox outbox's accepted_at);
 *   - `GET /v1/me` every 50 ms throughout (the server keeps answering).
 * And the offline engine alone: p99 per answer with a 20,000-character knowledge text
 * (scripts/bench/agent-engine.ts).
 *
 *   bun scripts/bench/agents.ts            (SKIP_BUILD=1 to reuse dist/outreach)
 */
import { Database } from "bun:sqlite";
import { ensureBinary, startBinary } from "./support";

const THREADS = Number(process.env.THREADS ?? 2000);
const DELAY_S = Number(process.env.DELAY_S ?? 10);
const CONCURRENCY = 32;
const OURS = "+14155550100";

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

ensureBinary();
const server = await startBinary();
const headers = { authorization: `Bearer ${server.key}`, "content-type": "application/json" };
const api = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(server.url + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown> & { [k: string]: never },
  };
};

try {
  await api("POST", "/v1/numbers", { number: OURS });
  const numbers = (await api("GET", "/v1/numbers")).body.numbers as unknown as {
    id: string;
    number: string;
  }[];
  const numberId = numbers.find((n) => n.number === OURS)?.id;
  const agent = (
    await api("POST", "/v1/agents", {
      name: "Bench",
      system_prompt: "You answer questions about Sunny Dental.",
      goal: "book a cleaning",
      sms: {
        knowledge:
          "Sunny Dental is open Monday to Friday from 9am to 5pm. A cleaning costs $120. We are at 12 Main Street.",
        reply_delay_min_sec: DELAY_S,
        reply_delay_max_sec: DELAY_S,
        quiet_start_hour: 0,
        quiet_end_hour: 0,
        max_replies_per_day: 1000,
      },
    })
  ).body.agent as unknown as { id: string };
  await api("PATCH", `/v1/numbers/${numberId}`, { agent_id: agent.id });

  // /v1/me every 50 ms from now until the replies are out.
  const probe: number[] = [];
  let probing = true;
  const prober = (async () => {
    while (probing) {
      const t = performance.now();
      await fetch(`${server.url}/v1/me`, { headers });
      probe.push(performance.now() - t);
      await Bun.sleep(50);
    }
  })();

  const started = performance.now();
  let next = 0;
  const sendBursts = async () => {
    while (next < THREADS) {
      const i = next++;
      const from = `+1415${String(2_000_000 + i).padStart(7, "0")}`;
      await api("POST", "/v1/sandbox/inbound", { from, to: OURS, body: "Hi, how much is a cleaning?" });
      await api("POST", "/v1/sandbox/inbound", { from, to: OURS, body: "And when are you open?" });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, sendBursts));
  const injectedS = (performance.now() - started) / 1000;
  console.log(`${THREADS} bursts of 2 injected in ${injectedS.toFixed(1)} s (reply delay ${DELAY_S} s)`);

  // Wait until every thread has its reply handed off (or 120 s).
  const db = new Database(server.dbPath, { readonly: true });
  const handedOff = () =>
    (
      db
        .query(
          "SELECT count(*) AS n FROM messages m JOIN sandbox_sends s ON s.message_id = m.id WHERE m.sender = 'agent'",
        )
        .get() as { n: number }
    ).n;
  const deadline = Date.now() + 120_000;
  while (handedOff() < THREADS && Date.now() < deadline) await Bun.sleep(250);
  await Bun.sleep(DELAY_S * 1000 + 2000); // anything owed twice would show by now
  probing = false;
  await prober;

  const perThread = db
    .query(
      `SELECT m.conversation_id AS c, sum(s.handoffs) AS replies,
        (SELECT min(i.created_at) FROM messages i WHERE i.conversation_id = m.conversation_id AND i.direction = 'inbound') AS first_in,
        max(s.accepted_at) AS accepted
       FROM messages m JOIN sandbox_sends s ON s.message_id = m.id
       WHERE m.sender = 'agent' GROUP BY m.conversation_id`,
    )
    .all() as { c: string; replies: number; first_in: number; accepted: number }[];
  const threads = (db.query("SELECT count(*) AS n FROM conversations").get() as { n: number }).n;
  const once = perThread.filter((t) => t.replies === 1).length;
  const twice = perThread.filter((t) => t.replies > 1).length;
  const lags = perThread.map((t) => t.accepted - (t.first_in + DELAY_S * 1000));
  console.log(
    `threads ${threads}: answered once ${once}, more than once ${twice}, unanswered ${threads - perThread.length}`,
  );
  console.log(
    `due → hand-off: p50 ${percentile(lags, 50).toFixed(0)} ms, p99 ${percentile(lags, 99).toFixed(0)} ms, max ${Math.max(...lags).toFixed(0)} ms (target p99 ≤ 1,000 ms)`,
  );
  console.log(
    `GET /v1/me during the run (${probe.length} probes): p50 ${percentile(probe, 50).toFixed(1)} ms, p99 ${percentile(probe, 99).toFixed(1)} ms, max ${Math.max(...probe).toFixed(1)} ms`,
  );
  db.close();
} finally {
  await server.stop();
}
