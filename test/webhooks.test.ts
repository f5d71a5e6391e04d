import { afterAll, beforeAll, beforeEach, describe, expect, it } from "bun:test";
import { rmSync } from "node:fs";
import { hostname } from "node:os";
import { and, eq, inArray, isNull } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { loadConfig } from "../src/config";
import { events, jobs, webhookDeliveries } from "../src/db/schema";
import { emitEvent, emitEvents } from "../src/domain/events";
import { RETRY_SCHEDULE_MS } from "../src/domain/webhooks/webhooks";
import { jobHandlers } from "../src/jobs/handlers";
import { enqueueJob } from "../src/jobs/queue";
import { createWorker } from "../src/jobs/worker";
import { startServer } from "../src/server";
import { postWebhook } from "../src/webhooks/deliver";
import type { EventType } from "../src/webhooks/events";
import { startTestServer, type TestServer } from "./support/server";
import { type Received, Receiver, startClosingServer, startHangingServer } from "./support/webhook-receiver";

/** A clock the tests move by hand; the delivery worker runs on it. */
class FakeClock {
  constructor(public t = Date.now()) {}
  now = () => this.t;
  advance(ms: number) {
    this.t += ms;
  }
}

let s: TestServer;
let receiver: Receiver;
const clock = new FakeClock();

beforeAll(async () => {
  // No in-process worker: deliveries are run below on the fake clock, with the real handlers.
  s = await startTestServer({ workerEnabled: false }, { WEBHOOK_TIMEOUT_MS: "400" });
  receiver = new Receiver();
});
afterAll(async () => {
  receiver.stop();
  await s.stop();
});

const db = () => s.server.handle.db;

/** The workspace a test acts in: each event-delivery test gets its own, so retries never mix. */
let current: { workspaceId: string; key: string } | null = null;
const ws = () => current ?? { workspaceId: s.workspaceId, key: s.key };
const wsApi = async (method: string, path: string, body?: unknown) =>
  await s.api(method, path, body, { key: ws().key });

/** Runs every job due at the fake clock's now (and what they enqueue that is due). */
async function runDueDeliveries() {
  const worker = createWorker({ db: db(), handlers: jobHandlers(), clock, pollMs: 5, concurrency: 8 });
  worker.start();
  for (let i = 0; i < 2000; i++) {
    await Bun.sleep(5);
    const due = (
      await db()
        .select({ id: jobs.id, runAt: jobs.runAt })
        .from(jobs)
        .where(inArray(jobs.status, ["queued", "running"]))
        .all()
    ).filter((job) => job.runAt <= clock.now());
    if (due.length === 0 && worker.running() === 0) break;
  }
  await worker.stop();
}

async function queuedDeliveryJobs() {
  return await db()
    .select()
    .from(jobs)
    .where(and(eq(jobs.kind, "webhook.deliver"), eq(jobs.status, "queued")))
    .all();
}

async function emit(type: EventType, data: unknown, workspaceId = ws().workspaceId) {
  return await db().transaction(async (tx) => await emitEvent(tx, workspaceId, type, data, clock.now()));
}

async function subscribe(path: string, events: string[] = ["*"], key?: string) {
  const r = await s.api(
    "POST",
    "/v1/webhooks",
    { url: receiver.url(path), events },
    { key: key ?? ws().key },
  );
  expect(r.status).toBe(200);
  return r.body.webhook as { id: string; secret: string; url: string };
}

/** Checks one received request with the reference verifier and returns its payload. */
function verified(secret: string, request: Received) {
  // biome-ignore lint/suspicious/noExplicitAny: the verifier answers untyped JSON
  return new Webhook(secret).verify(request.body, request.headers) as any;
}

/** Checks a signature made at any timestamp (the reference verifier rejects old timestamps). */
function signedWith(secret: string, request: Received): boolean {
  const expected = new Webhook(secret).sign(
    request.headers["webhook-id"],
    new Date(Number(request.headers["webhook-timestamp"]) * 1000),
    request.body,
  );
  return request.headers["webhook-signature"].split(" ").includes(expected);
}

describe("POST /v1/webhooks", () => {
  it("creates a subscription and answers its secret once", async () => {
    const r = await s.api("POST", "/v1/webhooks", {
      url: receiver.url("/create"),
      events: ["message.delivered", "conversion.recorded"],
      description: "CRM sync",
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      webhook: {
        id: expect.any(String),
        url: receiver.url("/create"),
        events: ["message.delivered", "conversion.recorded"],
        description: "CRM sync",
        enabled: true,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
      },
    });
    const key = Buffer.from(r.body.webhook.secret.slice(6), "base64");
    expect(key.length).toBeGreaterThanOrEqual(24);
    expect(key.length).toBeLessThanOrEqual(64);
    const got = await s.api("GET", `/v1/webhooks/${r.body.webhook.id}`);
    expect(got.body.webhook.secret).toBeUndefined();
  });

  it("accepts * for every event", async () => {
    const r = await s.api("POST", "/v1/webhooks", { url: receiver.url("/all"), events: ["*"] });
    expect(r.status).toBe(200);
    expect(r.body.webhook.events).toEqual(["*"]);
  });

  const bad: [string, unknown, string][] = [
    ["without url", { events: ["*"] }, "url is required"],
    ["without events", { url: "https://example.com/h" }, "events is required"],
    ["with empty events", { url: "https://example.com/h", events: [] }, "events must have at least 1 item"],
    ["with events not an array", { url: "https://example.com/h", events: "*" }, "events must be an array"],
    [
      "with an unknown event",
      { url: "https://example.com/h", events: ["message.sent", "message.exploded"] },
      "events[1] is not a known event: message.exploded",
    ],
    ["with a url that is not a URL", { url: "not a url", events: ["*"] }, "url must be a valid URL"],
    ["with an ftp url", { url: "ftp://example.com/h", events: ["*"] }, "url must be an http or https URL"],
    [
      "with the cloud metadata address",
      { url: "http://169.254.169.254/latest/meta-data", events: ["*"] },
      "url must not point to a link-local or cloud metadata address",
    ],
    [
      "with the GCP metadata host",
      { url: "http://metadata.google.internal/computeMetadata/v1", events: ["*"] },
      "url must not point to a link-local or cloud metadata address",
    ],
    [
      "with an IPv6 link-local address",
      { url: "http://[fe80::1]/h", events: ["*"] },
      "url must not point to a link-local or cloud metadata address",
    ],
    [
      "with an IPv4-mapped metadata address",
      { url: "http://[::ffff:169.254.169.254]/h", events: ["*"] },
      "url must not point to a link-local or cloud metadata address",
    ],
    [
      "with the AWS IPv6 metadata address",
      { url: "http://[fd00:ec2::254]/h", events: ["*"] },
      "url must not point to a link-local or cloud metadata address",
    ],
    [
      "with a decimal-encoded metadata address",
      { url: "http://2852039166/h", events: ["*"] },
      "url must not point to a link-local or cloud metadata address",
    ],
  ];
  for (const [label, body, error] of bad) {
    it(`answers 422 '${error}' ${label}, and creates nothing`, async () => {
      const before = (await s.api("GET", "/v1/webhooks")).body.total;
      const r = await s.api("POST", "/v1/webhooks", body);
      expect(r.status).toBe(422);
      expect(r.body).toEqual({ ok: false, error });
      expect((await s.api("GET", "/v1/webhooks")).body.total).toBe(before);
    });
  }

  it("allows loopback and private receivers with WEBHOOK_ALLOW_PRIVATE=true (this server's setting)", async () => {
    for (const url of [
      "http://127.0.0.1:9/h",
      "http://10.1.2.3/h",
      "http://192.168.1.5/h",
      "http://localhost/h",
    ]) {
      const r = await s.api("POST", "/v1/webhooks", { url, events: ["*"] });
      expect(r.status).toBe(200);
      await s.api("DELETE", `/v1/webhooks/${r.body.webhook.id}`);
    }
  });

  it("answers 403 for a read-only key", async () => {
    const { key } = await s.newKey(["read"]);
    const r = await s.api("POST", "/v1/webhooks", { url: "https://example.com/h", events: ["*"] }, { key });
    expect(r.status).toBe(403);
  });
});

describe("private webhook targets, refused by default (API.md §7.2)", () => {
  const PRIVATE =
    "url points to a private address (an operator can allow this with WEBHOOK_ALLOW_PRIVATE=true)";
  let strict: TestServer;
  beforeAll(async () => {
    strict = await startTestServer({ workerEnabled: false }, { WEBHOOK_ALLOW_PRIVATE: "false" });
  });
  afterAll(async () => await strict.stop());

  it("is the default setting", () => {
    expect(loadConfig({}, {}).webhookAllowPrivate).toBe(false);
  });

  // Every spelling of a private, loopback or link-local address, the IPv4 inside IPv6 forms included.
  const refused = [
    "http://127.0.0.1/h",
    "http://127.1.2.3:8080/h",
    "http://localhost:3000/h",
    "http://api.localhost/h",
    "http://10.0.0.8/h",
    "http://172.16.0.1/h",
    "http://172.31.255.255/h",
    "http://192.168.1.5/h",
    "http://169.254.169.254/latest/meta-data",
    "http://metadata.google.internal/computeMetadata/v1",
    "http://100.64.0.1/h",
    "http://0.0.0.0/h",
    "http://0.1.2.3/h",
    "http://2130706433/h",
    "http://0177.0.0.1/h",
    "http://0x7f.1/h",
    "http://127.1/h",
    "http://2852039166/h",
    "http://[::1]/h",
    "http://[::]/h",
    "http://[::ffff:127.0.0.1]/h",
    "http://[::ffff:169.254.169.254]/h",
    "http://[::ffff:a9fe:a9fe]/h",
    "http://[0:0:0:0:0:ffff:a9fe:a9fe]/h",
    "http://[::169.254.169.254]/h",
    "http://[::a9fe:a9fe]/h",
    "http://[::ffff:0:a9fe:a9fe]/h",
    "http://[64:ff9b::a9fe:a9fe]/h",
    "http://[64:ff9b::169.254.169.254]/h",
    "http://[64:ff9b::10.0.0.1]/h",
    "http://[2002:a9fe:a9fe::]/h",
    "http://[2002:7f00:1::1]/h",
    "http://[2001:0:4136:e378:8000:63bf:5601:5601]/h",
    "http://[fd00::1]/h",
    "http://[fd00:ec2::254]/h",
    "http://[fc00::1]/h",
    "http://[fe80::1]/h",
    "http://[ff02::1]/h",
    "https://[FE80::ABCD]/h",
    // Credentials before the host do not hide it: refused for where it points.
    "http://example.com@127.0.0.1/h",
    "http://user:pass@[::1]/h",
    "http://LOCALHOST./h",
    "http://127.0.0.1./h",
  ];
  for (const url of refused) {
    it(`answers 422 for ${url} on create, and saves nothing`, async () => {
      const before = (await strict.api("GET", "/v1/webhooks")).body.total;
      const created = await strict.api("POST", "/v1/webhooks", { url, events: ["*"] });
      expect({ url, status: created.status, body: created.body }).toEqual({
        url,
        status: 422,
        body: { ok: false, error: PRIVATE },
      });
      expect((await strict.api("GET", "/v1/webhooks")).body.total).toBe(before);
    });
  }

  it("answers 422 when an update points a webhook at a private address, and keeps its url", async () => {
    const created = await strict.api("POST", "/v1/webhooks", { url: "https://example.com/h", events: ["*"] });
    expect(created.status).toBe(200);
    for (const url of ["http://[::ffff:a9fe:a9fe]/", "http://10.1.1.1/"]) {
      const r = await strict.api("PATCH", `/v1/webhooks/${created.body.webhook.id}`, { url });
      expect({ url, status: r.status, error: r.body.error }).toEqual({ url, status: 422, error: PRIVATE });
    }
    const got = await strict.api("GET", `/v1/webhooks/${created.body.webhook.id}`);
    expect(got.body.webhook.url).toBe("https://example.com/h");
  });

  it("accepts public addresses, and IPv6 forms embedding a public IPv4", async () => {
    for (const url of [
      "https://example.com/h",
      "http://93.184.216.34/h",
      "http://[::ffff:93.184.216.34]/h",
      "http://[64:ff9b::5db8:d822]/h",
      "http://[2002:5db8:d822::1]/h",
      "http://[2606:4700::1111]/h",
      "http://172.32.0.1/h",
      "http://100.128.0.1/h",
    ]) {
      const r = await strict.api("POST", "/v1/webhooks", { url, events: ["*"] });
      expect({ url, status: r.status }).toEqual({ url, status: 200 });
    }
  });

  it("refuses a flow's webhook node on a private address with the same rule", async () => {
    const r = await strict.api("POST", "/v1/flows", {
      name: "Private hook",
      definition: {
        nodes: [
          { id: "t", type: "trigger", position: { x: 0, y: 0 }, data: { event: "manual" } },
          {
            id: "h",
            type: "webhook",
            position: { x: 0, y: 100 },
            data: { url: "http://[64:ff9b::a9fe:a9fe]/x" },
          },
        ],
        edges: [{ id: "t-h", source: "t", target: "h" }],
      },
    });
    expect(r.status).toBe(422);
    expect(r.body.error).toEndWith(
      "data.url points to a private address (an operator can allow this with WEBHOOK_ALLOW_PRIVATE=true)",
    );
  });

  it("checks the resolved address at delivery time: a name resolving to a private address fails, nothing sent", async () => {
    // The machine's own host name resolves to a loopback or private address.
    const url = receiver.url("/resolved").replace("127.0.0.1", hostname());
    const created = await strict.api("POST", "/v1/webhooks", { url, events: ["*"] });
    expect(created.status).toBe(200);
    const r = await strict.api("POST", `/v1/webhooks/${created.body.webhook.id}/test`);
    expect(r.body.delivery).toMatchObject({ status: "failed", response_status: null });
    const log = await strict.api("GET", `/v1/webhooks/${created.body.webhook.id}/deliveries`);
    expect(log.body.deliveries[0].error).toMatch(
      /resolves to .*, a private address \(an operator can allow this with WEBHOOK_ALLOW_PRIVATE=true\): nothing was sent$/,
    );
    expect(receiver.at("/resolved")).toHaveLength(0);
  });
});

describe("postWebhook", () => {
  const base = { headers: {}, body: "{}", timeoutMs: 2_000 };

  it("refuses a name that resolves to a private address, and sends nothing", async () => {
    const url = receiver.url("/pinned-refused").replace("127.0.0.1", "internal.example.test");
    const r = await postWebhook({
      ...base,
      url,
      allowPrivate: false,
      resolve: async () => [{ address: "::ffff:10.0.0.1", family: 6 }],
    });
    expect(r).toMatchObject({ ok: false, status: null });
    expect(r.error).toBe(
      "internal.example.test resolves to ::ffff:10.0.0.1, a private address (an operator can allow this with WEBHOOK_ALLOW_PRIVATE=true): nothing was sent",
    );
    expect(receiver.at("/pinned-refused")).toHaveLength(0);
  });

  it("connects to the address it checked, with the URL's host in the Host header (one lookup)", async () => {
    const url = receiver.url("/pinned").replace("127.0.0.1", "receiver.example.test");
    let lookups = 0;
    const r = await postWebhook({
      ...base,
      url,
      allowPrivate: true,
      resolve: async () => {
        lookups++;
        return [{ address: "127.0.0.1", family: 4 }];
      },
    });
    expect(r).toMatchObject({ ok: true, status: 200 });
    expect(lookups).toBe(1);
    const got = receiver.at("/pinned");
    expect(got).toHaveLength(1);
    expect(got[0].headers.host).toBe(new URL(url).host);
  });

  it("still refuses link-local and metadata addresses with WEBHOOK_ALLOW_PRIVATE=true", async () => {
    const r = await postWebhook({
      ...base,
      url: "http://rebind.example.test/",
      allowPrivate: true,
      resolve: async () => [{ address: "169.254.169.254", family: 4 }],
    });
    expect(r.error).toBe(
      "rebind.example.test resolves to 169.254.169.254, a link-local address webhooks may not target: nothing was sent",
    );
  });
});

describe("GET /v1/webhooks", () => {
  it("lists newest first with total, limit and offset, only this workspace's", async () => {
    const other = await s.newWorkspace("Webhook list other");
    await s.api(
      "POST",
      "/v1/webhooks",
      { url: "https://example.com/theirs", events: ["*"] },
      { key: other.key },
    );
    const mine = await subscribe("/list-newest");
    const r = await s.api("GET", "/v1/webhooks?limit=2");
    expect(r.status).toBe(200);
    expect(r.body.limit).toBe(2);
    expect(r.body.offset).toBe(0);
    expect(r.body.webhooks[0].id).toBe(mine.id);
    expect(r.body.webhooks.every((w: { url: string }) => !w.url.endsWith("/theirs"))).toBe(true);
    expect(r.body.webhooks[0].secret).toBeUndefined();
    const theirs = await s.api("GET", "/v1/webhooks", undefined, { key: other.key });
    expect(theirs.body.total).toBe(1);
  });

  it("answers 422 for a bad limit", async () => {
    const r = await s.api("GET", "/v1/webhooks?limit=abc");
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("limit must be a non-negative integer");
  });
});

describe("GET /v1/webhooks/{id}", () => {
  it("answers the subscription", async () => {
    const w = await subscribe("/get", ["message.delivered"]);
    const r = await s.api("GET", `/v1/webhooks/${w.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      webhook: {
        id: w.id,
        url: receiver.url("/get"),
        events: ["message.delivered"],
        description: null,
        enabled: true,
        created_at: expect.any(String),
      },
    });
  });

  it("answers 404 for an unknown, malformed or other workspace's id", async () => {
    const other = await s.newWorkspace("Webhook get other");
    const theirs = await s.api(
      "POST",
      "/v1/webhooks",
      { url: "https://example.com/x", events: ["*"] },
      { key: other.key },
    );
    for (const id of ["0190f0f0-0000-7000-8000-000000000000", "nope", theirs.body.webhook.id]) {
      const r = await s.api("GET", `/v1/webhooks/${id}`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ ok: false, error: "Not found" });
    }
  });
});

describe("PATCH /v1/webhooks/{id}", () => {
  it("changes only the fields given", async () => {
    const w = await subscribe("/patch", ["message.sent"]);
    const r = await s.api("PATCH", `/v1/webhooks/${w.id}`, {
      events: ["contact.created", "*"],
      enabled: false,
    });
    expect(r.status).toBe(200);
    expect(r.body.webhook).toMatchObject({
      url: receiver.url("/patch"),
      events: ["contact.created", "*"],
      enabled: false,
    });
    const again = await s.api("PATCH", `/v1/webhooks/${w.id}`, { description: "x" });
    expect(again.body.webhook).toMatchObject({
      events: ["contact.created", "*"],
      enabled: false,
      description: "x",
    });
  });

  it("answers 422 for an unknown event or a refused url, and changes nothing", async () => {
    const w = await subscribe("/patch-bad", ["message.sent"]);
    const a = await s.api("PATCH", `/v1/webhooks/${w.id}`, { events: ["nope"], enabled: false });
    expect(a.status).toBe(422);
    expect(a.body.error).toBe("events[0] is not a known event: nope");
    const b = await s.api("PATCH", `/v1/webhooks/${w.id}`, {
      url: "http://169.254.169.254/",
      enabled: false,
    });
    expect(b.status).toBe(422);
    expect(b.body.error).toBe("url must not point to a link-local or cloud metadata address");
    const c = await s.api("PATCH", `/v1/webhooks/${w.id}`, { url: 5 });
    expect(c.status).toBe(422);
    expect(c.body.error).toBe("url must be a string");
    const got = await s.api("GET", `/v1/webhooks/${w.id}`);
    expect(got.body.webhook).toMatchObject({
      url: receiver.url("/patch-bad"),
      events: ["message.sent"],
      enabled: true,
    });
  });

  it("answers 404 for another workspace's webhook", async () => {
    const w = await subscribe("/patch-404");
    const other = await s.newWorkspace("Webhook patch other");
    const r = await s.api("PATCH", `/v1/webhooks/${w.id}`, { enabled: false }, { key: other.key });
    expect(r.status).toBe(404);
    expect((await s.api("GET", `/v1/webhooks/${w.id}`)).body.webhook.enabled).toBe(true);
  });
});

describe("DELETE /v1/webhooks/{id}", () => {
  it("deletes it; it is gone afterwards", async () => {
    const w = await subscribe("/delete");
    const r = await s.api("DELETE", `/v1/webhooks/${w.id}`);
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
    expect(r.body.webhook.id).toBe(w.id);
    expect((await s.api("GET", `/v1/webhooks/${w.id}`)).status).toBe(404);
    expect((await s.api("DELETE", `/v1/webhooks/${w.id}`)).status).toBe(404);
  });

  it("answers 404 for another workspace's webhook and keeps it", async () => {
    const w = await subscribe("/delete-404");
    const other = await s.newWorkspace("Webhook delete other");
    expect((await s.api("DELETE", `/v1/webhooks/${w.id}`, undefined, { key: other.key })).status).toBe(404);
    expect((await s.api("GET", `/v1/webhooks/${w.id}`)).status).toBe(200);
  });
});

describe("POST /v1/webhooks/{id}/test", () => {
  it("delivers a signed webhook.test that the reference verifier accepts", async () => {
    const w = await subscribe("/test-ok");
    const r = await s.api("POST", `/v1/webhooks/${w.id}/test`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      delivery: {
        id: expect.any(String),
        event: "webhook.test",
        status: "succeeded",
        response_status: 200,
        duration_ms: expect.any(Number),
        attempt: 1,
        created_at: expect.any(String),
      },
    });
    const [request] = receiver.at("/test-ok");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const payload = verified(w.secret, request);
    expect(payload).toEqual({
      type: "webhook.test",
      timestamp: expect.any(String),
      data: { webhook_id: w.id, message: expect.any(String) },
    });
  });

  it("the reference verifier rejects the test event under another secret", async () => {
    const w = await subscribe("/test-wrong-secret");
    await s.api("POST", `/v1/webhooks/${w.id}/test`);
    const other = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    expect(() => verified(other, receiver.at("/test-wrong-secret")[0])).toThrow();
  });

  it("answers ok with a failed delivery when the receiver answers 500, and does not retry", async () => {
    receiver.script("/test-500", () => new Response("boom", { status: 500 }));
    const w = await subscribe("/test-500");
    const r = await s.api("POST", `/v1/webhooks/${w.id}/test`);
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
    expect(r.body.delivery).toMatchObject({ status: "failed", response_status: 500, attempt: 1 });
    const queued = (await queuedDeliveryJobs()).filter(
      (job) => (job.payload as { deliveryId: string }).deliveryId === r.body.delivery.id,
    );
    expect(queued).toHaveLength(0);
  });

  it("treats a redirect as a failure and does not follow it", async () => {
    receiver.script(
      "/test-302",
      () => new Response(null, { status: 302, headers: { location: receiver.url("/target") } }),
    );
    const w = await subscribe("/test-302");
    const r = await s.api("POST", `/v1/webhooks/${w.id}/test`);
    expect(r.body.delivery).toMatchObject({ status: "failed", response_status: 302 });
    expect(receiver.at("/target")).toHaveLength(0);
  });

  it("reads at most 1 KiB of a huge answer and logs it", async () => {
    receiver.script("/test-huge", () => new Response("x".repeat(8 * 1024 * 1024)));
    const w = await subscribe("/test-huge");
    const r = await s.api("POST", `/v1/webhooks/${w.id}/test`);
    expect(r.body.delivery).toMatchObject({ status: "succeeded", response_status: 200 });
    const log = await s.api("GET", `/v1/webhooks/${w.id}/deliveries`);
    expect(log.body.deliveries[0].response_body).toHaveLength(1024);
  });

  it("fails with a logged timeout when the receiver hangs", async () => {
    const hanging = await startHangingServer();
    try {
      const created = await s.api("POST", "/v1/webhooks", { url: hanging.url, events: ["*"] });
      const r = await s.api("POST", `/v1/webhooks/${created.body.webhook.id}/test`);
      expect(r.body.delivery).toMatchObject({ status: "failed", response_status: null });
      const log = await s.api("GET", `/v1/webhooks/${created.body.webhook.id}/deliveries`);
      expect(log.body.deliveries[0].error).toBe("timed out after 400 ms");
    } finally {
      hanging.stop();
    }
  });

  it("fails when the receiver closes the connection", async () => {
    const closing = await startClosingServer();
    try {
      const created = await s.api("POST", "/v1/webhooks", { url: closing.url, events: ["*"] });
      const r = await s.api("POST", `/v1/webhooks/${created.body.webhook.id}/test`);
      expect(r.body.delivery).toMatchObject({ status: "failed", response_status: null });
      const log = await s.api("GET", `/v1/webhooks/${created.body.webhook.id}/deliveries`);
      expect(log.body.deliveries[0].error).toEqual(expect.any(String));
    } finally {
      closing.stop();
    }
  });

  it("answers 404 for an unknown id or another workspace's webhook", async () => {
    const w = await subscribe("/test-404");
    const other = await s.newWorkspace("Webhook test other");
    expect((await s.api("POST", `/v1/webhooks/${w.id}/test`, undefined, { key: other.key })).status).toBe(
      404,
    );
    expect((await s.api("POST", "/v1/webhooks/0190f0f0-0000-7000-8000-000000000000/test")).status).toBe(404);
    expect(receiver.at("/test-404")).toHaveLength(0);
  });
});

describe("POST /v1/webhooks/{id}/rotate-secret", () => {
  it("answers a new secret and signs with both secrets for 24 h", async () => {
    const w = await subscribe("/rotate", ["message.delivered"]);
    const r = await s.api("POST", `/v1/webhooks/${w.id}/rotate-secret`);
    expect(r.status).toBe(200);
    expect(r.body.webhook).toMatchObject({ id: w.id, url: w.url, enabled: true });
    expect(r.body.webhook.secret).toMatch(/^whsec_/);
    expect(r.body.webhook.secret).not.toBe(w.secret);

    await s.api("POST", `/v1/webhooks/${w.id}/test`);
    const [request] = receiver.at("/rotate");
    expect(request.headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(verified(r.body.webhook.secret, request).type).toBe("webhook.test");
    expect(verified(w.secret, request).type).toBe("webhook.test");

    // 25 h later only the new secret signs.
    clock.advance(25 * 3_600_000);
    await emit("message.delivered", { id: "m-rotate" });
    await runDueDeliveries();
    const later = receiver.at("/rotate")[1];
    expect(later.headers["webhook-signature"].split(" ")).toHaveLength(1);
    expect(signedWith(r.body.webhook.secret, later)).toBe(true);
    expect(signedWith(w.secret, later)).toBe(false);
  });

  it("answers 404 for another workspace's webhook", async () => {
    const w = await subscribe("/rotate-404");
    const other = await s.newWorkspace("Webhook rotate other");
    expect(
      (await s.api("POST", `/v1/webhooks/${w.id}/rotate-secret`, undefined, { key: other.key })).status,
    ).toBe(404);
  });
});

/**
 * The order deliveries arrived in, as far as it is defined: the worker runs them concurrently, so on
 * PostgreSQL (statements on several pooled connections at once) they arrive in any order; on SQLite's
 * one connection they arrive in the order of their events. Sorted on PostgreSQL.
 */
const arrived = (values: string[]) => (s.databaseUrl ? [...values].sort() : values);

describe("event delivery", () => {
  beforeEach(async () => {
    current = await s.newWorkspace("Event delivery");
  });
  afterAll(() => {
    current = null;
  });

  it("delivers each emitted event the subscription wants, signed, as {type, timestamp, data}", async () => {
    const other = await s.newWorkspace("Webhook delivery other");

    const w = await subscribe("/events", ["message.delivered"]);
    const all = await subscribe("/events-all", ["*"]);
    const off = await subscribe("/events-off", ["*"]);
    await wsApi("PATCH", `/v1/webhooks/${off.id}`, { enabled: false });
    const message = { id: "0190f0f0-0000-7000-8000-000000000001", status: "DELIVERED", body: "hi" };
    const event = await emit("message.delivered", message);
    await emit("contact.created", { id: "c1" });
    await emit("message.delivered", { id: "theirs" }, other.workspaceId);
    await runDueDeliveries();

    const got = receiver.at("/events");
    expect(got).toHaveLength(1);
    expect(got[0].headers["webhook-id"]).toBe(event.id);
    expect(signedWith(w.secret, got[0])).toBe(true);
    expect(JSON.parse(got[0].body)).toEqual({
      type: "message.delivered",
      timestamp: new Date(event.createdAt).toISOString(),
      data: message,
    });
    expect(arrived(receiver.at("/events-all").map((r) => JSON.parse(r.body).type))).toEqual(
      arrived(["message.delivered", "contact.created"]),
    );
    expect(signedWith(all.secret, receiver.at("/events-all")[0])).toBe(true);
    expect(receiver.at("/events-off")).toHaveLength(0);
    expect(receiver.received.some((r) => r.body.includes('"theirs"'))).toBe(false);
  });

  it("fans out a batch of events (bulk emit) to every subscription that wants them", async () => {
    await subscribe("/batch", ["contact.created"]);
    await subscribe("/batch-other", ["message.sent"]);
    const emitted = await db().transaction(
      async (tx) =>
        await emitEvents(
          tx,
          ws().workspaceId,
          "contact.created",
          [{ id: "b1" }, { id: "b2" }, { id: "b3" }],
          clock.now(),
        ),
    );
    expect(emitted).toBeUndefined();
    await runDueDeliveries();
    expect(arrived(receiver.at("/batch").map((r) => JSON.parse(r.body).data.id))).toEqual(
      arrived(["b1", "b2", "b3"]),
    );
    expect(receiver.at("/batch-other")).toHaveLength(0);
    const undispatched = await db().select().from(events).where(isNull(events.dispatchedAt)).all();
    expect(undispatched).toHaveLength(0);
  });

  it("rolls deliveries back with the emitting transaction", async () => {
    await subscribe("/rollback", ["contact.opted_out"]);
    await expect(
      db().transaction(async (tx) => {
        await emitEvent(tx, ws().workspaceId, "contact.opted_out", { id: "rolled-back" }, clock.now());
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    await runDueDeliveries();
    expect(receiver.at("/rollback")).toHaveLength(0);
  });

  it("retries on the schedule with jitter until a 2xx, logging every attempt, then stops", async () => {
    receiver.script(
      "/flaky",
      () => new Response("down", { status: 500 }),
      () => new Response("still down", { status: 502 }),
      () => new Response("fine", { status: 200 }),
    );
    const w = await subscribe("/flaky", ["call.completed"]);
    const event = await emit("call.completed", { id: "call-1" });
    await runDueDeliveries();
    expect(receiver.at("/flaky")).toHaveLength(1);

    const [first] = (await queuedDeliveryJobs()).filter((j) => j.workspaceId === ws().workspaceId);
    const wait1 = first.runAt - clock.now();
    expect(wait1).toBeGreaterThanOrEqual(RETRY_SCHEDULE_MS[0] * 0.8);
    expect(wait1).toBeLessThanOrEqual(RETRY_SCHEDULE_MS[0] * 1.2);

    clock.advance(3_000); // not yet due
    await runDueDeliveries();
    expect(receiver.at("/flaky")).toHaveLength(1);

    clock.advance(wait1);
    await runDueDeliveries();
    expect(receiver.at("/flaky")).toHaveLength(2);
    const [second] = (await queuedDeliveryJobs()).filter((j) => j.workspaceId === ws().workspaceId);
    const wait2 = second.runAt - clock.now();
    expect(wait2).toBeGreaterThanOrEqual(RETRY_SCHEDULE_MS[1] * 0.8);
    expect(wait2).toBeLessThanOrEqual(RETRY_SCHEDULE_MS[1] * 1.2);

    clock.advance(wait2);
    await runDueDeliveries();
    const got = receiver.at("/flaky");
    expect(got).toHaveLength(3);
    expect(new Set(got.map((r) => r.headers["webhook-id"]))).toEqual(new Set([event.id]));
    expect(got.every((r) => signedWith(w.secret, r))).toBe(true);

    // Delivered: nothing more is scheduled and nothing is sent again.
    expect((await queuedDeliveryJobs()).filter((j) => j.workspaceId === ws().workspaceId)).toHaveLength(0);
    clock.advance(24 * 3_600_000);
    await runDueDeliveries();
    expect(receiver.at("/flaky")).toHaveLength(3);

    const log = await wsApi("GET", `/v1/webhooks/${w.id}/deliveries`);
    expect(log.body.total).toBe(3);
    expect(log.body.deliveries.map((d: { attempt: number }) => d.attempt)).toEqual([3, 2, 1]);
    expect(log.body.deliveries.map((d: { response_status: number }) => d.response_status)).toEqual([
      200, 502, 500,
    ]);
    expect(log.body.deliveries.map((d: { status: string }) => d.status)).toEqual([
      "succeeded",
      "failed",
      "failed",
    ]);
    expect(log.body.deliveries[2]).toMatchObject({
      event: "call.completed",
      event_id: event.id,
      response_body: "down",
      error: "HTTP 500",
    });
    expect(new Set(log.body.deliveries.map((d: { id: string }) => d.id)).size).toBe(1);
  });

  it("waits at least the receiver's Retry-After", async () => {
    receiver.script(
      "/retry-after",
      () => new Response("busy", { status: 503, headers: { "retry-after": "600" } }),
    );
    const w = await subscribe("/retry-after", ["campaign.started"]);
    await emit("campaign.started", { id: "cmp-1" });
    await runDueDeliveries();
    const [job] = (await queuedDeliveryJobs()).filter((j) => j.workspaceId === ws().workspaceId);
    expect(job.runAt - clock.now()).toBeGreaterThanOrEqual(600_000);
    clock.advance(60_000); // the schedule alone (5 s) would be due by now
    await runDueDeliveries();
    expect(receiver.at("/retry-after")).toHaveLength(1);
    await wsApi("DELETE", `/v1/webhooks/${w.id}`);
    clock.advance(600_000);
    await runDueDeliveries();
  });

  it("gives up after the last retry (8 attempts) and marks the delivery failed", async () => {
    receiver.script("/always-500", () => new Response("no", { status: 500 }));
    const w = await subscribe("/always-500", ["campaign.completed"]);
    await emit("campaign.completed", { id: "cmp-2" });
    await runDueDeliveries();
    for (const delay of RETRY_SCHEDULE_MS) {
      clock.advance(delay * 1.25);
      await runDueDeliveries();
    }
    expect(receiver.at("/always-500")).toHaveLength(8);
    expect((await queuedDeliveryJobs()).filter((j) => j.workspaceId === ws().workspaceId)).toHaveLength(0);
    const [delivery] = await db()
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.webhookId, w.id))
      .all();
    expect(delivery.status).toBe("failed");
    expect((await wsApi("GET", `/v1/webhooks/${w.id}/deliveries`)).body.total).toBe(8);
    // Not yet 5 days of failures: the endpoint stays enabled.
    expect((await wsApi("GET", `/v1/webhooks/${w.id}`)).body.webhook.enabled).toBe(true);

    // Still failing 5 days after the first failure: disabled.
    clock.advance(5 * 24 * 3_600_000);
    await emit("campaign.completed", { id: "cmp-3" });
    await runDueDeliveries();
    expect((await wsApi("GET", `/v1/webhooks/${w.id}`)).body.webhook.enabled).toBe(false);
    await emit("campaign.completed", { id: "cmp-4" });
    await runDueDeliveries();
    expect(receiver.at("/always-500")).toHaveLength(9);
    await wsApi("DELETE", `/v1/webhooks/${w.id}`);
  });

  it("a success resets the 5-day failure count", async () => {
    let fail = true;
    receiver.script("/recovers", () => new Response(fail ? "no" : "ok", { status: fail ? 500 : 200 }));
    const w = await subscribe("/recovers", ["link.clicked"]);
    await emit("link.clicked", { click_id: "k1" });
    await runDueDeliveries();
    fail = false;
    clock.advance(4 * 24 * 3_600_000);
    await emit("link.clicked", { click_id: "k2" });
    await runDueDeliveries();
    fail = true;
    clock.advance(2 * 24 * 3_600_000);
    await emit("link.clicked", { click_id: "k3" });
    await runDueDeliveries();
    expect((await wsApi("GET", `/v1/webhooks/${w.id}`)).body.webhook.enabled).toBe(true);
    await wsApi("DELETE", `/v1/webhooks/${w.id}`);
    await runDueDeliveries();
  });

  it("disables the endpoint at once when the receiver answers 410", async () => {
    receiver.script("/gone", () => new Response("gone", { status: 410 }));
    const w = await subscribe("/gone", ["conversion.recorded"]);
    await emit("conversion.recorded", { id: "conv-1" });
    await emit("conversion.recorded", { id: "conv-2" });
    await runDueDeliveries();
    expect((await wsApi("GET", `/v1/webhooks/${w.id}`)).body.webhook.enabled).toBe(false);
    expect((await queuedDeliveryJobs()).filter((j) => j.workspaceId === ws().workspaceId)).toHaveLength(0);
    clock.advance(3_600_000);
    await runDueDeliveries();
    expect(receiver.at("/gone").length).toBeLessThanOrEqual(2);
    // Re-enabled by hand, it receives again.
    await wsApi("PATCH", `/v1/webhooks/${w.id}`, { enabled: true });
    receiver.script("/gone", () => new Response("back"));
    await emit("conversion.recorded", { id: "conv-3" });
    await runDueDeliveries();
    expect(receiver.at("/gone").some((r) => r.body.includes("conv-3"))).toBe(true);
    await wsApi("DELETE", `/v1/webhooks/${w.id}`);
  });

  it("retries a receiver that hangs or closes the connection", async () => {
    const hanging = await startHangingServer();
    const closing = await startClosingServer();
    try {
      const a = await wsApi("POST", "/v1/webhooks", { url: hanging.url, events: ["agent.handoff"] });
      const b = await wsApi("POST", "/v1/webhooks", { url: closing.url, events: ["agent.handoff"] });
      await emit("agent.handoff", { agent_id: "a1" });
      await runDueDeliveries();
      const queued = (await queuedDeliveryJobs()).filter((j) => j.workspaceId === ws().workspaceId);
      expect(queued).toHaveLength(2);
      for (const id of [a.body.webhook.id, b.body.webhook.id]) {
        const log = await wsApi("GET", `/v1/webhooks/${id}/deliveries`);
        expect(log.body.deliveries).toHaveLength(1);
        expect(log.body.deliveries[0]).toMatchObject({ status: "failed", response_status: null, attempt: 1 });
        await wsApi("DELETE", `/v1/webhooks/${id}`);
      }
      clock.advance(10_000);
      await runDueDeliveries();
    } finally {
      hanging.stop();
      closing.stop();
    }
  });
});

describe("GET /v1/webhooks/{id}/deliveries", () => {
  it("answers 404 for another workspace's webhook", async () => {
    const w = await subscribe("/log-404");
    const other = await s.newWorkspace("Webhook log other");
    expect(
      (await s.api("GET", `/v1/webhooks/${w.id}/deliveries`, undefined, { key: other.key })).status,
    ).toBe(404);
  });

  it("pages newest first", async () => {
    const w = await subscribe("/log-page");
    for (let i = 0; i < 3; i++) await s.api("POST", `/v1/webhooks/${w.id}/test`);
    const r = await s.api("GET", `/v1/webhooks/${w.id}/deliveries?limit=2&offset=1`);
    expect(r.body).toMatchObject({ ok: true, total: 3, limit: 2, offset: 1 });
    expect(r.body.deliveries).toHaveLength(2);
    const all = (await s.api("GET", `/v1/webhooks/${w.id}/deliveries`)).body.deliveries;
    expect(r.body.deliveries.map((d: { attempt_id: string }) => d.attempt_id)).toEqual(
      all.slice(1, 3).map((d: { attempt_id: string }) => d.attempt_id),
    );
  });
  it("keeps the delivery log 30 days (maintenance prunes it)", async () => {
    const w = await subscribe("/prune");
    await s.api("POST", `/v1/webhooks/${w.id}/test`);
    expect((await s.api("GET", `/v1/webhooks/${w.id}/deliveries`)).body.total).toBe(1);
    clock.t = Date.now() + 31 * 24 * 3_600_000;
    await enqueueJob(db(), "maintenance.prune", {}, { now: clock.now() });
    await runDueDeliveries();
    expect((await s.api("GET", `/v1/webhooks/${w.id}/deliveries`)).body.total).toBe(0);
  });
});

describe("POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry", () => {
  it("replays a delivery with the same webhook-id and logs the new attempt", async () => {
    receiver.script(
      "/replay",
      () => new Response("no", { status: 500 }),
      () => new Response("yes"),
    );
    const w = await subscribe("/replay");
    const test = await s.api("POST", `/v1/webhooks/${w.id}/test`);
    expect(test.body.delivery.status).toBe("failed");
    const r = await s.api("POST", `/v1/webhooks/${w.id}/deliveries/${test.body.delivery.id}/retry`);
    expect(r.status).toBe(200);
    expect(r.body.delivery).toMatchObject({
      id: test.body.delivery.id,
      event: "webhook.test",
      status: "succeeded",
      response_status: 200,
      attempt: 2,
    });
    const [first, second] = receiver.at("/replay");
    expect(second.headers["webhook-id"]).toBe(first.headers["webhook-id"]);
    expect(verified(w.secret, second).type).toBe("webhook.test");
    expect((await s.api("GET", `/v1/webhooks/${w.id}/deliveries`)).body.total).toBe(2);
  });

  it("ends the retry schedule of a pending delivery it delivers", async () => {
    receiver.script(
      "/replay-pending",
      () => new Response("no", { status: 500 }),
      () => new Response("yes"),
    );
    const w = await subscribe("/replay-pending", ["message.failed"]);
    await emit("message.failed", { id: "mf-1" });
    await runDueDeliveries();
    const log = await s.api("GET", `/v1/webhooks/${w.id}/deliveries`);
    const r = await s.api("POST", `/v1/webhooks/${w.id}/deliveries/${log.body.deliveries[0].id}/retry`);
    expect(r.body.delivery.status).toBe("succeeded");
    clock.advance(60_000);
    await runDueDeliveries();
    expect(receiver.at("/replay-pending")).toHaveLength(2);
  });

  it("answers 404 for an unknown delivery or another workspace's webhook", async () => {
    const w = await subscribe("/replay-404");
    const test = await s.api("POST", `/v1/webhooks/${w.id}/test`);
    const other = await s.newWorkspace("Webhook replay other");
    const path = `/v1/webhooks/${w.id}/deliveries/${test.body.delivery.id}/retry`;
    expect((await s.api("POST", path, undefined, { key: other.key })).status).toBe(404);
    expect(
      (await s.api("POST", `/v1/webhooks/${w.id}/deliveries/0190f0f0-0000-7000-8000-000000000000/retry`))
        .status,
    ).toBe(404);
    expect((await s.api("POST", `/v1/webhooks/${w.id}/deliveries/bad/retry`)).status).toBe(404);
    const another = await subscribe("/replay-404-b");
    expect(
      (await s.api("POST", `/v1/webhooks/${another.id}/deliveries/${test.body.delivery.id}/retry`)).status,
    ).toBe(404);
    expect(receiver.at("/replay-404")).toHaveLength(1);
  });
});

describe("durability", () => {
  it("delivers after a restart what was queued before it, and outbox events never fanned out", async () => {
    const first = await startTestServer({ workerEnabled: false });
    const created = await first.api("POST", "/v1/webhooks", { url: receiver.url("/restart"), events: ["*"] });
    const firstDb = first.server.handle.db;
    const queued = await firstDb.transaction(
      async (tx) => await emitEvent(tx, first.workspaceId, "contact.created", { id: "before-restart" }),
    );
    // Written by a process that did not load the webhooks module: no deliveries yet.
    await firstDb
      .insert(events)
      .values({
        id: "0190f0f0-0000-7000-8000-0000000000aa",
        workspaceId: first.workspaceId,
        type: "contact.opted_out",
        data: { id: "outbox-only" },
        createdAt: Date.now(),
      })
      .run();
    await first.server.shutdown();
    expect(receiver.at("/restart")).toHaveLength(0);

    const second = await startServer({
      ...loadConfig({}, { RATE_LIMIT_RPS: "0", LOG_LEVEL: "error", WEBHOOK_ALLOW_PRIVATE: "true" }),
      port: 0,
      host: "127.0.0.1",
      dbPath: first.dbPath,
      databaseUrl: first.databaseUrl,
    });
    try {
      for (let i = 0; i < 500 && receiver.at("/restart").length < 2; i++) await Bun.sleep(10);
      const got = receiver.at("/restart");
      expect(got.map((r) => r.headers["webhook-id"]).sort()).toEqual(
        [queued.id, "0190f0f0-0000-7000-8000-0000000000aa"].sort(),
      );
      expect(got.every((r) => signedWith(created.body.webhook.secret, r))).toBe(true);
    } finally {
      await second.shutdown();
      rmSync(first.dir, { recursive: true, force: true });
    }
  });
});

describe("GET /v1/openapi.json", () => {
  it("publishes every event's payload schema", async () => {
    const r = await s.api("GET", "/v1/openapi.json");
    const schemas = r.body.components.schemas;
    expect(schemas.MessageDeliveredEvent.properties.type.const).toBe("message.delivered");
    expect(schemas.MessageDeliveredEvent.properties.data.properties.delivered_at).toBeDefined();
    expect(schemas.WebhookTestEvent.properties.data.properties.webhook_id).toBeDefined();
    expect(schemas.LinkClickedEvent.properties.data.required).toEqual(
      expect.arrayContaining(["click_id", "offer_id", "contact_id", "campaign_id", "message_id"]),
    );
    expect(r.body.paths["/v1/webhooks/{id}/test"]).toBeDefined();
  });
});
