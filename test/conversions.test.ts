import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { recordAgentConversion } from "../src/domain/attribution/conversions";
import { answerAfterOutsideWrite, outsideConnection } from "./support/database";
import { eventLog } from "./support/event-log";
import { startSecondNode, startTestServer, type TestServer } from "./support/server";

let s: TestServer;
// biome-ignore lint/suspicious/noExplicitAny: JSON answers
type Json = any;
let ana: Json;
let ben: Json;

const log = eventLog(() => s);
beforeAll(async () => {
  s = await startTestServer();
  await log.watch();
  ana = (
    await s.api("POST", "/v1/contacts", {
      phone_number: "+15125550101",
      email: "Ana@Example.com",
      external_id: "crm-1",
      first_name: "Ana",
    })
  ).body.contact;
  ben = (await s.api("POST", "/v1/contacts", { phone_number: "+15125550102", email: "ben@example.com" })).body
    .contact;
});
afterAll(async () => await s.stop());

const count = async (table: string): Promise<number> => {
  const db = outsideConnection(s);
  try {
    return (await db.all<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0].n;
  } finally {
    await db.close();
  }
};

describe("POST /v1/conversion", () => {
  it("records a conversion and answers the seed's body, nothing else", async () => {
    const r = await s.api("POST", "/v1/conversion", {
      txn: "order-1",
      value: 49.9,
      email: "ana@example.com",
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ conversion: { recorded: true, duplicate: false, contact_id: ana.id } });
    const list = await s.api("GET", `/v1/conversions?contact_id=${ana.id}`);
    expect(list.body.conversions[0]).toMatchObject({
      txn: "order-1",
      event: "purchase",
      value: 49.9,
      currency: "USD",
      contact_id: ana.id,
      campaign_id: null,
      offer_id: null,
      message_id: null,
      click_id: null,
      agent_id: null,
      flow_id: null,
    });
  });

  it("is idempotent on txn forever: a retry writes nothing and answers duplicate with the original contact", async () => {
    const before = await count("conversions");
    const events = await count("events");
    const r = await s.api("POST", "/v1/conversion", { txn: "order-1", value: 10, phone: "+15125550102" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ conversion: { recorded: true, duplicate: true, contact_id: ana.id } });
    expect(await count("conversions")).toBe(before);
    expect(await count("events")).toBe(events);
  });

  it("keeps txn per workspace", async () => {
    const other = await s.newWorkspace("Other");
    await s.api("POST", "/v1/contacts", { phone_number: "+15125550101" }, { key: other.key });
    const r = await s.api(
      "POST",
      "/v1/conversion",
      { txn: "order-1", phone: "5125550101" },
      { key: other.key },
    );
    expect(r.body.conversion.duplicate).toBe(false);
    expect(r.body.conversion.contact_id).not.toBe(ana.id);
  });

  it("tries identifiers strongest first: external_id beats phone beats email", async () => {
    const byExternal = await s.api("POST", "/v1/conversion", {
      txn: "s-1",
      external_id: "crm-1",
      phone: "+15125550102",
      email: "ben@example.com",
    });
    expect(byExternal.body.conversion.contact_id).toBe(ana.id);
    const byPhone = await s.api("POST", "/v1/conversion", {
      txn: "s-2",
      external_id: "nobody",
      phone: "(512) 555-0102",
      email: "ana@example.com",
    });
    expect(byPhone.body.conversion.contact_id).toBe(ben.id);
    const byEmail = await s.api("POST", "/v1/conversion", {
      txn: "s-3",
      phone: "+15125550199",
      email: "BEN@EXAMPLE.COM",
    });
    expect(byEmail.body.conversion.contact_id).toBe(ben.id);
    const eleven = await s.api("POST", "/v1/conversion", { txn: "s-4", phone: "15125550101" });
    expect(eleven.body.conversion.contact_id).toBe(ana.id);
  });

  it("falls through an unknown vcx and vid to the next identifier", async () => {
    const r = await s.api("POST", "/v1/conversion", {
      txn: "s-5",
      vcx: "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77",
      vid: "01936f8e-7c1a-4a3b-9f00-2d5e8c1b4a77",
      email: "ben@example.com",
    });
    expect(r.body.conversion.contact_id).toBe(ben.id);
  });

  it("takes null for an optional field as absent: no value, purchase, USD", async () => {
    const r = await s.api("POST", "/v1/conversion", {
      txn: "null-1",
      value: null,
      currency: null,
      event: null,
      email: "ana@example.com",
    });
    expect(r.status).toBe(200);
    const row = (await s.api("GET", `/v1/conversions?contact_id=${ana.id}`)).body.conversions.find(
      (c: { txn: string }) => c.txn === "null-1",
    );
    expect(row).toMatchObject({ value: null, currency: "USD", event: "purchase" });
  });

  it("takes lead, action and custom events, and upper-cases the currency", async () => {
    for (const [event, txn] of [
      ["lead", "e-1"],
      ["action", "e-2"],
      ["signup.completed-v2", "e-3"],
    ]) {
      const r = await s.api("POST", "/v1/conversion", {
        txn,
        event,
        currency: "eur",
        value: 0,
        phone: "+15125550101",
      });
      expect(r.status).toBe(200);
    }
    const list = await s.api("GET", "/v1/conversions?event=signup.completed-v2");
    expect(list.body.conversions).toHaveLength(1);
    expect(list.body.conversions[0].currency).toBe("EUR");
  });

  const bad: [string, Json, string][] = [
    ["no txn", { email: "ana@example.com" }, "txn is required"],
    ["an empty txn", { txn: "  ", email: "ana@example.com" }, "txn is required"],
    [
      "no identifier",
      { txn: "b-1" },
      "At least one identifier is required (vcx, vid, external_id, phone, email)",
    ],
    [
      "empty identifiers",
      { txn: "b-1", email: "", phone: "" },
      "At least one identifier is required (vcx, vid, external_id, phone, email)",
    ],
    ["no match", { txn: "b-1", email: "nobody@example.com" }, "No contact matched the identifiers"],
    [
      "a value that is not a number",
      { txn: "b-1", value: "twelve", email: "ana@example.com" },
      "value must be a number",
    ],
    ["a value in a string", { txn: "b-1", value: "12", email: "ana@example.com" }, "value must be a number"],
    [
      "a negative value",
      { txn: "b-1", value: -1, email: "ana@example.com" },
      "value must be between 0 and 1000000000",
    ],
    [
      "a huge value",
      { txn: "b-1", value: 1e300, email: "ana@example.com" },
      "value must be between 0 and 1000000000",
    ],
    [
      "a currency of 4 letters",
      { txn: "b-1", currency: "USDX", email: "ana@example.com" },
      "currency is too long (max 3)",
    ],
    [
      "a currency with digits",
      { txn: "b-1", currency: "U5D", email: "ana@example.com" },
      "currency must be a three-letter currency code (ISO 4217)",
    ],
    [
      "an unknown event",
      { txn: "b-1", event: "Purchase!", email: "ana@example.com" },
      "event must be purchase, lead, action or a custom name",
    ],
    [
      "a malformed vcx",
      { txn: "b-1", vcx: "abc", email: "ana@example.com" },
      "vcx must be a click id (a UUID from a tracked link)",
    ],
    [
      "a malformed vid",
      { txn: "b-1", vid: "abc", email: "ana@example.com" },
      "vid must be a visitor id (a UUID from the tracking script)",
    ],
    ["a bad phone", { txn: "b-1", phone: "12" }, "phone must be a valid phone number"],
    ["a bad email", { txn: "b-1", email: "nope" }, "email must be a valid email address"],
  ];
  for (const [what, body, error] of bad) {
    it(`answers 422 for ${what} and writes nothing`, async () => {
      const before = await count("conversions");
      const r = await s.api("POST", "/v1/conversion", body);
      expect(r.status).toBe(422);
      expect(r.body.ok).toBe(false);
      expect(r.body.error).toStartWith(error);
      expect(await count("conversions")).toBe(before);
    });
  }

  it("answers NaN and Infinity (not JSON) with 400, and 1e400 (Infinity once parsed) with 422", async () => {
    const nan = await s.api("POST", "/v1/conversion", undefined, {
      raw: '{"txn":"b-2","value":NaN,"email":"ana@example.com"}',
      headers: { "content-type": "application/json" },
    });
    expect(nan.status).toBe(400);
    const inf = await s.api("POST", "/v1/conversion", undefined, {
      raw: '{"txn":"b-2","value":1e400,"email":"ana@example.com"}',
      headers: { "content-type": "application/json" },
    });
    expect(inf.status).toBe(422);
    expect(inf.body.error).toStartWith("value must be");
  });

  it("answers 403 without the write scope", async () => {
    const read = await s.newKey(["read"]);
    const r = await s.api(
      "POST",
      "/v1/conversion",
      { txn: "w-1", email: "ana@example.com" },
      { key: read.key },
    );
    expect(r.status).toBe(403);
    expect(r.body).toEqual({
      ok: false,
      error: "This API key cannot create and edit.",
      required_scope: "write",
    });
  });

  it("answers 403 when tracking is disabled, before looking at the body, and writes nothing", async () => {
    const other = await s.newWorkspace("Disabled");
    await s.api("PATCH", "/v1/settings", { conversion_tracking_enabled: false }, { key: other.key });
    for (const body of [{ txn: "d-1", email: "ana@example.com" }, {}]) {
      const r = await s.api("POST", "/v1/conversion", body, { key: other.key });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ ok: false, error: "Conversion tracking is disabled for this workspace" });
    }
  });

  it("sees the tracking switch change at once, through the API and from another connection", async () => {
    const other = await s.newWorkspace("Switched");
    const contact = await s.api("POST", "/v1/contacts", { phone_number: "+14155550177" }, { key: other.key });
    expect(contact.status).toBe(200);
    const convert = async (txn: string) =>
      await s.api("POST", "/v1/conversion", { txn, phone: "+14155550177" }, { key: other.key });
    expect((await convert("sw-1")).status).toBe(200); // the switch is remembered as on
    await s.api("PATCH", "/v1/settings", { conversion_tracking_enabled: false }, { key: other.key });
    expect((await convert("sw-2")).body).toEqual({
      ok: false,
      error: "Conversion tracking is disabled for this workspace",
    });
    await s.api("PATCH", "/v1/settings", { conversion_tracking_enabled: true }, { key: other.key });
    expect((await convert("sw-3")).status).toBe(200);
    // Another process (the CLI, a second server) turns it off in the file.
    const writer = outsideConnection(s);
    await writer.run(
      "UPDATE workspaces SET conversion_tracking_enabled = FALSE WHERE id = ?",
      other.workspaceId,
    );
    await writer.close();
    const after = await answerAfterOutsideWrite(
      s,
      () => convert("sw-4"),
      (r) => r.status === 403,
    );
    expect(after.status).toBe(403);
  });

  it("emits conversion.recorded with the record, once", async () => {
    await s.api("POST", "/v1/conversion", { txn: "ev-1", value: 5, email: "ben@example.com" });
    await s.api("POST", "/v1/conversion", { txn: "ev-1", value: 5, email: "ben@example.com" });
    const rows = (await log.of("conversion.recorded")).filter((e) => e.data.txn === "ev-1");
    expect(rows).toHaveLength(1);
    expect(rows[0].data).toMatchObject({
      txn: "ev-1",
      value: 5,
      contact_id: ben.id,
      event: "purchase",
    });
  });
});

describe("POST /v1/conversion, many at once", () => {
  const post = (server: { api: TestServer["api"] }, txn: string, ids: Record<string, string>) =>
    server.api("POST", "/v1/conversion", { txn, value: 1, ...ids });
  const recordedOf = async (txn: string) =>
    (await log.of("conversion.recorded")).filter((e) => e.data.txn === txn);

  it("answers each conversion of a burst as if it came alone: one record per txn, duplicates, a 422 for no match", async () => {
    const answers = await Promise.all([
      post(s, "burst-1", { email: "ana@example.com" }),
      post(s, "burst-1", { phone: "+15125550102" }),
      post(s, "burst-2", { email: "nobody@example.com" }),
      post(s, "burst-3", { phone: "+15125550102" }),
      post(s, "burst-1", { external_id: "crm-1" }),
      post(s, "burst-3", { email: "ben@example.com" }),
    ]);
    const burst1 = [answers[0], answers[1], answers[4]];
    for (const a of burst1) expect(a.status).toBe(200);
    // Whichever came first was recorded, against its own contact; the others answer that contact.
    const first = burst1.filter((a) => !a.body.conversion.duplicate);
    expect(first).toHaveLength(1);
    for (const a of burst1) expect(a.body.conversion.contact_id).toBe(first[0].body.conversion.contact_id);
    expect([ana.id, ben.id]).toContain(first[0].body.conversion.contact_id);
    expect({ status: answers[2].status, body: answers[2].body }).toEqual({
      status: 422,
      body: { ok: false, error: "No contact matched the identifiers" },
    });
    expect(answers[3].body.conversion.contact_id).toBe(ben.id);
    expect(answers[5].body.conversion).toEqual({ recorded: true, duplicate: true, contact_id: ben.id });
    expect(answers[3].body.conversion.duplicate).toBe(false);
    const listed = (await s.api("GET", "/v1/conversions?limit=100")).body.conversions.map((c: Json) => c.txn);
    expect(listed.filter((t: string) => t.startsWith("burst-")).sort()).toEqual(["burst-1", "burst-3"]);
    expect(await recordedOf("burst-1")).toHaveLength(1);
    expect(await recordedOf("burst-3")).toHaveLength(1);
  });

  it("records a txn posted to two servers at once once, and answers the other as its duplicate", async () => {
    const node = await startSecondNode(s);
    try {
      const txns = Array.from({ length: 20 }, (_, i) => `race-${i}`);
      const answers = await Promise.all(
        txns.flatMap((txn) => [
          post(s, txn, { email: "ben@example.com" }),
          post(node, txn, { phone: "+15125550102" }),
        ]),
      );
      for (const a of answers)
        expect({ status: a.status, contact: a.body.conversion?.contact_id }).toEqual({
          status: 200,
          contact: ben.id,
        });
      for (const [i, txn] of txns.entries()) {
        const pair = [answers[2 * i], answers[2 * i + 1]].map((a) => a.body.conversion.duplicate).sort();
        expect({ txn, pair }).toEqual({ txn, pair: [false, true] });
        expect(await recordedOf(txn)).toHaveLength(1);
      }
      const db = outsideConnection(s);
      try {
        const rows = await db.all<{ n: number }>(
          "SELECT count(*) AS n FROM conversions WHERE txn LIKE 'race-%'",
        );
        expect(Number(rows[0].n)).toBe(txns.length);
      } finally {
        await db.close();
      }
    } finally {
      await node.stop();
    }
  });
});

describe("an agent's conversion (recordAgentConversion)", () => {
  it("is recorded once when another transaction records its txn meanwhile, and the other answers false, not an error", async () => {
    const { db } = s.server.handle;
    const input = {
      workspaceId: s.workspaceId,
      contactId: ben.id,
      agentId: "agent-1",
      txn: "agent:thread-1:goal",
      now: Date.now(),
    };
    const held = Promise.withResolvers<void>();
    const inserted = Promise.withResolvers<void>();
    // The first records the txn and keeps its transaction open; the second looks for the txn (not
    // committed yet: not found), and on PostgreSQL its insert then waits on the first's row.
    const first = db.transaction(async (tx) => {
      const recorded = await recordAgentConversion(tx, input);
      inserted.resolve();
      await held.promise;
      return recorded;
    });
    await inserted.promise;
    const second = db.transaction(async (tx) => await recordAgentConversion(tx, input));
    const outside = outsideConnection(s);
    try {
      if (s.databaseUrl) {
        let waiting = 0;
        for (let i = 0; i < 500 && waiting === 0; i++) {
          const rows = await outside.all<{ n: number }>(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          );
          waiting = Number(rows[0].n);
          if (waiting === 0) await Bun.sleep(10);
        }
        expect(waiting).toBe(1);
      }
      held.resolve();
      expect(await first).toBe(true);
      expect(await second).toBe(false);
      const rows = await outside.all<{ n: number }>(
        "SELECT count(*) AS n FROM conversions WHERE txn = 'agent:thread-1:goal'",
      );
      expect(Number(rows[0].n)).toBe(1);
      expect((await log.of("conversion.recorded")).filter((e) => e.data.txn === input.txn)).toHaveLength(1);
    } finally {
      held.resolve();
      await outside.close();
    }
  });
});

describe("GET /v1/conversions", () => {
  it("lists newest first with filters and pagination", async () => {
    const all = await s.api("GET", "/v1/conversions?limit=2");
    expect(all.status).toBe(200);
    expect(all.body.conversions).toHaveLength(2);
    expect(all.body.total).toBeGreaterThan(5);
    expect(all.body.limit).toBe(2);
    const ben_ = await s.api("GET", `/v1/conversions?contact_id=${ben.id}`);
    expect(ben_.body.conversions.every((c: Json) => c.contact_id === ben.id)).toBe(true);
    const none = await s.api("GET", "/v1/conversions?campaign_id=01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77");
    expect(none.body.total).toBe(0);
  });

  it("never shows another workspace's conversions", async () => {
    const other = await s.newWorkspace("Empty");
    const r = await s.api("GET", "/v1/conversions", undefined, { key: other.key });
    expect(r.body.total).toBe(0);
  });
});
