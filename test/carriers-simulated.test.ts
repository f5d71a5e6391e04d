import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import {
  CarrierUnavailableError,
  type OutboundSms,
  SendWithdrawnError,
  type StatusUpdate,
} from "../src/carriers/carrier";
import { listSandboxSends, SimulatedCarrier } from "../src/carriers/simulated";
import { loadConfig } from "../src/config";
import { type DbHandle, openDatabase } from "../src/db/client";
import { migrate } from "../src/db/migrate";
import { jobs, messages } from "../src/db/schema";
import { enqueueAnyJob, enqueueJob, holdLeases, leaseDueJobs, leaseKey } from "../src/jobs/queue";
import { startServer } from "../src/server";
import { TEST_DIALECT } from "./support/postgres";
import { startTestServer, type TestServer } from "./support/server";

/** The policy of the jobs of a kind no server runs ("test.fence"), leased by the tests themselves. */
const FENCE_POLICY = { maxAttempts: 3, timeoutMs: 10_000, backoffMs: () => 1000 };

/** A clock the test moves by hand. */
function manualClock(start = Date.parse("2026-11-21T12:00:00.000Z")) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function openTempDb(): { handle: DbHandle; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "outreach-sim-"));
  const handle = openDatabase(join(dir, "sim.db"));
  migrate(handle.sqlite);
  return { handle, dir };
}

const WORKSPACE = "0193aaaa-0000-7000-8000-0000000000ff";
const sms = (n: number, to = "+14155550123"): OutboundSms => ({
  messageId: `0193aaaa-0000-7000-8000-${String(n).padStart(12, "0")}`,
  workspaceId: WORKSPACE,
  from: "+14155550100",
  to,
  body: `message ${n}`,
  statusCallbackUrl: "",
});

/**
 * Two reporters on one ledger (two servers), each with a sink slow by `sinkMs` (the other's turn
 * comes while a batch is out), after 40 sends made by both in turn: each delivery is reported
 * once, and by both of them between them. Answers the two carriers.
 */
async function expectEachReportedOnce(
  db: DbHandle["db"],
  clock: ReturnType<typeof manualClock>,
  message: (n: number) => OutboundSms,
  sinkMs: number,
): Promise<SimulatedCarrier[]> {
  const reported: string[][] = [[], []];
  const carriers = [0, 1].map((i) => {
    const carrier = new SimulatedCarrier(db, clock, { deliveryDelayMs: 0, batchSize: 7 });
    carrier.attachSinks({
      onStatus: async (batch) => {
        await Bun.sleep(sinkMs);
        reported[i].push(...batch.map((u) => u.messageId ?? ""));
      },
      onInbound: () => {},
    });
    return carrier;
  });
  // Whatever earlier tests left due on this ledger is reported first, and not counted.
  await Promise.all(carriers.map((c) => c.flushDue()));
  reported[0].length = reported[1].length = 0;
  const ids = Array.from({ length: 40 }, (_, n) => message(n).messageId);
  for (let n = 0; n < 40; n++) await carriers[n % 2].sendSms(message(n));
  // A stopped carrier reports one batch per flush: rounds of both at once until none is left.
  for (let round = 0; round < 10; round++) await Promise.all(carriers.map((c) => c.flushDue()));
  expect([...reported[0], ...reported[1]].sort()).toEqual(ids.sort());
  expect(reported[0].length).toBeGreaterThan(0);
  expect(reported[1].length).toBeGreaterThan(0);
  return carriers;
}

// On the SQLite pass only: these drive the carrier on a SQLite file of their own (the PostgreSQL
// pass runs the carrier through the server below, and this process's SQL is spelled for PostgreSQL).
describe.if(process.env[TEST_DIALECT] !== "postgres")("SimulatedCarrier", () => {
  let dir: string;
  let handle: DbHandle;
  beforeAll(() => {
    ({ handle, dir } = openTempDb());
  });
  afterAll(() => {
    handle.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("accepts a send, records it in the ledger and reports DELIVERED once the delay has passed", async () => {
    const clock = manualClock();
    const carrier = new SimulatedCarrier(handle.db, clock, { deliveryDelayMs: 200 });
    const updates: StatusUpdate[] = [];
    carrier.attachSinks({ onStatus: (batch) => void updates.push(...batch), onInbound: () => {} });
    const result = await carrier.sendSms(sms(1));
    expect(result).toMatchObject({ accepted: true, status: "SENT" });
    expect(await carrier.flushDue()).toBe(0);
    clock.advance(200);
    expect(await carrier.flushDue()).toBe(1);
    expect(updates).toEqual([
      {
        carrierMessageId: (result as { carrierMessageId: string }).carrierMessageId,
        messageId: sms(1).messageId,
        status: "DELIVERED",
      },
    ]);
    expect(await carrier.flushDue()).toBe(0);
  });

  it("is deterministic: the same message gets the same carrier id; searches repeat", async () => {
    const clock = manualClock();
    const a = new SimulatedCarrier(handle.db, clock, { deliveryDelayMs: 0 });
    const b = new SimulatedCarrier(handle.db, clock, { deliveryDelayMs: 0 });
    const first = await a.sendSms(sms(2));
    const second = await b.sendSms(sms(2));
    expect(first).toEqual(second);
    const search = { country: "US", areaCode: "512", limit: 10 };
    expect(await a.searchNumbers(search)).toEqual(await b.searchNumbers(search));
  });

  it("sends a message handed over again once, counting the repeats in handoffs of its one row", async () => {
    const clock = manualClock();
    const carrier = new SimulatedCarrier(handle.db, clock, { deliveryDelayMs: 0 });
    const updates: StatusUpdate[] = [];
    carrier.attachSinks({ onStatus: (batch) => void updates.push(...batch), onInbound: () => {} });
    const workspaceId = "0193aaaa-0000-7000-8000-0000000000ee";
    const one = { ...sms(3), workspaceId };
    const first = await carrier.sendSms(one);
    const acceptedAt = clock.now();
    clock.advance(1);
    // Again later, then twice in one turn (one ledger write for both).
    const again = await carrier.sendSms(one);
    const together = await Promise.all([carrier.sendSms(one), carrier.sendSms(one)]);
    for (const result of [again, ...together]) expect(result).toEqual(first);
    const page = await listSandboxSends(handle.db, workspaceId, { limit: 50, offset: 0 });
    expect(page.total).toBe(1);
    expect(page.sends).toEqual([
      {
        message_id: one.messageId,
        from: one.from,
        to: one.to,
        body: one.body,
        accepted_at: new Date(acceptedAt).toISOString(),
        handoffs: 4,
      },
    ]);
    await carrier.flushDue();
    expect(updates.filter((update) => update.messageId === one.messageId)).toHaveLength(1);
    expect(
      (await listSandboxSends(handle.db, WORKSPACE, { limit: 50, offset: 0 })).sends.length,
    ).toBeGreaterThan(0);
  });

  it("finds an earlier hand-off by our message id (lookupSend)", async () => {
    const carrier = new SimulatedCarrier(handle.db, manualClock(), { deliveryDelayMs: 0 });
    const sent = await carrier.sendSms(sms(4));
    expect(await carrier.lookupSend(sms(4), 0)).toEqual({
      found: true,
      carrierMessageId: (sent as { carrierMessageId: string }).carrierMessageId,
      status: "SENT",
    });
    expect(await carrier.lookupSend(sms(99), 0)).toEqual({ found: false });
  });

  it("withdraws a send whose job lost its lease before its batch was written: nothing reaches the ledger", async () => {
    const carrier = new SimulatedCarrier(handle.db, manualClock(), { deliveryDelayMs: 200 });
    carrier.attachSinks({ onStatus: () => {}, onInbound: () => {} });
    // Both join one turn's write; the first's job loses its lease before the write (asked then).
    let leaseHolds = true;
    const lost = carrier.sendSms({ ...sms(50), stillOurs: () => leaseHolds });
    const kept = carrier.sendSms({ ...sms(51), stillOurs: () => true });
    leaseHolds = false;
    const [withdrawn, sent] = await Promise.allSettled([lost, kept]);
    expect(withdrawn.status === "rejected" && withdrawn.reason).toBeInstanceOf(SendWithdrawnError);
    expect(sent).toMatchObject({ status: "fulfilled", value: { accepted: true } });
    expect(await carrier.lookupSend(sms(50), 0)).toEqual({ found: false });
    expect(await carrier.lookupSend(sms(51), 0)).toMatchObject({ found: true });
  });

  it("writes a send only while the database says its job's lease is held: a job taken by another worker withdraws it", async () => {
    const carrier = new SimulatedCarrier(handle.db, manualClock(), { deliveryDelayMs: 200 });
    carrier.attachSinks({ onStatus: () => {}, onInbound: () => {} });
    const id = await enqueueAnyJob(handle.db, "test.fence", {}, { maxAttempts: 3 });
    if (!id) throw new Error("no job");
    const [first] = await leaseDueJobs(handle.db, {
      workerId: "w1",
      limit: 1,
      now: Date.now(),
      kinds: ["test.fence"],
      policyOf: () => FENCE_POLICY,
    });
    expect(first).toMatchObject({ id, lockedBy: "w1", attempts: 1 });
    expect(await carrier.sendSms({ ...sms(60), stillOurs: () => true, lease: first })).toMatchObject({
      accepted: true,
    });
    // Its process frozen past the lease: another worker took the job, though this clock says not.
    const [second] = await leaseDueJobs(handle.db, {
      workerId: "w2",
      limit: 1,
      now: Date.now() + FENCE_POLICY.timeoutMs + 1,
      kinds: ["test.fence"],
      policyOf: () => FENCE_POLICY,
    });
    expect(second).toMatchObject({ id, lockedBy: "w2", attempts: 2 });
    const late = carrier.sendSms({ ...sms(61), stillOurs: () => true, lease: first });
    const current = carrier.sendSms({ ...sms(62), stillOurs: () => true, lease: second });
    const [withdrawn, sent] = await Promise.allSettled([late, current]);
    expect(withdrawn.status === "rejected" && withdrawn.reason).toBeInstanceOf(SendWithdrawnError);
    expect(sent).toMatchObject({ status: "fulfilled", value: { accepted: true } });
    expect(await carrier.lookupSend(sms(61), 0)).toEqual({ found: false });
    expect(await carrier.lookupSend(sms(62), 0)).toMatchObject({ found: true });
  });

  it("applies the magic numbers", async () => {
    // Later than every earlier test's sends, so the first flush clears them.
    const clock = manualClock(Date.parse("2026-11-23T12:00:00.000Z"));
    const carrier = new SimulatedCarrier(handle.db, clock, { deliveryDelayMs: 10 });
    const updates: StatusUpdate[] = [];
    carrier.attachSinks({ onStatus: (batch) => void updates.push(...batch), onInbound: () => {} });
    await carrier.flushDue();
    updates.length = 0;

    expect(await carrier.sendSms(sms(10, "+15005550001"))).toEqual({
      accepted: false,
      errorCode: "invalid_number",
      errorMessage: "The 'To' number is not a valid phone number",
    });
    expect(await carrier.lookupSend(sms(10, "+15005550001"), 0)).toEqual({ found: false });
    await expect(carrier.sendSms(sms(11, "+15005550003"))).rejects.toBeInstanceOf(CarrierUnavailableError);
    await carrier.sendSms(sms(12, "+15005550009"));
    await carrier.sendSms(sms(13, "+15005550004"));
    clock.advance(10);
    await carrier.flushDue();
    expect(updates.map((u) => [u.messageId, u.status, u.errorCode])).toEqual([
      [sms(12).messageId, "UNDELIVERED", "unreachable"],
      [sms(13).messageId, "FAILED", "blocked"],
    ]);
    expect(await carrier.orderNumber("+14155550000")).toEqual({
      ok: false,
      reason: "Number is not available",
    });
    await expect(carrier.orderNumber("+15005550003")).rejects.toBeInstanceOf(CarrierUnavailableError);
    expect((await carrier.orderNumber("+14155551234")).ok).toBe(true);
  });

  it("keeps pending deliveries across a restart and reports them afterwards", async () => {
    const clock = manualClock();
    const before = new SimulatedCarrier(handle.db, clock, { deliveryDelayMs: 60_000 });
    await before.sendSms(sms(20));
    await before.stop();

    const after = new SimulatedCarrier(handle.db, clock, { deliveryDelayMs: 60_000 });
    const updates: StatusUpdate[] = [];
    after.attachSinks({ onStatus: (batch) => void updates.push(...batch), onInbound: () => {} });
    clock.advance(60_000);
    await after.flushDue();
    expect(updates.map((u) => u.messageId)).toContain(sms(20).messageId);
  });

  it("keeps a delivery pending when the sink fails, and reports it on the next flush", async () => {
    const clock = manualClock(Date.parse("2026-11-24T12:00:00.000Z"));
    const carrier = new SimulatedCarrier(handle.db, clock, { deliveryDelayMs: 0 });
    carrier.attachSinks({ onStatus: () => {}, onInbound: () => {} });
    await carrier.flushDue();
    let fail = true;
    const updates: StatusUpdate[] = [];
    carrier.attachSinks({
      onStatus: (batch) => {
        if (fail) throw new Error("database busy");
        updates.push(...batch);
      },
      onInbound: () => {},
    });
    await carrier.sendSms(sms(30));
    await expect(carrier.flushDue()).rejects.toThrow("database busy");
    fail = false;
    await carrier.flushDue();
    expect(updates.map((u) => u.messageId)).toEqual([sms(30).messageId]);
  });

  it("two reporters on one ledger (two servers) report each delivery once, between them", async () => {
    const clock = manualClock(Date.parse("2026-11-25T12:00:00.000Z"));
    await expectEachReportedOnce(handle.db, clock, (n) => sms(500 + n), 2);
  });

  it("searches numbers by area code, contains and type, and hands out none ending in 0000", async () => {
    const carrier = new SimulatedCarrier(handle.db, manualClock(), { deliveryDelayMs: 0 });
    const local = await carrier.searchNumbers({ country: "US", areaCode: "415", contains: "42", limit: 30 });
    expect(local).toHaveLength(30);
    for (const n of local) {
      expect(n.number).toMatch(/^\+1415[2-9]\d{6}$/);
      expect(n.number).toContain("42");
      expect(n.number.endsWith("0000")).toBe(false);
    }
    expect(await carrier.searchNumbers({ country: "FR", limit: 5 })).toEqual([]);
    expect(await carrier.searchNumbers({ country: "US", areaCode: "800", type: "local", limit: 5 })).toEqual(
      [],
    );
  });
});

describe("CARRIER=simulated over HTTP", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => await s.stop());

  async function waitForStatus(id: string, done: (status: string) => boolean) {
    let message = (await s.api("GET", `/v1/messages/${id}`)).body.message;
    for (let i = 0; i < 400 && !done(message.status); i++) {
      await Bun.sleep(25);
      message = (await s.api("GET", `/v1/messages/${id}`)).body.message;
    }
    return message;
  }

  it("delivers a message and lists the hand-off in the sandbox outbox", async () => {
    const number = (await s.api("GET", "/v1/numbers/available?limit=1")).body.numbers[0].number;
    await s.api("POST", "/v1/numbers", { number });
    const sent = await s.api("POST", "/v1/messages", { to: "+14155550188", body: "simulated hello" });
    expect(sent.status).toBe(200);
    const message = await waitForStatus(sent.body.message.id, (status) => status === "DELIVERED");
    expect(message.status).toBe("DELIVERED");
    const outbox = await s.api("GET", "/v1/sandbox/outbox");
    expect(outbox.body.sends).toEqual([
      expect.objectContaining({
        message_id: sent.body.message.id,
        from: number,
        to: "+14155550188",
        body: "simulated hello",
        handoffs: 1,
      }),
    ]);
  });

  it("sends a message that two servers hand over at once only once, counting both hand-offs", async () => {
    const number = (await s.api("GET", "/v1/numbers?limit=1")).body.numbers[0].number;
    const sent = await s.api("POST", "/v1/messages", { to: "+14155550189", body: "asked twice" });
    const id = sent.body.message.id;
    expect((await waitForStatus(id, (status) => status === "DELIVERED")).status).toBe("DELIVERED");
    // Two more nodes' carriers on the same database hand the message over again, together.
    const nodes = [0, 1].map(
      () => new SimulatedCarrier(s.server.handle.db, manualClock(), { deliveryDelayMs: 60_000 }),
    );
    const handOff = { messageId: id, workspaceId: s.workspaceId, from: number, to: "+14155550189" };
    const results = await Promise.all(
      nodes.map((node) => node.sendSms({ ...handOff, body: "asked twice", statusCallbackUrl: "" })),
    );
    const row = (await s.api("GET", "/v1/sandbox/outbox?limit=200")).body.sends.filter(
      (send: { message_id: string }) => send.message_id === id,
    );
    expect(row).toEqual([expect.objectContaining({ message_id: id, handoffs: 3 })]);
    // Each is answered with the ledger row's carrier id: the one send the carrier made.
    expect(results[0]).toMatchObject({ accepted: true, status: "SENT" });
    expect(results[1]).toEqual(results[0]);
  });

  it("marks a send batch's hand-off on its job, and a re-run of the job asks the carrier before sending again", async () => {
    const { db } = s.server.handle;
    const sent = await s.api("POST", "/v1/messages", { to: "+14155550190", body: "batch marker" });
    const id = sent.body.message.id;
    const delivered = await waitForStatus(id, (status) => status === "DELIVERED");
    // Its batch job carries the marker, committed before the hand-off; the message has none.
    const batches = (await db.select().from(jobs).where(eq(jobs.kind, "messages.send_batch")).all()).filter(
      (job) => (job.payload as { message_ids: string[] }).message_ids.includes(id),
    );
    expect(batches).toHaveLength(1);
    const marker = (batches[0].payload as { handoff_started_at?: number }).handoff_started_at;
    expect(marker).toBeNumber();
    expect(marker as number).toBeLessThanOrEqual(Date.parse(delivered.sent_at));
    const row = await db.select().from(messages).where(eq(messages.id, id)).get();
    expect(row?.handoffStartedAt).toBeNull();

    // As after a crash between the hand-off and its record: the carrier has the message, ours
    // says PENDING, and the job runs again with the marker its first attempt left.
    await db
      .update(messages)
      .set({ status: "PENDING", carrierMessageId: null, sentAt: null, deliveredAt: null })
      .where(eq(messages.id, id))
      .run();
    await enqueueJob(
      db,
      "messages.send_batch",
      { message_ids: [id], handoff_started_at: marker as number },
      { workspaceId: s.workspaceId },
    );
    const settled = await waitForStatus(id, (status) => status !== "PENDING" && status !== "QUEUED");
    expect(settled.status).toBe("DELIVERED");
    const outbox = (await s.api("GET", "/v1/sandbox/outbox?limit=200")).body.sends.filter(
      (send: { message_id: string }) => send.message_id === id,
    );
    // Found by its id, not handed over a second time.
    expect(outbox).toEqual([expect.objectContaining({ message_id: id, handoffs: 1 })]);
    // With the carrier's id of that one send.
    const after = await db.select().from(messages).where(eq(messages.id, id)).get();
    expect(after?.carrierMessageId).toBe(row?.carrierMessageId as string);
  });

  it("reports UNDELIVERED for +15005550009 and FAILED for +15005550001", async () => {
    const undelivered = await s.api("POST", "/v1/messages", { to: "+15005550009", body: "nobody home" });
    const invalid = await s.api("POST", "/v1/messages", { to: "+15005550001", body: "bad number" });
    expect((await waitForStatus(undelivered.body.message.id, (x) => x === "UNDELIVERED")).status).toBe(
      "UNDELIVERED",
    );
    expect((await waitForStatus(invalid.body.message.id, (x) => x === "FAILED")).status).toBe("FAILED");
    const outbox = await s.api("GET", "/v1/sandbox/outbox?limit=200");
    const ids = outbox.body.sends.map((row: { message_id: string }) => row.message_id);
    expect(ids).toContain(undelivered.body.message.id);
    expect(ids).not.toContain(invalid.body.message.id);
  });
});

// On the PostgreSQL pass: the ledger's claim there keeps its rows locked in a transaction while
// the sink runs, instead of moving their due time (src/db/prepared.ts, dueLedgerStatements).
describe.if(process.env[TEST_DIALECT] === "postgres")("SimulatedCarrier on PostgreSQL", () => {
  let s: TestServer;
  let workspaceId: string;
  beforeAll(async () => {
    s = await startTestServer();
    workspaceId = (await s.newWorkspace("Ledger")).workspaceId;
  });
  afterAll(async () => await s.stop());
  // Years ahead of the server's own carrier, whose clock never finds these rows due.
  const later = () => manualClock(Date.parse("2031-01-01T00:00:00.000Z"));
  const ours = (n: number) => ({ ...sms(n), workspaceId });
  /** A promise a sink waits on until the test releases it. */
  const heldOpen = () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    return { held, release };
  };

  it("two reporters report each delivery once, between them, and a slow batch holds its rows only", async () => {
    const carriers = await expectEachReportedOnce(s.server.handle.db, later(), (n) => ours(700 + n), 5);
    expect(await carriers[0].flushDue()).toBe(0);
  });

  it("gives a batch whose sink failed back at once, and another reporter passes by a batch still out", async () => {
    const clock = later();
    clock.advance(60_000);
    const { held, release } = heldOpen();
    const first = new SimulatedCarrier(s.server.handle.db, clock, { deliveryDelayMs: 0, batchSize: 2 });
    first.attachSinks({
      onStatus: async () => {
        await held;
        throw new Error("database busy");
      },
      onInbound: () => {},
    });
    const second = new SimulatedCarrier(s.server.handle.db, clock, { deliveryDelayMs: 0, batchSize: 10 });
    const seen: string[] = [];
    second.attachSinks({
      onStatus: (batch) => void seen.push(...batch.map((u) => u.messageId ?? "")),
      onInbound: () => {},
    });
    for (let n = 0; n < 3; n++) await first.sendSms(ours(800 + n));
    const failing = first.flushDue();
    await Bun.sleep(50); // the first reporter holds two of the three (all due at one instant)
    expect(await second.flushDue()).toBe(1);
    expect(seen).toHaveLength(1);
    release();
    await expect(failing).rejects.toThrow("database busy");
    // Nothing to wait for (no due time was moved): the two are due again now.
    expect(await second.flushDue()).toBe(2);
    expect(seen.sort()).toEqual([800, 801, 802].map((n) => ours(n).messageId).sort());
  });

  it("a job is not taken from a worker while it writes a send under the job's lease, and is taken after", async () => {
    const { db } = s.server.handle;
    // A kind no server runs: only this test leases it.
    const id = await enqueueAnyJob(db, "test.fence", {}, { maxAttempts: 3 });
    if (!id) throw new Error("no job");
    const lease = (workerId: string, now: number) =>
      leaseDueJobs(db, { workerId, limit: 1, now, kinds: ["test.fence"], policyOf: () => FENCE_POLICY });
    const [first] = await lease("w1", Date.now());
    expect(first).toMatchObject({ id, lockedBy: "w1", attempts: 1 });
    const expired = Date.now() + FENCE_POLICY.timeoutMs + 1;
    const { held, release } = heldOpen();
    let heldInside = new Set<string>();
    const writing = db.transaction(async (tx) => {
      heldInside = await holdLeases(tx, [first]);
      await held; // the frozen moment: the ledger row not yet committed
    });
    for (let i = 0; i < 100 && heldInside.size === 0; i++) await Bun.sleep(5);
    expect(heldInside.has(leaseKey(first))).toBe(true);
    // Past its lease, but its job row is held: another worker's claim passes it by.
    expect(await lease("w2", expired)).toEqual([]);
    release();
    await writing;
    const [second] = await lease("w2", expired);
    expect(second).toMatchObject({ id, lockedBy: "w2", attempts: 2 });
    const after = await db.transaction(async (tx) => await holdLeases(tx, [first, second]));
    expect([...after]).toEqual([leaseKey(second)]);
  });

  it("a reporter whose connection dies mid-batch leaves its rows due at once to the others", async () => {
    const clock = later();
    clock.advance(120_000);
    const { held, release } = heldOpen();
    const dying = new SimulatedCarrier(s.server.handle.db, clock, { deliveryDelayMs: 0, batchSize: 10 });
    dying.attachSinks({ onStatus: async () => await held, onInbound: () => {} });
    for (let n = 0; n < 3; n++) await dying.sendSms(ours(900 + n));
    const cut = dying.flushDue().catch((error: unknown) => error);
    // The session holding the claim's row locks, ended as a crash would end it.
    let ended = 0;
    for (let i = 0; i < 100 && ended === 0; i++) {
      // (The server's own carrier polls the ledger too, in transactions that end at once.)
      const sessions = await s.server.handle.db.all<{ pid: number }>(sql`
        SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND state = 'idle in transaction'
          AND query ILIKE '%from "sandbox_sends"%for update skip locked%'`);
      for (const { pid } of sessions) {
        // Waits (up to 10 s) until the backend is gone and its locks with it: under load it may
        // exit well after the signal, and SKIP LOCKED would pass over its rows until then.
        await s.server.handle.db.all(sql`SELECT pg_terminate_backend(${pid}, 10000)`);
        ended++;
      }
      if (ended === 0) await Bun.sleep(10);
    }
    expect(ended).toBe(1);
    const seen: string[] = [];
    const other = new SimulatedCarrier(s.server.handle.db, clock, { deliveryDelayMs: 0 });
    other.attachSinks({
      onStatus: (batch) => void seen.push(...batch.map((u) => u.messageId ?? "")),
      onInbound: () => {},
    });
    let reported = 0;
    for (let i = 0; i < 100 && reported < 3; i++) {
      reported += await other.flushDue();
      if (reported < 3) await Bun.sleep(10);
    }
    expect(seen.sort()).toEqual([900, 901, 902].map((n) => ours(n).messageId).sort());
    release();
    expect(await cut).toBeInstanceOf(Error);
  });
});

describe("the simulated carrier across a restart", () => {
  it("keeps its outbox and makes pending delivery reports after the server restarts", async () => {
    const saved = process.env.SIMULATED_DELIVERY_MS;
    process.env.SIMULATED_DELIVERY_MS = "1500";
    const s = await startTestServer();
    let second: Awaited<ReturnType<typeof startServer>> | null = null;
    try {
      const number = (await s.api("GET", "/v1/numbers/available?limit=1")).body.numbers[0].number;
      await s.api("POST", "/v1/numbers", { number });
      const sent = await s.api("POST", "/v1/messages", { to: "+14155550166", body: "across a restart" });
      const id = sent.body.message.id;
      let outbox = await s.api("GET", "/v1/sandbox/outbox");
      for (let i = 0; i < 200 && outbox.body.sends.length === 0; i++) {
        await Bun.sleep(10);
        outbox = await s.api("GET", "/v1/sandbox/outbox");
      }
      expect(outbox.body.sends.map((row: { message_id: string }) => row.message_id)).toEqual([id]);
      await s.server.shutdown();

      const config = loadConfig({}, { RATE_LIMIT_RPS: "0", LOG_LEVEL: "error" });
      second = await startServer({
        ...config,
        port: 0,
        host: "127.0.0.1",
        dbPath: s.dbPath,
        databaseUrl: s.databaseUrl,
      });
      const url = `http://127.0.0.1:${second.port}`;
      const get = async (path: string) =>
        (await fetch(url + path, { headers: { authorization: `Bearer ${s.key}` } })).json() as Promise<{
          sends: { message_id: string }[];
          message: { status: string };
        }>;
      expect((await get("/v1/sandbox/outbox")).sends.map((row) => row.message_id)).toEqual([id]);
      let message = (await get(`/v1/messages/${id}`)).message;
      for (let i = 0; i < 400 && message.status !== "DELIVERED"; i++) {
        await Bun.sleep(25);
        message = (await get(`/v1/messages/${id}`)).message;
      }
      expect(message.status).toBe("DELIVERED");
    } finally {
      await second?.shutdown();
      await s.stop();
      if (saved === undefined) delete process.env.SIMULATED_DELIVERY_MS;
      else process.env.SIMULATED_DELIVERY_MS = saved;
    }
  });
});
