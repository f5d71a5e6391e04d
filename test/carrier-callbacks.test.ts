import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { twilioSignature } from "../src/carriers/twilio";
import { eventually, orderNumber } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";

// The edge of the world: Twilio's REST API, answered by a local stand-in that records the sends.
const SID = "ACcallbacktest";
const TOKEN = "callback-test-token";
const PUBLIC = "http://outreach.test";
const OURS = "+14155550100";
const sent: Record<string, string>[] = [];
const placed: Record<string, string>[] = [];
let twilio: ReturnType<typeof Bun.serve>;
let s: TestServer;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  twilio = Bun.serve({
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const form = Object.fromEntries(new URLSearchParams(await request.text()));
      if (request.method === "POST" && url.pathname.endsWith("/Messages.json")) {
        sent.push(form);
        return Response.json({ sid: `SM${sent.length}`, status: "queued", body: form.Body }, { status: 201 });
      }
      if (request.method === "POST" && url.pathname.endsWith("/Calls.json")) {
        placed.push(form);
        return Response.json({ sid: `CA${placed.length}`, status: "queued", to: form.To }, { status: 201 });
      }
      if (request.method === "POST" && url.pathname.endsWith("/IncomingPhoneNumbers.json"))
        return Response.json({ sid: "PN1", phone_number: form.PhoneNumber }, { status: 201 });
      return Response.json({ message: "not found" }, { status: 404 });
    },
  });
  for (const name of [
    "TWILIO_ACCOUNT_SID",
    "TWILIO_AUTH_TOKEN",
    "TWILIO_API_BASE",
    "TWILIO_CALLBACK_BASE_URL",
  ])
    saved[name] = process.env[name];
  process.env.TWILIO_ACCOUNT_SID = SID;
  process.env.TWILIO_AUTH_TOKEN = TOKEN;
  process.env.TWILIO_API_BASE = `http://127.0.0.1:${twilio.port}`;
  process.env.TWILIO_CALLBACK_BASE_URL = PUBLIC;
  s = await startTestServer({ carrier: "twilio" });
  await orderNumber(s, OURS);
});

afterAll(async () => {
  await s.stop();
  twilio.stop(true);
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** Posts a callback the way Twilio does: form body, signature over the public URL and the fields. */
function callback(path: string, params: Record<string, string>, signature?: string) {
  return fetch(s.url + path, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-twilio-signature": signature ?? twilioSignature(TOKEN, PUBLIC + path, params),
    },
    body: new URLSearchParams(params).toString(),
  });
}

describe("POST /carriers/twilio/status", () => {
  it("moves a sent message to DELIVERED, once, and never back", async () => {
    const answer = await s.api("POST", "/v1/messages", { to: "+14155550400", body: "via twilio" });
    const id = answer.body.message.id;
    const queued = await eventually(
      async () => await s.api("GET", `/v1/messages/${id}`),
      (r) => r.body.message.status === "SENT",
    );
    expect(queued.body.message.status).toBe("SENT");
    expect(sent.at(-1)).toMatchObject({ To: "+14155550400", From: OURS, Body: "via twilio" });
    const path = `/carriers/twilio/status?message_id=${id}`;
    const sid = `SM${sent.length}`;
    const delivered = await callback(path, { MessageSid: sid, MessageStatus: "delivered" });
    expect(delivered.status).toBe(200);
    const late = await callback(path, { MessageSid: sid, MessageStatus: "sent" });
    expect(late.status).toBe(200);
    const message = (await s.api("GET", `/v1/messages/${id}`)).body.message;
    expect(message.status).toBe("DELIVERED");
    expect(message.delivered_at).toMatch(/Z$/);
    expect(sent.filter((x) => x.To === "+14155550400")).toHaveLength(1);
  });

  it("applies a report posted several times at once only once: one message.delivered", async () => {
    const hook = (
      await s.api("POST", "/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["message.delivered"] })
    ).body.webhook;
    const answer = await s.api("POST", "/v1/messages", { to: "+14155550401", body: "once" });
    const id = answer.body.message.id;
    await eventually(
      async () => await s.api("GET", `/v1/messages/${id}`),
      (r) => r.body.message.status === "SENT",
    );
    const path = `/carriers/twilio/status?message_id=${id}`;
    const sid = `SM${sent.length}`;
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => callback(path, { MessageSid: sid, MessageStatus: "delivered" })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    const listed = async () => await s.api("GET", `/v1/webhooks/${hook.id}/deliveries`);
    await eventually(listed, (r) => (r.body.deliveries ?? []).length > 0);
    await Bun.sleep(300);
    expect((await listed()).body.deliveries).toHaveLength(1);
    await s.api("DELETE", `/v1/webhooks/${hook.id}`);
  });

  it("answers 401 'Invalid signature' to a forged status and changes nothing", async () => {
    const answer = await s.api("POST", "/v1/messages", { to: "+14155550401", body: "x" });
    const id = answer.body.message.id;
    await eventually(
      async () => await s.api("GET", `/v1/messages/${id}`),
      (r) => r.body.message.status === "SENT",
    );
    const forged = await callback(
      `/carriers/twilio/status?message_id=${id}`,
      { MessageSid: "SMx", MessageStatus: "failed" },
      twilioSignature("wrong-token", `${PUBLIC}/carriers/twilio/status?message_id=${id}`, {
        MessageSid: "SMx",
        MessageStatus: "failed",
      }),
    );
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({ ok: false, error: "Invalid signature" });
    expect((await s.api("GET", `/v1/messages/${id}`)).body.message.status).toBe("SENT");
  });
});

describe("POST /carriers/twilio/inbound", () => {
  it("stores a signed inbound message in the contact's thread, once per MessageSid", async () => {
    const params = { MessageSid: "SMinbound1", From: "+14155550402", To: OURS, Body: "Hello there" };
    const first = await callback("/carriers/twilio/inbound", params);
    expect(first.status).toBe(200);
    expect(await first.text()).toContain("<Response>");
    const again = await callback("/carriers/twilio/inbound", params);
    expect(again.status).toBe(200);
    const inbound = await s.api("GET", "/v1/messages?direction=inbound");
    const stored = inbound.body.messages.filter((m: { from: string }) => m.from === "+14155550402");
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ status: "RECEIVED", body: "Hello there", to: OURS });
  });

  it("keeps an inbound message with a NUL character, the character replaced by U+FFFD", async () => {
    const params = { MessageSid: "SMinbound9", From: "+14155550405", To: OURS, Body: "a\u0000b" };
    const r = await callback("/carriers/twilio/inbound", params);
    expect(r.status).toBe(200);
    const inbound = await s.api("GET", "/v1/messages?direction=inbound");
    const stored = inbound.body.messages.filter((m: { from: string }) => m.from === "+14155550405");
    expect(stored.map((m: { body: string }) => m.body)).toEqual(["a\uFFFDb"]);
  });

  it("stores a message posted several times at once (a carrier's retries) once", async () => {
    const params = { MessageSid: "SMinbound8", From: "+14155550404", To: OURS, Body: "Twice?" };
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => callback("/carriers/twilio/inbound", params)),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    const inbound = await s.api("GET", "/v1/messages?direction=inbound");
    expect(inbound.body.messages.filter((m: { from: string }) => m.from === "+14155550404")).toHaveLength(1);
  });

  it("answers 401 to an unsigned inbound message and stores nothing", async () => {
    const forged = await callback(
      "/carriers/twilio/inbound",
      { MessageSid: "SMforged", From: "+14155550403", To: OURS, Body: "STOP" },
      "bm90IGEgc2lnbmF0dXJl",
    );
    expect(forged.status).toBe(401);
    const inbound = await s.api("GET", "/v1/messages?direction=inbound");
    expect(inbound.body.messages.some((m: { from: string }) => m.from === "+14155550403")).toBe(false);
  });
});

describe("say calls through Twilio", () => {
  it("places the call with TwiML <Say>, then signed call-status callbacks finish it once; a forged one changes nothing", async () => {
    const created = await s.api("POST", "/v1/calls", { to: "+14155550190", say: "Your order is ready." });
    expect(created.status).toBe(200);
    const id = created.body.call.id;
    // Twilio answers `queued` (taken, not yet ringing): the call stays QUEUED until its callbacks.
    await eventually(
      async () => placed.length,
      (n) => n > 0,
    );
    expect(placed).toHaveLength(1);
    expect(placed.at(-1)).toMatchObject({ To: "+14155550190", From: OURS });
    expect(placed.at(-1)?.Twiml).toBe("<Response><Say>Your order is ready.</Say></Response>");
    const path = `/carriers/twilio/call-status?call_id=${id}`;
    const sid = `CA${placed.length}`;
    const forged = await callback(
      path,
      { CallSid: sid, CallStatus: "completed", CallDuration: "9" },
      "forged",
    );
    expect(forged.status).toBe(401);
    expect((await s.api("GET", `/v1/calls/${id}`)).body.call.status).not.toBe("COMPLETED");
    for (const status of ["ringing", "in-progress", "completed", "completed"]) {
      const res = await callback(path, { CallSid: sid, CallStatus: status, CallDuration: "9" });
      expect(res.status).toBe(200);
    }
    const call = (await s.api("GET", `/v1/calls/${id}`)).body.call;
    expect(call).toMatchObject({ status: "COMPLETED", duration_sec: 9 });
    const thread = (await s.api("GET", `/v1/conversations/${call.conversation_id}`)).body.conversation
      .messages;
    expect(thread.filter((m: { call_id: string | null }) => m.call_id === id)).toHaveLength(1);
  });
});

describe("registration with CARRIER=twilio", () => {
  it("answers 501 explaining that registration is done in Twilio's console, writing nothing", async () => {
    const res = await s.api("POST", "/v1/10dlc/brands", {
      legal_name: "Acme Inc",
      ein: "12-3456789",
      entity_type: "PRIVATE_PROFIT",
      vertical: "RETAIL",
      email: "a@acme.example.com",
      phone: "+14155550111",
      address: { street: "1 Main", city: "SF", state: "CA", postal_code: "94105", country: "US" },
    });
    expect(res.status).toBe(501);
    expect(res.body.error).toContain("Twilio's console");
    expect((await s.api("GET", "/v1/10dlc/brands")).body.total).toBe(0);
  });
});
