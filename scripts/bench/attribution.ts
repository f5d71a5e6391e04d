/**
 * Attribution figures (issue 11), against the built binary `dist/outreach` on temp databases:
 *
 *  1. http: wrk (1 thread, 64 connections) against a raw Bun.serve hello server, then
 *     `GET /r/{code}` (302s over 1,001 seeded links: the offer's own and per-recipient ones), then
 *     `POST /v1/conversion` (a distinct txn per request; identifiers rotate phone, email,
 *     external_id, vcx, vid over 100,000 seeded contacts, 20,000 clicks and 5,000 visitors), all in
 *     the same run; ROUNDS rounds (default 2), each with its own hello figure.
 *  2. analytics: 1,000,000 messages, 100,000 conversions, 200,000 clicks and 5,000 opt-outs over
 *     90 days seeded into the database file with bun:sqlite, then `GET /v1/analytics/overview`
 *     (default 30-day window and the 90 days) and `GET /v1/analytics/timeseries` by day over 90 days
 *     for every metric: p50/p99 over CALLS calls each, measured by the client (HTTP included).
 *
 * Usage: npm run bench attribution            (PART=http|analytics for one half; ROUNDS, CALLS,
 *        SECONDS, MESSAGES, CONVERSIONS to change the sizes)
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import {
  conversionScript,
  redirectScript,
  type StartedServer,
  startBinary,
  startHelloServer,
  wrk,
} from "./support";

const PART = process.env.PART ?? "all";
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const SECONDS = Number(process.env.SECONDS ?? 10);
const CALLS = Number(process.env.CALLS ?? 30);
const MESSAGES = Number(process.env.MESSAGES ?? 1_000_000);
const CONVERSIONS = Number(process.env.CONVERSIONS ?? 100_000);
const CONTACTS = 100_000;
const LINKS = 1000;
const CLICKS = 20_000;
const VISITORS = 5000;
const DAY = 86_400_000;

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
const quantile = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
};

function api(server: StartedServer, method: string, path: string, body?: unknown) {
  return fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
}

const phoneOf = (i: number) => `+1415${String(2_000_000 + i).padStart(7, "0")}`;
/** Time-ordered UUIDs like the server's (Bun.randomUUIDv7). */
const idAt = (ms: number) => Bun.randomUUIDv7("hex", ms);

// ---------------------------------------------------------------------------------------------
// 1. Redirects and conversions against hello
// ---------------------------------------------------------------------------------------------

async function benchHttp(dir: string) {
  const dbPath = join(dir, "http.db");
  let server = await startBinary({ dbPath });
  const { key, workspaceId } = server;
  const offer = await api(server, "POST", "/v1/offers", {
    name: "Spring sale",
    destination_url: "https://shop.example.com/spring?utm_source=sms",
    value: 49.9,
  });
  if (offer.status !== 200) throw new Error(`creating the offer failed: ${JSON.stringify(offer.body)}`);
  const offerRow = offer.body.offer as { id: string; tracking_url: string };
  const offerCode = offerRow.tracking_url.split("/r/")[1] as string;
  await server.stop();

  // Contacts, per-recipient links, clicks and visitors, straight into the file.
  const now = Date.now();
  const db = new Database(dbPath);
  db.exec("PRAGMA busy_timeout = 10000");
  const insertContact = db.prepare(
    "INSERT INTO contacts (id, workspace_id, phone_number, first_name, email, external_id, source, opted_in, fields, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'import', 1, '{}', ?, ?)",
  );
  const insertLink = db.prepare(
    "INSERT INTO tracked_links (code, workspace_id, offer_id, contact_id, campaign_id, message_id, number_id, created_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
  );
  const insertClick = db.prepare(
    "INSERT INTO clicks (id, workspace_id, offer_id, code, contact_id, campaign_id, message_id, number_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)",
  );
  const insertVisitor = db.prepare(
    "INSERT INTO visitors (workspace_id, vid, contact_id, click_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const contactIds: string[] = [];
  const codes: string[] = [offerCode];
  const clickIds: string[] = [];
  const vids: string[] = [];
  const campaignId = idAt(now - 10 * DAY);
  db.transaction(() => {
    for (let i = 0; i < CONTACTS; i++) {
      const at = now - 60 * DAY + i;
      const id = idAt(at);
      contactIds.push(id);
      insertContact.run(id, workspaceId, phoneOf(i), `Name${i}`, `user${i}@example.com`, `crm-${i}`, at, at);
    }
    for (let i = 0; i < LINKS; i++) {
      const code = `Bench${String(i).padStart(5, "0")}`;
      codes.push(code);
      insertLink.run(
        code,
        workspaceId,
        offerRow.id,
        contactIds[i * 7],
        campaignId,
        idAt(now - DAY),
        now - DAY,
      );
    }
    for (let i = 0; i < CLICKS; i++) {
      const at = now - 20 * DAY + i * 60_000;
      const id = idAt(at);
      clickIds.push(id);
      const contact = contactIds[(i * 5) % CONTACTS];
      insertClick.run(id, workspaceId, offerRow.id, offerCode, contact, campaignId, idAt(at - 1000), at);
    }
    for (let i = 0; i < VISITORS; i++) {
      const vid = crypto.randomUUID();
      vids.push(vid);
      insertVisitor.run(workspaceId, vid, contactIds[(i * 11) % CONTACTS], clickIds[i % CLICKS], now, now);
    }
  })();
  db.close();

  const redirectLua = redirectScript(dir, codes);
  const conversionLua = (prefix: string) =>
    conversionScript(dir, prefix, { contacts: CONTACTS, clickIds, vids });

  const rows: string[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const before = load();
    const hello = await startHelloServer();
    const baseline = wrk(hello.url, { seconds: SECONDS });
    await hello.stop();
    server = await startBinary({ dbPath, fromSource: process.env.BENCH_SOURCE === "1" });
    const redirects = wrk(`${server.url}/r/x`, { seconds: SECONDS, script: redirectLua });
    const converted = wrk(`${server.url}/v1/conversion`, {
      seconds: SECONDS,
      headers: [`Authorization: Bearer ${key}`],
      script: conversionLua(`bench${round}-${now}`),
    });
    await server.stop();
    const recorded = new Database(dbPath, { readonly: true });
    const counts = recorded
      .query("SELECT count(*) AS n, count(click_id) AS attributed FROM conversions WHERE txn LIKE ? || '-%'")
      .get(`bench${round}-${now}`) as { n: number; attributed: number };
    recorded.close();
    if (redirects.non2xx > 0 && !/Non-2xx/.test(redirects.raw)) throw new Error("unexpected wrk output");
    rows.push(
      `| ${round} | ${before} | ${fmt(baseline.rps)} | ${fmt(redirects.rps)} (${redirects.non2xx} non-3xx) | **${(redirects.rps / baseline.rps).toFixed(2)}** | ${fmt(converted.rps)} (${converted.non2xx} non-2xx; ${fmt(counts.n)} recorded, ${fmt(counts.attributed)} attributed) | **${(converted.rps / baseline.rps).toFixed(2)}** |`,
    );
    console.error(rows.at(-1));
  }
  return [
    `wrk -t1 -c64 -d${SECONDS}s, hello then redirects then conversions in each round; ${fmt(CONTACTS)} contacts, ${fmt(LINKS + 1)} links, ${fmt(CLICKS)} clicks, ${fmt(VISITORS)} visitors seeded`,
    "",
    "| round | load average (1/5/15 min) before | hello req/s | GET /r/{code} 302/s | ratio (≥ 0.30) | POST /v1/conversion req/s | ratio (≥ 0.15) |",
    "|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------
// 2. Analytics over a large workspace
// ---------------------------------------------------------------------------------------------

async function benchAnalytics(dir: string) {
  const dbPath = join(dir, "analytics.db");
  let server = await startBinary({ dbPath });
  const { workspaceId } = server;
  await server.stop();

  const now = Date.now();
  const start = now - 90 * DAY;
  const db = new Database(dbPath);
  db.exec("PRAGMA busy_timeout = 10000");
  const numberIds = Array.from({ length: 10 }, (_, i) => idAt(start - DAY + i));
  const insertNumber = db.prepare(
    "INSERT INTO numbers (id, workspace_id, number, status, timezone, created_at, updated_at) VALUES (?, ?, ?, 'active', 'America/Los_Angeles', ?, ?)",
  );
  const insertMessage = db.prepare(
    "INSERT INTO messages (id, workspace_id, direction, sender, from_number, to_number, body, status, segments, encoding, contact_id, number_id, campaign_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'GSM-7', ?, ?, ?, ?, ?)",
  );
  const insertConversion = db.prepare(
    "INSERT INTO conversions (id, workspace_id, txn, event, value, currency, contact_id, click_id, offer_id, campaign_id, message_id, number_id, agent_id, flow_id, created_at) VALUES (?, ?, ?, ?, ?, 'USD', ?, ?, ?, ?, NULL, NULL, NULL, NULL, ?)",
  );
  const insertClick = db.prepare(
    "INSERT INTO clicks (id, workspace_id, offer_id, code, contact_id, campaign_id, message_id, number_id, created_at) VALUES (?, ?, ?, 'Bench', ?, ?, NULL, NULL, ?)",
  );
  const insertOptOut = db.prepare(
    "INSERT INTO suppressions (id, workspace_id, phone_number, reason, source, created_at) VALUES (?, ?, ?, 'opt_out', 'sms', ?)",
  );
  const STATUSES = [
    "DELIVERED",
    "DELIVERED",
    "DELIVERED",
    "DELIVERED",
    "DELIVERED",
    "SENT",
    "UNDELIVERED",
    "FAILED",
  ];
  const offerId = idAt(start);
  const campaignIds = Array.from({ length: 20 }, (_, i) => idAt(start + i * 4 * DAY));
  const t0 = performance.now();
  let seed = 7;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  numberIds.forEach((id, i) => {
    insertNumber.run(id, workspaceId, `+1415555${String(1000 + i)}`, start, start);
  });
  // Every table in time order, as a live workspace writes them.
  const write = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const at = start + Math.floor((i / MESSAGES) * 90 * DAY);
      const inbound = random() < 0.2;
      const contact = (i * 13) % CONTACTS;
      insertMessage.run(
        idAt(at),
        workspaceId,
        inbound ? "inbound" : "outbound",
        inbound ? "contact" : "campaign",
        inbound ? phoneOf(contact) : "+14155551000",
        inbound ? "+14155551000" : phoneOf(contact),
        inbound ? "Thanks!" : "Spring sale: 20% off today",
        inbound ? "RECEIVED" : STATUSES[i % STATUSES.length],
        1 + (i % 3 === 0 ? 1 : 0),
        `c${contact}`,
        numberIds[i % numberIds.length],
        inbound ? null : campaignIds[Math.floor((at - start) / (4.5 * DAY)) % campaignIds.length],
        at,
        at,
      );
      if (i % (MESSAGES / CONVERSIONS) === 0)
        insertConversion.run(
          idAt(at),
          workspaceId,
          `order-${i}`,
          i % 4 === 0 ? "lead" : "purchase",
          i % 4 === 0 ? null : Math.round(random() * 20000) / 100,
          `c${contact}`,
          idAt(at - 60_000),
          offerId,
          campaignIds[i % campaignIds.length],
          at,
        );
      if (i % 5 === 0)
        insertClick.run(idAt(at), workspaceId, offerId, `c${contact}`, campaignIds[i % 20], at);
      if (i % 200 === 0) insertOptOut.run(idAt(at), workspaceId, phoneOf(i), at);
    }
  });
  for (let i = 0; i < MESSAGES; i += 20_000) write(i, Math.min(MESSAGES, i + 20_000));
  db.close();
  const seedSecs = (performance.now() - t0) / 1000;

  server = await startBinary({ dbPath });
  const timed = async (path: string) => {
    const times: number[] = [];
    let body: Record<string, unknown> = {};
    for (let i = 0; i < CALLS + 2; i++) {
      const t = performance.now();
      const r = await api(server, "GET", path);
      const ms = performance.now() - t;
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
      if (i >= 2) times.push(ms);
      body = r.body;
    }
    return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), body };
  };
  const from = new Date(now - 90 * DAY).toISOString();
  const to = new Date(now).toISOString();
  const lines: string[] = [];
  const before = load();
  const overview30 = await timed("/v1/analytics/overview");
  const overview90 = await timed(`/v1/analytics/overview?from=${from}&to=${to}`);
  const o = overview90.body.overview as
    | { messages: { sent: number }; conversions: number; clicks: number }
    | undefined;
  lines.push(
    `| overview, default window (last 30 days) | ${overview30.p50.toFixed(1)} | ${overview30.p99.toFixed(1)} | ≤ 100 |`,
    `| overview, 90 days (${fmt(o?.messages.sent ?? 0)} sent, ${fmt(o?.clicks ?? 0)} clicks, ${fmt(o?.conversions ?? 0)} conversions) | ${overview90.p50.toFixed(1)} | ${overview90.p99.toFixed(1)} | ≤ 100 |`,
  );
  for (const metric of ["sent", "delivered", "replies", "opt_outs", "clicks", "conversions", "revenue"]) {
    const r = await timed(`/v1/analytics/timeseries?metric=${metric}&interval=day&from=${from}&to=${to}`);
    const points = (r.body.series as unknown[] | undefined)?.length ?? 0;
    lines.push(
      `| timeseries ${metric}, day, 90 days (${points} points) | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ≤ 150 |`,
    );
  }
  const after = load();
  await server.stop();
  return [
    `${fmt(MESSAGES)} messages (80 % outbound), ${fmt(CONVERSIONS)} conversions, ${fmt(MESSAGES / 5)} clicks, ${fmt(MESSAGES / 200)} opt-outs over 90 days, seeded in ${seedSecs.toFixed(0)} s; ${CALLS} calls each after 2 warm-up calls, one at a time; load average ${before} → ${after}`,
    "",
    "| request | p50 ms | p99 ms | target ms |",
    "|---|---|---|---|",
    ...lines,
  ].join("\n");
}

const dir = mkdtempSync(join(tmpdir(), "outreach-bench-attribution-"));
try {
  const out: string[] = [];
  if (PART === "all" || PART === "http") out.push(await benchHttp(dir));
  if (PART === "all" || PART === "analytics") out.push(await benchAnalytics(dir));
  console.log(`\n${out.join("\n\n")}`);
} finally {
  if (process.env.KEEP_DB === "1") console.error(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
