import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { and, eq } from "drizzle-orm";
import { jobs, messages, suppressions } from "../src/db/schema";
import { applyStatus, applyStatusUpdates } from "../src/domain/messaging/status-updates";
import { jobHandlers } from "../src/jobs/handlers";
import { createWorker } from "../src/jobs/worker";
import { eventLog } from "./support/event-log";
import { eventually, handOffs, orderNumber } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";

const FROM = "+14155550100";
let s: TestServer;

const log = eventLog(() => s);
beforeAll(async () => {
  s = await startTestServer();
  await log.watch();
  await orderNumber(s, FROM);
});
afterAll(async () => await s.stop());

const getMessage = async (id: string, key?: string) =>
  await s.api("GET", `/v1/messages/${id}`, undefined, { key });
const settled = (id: string) =>
  eventually(
    async () => await getMessage(id),
    (r) => ["DELIVERED", "UNDELIVERED", "FAILED"].includes(r.body.message?.status),
  );
const eventTypesOf = async (messageId: string) =>
  (await log.of(["message.sent", "message.delivered", "message.failed", "message.received"]))
    .filter((e) => e.data.id === messageId)
    .map((e) => e.type);

async function outboxFor(to: string) {
  const answer = await s.api("GET", "/v1/sandbox/outbox?limit=200");
  return handOffs(answer.body.sends).filter((send: { to: string }) => send.to === to);
}

describe("POST /v1/messages", () => {
  it("answers {ok, message:{id, status:'PENDING'}} and the message is delivered", async () => {
    const answer = await s.api("POST", "/v1/messages", { to: "(415) 555-0123", body: "Your order shipped" });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ ok: true, message: { id: expect.any(String), status: "PENDING" } });
    const id = answer.body.message.id;
    const done = await settled(id);
    expect(done.body.message).toMatchObject({
      id,
      direction: "outbound",
      from: FROM,
      to: "+14155550123",
      body: "Your order shipped",
      status: "DELIVERED",
      segments: 1,
      encoding: "GSM-7",
      campaign_id: null,
      error_code: null,
    });
    expect(done.body.message.sent_at).toMatch(/Z$/);
    expect(done.body.message.delivered_at).toMatch(/Z$/);
    expect(await outboxFor("+14155550123")).toHaveLength(1);
    expect(await eventTypesOf(id)).toEqual(["message.sent", "message.delivered"]);
  });

  it("creates the contact (source api) and its conversation for an unknown number", async () => {
    const answer = await s.api("POST", "/v1/messages", { to: "+14155550124", body: "Hi" });
    const message = (await getMessage(answer.body.message.id)).body.message;
    const contact = await s.api("GET", `/v1/contacts/${message.contact_id}`);
    expect(contact.status).toBe(200);
    expect(contact.body.contact).toMatchObject({ phone_number: "+14155550124", source: "api" });
    expect(contact.body.contact).toMatchObject({ phone_number: "+14155550124", source: "api" });
    const conversation = await s.api("GET", `/v1/conversations/${message.conversation_id}`);
    expect(conversation.body.conversation).toMatchObject({ contact_id: message.contact_id, status: "open" });
    expect(conversation.body.conversation.messages[0]).toMatchObject({
      id: message.id,
      direction: "outbound",
    });
  });

  it("detects UCS-2 and counts segments", async () => {
    const emoji = await s.api("POST", "/v1/messages", { to: "+14155550125", body: "Thanks 🎉" });
    const long = await s.api("POST", "/v1/messages", { to: "+14155550125", body: "a".repeat(161) });
    const ext = await s.api("POST", "/v1/messages", { to: "+14155550125", body: "[]".repeat(80) });
    expect((await getMessage(emoji.body.message.id)).body.message).toMatchObject({
      encoding: "UCS-2",
      segments: 1,
    });
    expect((await getMessage(long.body.message.id)).body.message).toMatchObject({
      encoding: "GSM-7",
      segments: 2,
    });
    // Extension characters take two septets: 160 characters are 320 septets, 3 segments.
    expect((await getMessage(ext.body.message.id)).body.message).toMatchObject({
      encoding: "GSM-7",
      segments: 3,
    });
  });

  it("sends from the given from number", async () => {
    await orderNumber(s, "+14155550101");
    const answer = await s.api("POST", "/v1/messages", { to: "+14155550126", body: "x", from: "4155550101" });
    expect((await getMessage(answer.body.message.id)).body.message.from).toBe("+14155550101");
  });

  const bad: [string, Record<string, unknown>, string][] = [
    ["without to", { body: "x" }, "to is required"],
    ["with an invalid to", { to: "not-a-number", body: "x" }, "to must be a valid phone number"],
    ["without body", { to: "+14155550130" }, "body is required"],
    ["with an empty body", { to: "+14155550130", body: "" }, "body is required"],
    ["with a blank body", { to: "+14155550130", body: "   " }, "body is required"],
    [
      "with a body over 1600 chars",
      { to: "+14155550130", body: "x".repeat(1601) },
      "body is too long (max 1600)",
    ],
    [
      "with an invalid from",
      { to: "+14155550130", body: "x", from: "abc" },
      "from must be a valid phone number",
    ],
    [
      "with a from the workspace does not own",
      { to: "+14155550130", body: "x", from: "+14155559999" },
      "from is not a number of this workspace",
    ],
  ];
  for (const [name, body, error] of bad) {
    it(`answers 422 '${error}' ${name}, recording nothing`, async () => {
      const before = (await s.api("GET", "/v1/messages")).body.total;
      const answer = await s.api("POST", "/v1/messages", body);
      expect(answer.status).toBe(422);
      expect(answer.body).toEqual({ ok: false, error });
      expect((await s.api("GET", "/v1/messages")).body.total).toBe(before);
    });
  }

  it("answers 422 'Recipient is suppressed' and records nothing", async () => {
    await s.server.handle.db
      .insert(suppressions)
      .values({
        id: Bun.randomUUIDv7(),
        workspaceId: s.workspaceId,
        phoneNumber: "+14155550140",
        reason: "manual",
        source: "test",
        createdAt: Date.now(),
      })
      .run();
    const before = (await s.api("GET", "/v1/messages")).body.total;
    const answer = await s.api("POST", "/v1/messages", { to: "+14155550140", body: "x" });
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({ ok: false, error: "Recipient is suppressed" });
    expect((await s.api("GET", "/v1/messages")).body.total).toBe(before);
    expect(await outboxFor("+14155550140")).toHaveLength(0);
  });

  it("answers 422 'Recipient has opted out' after the contact texted STOP", async () => {
    await s.api("POST", "/v1/sandbox/inbound", { from: "+14155550141", to: FROM, body: "stop" });
    const answer = await s.api("POST", "/v1/messages", { to: "+14155550141", body: "x" });
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({ ok: false, error: "Recipient has opted out" });
  });

  it("answers 422 'No sending number: order one with POST /v1/numbers' in a workspace without numbers", async () => {
    const other = await s.newWorkspace("No numbers");
    const answer = await s.api("POST", "/v1/messages", { to: "+14155550150", body: "x" }, { key: other.key });
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({ ok: false, error: "No sending number: order one with POST /v1/numbers" });
  });

  it("answers 422 'from has reached its daily_limit' once the number's cap is used", async () => {
    const capped = await s.newWorkspace("Capped");
    await orderNumber(s, "+14155550102", { key: capped.key, dailyLimit: 1 });
    const first = await s.api("POST", "/v1/messages", { to: "+14155550152", body: "x" }, { key: capped.key });
    expect(first.status).toBe(200);
    const second = await s.api(
      "POST",
      "/v1/messages",
      { to: "+14155550153", body: "x" },
      { key: capped.key },
    );
    expect(second.status).toBe(422);
    expect(second.body).toEqual({ ok: false, error: "from has reached its daily_limit" });
    expect((await s.api("GET", "/v1/messages", undefined, { key: capped.key })).body.total).toBe(1);
  });

  it("answers 403 to a read-only key", async () => {
    const { key } = await s.newKey(["read"]);
    const answer = await s.api("POST", "/v1/messages", { to: "+14155550151", body: "x" }, { key });
    expect(answer.status).toBe(403);
  });

  it("marks a message FAILED with the carrier's reason when the carrier rejects it", async () => {
    const answer = await s.api("POST", "/v1/messages", { to: "+15005550001", body: "x" });
    const done = await settled(answer.body.message.id);
    expect(done.body.message).toMatchObject({ status: "FAILED", error_code: "invalid_number" });
    expect(await eventTypesOf(answer.body.message.id)).toEqual(["message.failed"]);
  });

  it("marks a message UNDELIVERED when the handset cannot receive", async () => {
    const answer = await s.api("POST", "/v1/messages", { to: "+15005550009", body: "x" });
    const done = await settled(answer.body.message.id);
    expect(done.body.message).toMatchObject({ status: "UNDELIVERED", error_code: "unreachable" });
    expect(await eventTypesOf(answer.body.message.id)).toEqual(["message.sent", "message.failed"]);
  });

  it("keeps the message QUEUED and retries while the carrier is down; the API still answers", async () => {
    const answer = await s.api("POST", "/v1/messages", { to: "+15005550003", body: "x" });
    const id = answer.body.message.id;
    const job = await eventually(
      async () =>
        (await s.server.handle.db.select().from(jobs).where(eq(jobs.kind, "messages.send")).all()).find(
          (j) => (j.payload as { message_id: string }).message_id === id,
        ),
      (j) => j !== undefined && j.attempts >= 1 && j.status === "queued",
    );
    expect(job?.status).toBe("queued");
    expect(job?.lastError).toContain("outage");
    expect((await getMessage(id)).body.message.status).toBe("QUEUED");
    expect((await s.api("GET", "/v1/me")).status).toBe(200);
    expect(await outboxFor("+15005550003")).toHaveLength(0);
  });
});

describe("send-time checks", () => {
  it("fails a queued message whose recipient was suppressed before it was sent; nothing reaches the carrier", async () => {
    const t = await startTestServer({ workerEnabled: false });
    try {
      await orderNumber(t, FROM);
      const answer = await t.api("POST", "/v1/messages", { to: "+14155550160", body: "x" });
      expect(answer.status).toBe(200);
      await t.server.handle.db
        .insert(suppressions)
        .values({
          id: Bun.randomUUIDv7(),
          workspaceId: t.workspaceId,
          phoneNumber: "+14155550160",
          reason: "complaint",
          source: "test",
          createdAt: Date.now(),
        })
        .run();
      const worker = createWorker({ db: t.server.handle.db, handlers: jobHandlers() });
      worker.start();
      const done = await eventually(
        async () => await t.api("GET", `/v1/messages/${answer.body.message.id}`),
        (r) => r.body.message.status === "FAILED",
      );
      await worker.stop();
      expect(done.body.message).toMatchObject({
        status: "FAILED",
        error_code: "suppressed",
        error_message: "Recipient is suppressed",
      });
      expect((await t.api("GET", "/v1/sandbox/outbox")).body.total).toBe(0);
    } finally {
      await t.stop();
    }
  });
});

describe("status reports", () => {
  it("never move a message backwards and are applied once", async () => {
    const answer = await s.api("POST", "/v1/messages", { to: "+14155550170", body: "x" });
    const id = answer.body.message.id;
    await settled(id);
    const row = await s.server.handle.db.select().from(messages).where(eq(messages.id, id)).get();
    await applyStatusUpdates(s.server.handle.db, [
      { carrierMessageId: row?.carrierMessageId ?? "", messageId: id, status: "SENT" },
      { carrierMessageId: row?.carrierMessageId ?? "", messageId: id, status: "DELIVERED" },
      { carrierMessageId: row?.carrierMessageId ?? "", status: "FAILED" },
    ]);
    const after = (await getMessage(id)).body.message;
    expect(after.status).toBe("DELIVERED");
    expect(after.delivered_at).toBe((await settled(id)).body.message.delivered_at);
    expect(await eventTypesOf(id)).toEqual(["message.sent", "message.delivered"]);
  });

  it("move a message on when a report races another writer's change: DELIVERED after a concurrent SENT", async () => {
    const answer = await s.api("POST", "/v1/messages", { to: "+14155550171", body: "raced" });
    const id = answer.body.message.id;
    await settled(id);
    const db = s.server.handle.db;
    await db
      .update(messages)
      .set({ status: "QUEUED", sentAt: null, deliveredAt: null })
      .where(eq(messages.id, id))
      .run();
    const before = (await eventTypesOf(id)).length;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let moved = () => {};
    const sentWritten = new Promise<void>((resolve) => {
      moved = resolve;
    });
    // The hand-off's SENT, written and not yet committed while the DELIVERED report is applied.
    const handOff = db.transaction(async (tx) => {
      const current = await tx.select().from(messages).where(eq(messages.id, id)).get();
      if (current)
        await applyStatus(tx, current, { carrierMessageId: "", messageId: id, status: "SENT" }, Date.now());
      moved();
      await held;
    });
    await sentWritten;
    const report = applyStatusUpdates(db, [{ carrierMessageId: "", messageId: id, status: "DELIVERED" }]);
    await Bun.sleep(100);
    release();
    await Promise.all([handOff, report]);
    expect((await getMessage(id)).body.message.status).toBe("DELIVERED");
    expect((await eventTypesOf(id)).slice(before)).toEqual(["message.sent", "message.delivered"]);
  });

  it("answers 401 to a forged carrier callback and changes nothing", async () => {
    const answer = await s.api("POST", "/v1/messages", { to: "+14155550171", body: "x" });
    const id = answer.body.message.id;
    const before = (await settled(id)).body.message;
    const forged = await fetch(`${s.url}/carriers/twilio/status?message_id=${id}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": "forged" },
      body: "MessageSid=SMx&MessageStatus=failed",
    });
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({ ok: false, error: "Invalid signature" });
    expect((await getMessage(id)).body.message).toEqual(before);
    const inbound = await fetch(`${s.url}/carriers/twilio/inbound`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `MessageSid=SMy&From=%2B14155550171&To=${encodeURIComponent(FROM)}&Body=STOP`,
    });
    expect(inbound.status).toBe(401);
    expect((await s.api("POST", "/v1/messages", { to: "+14155550171", body: "still allowed" })).status).toBe(
      200,
    );
  });
});

describe("GET /v1/messages", () => {
  it("lists newest first and filters by direction, status and contact_id", async () => {
    const sent = await s.api("POST", "/v1/messages", { to: "+14155550180", body: "one" });
    await settled(sent.body.message.id);
    await s.api("POST", "/v1/sandbox/inbound", { from: "+14155550180", to: FROM, body: "reply" });
    const contactId = (await getMessage(sent.body.message.id)).body.message.contact_id;
    const all = await s.api("GET", `/v1/messages?contact_id=${contactId}`);
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(2);
    expect(all.body.messages.map((m: { direction: string }) => m.direction)).toEqual(["inbound", "outbound"]);
    const inbound = await s.api("GET", `/v1/messages?contact_id=${contactId}&direction=inbound`);
    expect(inbound.body.messages).toHaveLength(1);
    expect(inbound.body.messages[0]).toMatchObject({ status: "RECEIVED", body: "reply" });
    const delivered = await s.api("GET", `/v1/messages?contact_id=${contactId}&status=DELIVERED`);
    expect(delivered.body.messages.map((m: { id: string }) => m.id)).toEqual([sent.body.message.id]);
    const page = await s.api("GET", "/v1/messages?limit=1&offset=1");
    expect(page.body).toMatchObject({ limit: 1, offset: 1 });
    expect(page.body.messages).toHaveLength(1);
  });

  it("answers 422 for an unknown status or direction", async () => {
    const status = await s.api("GET", "/v1/messages?status=LOST");
    expect(status.status).toBe(422);
    expect(status.body.error).toBe(
      "status must be one of PENDING, QUEUED, SENT, DELIVERED, UNDELIVERED, FAILED, RECEIVED",
    );
    const direction = await s.api("GET", "/v1/messages?direction=sideways");
    expect(direction.status).toBe(422);
    expect(direction.body.error).toBe("direction must be one of outbound, inbound");
  });

  it("never shows another workspace's messages", async () => {
    const other = await s.newWorkspace("Elsewhere");
    const list = await s.api("GET", "/v1/messages", undefined, { key: other.key });
    expect(list.body).toMatchObject({ ok: true, messages: [], total: 0 });
  });
});

describe("GET /v1/messages/{id}", () => {
  it("answers 404 'Not found' for an unknown, malformed or foreign id", async () => {
    const mine = await s.api("POST", "/v1/messages", { to: "+14155550190", body: "x" });
    const other = await s.newWorkspace("Foreign");
    for (const [path, key] of [
      [`/v1/messages/${Bun.randomUUIDv7()}`, undefined],
      ["/v1/messages/nope", undefined],
      [`/v1/messages/${mine.body.message.id}`, other.key],
    ] as const) {
      const answer = await s.api("GET", path, undefined, { key });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ ok: false, error: "Not found" });
    }
    expect(
      (
        await s.server.handle.db
          .select()
          .from(messages)
          .where(and(eq(messages.id, mine.body.message.id)))
          .get()
      )?.workspaceId,
    ).toBe(s.workspaceId);
  });
});
