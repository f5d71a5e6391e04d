import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { FormatRegistry } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Webhook } from "standardwebhooks";
import { EVENT_DATA_SCHEMAS, type EventType, eventPayloadSchema } from "../src/webhooks/events";
import { orderNumber } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";
import { Receiver } from "./support/webhook-receiver";

// The catalogue's schemas use these formats; register them where the runtime has not.
if (!FormatRegistry.Has("uuid")) FormatRegistry.Set("uuid", (v) => /^[0-9a-f-]{36}$/i.test(v));
if (!FormatRegistry.Has("date-time")) FormatRegistry.Set("date-time", (v) => !Number.isNaN(Date.parse(v)));

let s: TestServer;
let receiver: Receiver;
let secret: string;

beforeAll(async () => {
  s = await startTestServer();
  receiver = new Receiver();
  await orderNumber(s, "+14155550180");
  const created = await s.api("POST", "/v1/webhooks", { url: receiver.url("/all"), events: ["*"] });
  secret = created.body.webhook.secret;
});
afterAll(async () => {
  receiver.stop();
  await s.stop();
});

async function receivedOfType(type: EventType) {
  for (let i = 0; i < 500; i++) {
    const got = receiver.received.filter((r) => JSON.parse(r.body).type === type);
    if (got.length > 0) return got;
    await Bun.sleep(10);
  }
  return [];
}

describe("events the domains emit, as delivered", () => {
  it("contact.created carries the Contact record, matching the catalogue schema", async () => {
    const created = await s.api("POST", "/v1/contacts", { phone_number: "+14155550181", first_name: "Ada" });
    expect(created.status).toBe(200);
    const [request] = await receivedOfType("contact.created");
    expect(request).toBeDefined();
    const payload = new Webhook(secret).verify(request.body, request.headers) as { data: unknown };
    expect(Value.Check(eventPayloadSchema("contact.created"), payload)).toBe(true);
    expect(payload.data).toEqual(created.body.contact);
  });

  it("message.sent and message.delivered carry the Message record, matching the catalogue schema", async () => {
    const sent = await s.api("POST", "/v1/messages", { to: "+14155550182", body: "Hello" });
    expect(sent.status).toBe(200);
    for (const type of ["message.sent", "message.delivered"] as const) {
      const got = await receivedOfType(type);
      expect(got.length).toBeGreaterThan(0);
      const payload = new Webhook(secret).verify(got[0].body, got[0].headers) as { data: { id: string } };
      const errors = [...Value.Errors(EVENT_DATA_SCHEMAS[type], payload.data)].map(
        (e) => `${e.path} ${e.message}`,
      );
      expect(errors).toEqual([]);
      expect(payload.data.id).toBe(sent.body.message.id);
    }
  });
});

describe("subscriptions follow endpoint changes at once", () => {
  it("an endpoint created, narrowed, disabled and deleted between events gets exactly the events it wanted then", async () => {
    const ws = await s.newWorkspace();
    const own = new Receiver();
    try {
      const create = async (phone: string) =>
        await s.api("POST", "/v1/contacts", { phone_number: phone }, { key: ws.key });
      const contactsSeen = () =>
        own.received
          .map((r) => JSON.parse(r.body) as { type: string; data: { phone_number?: string } })
          .filter((p) => p.type === "contact.created")
          .map((p) => p.data.phone_number);
      const arrived = async (n: number) => {
        for (let i = 0; i < 300 && contactsSeen().length < n; i++) await Bun.sleep(10);
      };
      await create("+14155550191"); // no endpoint yet: the workspace's (empty) subscriptions are remembered
      const hook = await s.api(
        "POST",
        "/v1/webhooks",
        { url: own.url("/h"), events: ["contact.created"] },
        { key: ws.key },
      );
      await create("+14155550192");
      await arrived(1);
      const id = hook.body.webhook.id;
      await s.api("PATCH", `/v1/webhooks/${id}`, { events: ["contact.opted_out"] }, { key: ws.key });
      await create("+14155550193");
      await s.api("PATCH", `/v1/webhooks/${id}`, { events: ["contact.created"] }, { key: ws.key });
      await create("+14155550194");
      await arrived(2);
      await s.api("PATCH", `/v1/webhooks/${id}`, { enabled: false }, { key: ws.key });
      await create("+14155550195");
      await s.api("PATCH", `/v1/webhooks/${id}`, { enabled: true }, { key: ws.key });
      await s.api("DELETE", `/v1/webhooks/${id}`, undefined, { key: ws.key });
      await create("+14155550196");
      await Bun.sleep(300);
      expect(contactsSeen().sort()).toEqual(["+14155550192", "+14155550194"]);
    } finally {
      own.stop();
    }
  });
});
