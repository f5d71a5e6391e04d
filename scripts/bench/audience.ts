/**
 * Audience figures (issue 3), against a real server process on a temp database:
 *
 *  1. CSV import of N rows (default 1,000,000) over HTTP, in parts under the 20 MiB body limit,
 *     compared with a raw batched bun:sqlite insert of the same rows into the same table in the
 *     same run; the server's RSS is sampled during the import (growth = peak − before).
 *  2. Segment members (first page) and count on N generated contacts with a 3-rule segment:
 *     one custom field, one list membership, one date rule.
 *
 * Usage: bun scripts/bench/audience.ts            (N=1000000; N=100000 for a quick run)
 *        PART=import|segments to run one half.  USE_BINARY=1 runs dist/outreach instead of src.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../../src/db/migrate";
import { binary, rssMb, type StartedServer, startBinary } from "./support";

const N = Number(process.env.N ?? 1_000_000);
const PART = process.env.PART ?? "all";
const MAX_PART_BYTES = 19 * 1024 * 1024;
const DAY = 86_400_000;

type Server = StartedServer;

/** The server under test: dist/outreach with USE_BINARY=1 (when built), else the source. */
function startServer(dbPath: string): Promise<Server> {
  const fromSource = !(process.env.USE_BINARY === "1" && existsSync(binary));
  return startBinary({ dbPath, fromSource, env: { LOG_LEVEL: "warn" } });
}

function api(server: Server, method: string, path: string, body?: unknown) {
  return fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
}

const AREA_CODES = ["212", "415", "312", "303", "202", "617", "713", "305", "206", "404"];
const PLANS = ["free", "pro", "team", "enterprise"];

function phoneOf(i: number): string {
  return `+1${AREA_CODES[i % AREA_CODES.length]}${String(2_000_000 + Math.floor(i / AREA_CODES.length)).padStart(7, "0")}`;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p95 = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))] as number;
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

// ---------------------------------------------------------------------------------------------
// 1. Import
// ---------------------------------------------------------------------------------------------

async function benchImport() {
  const dir = mkdtempSync(join(tmpdir(), "outreach-bench-audience-"));
  // The rows, as CSV parts under the body limit.
  const parts: string[] = [];
  const header = "phone_number,first_name,last_name,email,plan\n";
  let chunk: string[] = [];
  let bytes = header.length;
  for (let i = 0; i < N; i++) {
    const line = `${phoneOf(i)},First${i},Last${i},user${i}@example.com,${PLANS[i % 4]}\n`;
    if (bytes + line.length > MAX_PART_BYTES) {
      parts.push(header + chunk.join(""));
      chunk = [];
      bytes = header.length;
    }
    chunk.push(line);
    bytes += line.length;
  }
  if (chunk.length) parts.push(header + chunk.join(""));

  // Raw baseline: the same rows, batched prepared INSERTs straight into the contacts table.
  const rawPath = join(dir, "raw.db");
  const raw = new Database(rawPath, { create: true });
  raw.exec("PRAGMA journal_mode = WAL");
  raw.exec("PRAGMA synchronous = NORMAL");
  migrate(raw);
  const insert = raw.prepare(
    "INSERT INTO contacts (id, workspace_id, phone_number, first_name, last_name, email, external_id, source, opted_in, timezone, fields, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, NULL, 'import', 1, NULL, ?, ?, ?)",
  );
  const now = Date.now();
  const t0 = performance.now();
  const batch = raw.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      insert.run(
        Bun.randomUUIDv7(),
        "ws",
        phoneOf(i),
        `First${i}`,
        `Last${i}`,
        `user${i}@example.com`,
        `{"plan":"${PLANS[i % 4]}"}`,
        now,
        now,
      );
    }
  });
  for (let i = 0; i < N; i += 2000) batch(i, Math.min(N, i + 2000));
  const rawSecs = (performance.now() - t0) / 1000;
  raw.close();

  // The server.
  const server = await startServer(join(dir, "server.db"));
  await Bun.sleep(500);
  const rssBefore = rssMb(server.proc.pid);
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    try {
      rssPeak = Math.max(rssPeak, rssMb(server.proc.pid));
    } catch {
      // process gone
    }
  }, 20);
  let created = 0;
  let errors = 0;
  const t1 = performance.now();
  for (const part of parts) {
    const response = await fetch(`${server.url}/v1/contacts/import`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, "content-type": "text/csv" },
      body: part,
    });
    const body = (await response.json()) as { created: number; errors: unknown[] };
    if (response.status !== 200) throw new Error(`import failed: ${JSON.stringify(body)}`);
    created += body.created;
    errors += body.errors.length;
  }
  const httpSecs = (performance.now() - t1) / 1000;
  clearInterval(sampler);
  rssPeak = Math.max(rssPeak, rssMb(server.proc.pid));
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
  if (created !== N || errors !== 0)
    throw new Error(`expected ${N} created, got ${created} (${errors} errors)`);

  const rawRate = N / rawSecs;
  const httpRate = N / httpSecs;
  return [
    `CSV import of ${fmt(N)} rows (${parts.length} requests of ≤ 19 MiB; columns phone_number, first_name, last_name, email, plan)`,
    "",
    "| measure | value |",
    "|---|---|",
    `| raw batched bun:sqlite INSERT (2,000 rows/transaction) | ${fmt(rawRate)} rows/s (${rawSecs.toFixed(1)} s) |`,
    `| POST /v1/contacts/import (parse, normalise, upsert, contact.created events) | ${fmt(httpRate)} rows/s (${httpSecs.toFixed(1)} s) |`,
    `| ratio import / raw (target ≥ 0.25) | ${(httpRate / rawRate).toFixed(2)} |`,
    `| server RSS before → peak during import | ${fmt(rssBefore)} MB → ${fmt(rssPeak)} MB |`,
    `| server RSS growth (target ≤ 200 MB) | ${fmt(rssPeak - rssBefore)} MB |`,
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------
// 2. Segments
// ---------------------------------------------------------------------------------------------

async function benchSegments() {
  const dir = mkdtempSync(join(tmpdir(), "outreach-bench-audience-"));
  const server = await startServer(join(dir, "server.db"));
  const list = (await api(server, "POST", "/v1/lists", { name: "Bench list" })).body.list as { id: string };

  // Generated data, written straight into the server's database file (WAL: the server keeps running).
  const db = new Database(server.dbPath);
  db.exec("PRAGMA busy_timeout = 10000");
  const insertContact = db.prepare(
    "INSERT INTO contacts (id, workspace_id, phone_number, first_name, last_name, email, external_id, source, opted_in, timezone, fields, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, NULL, NULL, 'api', ?, 'America/New_York', ?, ?, ?)",
  );
  const insertMember = db.prepare(
    "INSERT INTO list_members (list_id, contact_id, workspace_id, created_at) VALUES (?, ?, ?, ?)",
  );
  const now = Date.now();
  let seed = 42;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  // Contacts are created over the past year, oldest first (ids are time-ordered like real ones).
  const t0 = performance.now();
  const write = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const createdAt = now - 365 * DAY + Math.floor((i / N) * 365 * DAY);
      const id = Bun.randomUUIDv7("hex", createdAt);
      const plan = PLANS[Math.floor(random() * 4)];
      insertContact.run(
        id,
        server.workspaceId,
        phoneOf(i),
        `Name${i}`,
        random() < 0.97 ? 1 : 0,
        JSON.stringify({ plan, seats: 1 + Math.floor(random() * 50) }),
        createdAt,
        createdAt,
      );
      if (random() < 0.2) insertMember.run(list.id, id, server.workspaceId, createdAt);
    }
  });
  for (let i = 0; i < N; i += 10_000) write(i, Math.min(N, i + 10_000));
  db.close();
  const genSecs = (performance.now() - t0) / 1000;

  const rules = {
    all: [
      { field: "fields.plan", op: "eq", value: "pro" },
      { in_list: list.id },
      { field: "created_at", op: "within_last_days", value: 90 },
    ],
  };
  const created = await api(server, "POST", "/v1/segments", { name: "Pro, in list, last 90 days", rules });
  const segmentId = (created.body.segment as { id: string }).id;

  const timed = async (path: string, runs: number) => {
    const times: number[] = [];
    let last: Record<string, unknown> = {};
    for (let i = 0; i < runs + 2; i++) {
      const t = performance.now();
      const r = await api(server, "GET", path);
      const ms = performance.now() - t;
      if (r.status !== 200) throw new Error(`${path}: ${JSON.stringify(r.body)}`);
      if (i >= 2) times.push(ms);
      last = r.body;
    }
    return { median: median(times), p95: p95(times), body: last };
  };
  // Cold: right after an audience write (a contact edited), so the total is recounted.
  const someContact = (
    (await api(server, "GET", "/v1/contacts?limit=1")).body.contacts as { id: string }[]
  )[0];
  const coldMembers: number[] = [];
  const coldCount: number[] = [];
  for (let i = 0; i < 5; i++) {
    await api(server, "PATCH", `/v1/contacts/${someContact?.id}`, { first_name: `Edited${i}` });
    let t = performance.now();
    await api(server, "GET", `/v1/segments/${segmentId}/members?limit=50`);
    coldMembers.push(performance.now() - t);
    await api(server, "PATCH", `/v1/contacts/${someContact?.id}`, { first_name: `Again${i}` });
    t = performance.now();
    await api(server, "GET", `/v1/segments/${segmentId}`);
    coldCount.push(performance.now() - t);
  }
  const members = await timed(`/v1/segments/${segmentId}/members?limit=50`, 20);
  const deep = await timed(`/v1/segments/${segmentId}/members?limit=50&offset=5000`, 10);
  const count = await timed(`/v1/segments/${segmentId}`, 10);
  const total = (count.body.segment as { count: number }).count;
  await server.stop();
  if (process.env.KEEP_DB === "1")
    console.error(`kept ${server.dbPath} (list ${list.id}, segment ${segmentId})`);
  else rmSync(dir, { recursive: true, force: true });
  return [
    `Segment on ${fmt(N)} contacts (generated in ${genSecs.toFixed(0)} s: created over the past year, plan uniform over 4 values, 20% in the list):`,
    '`{"all":[{"field":"fields.plan","op":"eq","value":"pro"},{"in_list":L},{"field":"created_at","op":"within_last_days","value":90}]}`',
    `→ ${fmt(total)} members.`,
    "",
    "| call | median | p95 |",
    "|---|---|---|",
    `| GET /v1/segments/{id}/members?limit=50 right after a contact write (page + recount) | ${median(coldMembers).toFixed(1)} ms | ${p95(coldMembers).toFixed(1)} ms |`,
    `| GET /v1/segments/{id} right after a contact write (recount) | ${median(coldCount).toFixed(1)} ms | ${p95(coldCount).toFixed(1)} ms |`,
    `| GET /v1/segments/{id}/members?limit=50, repeated (page + cached total) | ${members.median.toFixed(1)} ms | ${members.p95.toFixed(1)} ms |`,
    `| GET /v1/segments/{id}/members?limit=50&offset=5000 | ${deep.median.toFixed(1)} ms | ${deep.p95.toFixed(1)} ms |`,
    `| GET /v1/segments/{id}, repeated (cached count) | ${count.median.toFixed(1)} ms | ${count.p95.toFixed(1)} ms |`,
  ].join("\n");
}

const out: string[] = [`Audience benchmark, N=${fmt(N)}, ${new Date().toISOString().slice(0, 10)}`, ""];
if (PART === "all" || PART === "import") out.push(await benchImport(), "");
if (PART === "all" || PART === "segments") out.push(await benchSegments(), "");
console.log(out.join("\n"));
