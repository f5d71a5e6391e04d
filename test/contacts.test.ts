import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { eventLog } from "./support/event-log";
import { orderNumber } from "./support/messaging";
import { startSecondNode, startTestServer, type TestServer } from "./support/server";

let s: TestServer;
const log = eventLog(() => s);
beforeAll(async () => {
  s = await startTestServer();
  await log.watch();
});
afterAll(async () => await s.stop());

let seq = 0;
/** A fresh valid US number for each call (area code 212). */
function phone(): string {
  seq++;
  return `+1212555${String(1000 + seq).slice(-4)}`;
}

describe("POST /v1/contacts", () => {
  it("creates a contact with E.164 phone, defaults, timezone from the area code and a contact.created event", async () => {
    const r = await s.api("POST", "/v1/contacts", {
      phone_number: "(415) 555-0101",
      first_name: "Ada",
      last_name: "Lovelace",
      email: "ada@example.com",
      fields: { plan: "pro", seats: 3 },
    });
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
    const c = r.body.contact;
    expect(c).toMatchObject({
      phone_number: "+14155550101",
      first_name: "Ada",
      last_name: "Lovelace",
      email: "ada@example.com",
      external_id: null,
      source: "api",
      opted_in: true,
      timezone: "America/Los_Angeles",
      timezone_source: "area_code",
      state: null,
      fields: { plan: "pro", seats: 3 },
    });
    expect(c.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(c.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect((await log.of("contact.created")).some((e) => e.data.id === c.id)).toBe(true);
  });

  it("answers custom fields with their keys sorted, as created, merged and read", async () => {
    const created = await s.api("POST", "/v1/contacts", {
      phone_number: phone(),
      fields: { zeta: 1, b: "two", aa: true, Ä: "x", B: 0 },
    });
    expect(created.status).toBe(200);
    const sorted = ["B", "aa", "b", "zeta", "Ä"];
    expect(Object.keys(created.body.contact.fields)).toEqual(sorted);
    const id = created.body.contact.id;
    const patched = await s.api("PATCH", `/v1/contacts/${id}`, { fields: { c: 3, zeta: null } });
    expect(Object.keys(patched.body.contact.fields)).toEqual(["B", "aa", "b", "c", "Ä"]);
    const read = await s.api("GET", `/v1/contacts/${id}`);
    expect(Object.keys(read.body.contact.fields)).toEqual(["B", "aa", "b", "c", "Ä"]);
  });

  it("accepts 10- and 11-digit US numbers", async () => {
    const ten = await s.api("POST", "/v1/contacts", { phone_number: "3125550111" });
    expect(ten.body.contact.phone_number).toBe("+13125550111");
    expect(ten.body.contact.timezone).toBe("America/Chicago");
    const eleven = await s.api("POST", "/v1/contacts", { phone_number: "1-303-555-0111" });
    expect(eleven.body.contact.phone_number).toBe("+13035550111");
    expect(eleven.body.contact.timezone).toBe("America/Denver");
  });

  it("keeps a given timezone and opted_in", async () => {
    const r = await s.api("POST", "/v1/contacts", {
      phone_number: phone(),
      timezone: "Europe/Paris",
      opted_in: false,
    });
    expect(r.body.contact.timezone).toBe("Europe/Paris");
    expect(r.body.contact.opted_in).toBe(false);
  });

  // [case, body, timezone shown, timezone_source, state]
  const ZONES: [string, Record<string, unknown>, string | null, string, string | null][] = [
    [
      "no zone: the area code's main zone, for display",
      { phone_number: "8505550120" },
      "America/New_York",
      "area_code",
      null,
    ],
    [
      "timezone null: from the area code",
      { phone_number: "8505550121", timezone: null },
      "America/New_York",
      "area_code",
      null,
    ],
    [
      "a zone given: its own",
      { phone_number: "8505550122", timezone: "America/Chicago" },
      "America/Chicago",
      "given",
      null,
    ],
    [
      "a zone equal to the main zone, given: still given",
      { phone_number: "8505550123", timezone: "America/New_York" },
      "America/New_York",
      "given",
      null,
    ],
    [
      "448 (850's overlay) shows Eastern",
      { phone_number: "4485550124" },
      "America/New_York",
      "area_code",
      null,
    ],
    ["a new area code (324)", { phone_number: "3245550125" }, "America/New_York", "area_code", null],
    ["a state given", { phone_number: "2125550126", state: "fl" }, "America/New_York", "area_code", "FL"],
    [
      "a state by name",
      { phone_number: "2125550127", state: "Rhode Island" },
      "America/New_York",
      "area_code",
      "RI",
    ],
    ["a UK number: no area code zone", { phone_number: "+442071234567" }, null, "area_code", null],
  ];
  for (const [name, body, timezone, source, state] of ZONES) {
    it(`timezone_source: ${name}`, async () => {
      const c = (await s.api("POST", "/v1/contacts", body)).body.contact;
      expect({ name, timezone: c?.timezone, timezone_source: c?.timezone_source, state: c?.state }).toEqual({
        name,
        timezone,
        timezone_source: source,
        state,
      });
    });
  }

  it("answers 422 'state must be a two-letter state or province code' for an unknown state", async () => {
    const r = await s.api("POST", "/v1/contacts", { phone_number: phone(), state: "Atlantis" });
    expect({ status: r.status, body: r.body }).toEqual({
      status: 422,
      body: { ok: false, error: "state must be a two-letter state or province code" },
    });
  });

  it("answers 409 with contact_id for a phone number already in the workspace", async () => {
    const p = phone();
    const first = await s.api("POST", "/v1/contacts", { phone_number: p });
    const again = await s.api("POST", "/v1/contacts", { phone_number: p.slice(2) });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      ok: false,
      error: "Contact with this phone_number already exists",
      contact_id: first.body.contact.id,
    });
  });

  it("answers one 200 and 409s naming it for one number created at once on two servers", async () => {
    const node = await startSecondNode(s);
    try {
      const p = phone();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 ? node : s).api("POST", "/v1/contacts", { phone_number: p }),
        ),
      );
      const created = answers.filter((a) => a.status === 200);
      expect(created).toHaveLength(1);
      const id = created[0].body.contact.id;
      for (const a of answers.filter((x) => x.status !== 200))
        expect({ status: a.status, body: a.body }).toEqual({
          status: 409,
          body: { ok: false, error: "Contact with this phone_number already exists", contact_id: id },
        });
    } finally {
      await node.stop();
    }
  });

  it("lets another workspace have the same number", async () => {
    const p = phone();
    await s.api("POST", "/v1/contacts", { phone_number: p });
    const other = await s.newWorkspace();
    const r = await s.api("POST", "/v1/contacts", { phone_number: p }, { key: other.key });
    expect(r.status).toBe(200);
  });

  it("answers 422 'phone_number is required' without phone_number", async () => {
    const r = await s.api("POST", "/v1/contacts", { first_name: "x" });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ ok: false, error: "phone_number is required" });
  });

  it("answers 422 'phone_number must be a valid phone number' for junk", async () => {
    for (const bad of ["hello", "123", "+1 555"]) {
      const r = await s.api("POST", "/v1/contacts", { phone_number: bad });
      expect(r.status).toBe(422);
      expect(r.body.error).toBe("phone_number must be a valid phone number");
    }
  });

  it("answers 422 for a bad email, timezone, fields and too-long names", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ email: "nope" }, "email must be a valid email address"],
      [{ timezone: "Mars/Base" }, "timezone must be an IANA time zone"],
      [{ timezone: "+05:00" }, "timezone must be an IANA time zone"],
      [{ timezone: "america/new_york" }, "timezone must be an IANA time zone"],
      [{ fields: { nested: { a: 1 } } }, "fields.nested must be a string, number, boolean or null"],
      [{ fields: "x" }, "fields must be an object"],
      [{ first_name: "x".repeat(201) }, "first_name is too long (max 200)"],
      [{ opted_in: "yes" }, "opted_in must be a boolean"],
    ];
    for (const [extra, message] of cases) {
      const r = await s.api("POST", "/v1/contacts", { phone_number: phone(), ...extra });
      expect({ status: r.status, body: r.body }).toEqual({
        status: 422,
        body: { ok: false, error: message },
      });
    }
  });

  it("answers 422 for a custom field named __proto__ (it would not be a field)", async () => {
    const r = await s.api("POST", "/v1/contacts", undefined, {
      raw: '{"phone_number":"+12025550177","fields":{"__proto__":{"x":1},"plan":"pro"}}',
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ ok: false, error: "fields.__proto__ is not a valid field name" });
  });

  it("answers 403 for a read-only key", async () => {
    const { key } = await s.newKey(["read"]);
    const r = await s.api("POST", "/v1/contacts", { phone_number: phone() }, { key });
    expect(r.status).toBe(403);
  });
});

describe("GET /v1/contacts", () => {
  it("searches with q by name, phone and email, newest first", async () => {
    const ws = await s.newWorkspace();
    const make = async (body: Record<string, unknown>) =>
      await s.api("POST", "/v1/contacts", body, { key: ws.key });
    await make({ phone_number: "+12025550001", first_name: "Grace", last_name: "Hopper" });
    await make({ phone_number: "+12025550002", first_name: "Alan", email: "alan@turing.org" });
    await make({ phone_number: "+13125550003", first_name: "Edsger" });
    const all = await s.api("GET", "/v1/contacts", undefined, { key: ws.key });
    expect(all.body.total).toBe(3);
    expect(all.body.contacts.map((c: { first_name: string }) => c.first_name)).toEqual([
      "Edsger",
      "Alan",
      "Grace",
    ]);
    const byName = await s.api("GET", "/v1/contacts?q=hopp", undefined, { key: ws.key });
    expect(byName.body.contacts.map((c: { first_name: string }) => c.first_name)).toEqual(["Grace"]);
    const byEmail = await s.api("GET", "/v1/contacts?q=turing", undefined, { key: ws.key });
    expect(byEmail.body.contacts.map((c: { first_name: string }) => c.first_name)).toEqual(["Alan"]);
    const byPhone = await s.api("GET", "/v1/contacts?q=(202)%20555", undefined, { key: ws.key });
    expect(byPhone.body.total).toBe(2);
    const page = await s.api("GET", "/v1/contacts?limit=1&offset=1", undefined, { key: ws.key });
    expect(page.body).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(page.body.contacts[0].first_name).toBe("Alan");
  });

  it("keeps total exact through creates, imports, inbound from new numbers and deletes, per workspace", async () => {
    const ws = await s.newWorkspace();
    const other = await s.newWorkspace();
    const total = async (key: string) =>
      (await s.api("GET", "/v1/contacts?limit=1", undefined, { key })).body.total;
    expect(await total(ws.key)).toBe(0);
    const first = await s.api("POST", "/v1/contacts", { phone_number: "+12025550301" }, { key: ws.key });
    await s.api("POST", "/v1/contacts", { phone_number: "+12025550302" }, { key: ws.key });
    await s.api("POST", "/v1/contacts", { phone_number: "+12025550301" }, { key: other.key });
    const imported = await s.api(
      "POST",
      "/v1/contacts/import",
      {
        contacts: [
          { phone_number: "+12025550303" },
          { phone_number: "+12025550302" },
          { phone_number: "+12025550304" },
        ],
      },
      { key: ws.key },
    );
    expect(imported.body).toMatchObject({ created: 2, skipped: 1 });
    await s.api("POST", "/v1/numbers", { number: "+14155550190" }, { key: ws.key });
    const inbound = await s.api(
      "POST",
      "/v1/sandbox/inbound",
      { from: "+12025550305", to: "+14155550190", body: "hello" },
      { key: ws.key },
    );
    expect(inbound.status).toBe(200);
    expect(await total(ws.key)).toBe(5);
    expect(await total(other.key)).toBe(1);
    const removed = await s.api("DELETE", `/v1/contacts/${first.body.contact.id}`, undefined, {
      key: ws.key,
    });
    expect(removed.status).toBe(200);
    expect(await total(ws.key)).toBe(4);
    const listed = await s.api("GET", "/v1/contacts?limit=200", undefined, { key: ws.key });
    expect(listed.body.contacts).toHaveLength(4);
    expect(await total(other.key)).toBe(1);
  });

  it("answers 422 for a negative limit", async () => {
    const r = await s.api("GET", "/v1/contacts?limit=-1");
    expect(r.status).toBe(422);
  });
});

describe("GET/PATCH/DELETE /v1/contacts/{id}", () => {
  it("gets, patches (fields merge, null removes) and deletes", async () => {
    const c = (await s.api("POST", "/v1/contacts", { phone_number: phone(), fields: { a: 1, b: "x" } })).body
      .contact;
    const got = await s.api("GET", `/v1/contacts/${c.id}`);
    expect(got.body.contact).toEqual(c);
    const patched = await s.api("PATCH", `/v1/contacts/${c.id}`, {
      first_name: "New",
      fields: { b: null, c: true },
      opted_in: false,
    });
    expect(patched.status).toBe(200);
    expect(patched.body.contact).toMatchObject({
      first_name: "New",
      fields: { a: 1, c: true },
      opted_in: false,
    });
    const del = await s.api("DELETE", `/v1/contacts/${c.id}`);
    expect(del.body).toEqual({ ok: true, deleted: true });
    expect((await s.api("GET", `/v1/contacts/${c.id}`)).status).toBe(404);
  });

  it("PATCH timezone makes the zone given; timezone: null returns it to the area code", async () => {
    const c = (await s.api("POST", "/v1/contacts", { phone_number: "8505550130" })).body.contact;
    const steps: [Record<string, unknown>, string, string][] = [
      [{ timezone: "America/Chicago" }, "America/Chicago", "given"],
      [{ first_name: "Unrelated" }, "America/Chicago", "given"],
      [{ timezone: null }, "America/New_York", "area_code"],
      [{ timezone: "America/New_York" }, "America/New_York", "given"],
    ];
    for (const [patch, timezone, source] of steps) {
      const r = await s.api("PATCH", `/v1/contacts/${c.id}`, patch);
      expect({
        patch,
        status: r.status,
        timezone: r.body.contact.timezone,
        source: r.body.contact.timezone_source,
      }).toEqual({
        patch,
        status: 200,
        timezone,
        source,
      });
    }
    const bad = await s.api("PATCH", `/v1/contacts/${c.id}`, { timezone: "Mars/Base" });
    expect({ status: bad.status, body: bad.body }).toEqual({
      status: 422,
      body: { ok: false, error: "timezone must be an IANA time zone" },
    });
  });

  it("answers 409 when PATCH moves a contact onto another's number", async () => {
    const p = phone();
    const a = (await s.api("POST", "/v1/contacts", { phone_number: p })).body.contact;
    const b = (await s.api("POST", "/v1/contacts", { phone_number: phone() })).body.contact;
    const r = await s.api("PATCH", `/v1/contacts/${b.id}`, { phone_number: p });
    expect(r.status).toBe(409);
    expect(r.body.contact_id).toBe(a.id);
  });

  it("answers 422 for an invalid phone on PATCH and changes nothing", async () => {
    const c = (await s.api("POST", "/v1/contacts", { phone_number: phone(), first_name: "Keep" })).body
      .contact;
    const r = await s.api("PATCH", `/v1/contacts/${c.id}`, { phone_number: "nope", first_name: "Lost" });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("phone_number must be a valid phone number");
    expect((await s.api("GET", `/v1/contacts/${c.id}`)).body.contact.first_name).toBe("Keep");
  });

  it("answers 404 for unknown, malformed and other-workspace ids", async () => {
    const c = (await s.api("POST", "/v1/contacts", { phone_number: phone() })).body.contact;
    const other = await s.newWorkspace();
    for (const [path, key] of [
      [`/v1/contacts/${c.id}`, other.key],
      ["/v1/contacts/not-a-uuid", s.key],
      ["/v1/contacts/01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77", s.key],
    ] as const) {
      for (const method of ["GET", "PATCH", "DELETE"]) {
        const r = await s.api(method, path, method === "PATCH" ? { first_name: "x" } : undefined, { key });
        expect(r.status).toBe(404);
        expect(r.body).toEqual({ ok: false, error: "Not found" });
      }
    }
  });
});

describe("GET /v1/contacts/{id}/activity", () => {
  const OURS = "+14155550100";

  it("lists messages, replies, list additions, conversions and the opt-out, newest first, in words", async () => {
    await orderNumber(s, OURS);
    const number = phone();
    const contact = (await s.api("POST", "/v1/contacts", { phone_number: number, first_name: "Rae" })).body
      .contact;
    const list = (await s.api("POST", "/v1/lists", { name: "Regulars" })).body.list;
    const steps: [string, () => Promise<{ status: number }>][] = [
      [
        "add to list",
        async () => await s.api("POST", `/v1/lists/${list.id}/contacts`, { contact_ids: [contact.id] }),
      ],
      ["send", async () => await s.api("POST", "/v1/messages", { to: number, body: "Your table is ready" })],
      [
        "reply",
        async () => await s.api("POST", "/v1/sandbox/inbound", { from: number, to: OURS, body: "On my way" }),
      ],
      [
        "convert",
        async () => await s.api("POST", "/v1/conversion", { txn: `t-${number}`, value: 12.5, phone: number }),
      ],
      [
        "opt out",
        async () => await s.api("POST", "/v1/sandbox/inbound", { from: number, to: OURS, body: "STOP" }),
      ],
    ];
    for (const [name, step] of steps) {
      expect([name, (await step()).status]).toEqual([name, 200]);
      await Bun.sleep(3);
    }
    const answer = await s.api("GET", `/v1/contacts/${contact.id}/activity`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: true, total: 7, limit: 50, offset: 0 });
    const seen = answer.body.activity.map((a: { type: string; summary: string }) => [a.type, a.summary]);
    expect(seen).toEqual([
      ["message", expect.stringMatching(/^Sent by system .*"You have been unsubscribed/)],
      ["message", 'Replied: "STOP"'],
      ["opt_out", "Opted out via inbound"],
      ["conversion", "Converted: purchase (12.5 USD)"],
      ["message", 'Replied: "On my way"'],
      ["message", expect.stringMatching(/^Sent by human \(\w+\): "Your table is ready"$/)],
      ["list_added", 'Added to list "Regulars"'],
    ]);
    expect(answer.body.activity[6].ids).toEqual({ list_id: list.id });
    const times = answer.body.activity.map((a: { at: string }) => a.at);
    expect(times).toEqual([...times].sort().reverse());
  });

  it("pages with limit and offset, and answers 422 for a bad limit", async () => {
    const contact = (await s.api("POST", "/v1/contacts", { phone_number: phone() })).body.contact;
    for (const name of ["A", "B", "C"]) {
      const list = (await s.api("POST", "/v1/lists", { name })).body.list;
      await s.api("POST", `/v1/lists/${list.id}/contacts`, { contact_ids: [contact.id] });
      await Bun.sleep(3);
    }
    const page = await s.api("GET", `/v1/contacts/${contact.id}/activity?limit=1&offset=1`);
    expect(page.body).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(page.body.activity.map((a: { summary: string }) => a.summary)).toEqual(['Added to list "B"']);
    const bad = await s.api("GET", `/v1/contacts/${contact.id}/activity?limit=-1`);
    expect(bad.status).toBe(422);
  });

  it("answers 404 for unknown, malformed and another workspace's contacts", async () => {
    const contact = (await s.api("POST", "/v1/contacts", { phone_number: phone() })).body.contact;
    const other = await s.newWorkspace("Elsewhere");
    const cases: [string, string, string | undefined][] = [
      ["unknown", Bun.randomUUIDv7(), undefined],
      ["malformed", "123", undefined],
      ["another workspace's", contact.id, other.key],
    ];
    for (const [name, id, key] of cases) {
      const answer = await s.api("GET", `/v1/contacts/${id}/activity`, undefined, { key });
      expect([name, answer.status, answer.body]).toEqual([name, 404, { ok: false, error: "Not found" }]);
    }
  });
});
