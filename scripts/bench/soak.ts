/**
 * Soak (`npm run bench soak`; `SOAK_MINUTES=2 npm run bench soak` for a shorter run): the built
 * binary on a temp database (simulated carrier, worker on, RATE_LIMIT_RPS=0 so the limiter is not
 * what is measured), a seeded workspace, then a mixed workload paced at SOAK_RPS (540) requests/s
 * from SOAK_CLIENTS (16) concurrent clients in this process, to 127.0.0.1 only, for SOAK_MINUTES
 * (10): key checks, contact pages and creates, one-off sends to known and new numbers, inbox
 * search and sandbox inbound. The server's RSS (VmRSS) is sampled every 2 s. Prints RSS over time,
 * idle / peak / third-minute / last-minute RSS, p50/p99 per request kind and errors (any non-2xx or
 * transport error), as markdown for docs/benchmarks.md.
 *
 * SOAK_FROM_SOURCE=1 runs `bun src/main.ts` instead of dist/outreach (for profiling with BUN_OPTIONS);
 * BENCH_KEEP=1 keeps the database.
 */
import { readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname } from "node:path";
import { ensureBinary, rssMb, startBinary } from "./support";

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const RPS = Number(process.env.SOAK_RPS ?? 540);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 16);
const SAMPLE_MS = 2000;
const ROW_SECONDS = MINUTES > 3 ? 60 : 30;
const SEED_CONTACTS = 1000;
const SEED_THREADS = 300;
const NUMBERS = ["+14155550100", "+14155550101", "+14155550102"];

/** Words of message bodies and of inbox searches (none is a CTIA keyword on its own). */
const WORDS = (
  "order shipped thanks question delivery tomorrow price refund coupon store hours pickup " +
  "appointment reschedule confirm address payment invoice receipt weekend sale discount table " +
  "booking reminder parcel tracking window size colour return exchange gift voucher"
).split(" ");
const FIRST_NAMES = ["Ana", "Ben", "Chloe", "Dev", "Elif", "Femi", "Gus", "Hana", "Ivan", "Jade"];

/** Request kinds and their share of the load. */
const MIX = [
  ["GET /v1/me", 25],
  ["GET /v1/contacts (page)", 15],
  ["POST /v1/contacts", 10],
  ["POST /v1/messages (known number)", 15],
  ["POST /v1/messages (new number)", 10],
  ["GET /v1/conversations?q=", 10],
  ["POST /v1/sandbox/inbound", 15],
] as const;
type Kind = (typeof MIX)[number][0];
const WEIGHT_TOTAL = MIX.reduce((sum, [, w]) => sum + w, 0);

function pickKind(): Kind {
  let r = Math.random() * WEIGHT_TOTAL;
  for (const [kind, weight] of MIX) {
    r -= weight;
    if (r < 0) return kind;
  }
  return MIX[0][0];
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)];
const sentence = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
/** A NANP number in `area`, unique per n (exchange starting 2–9). */
const phone = (area: string, n: number) => `+1${area}${String(2_000_000 + n).padStart(7, "0")}`;

if (process.env.SOAK_FROM_SOURCE !== "1") ensureBinary();
const server = await startBinary({
  fromSource: process.env.SOAK_FROM_SOURCE === "1",
  env: { RATE_LIMIT_RPS: "0", LOG_LEVEL: "error" },
});
const pid = server.proc.pid;
const base = server.url;
const auth = { authorization: `Bearer ${server.key}` };
const jsonHeaders = { ...auth, "content-type": "application/json" };

async function call(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? auth : jsonHeaders,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function mustCall(method: string, path: string, body?: unknown) {
  const answer = await call(method, path, body);
  if (!answer.ok) throw new Error(`${method} ${path} answered ${answer.status}: ${await answer.text()}`);
  return answer.json();
}

const freshRss = rssMb(pid);

// Seed: numbers, contacts, threads with messages both ways.
const seedStarted = performance.now();
for (const number of NUMBERS) await mustCall("POST", "/v1/numbers", { number });
// A soak sends more one-off messages than a day's budget (API.md §7.2): lift it.
await mustCall("PATCH", "/v1/settings", { one_off_daily_limit: null });
const known: string[] = [];
for (let i = 0; i < SEED_CONTACTS; i += 50) {
  await Promise.all(
    Array.from({ length: 50 }, (_, j) => {
      const n = i + j;
      known.push(phone("212", n));
      return mustCall("POST", "/v1/contacts", {
        phone_number: phone("212", n),
        first_name: FIRST_NAMES[n % FIRST_NAMES.length],
        last_name: `Seed${n}`,
      });
    }),
  );
}
for (let i = 0; i < SEED_THREADS; i += 50) {
  await Promise.all(
    Array.from({ length: 50 }, async (_, j) => {
      const to = known[i + j];
      await mustCall("POST", "/v1/messages", { to, body: sentence(6) });
      await mustCall("POST", "/v1/sandbox/inbound", { from: to, to: NUMBERS[0], body: sentence(5) });
    }),
  );
}
const seedSeconds = (performance.now() - seedStarted) / 1000;
await Bun.sleep(5000);
const idleRss = rssMb(pid);

// Load.
const counters = { contacts: 0, newSends: 0, newInbound: 0 };
const latencies = new Map<Kind, number[]>(MIX.map(([kind]) => [kind, []]));
const errors = new Map<Kind, number>(MIX.map(([kind]) => [kind, 0]));
const errorSamples: string[] = [];
interface Window {
  requests: number;
  errors: number;
  latencies: number[];
  rss: number[];
  /** Server CPU seconds (user + system) at the window's samples. */
  cpu: number[];
}
const windows: Window[] = [];
const windowAt = (seconds: number): Window => {
  const i = Math.floor(seconds / ROW_SECONDS);
  while (windows.length <= i) windows.push({ requests: 0, errors: 0, latencies: [], rss: [], cpu: [] });
  return windows[i];
};

function request(kind: Kind): Promise<Response> {
  switch (kind) {
    case "GET /v1/me":
      return call("GET", "/v1/me");
    case "GET /v1/contacts (page)":
      return call("GET", `/v1/contacts?limit=50&offset=${Math.floor(Math.random() * 20) * 50}`);
    case "POST /v1/contacts": {
      const n = counters.contacts++;
      return call("POST", "/v1/contacts", {
        phone_number: phone("646", n),
        first_name: pick(FIRST_NAMES),
        last_name: `Soak${n}`,
        fields: { plan: pick(["free", "pro", "team"]) },
      });
    }
    case "POST /v1/messages (known number)":
      return call("POST", "/v1/messages", { to: pick(known), body: sentence(3 + (counters.newSends % 8)) });
    case "POST /v1/messages (new number)":
      return call("POST", "/v1/messages", { to: phone("718", counters.newSends++), body: sentence(6) });
    case "GET /v1/conversations?q=":
      return call(
        "GET",
        `/v1/conversations?q=${encodeURIComponent(Math.random() < 0.8 ? pick(WORDS) : pick(FIRST_NAMES))}&limit=20`,
      );
    case "POST /v1/sandbox/inbound": {
      const from = Math.random() < 0.8 ? pick(known) : phone("917", counters.newInbound++);
      return call("POST", "/v1/sandbox/inbound", { from, to: pick(NUMBERS), body: sentence(4) });
    }
  }
}

/** CPU time (user + system) of a process so far, in seconds (Linux). */
function cpuSeconds(processId: number): number {
  const fields = readFileSync(`/proc/${processId}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const durationMs = MINUTES * 60_000;
const cpuAtStart = cpuSeconds(pid);
const loadAtStart = loadavg()[0];
const started = performance.now();
const elapsed = () => (performance.now() - started) / 1000;
const rssSamples: { t: number; mb: number }[] = [{ t: 0, mb: rssMb(pid) }];
const sampler = setInterval(() => {
  const t = elapsed();
  const mb = rssMb(pid);
  rssSamples.push({ t, mb });
  if (t < MINUTES * 60) {
    const window = windowAt(t);
    window.rss.push(mb);
    window.cpu.push(cpuSeconds(pid));
  }
}, SAMPLE_MS);
/** The server's own memory figures (GET /metrics): JavaScript heap used and reserved, external. */
async function heapMb(): Promise<string> {
  try {
    const text = await (await fetch(`${base}/metrics`)).text();
    const value = (kind: string) =>
      Number(
        text.match(new RegExp(`outreach_process_memory_bytes\\{kind="${kind}"\\} (\\d+)`))?.[1] ?? Number.NaN,
      ) / 1048576;
    return `heap ${value("heap_used").toFixed(0)}/${value("heap_total").toFixed(0)} MB, external ${value("external").toFixed(0)} MB`;
  } catch {
    return "heap –";
  }
}
const progress = setInterval(async () => {
  const last = rssSamples[rssSamples.length - 1];
  const sent = windows.reduce((sum, w) => sum + w.requests, 0);
  const failed = windows.reduce((sum, w) => sum + w.errors, 0);
  console.error(
    `  ${Math.round(elapsed())} s: ${sent} requests, ${failed} errors, RSS ${last.mb.toFixed(0)} MB, ${await heapMb()}`,
  );
}, 30_000);

/**
 * One client: a request every CLIENTS/RPS seconds on a fixed schedule; a client that fell behind
 * (slow answers) catches up on at most one second of missed requests.
 */
async function client(index: number) {
  const interval = (1000 * CLIENTS) / RPS;
  let due = started + (interval * index) / CLIENTS;
  while (true) {
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    const t0 = performance.now();
    if (t0 - started >= durationMs) return;
    due = Math.max(due + interval, t0 - 1000);
    const kind = pickKind();
    const window = windowAt((t0 - started) / 1000);
    window.requests++;
    let failure: string | null = null;
    try {
      const answer = await request(kind);
      const text = await answer.text();
      if (answer.status < 200 || answer.status > 299) failure = `${answer.status} ${text.slice(0, 160)}`;
    } catch (error) {
      failure = String(error);
    }
    const ms = performance.now() - t0;
    latencies.get(kind)?.push(ms);
    window.latencies.push(ms);
    if (failure) {
      window.errors++;
      errors.set(kind, (errors.get(kind) ?? 0) + 1);
      if (errorSamples.length < 10) errorSamples.push(`${kind}: ${failure}`);
    }
  }
}

await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
const loadSeconds = elapsed();
const loadAtEnd = loadavg()[0];
clearInterval(progress);
await Bun.sleep(30_000);
clearInterval(sampler);
const afterRss = rssMb(pid);
await server.stop();
if (process.env.BENCH_KEEP) console.error(`kept ${server.dbPath}`);
else rmSync(dirname(server.dbPath), { recursive: true, force: true });

// Report.
const quantile = (values: number[], q: number) => {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const ms = (value: number) => (Number.isNaN(value) ? "–" : value < 10 ? value.toFixed(1) : value.toFixed(0));
const mb = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : "–");
const duringLoad = rssSamples.filter((s) => s.t <= loadSeconds);
const peak = Math.max(...duringLoad.map((s) => s.mb));
/** Max and mean of the RSS samples taken during minute `minute` of the load (1-based). */
const minuteRss = (minute: number) => {
  const inMinute = duringLoad.filter((s) => s.t > (minute - 1) * 60 && s.t <= minute * 60).map((s) => s.mb);
  if (inMinute.length === 0) return { max: Number.NaN, mean: Number.NaN };
  return { max: Math.max(...inMinute), mean: inMinute.reduce((a, b) => a + b, 0) / inMinute.length };
};
const lastMinute = Math.max(1, Math.floor(durationMs / 60_000));
const third = MINUTES >= 4 ? minuteRss(3) : { max: Number.NaN, mean: Number.NaN };
const last = minuteRss(lastMinute);
const idle = Math.max(idleRss, afterRss);
const total = [...latencies.values()].reduce((sum, v) => sum + v.length, 0);
const errorTotal = [...errors.values()].reduce((sum, n) => sum + n, 0);

const lines: string[] = [];
const out = (line = "") => lines.push(line);
out(
  `Soak: ${MINUTES} min, ${CLIENTS} clients paced at ${RPS} req/s, RATE_LIMIT_RPS=0, simulated carrier, ` +
    `worker on; seeded ${SEED_CONTACTS} contacts, ${SEED_THREADS} threads, ${NUMBERS.length} numbers in ${seedSeconds.toFixed(1)} s.`,
);
out(
  `Achieved ${Math.round(total / loadSeconds)} req/s (${total} requests), errors ${errorTotal}. ` +
    `RSS: fresh ${mb(freshRss)} MB, idle after seeding ${mb(idleRss)} MB, peak ${mb(peak)} MB, ` +
    `third minute ${mb(third.max)} MB (mean ${mb(third.mean)}), last minute ${mb(last.max)} MB (mean ${mb(last.mean)}), ` +
    `30 s after the load ${mb(afterRss)} MB. ` +
    `Machine load average ${loadAtStart.toFixed(1)} at the start, ${loadAtEnd.toFixed(1)} at the end (2 cores, shared).`,
);
out();
out("| time | RSS at end (MB) | RSS max (MB) | req/s | p50 (ms) | p99 (ms) | errors | server CPU |");
out("|---|---|---|---|---|---|---|---|");
let cpuBefore = cpuAtStart;
windows.forEach((w, i) => {
  const from = i * ROW_SECONDS;
  const to = Math.min((i + 1) * ROW_SECONDS, loadSeconds);
  if (to <= from) return;
  const end = w.rss.length ? w.rss[w.rss.length - 1] : Number.NaN;
  const max = w.rss.length ? Math.max(...w.rss) : Number.NaN;
  const label = ROW_SECONDS === 60 ? `min ${i + 1}` : `${from}–${Math.round(to)} s`;
  const cpuEnd = w.cpu.length ? w.cpu[w.cpu.length - 1] : cpuBefore;
  const cpuShare = `${Math.round((100 * (cpuEnd - cpuBefore)) / (to - from))} %`;
  cpuBefore = cpuEnd;
  out(
    `| ${label} | ${mb(end)} | ${mb(max)} | ${Math.round(w.requests / (to - from))} | ${ms(quantile(w.latencies, 0.5))} | ${ms(quantile(w.latencies, 0.99))} | ${w.errors} | ${cpuShare} |`,
  );
});
out();
out("| request | share | count | p50 (ms) | p99 (ms) | errors |");
out("|---|---|---|---|---|---|");
for (const [kind, weight] of MIX) {
  const values = latencies.get(kind) ?? [];
  out(
    `| ${kind} | ${Math.round((100 * weight) / WEIGHT_TOTAL)} % | ${values.length} | ${ms(quantile(values, 0.5))} | ${ms(quantile(values, 0.99))} | ${errors.get(kind)} |`,
  );
}
out();
const verdict = (ok: boolean) => (ok ? "met" : "**missed**");
out("| figure | target | measured | verdict |");
out("|---|---|---|---|");
out(
  `| idle RSS (after seeding / 30 s after the load) | ≤ 120 MB | ${mb(idleRss)} / ${mb(afterRss)} MB | ${verdict(idle <= 120)} |`,
);
out(`| peak RSS under load | ≤ 256 MB | ${mb(peak)} MB | ${verdict(peak <= 256)} |`);
out(
  `| last-minute RSS vs third minute (max of the samples in each) | ≤ | ${mb(last.max)} vs ${mb(third.max)} MB | ${Number.isNaN(third.max) ? "n/a (run ≥ 4 min)" : verdict(last.max <= third.max)} |`,
);
out(`| errors | 0 | ${errorTotal} | ${verdict(errorTotal === 0)} |`);
if (errorSamples.length) {
  out();
  out("First errors:");
  for (const sample of errorSamples) out(`- ${sample}`);
}
console.log(lines.join("\n"));
