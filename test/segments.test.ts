import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { eq } from "drizzle-orm";
import { contacts, listMembers, messages } from "../src/db/schema";
import { newId } from "../src/lib/ids";
import { type ApiResult, startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

let seq = 0;
const phone = () => `+1415555${String(1000 + ++seq).slice(-4)}`;

/** A fresh workspace with a few contacts, for exact membership checks. */
async function world() {
  const ws = await s.newWorkspace();
  const call = async (method: string, path: string, body?: unknown) =>
    await s.api(method, path, body, { key: ws.key });
  const make = async (body: Record<string, unknown>) =>
    (await call("POST", "/v1/contacts", { phone_number: phone(), ...body })).body.contact;
  const ada = await make({ first_name: "Ada", email: "ada@math.org", fields: { plan: "pro", seats: 5 } });
  const bob = await make({ first_name: "Bob", fields: { plan: "free", seats: "2" } });
  const cy = await make({ first_name: "Cy", opted_in: false, fields: { plan: "team", vip: true } });
  const dee = await make({ first_name: "Dee" });
  const list = (await call("POST", "/v1/lists", { name: "L" })).body.list;
  await call("POST", `/v1/lists/${list.id}/contacts`, { contact_ids: [ada.id, cy.id] });
  return { ws, call, ada, bob, cy, dee, list };
}

async function names(call: (m: string, p: string, b?: unknown) => Promise<ApiResult>, rules: unknown) {
  const r = await call("POST", "/v1/segments/preview", { rules });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body.sample.map((c: { first_name: string }) => c.first_name).sort();
}

describe("POST /v1/segments/preview", () => {
  it("matches timezone as the API shows it (given, or the area code's main zone) and state", async () => {
    const ws = await s.newWorkspace();
    const call = async (method: string, path: string, body?: unknown) =>
      await s.api(method, path, body, { key: ws.key });
    await call("POST", "/v1/contacts", { phone_number: "+13125550901", first_name: "Chicago number" });
    await call("POST", "/v1/contacts", {
      phone_number: "+12125550902",
      first_name: "Given Central",
      timezone: "America/Chicago",
    });
    await call("POST", "/v1/contacts", { phone_number: "+12125550903", first_name: "New York", state: "NY" });
    await call("POST", "/v1/contacts", { phone_number: "+442071234567", first_name: "London" });
    // [rule, names]
    const cases: [unknown, string[]][] = [
      [{ field: "timezone", op: "eq", value: "America/Chicago" }, ["Chicago number", "Given Central"]],
      [{ field: "timezone", op: "eq", value: "America/New_York" }, ["New York"]],
      [{ field: "timezone", op: "not_exists" }, ["London"]],
      [
        { field: "timezone", op: "starts_with", value: "america/" },
        ["Chicago number", "Given Central", "New York"],
      ],
      [{ field: "state", op: "eq", value: "NY" }, ["New York"]],
    ];
    for (const [rule, expected] of cases) {
      expect({ rule, names: await names(call, { all: [rule] }) }).toEqual({ rule, names: expected });
    }
  });

  it("compiles fields, custom fields, groups, not and list membership", async () => {
    const w = await world();
    expect(await names(w.call, { all: [] })).toEqual(["Ada", "Bob", "Cy", "Dee"]);
    expect(await names(w.call, { all: [{ field: "opted_in", op: "eq", value: true }] })).toEqual([
      "Ada",
      "Bob",
      "Dee",
    ]);
    expect(
      await names(w.call, { all: [{ field: "fields.plan", op: "in", value: ["pro", "team"] }] }),
    ).toEqual(["Ada", "Cy"]);
    expect(await names(w.call, { all: [{ field: "fields.plan", op: "neq", value: "pro" }] })).toEqual([
      "Bob",
      "Cy",
      "Dee",
    ]);
    expect(await names(w.call, { all: [{ field: "fields.seats", op: "gte", value: 2 }] })).toEqual([
      "Ada",
      "Bob",
    ]);
    expect(await names(w.call, { all: [{ field: "fields.seats", op: "eq", value: 2 }] })).toEqual(["Bob"]);
    expect(await names(w.call, { all: [{ field: "fields.vip", op: "eq", value: true }] })).toEqual(["Cy"]);
    expect(await names(w.call, { all: [{ field: "fields.plan", op: "exists" }] })).toEqual([
      "Ada",
      "Bob",
      "Cy",
    ]);
    expect(await names(w.call, { all: [{ field: "fields.plan", op: "not_exists" }] })).toEqual(["Dee"]);
    expect(await names(w.call, { all: [{ field: "email", op: "contains", value: "MATH" }] })).toEqual([
      "Ada",
    ]);
    expect(await names(w.call, { all: [{ field: "first_name", op: "starts_with", value: "D" }] })).toEqual([
      "Dee",
    ]);
    expect(await names(w.call, { all: [{ field: "email", op: "neq", value: "ada@math.org" }] })).toEqual([
      "Bob",
      "Cy",
      "Dee",
    ]);
    expect(await names(w.call, { in_list: w.list.id })).toEqual(["Ada", "Cy"]);
    expect(
      await names(w.call, { field: "phone_number", op: "eq", value: w.bob.phone_number.slice(2) }),
    ).toEqual(["Bob"]);
    expect(await names(w.call, { not_in_list: w.list.id })).toEqual(["Bob", "Dee"]);
    expect(await names(w.call, { not: { field: "fields.plan", op: "eq", value: "pro" } })).toEqual([
      "Bob",
      "Cy",
      "Dee",
    ]);
    expect(
      await names(w.call, {
        any: [
          { field: "first_name", op: "eq", value: "Dee" },
          { all: [{ in_list: w.list.id }, { field: "opted_in", op: "eq", value: false }] },
        ],
      }),
    ).toEqual(["Cy", "Dee"]);
    expect(
      await names(w.call, { all: [{ field: "created_at", op: "within_last_days", value: 1 }] }),
    ).toHaveLength(4);
    expect(
      await names(w.call, { all: [{ field: "created_at", op: "before", value: "2000-01-01T00:00:00Z" }] }),
    ).toEqual([]);
    expect(
      await names(w.call, { all: [{ field: "created_at", op: "after", value: "2000-01-01" }] }),
    ).toHaveLength(4);
  });

  it("reads custom fields by kind, the same on both databases, and a rule's negation matches every other contact", async () => {
    const ws = await s.newWorkspace("Field kinds");
    const call = async (method: string, path: string, body?: unknown) =>
      await s.api(method, path, body, { key: ws.key });
    const people: [string, Record<string, unknown>][] = [
      ["Num5", { seats: 5, score: 7, tag: "alpha" }],
      ["Num25", { seats: 2.5, score: "12" }],
      ["Text3", { seats: "3", score: " 7 ", tag: "Beta" }],
      ["Text10", { seats: "10", score: "1e2", tag: "2026-11-01" }],
      ["Junk", { seats: "12abc", score: "abc", tag: 12 }],
      ["Empty", { seats: "", score: true, tag: true }],
      ["Null", { seats: null, score: false, tag: null }],
      ["None", {}],
    ];
    for (const [first_name, fields] of people)
      expect((await call("POST", "/v1/contacts", { phone_number: phone(), first_name, fields })).status).toBe(
        200,
      );
    const everyone = people.map(([name]) => name).sort();
    const rule = (field: string, op: string, value: unknown) => ({ field: `fields.${field}`, op, value });
    const cases: [string, unknown, string[]][] = [
      // A number: JSON numbers, text that is a number literal, booleans as 1/0; other text never.
      ["seats > 2", rule("seats", "gt", 2), ["Num25", "Num5", "Text10", "Text3"]],
      ["seats < 4", rule("seats", "lt", 4), ["Num25", "Text3"]],
      ["score >= 7", rule("score", "gte", 7), ["Num25", "Num5", "Text10", "Text3"]],
      ["score <= 1", rule("score", "lte", 1), ["Empty", "Null"]],
      // Text: only fields that hold text, compared in byte order.
      ['seats > "2"', rule("seats", "gt", "2"), ["Text3"]],
      ['seats < "10"', rule("seats", "lt", "10"), ["Empty"]],
      ['tag >= "B"', rule("tag", "gte", "B"), ["Num5", "Text3"]],
      ["tag contains 'ta'", rule("tag", "contains", "ta"), ["Text3"]],
      ["tag contains '1'", rule("tag", "contains", "1"), ["Text10"]],
      ["tag contains 'tru'", rule("tag", "contains", "tru"), []],
      ["tag starts_with 'AL'", rule("tag", "starts_with", "AL"), ["Num5"]],
      ["tag within 30000 days", rule("tag", "within_last_days", 30_000), ["Text10"]],
      [
        "seats exists",
        { field: "fields.seats", op: "exists" },
        everyone.filter((n) => n !== "None" && n !== "Null"),
      ],
    ];
    for (const [what, condition, expected] of cases) {
      const matched = await names(call, condition);
      const negated = await names(call, { not: condition });
      expect({ what, matched }).toEqual({ what, matched: expected.sort() });
      expect({ what, negated }).toEqual({ what, negated: everyone.filter((n) => !expected.includes(n)) });
    }
  });

  it("answers count and a sample, and a read-only key may call it", async () => {
    const w = await world();
    const { key } = await s.newKey(["read"]);
    const r = await s.api("POST", "/v1/segments/preview", { rules: { all: [] } }, { key });
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
    expect(typeof r.body.count).toBe("number");
    const mine = await w.call("POST", "/v1/segments/preview", {
      rules: { field: "opted_in", op: "eq", value: true },
    });
    expect(mine.body.count).toBe(3);
    expect(mine.body.sample[0]).toMatchObject({
      phone_number: expect.any(String),
      source: "api",
      opted_in: true,
    });
  });

  it("compiles inbound/outbound activity against messages", async () => {
    const w = await world();
    const now = Date.now();
    const row = (contactId: string, direction: string, createdAt: number) => ({
      id: newId(),
      workspaceId: w.ws.workspaceId,
      direction,
      sender: direction === "inbound" ? "contact" : "api",
      fromNumber: "+12025550100",
      toNumber: "+12025550101",
      body: "hi",
      status: direction === "inbound" ? "RECEIVED" : "SENT",
      segments: 1,
      encoding: "GSM-7",
      contactId,
      createdAt,
      updatedAt: createdAt,
    });
    await s.server.handle.db
      .insert(messages)
      .values([
        row(w.ada.id, "inbound", now - 2 * 86_400_000),
        row(w.bob.id, "outbound", now - 40 * 86_400_000),
      ])
      .run();
    expect(await names(w.call, { event: "inbound", op: "any_within_days", value: 7 })).toEqual(["Ada"]);
    expect(await names(w.call, { event: "inbound", op: "none_within_days", value: 7 })).toEqual([
      "Bob",
      "Cy",
      "Dee",
    ]);
    expect(await names(w.call, { event: "outbound", op: "any_within_days", value: 30 })).toEqual([]);
    expect(await names(w.call, { event: "outbound", op: "any_within_days", value: 60 })).toEqual(["Bob"]);
  });

  it("takes clicked and conversion activity (matched in test/attribution.test.ts)", async () => {
    for (const event of ["clicked", "conversion"]) {
      const r = await s.api("POST", "/v1/segments/preview", {
        rules: { all: [{ event, op: "none_within_days", value: 30 }] },
      });
      expect(r.status).toBe(200);
    }
  });

  it("refuses a node that is two kinds at once", async () => {
    const r = await s.api("POST", "/v1/segments/preview", {
      rules: { field: "opted_in", op: "eq", value: true, all: [] },
    });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe(
      "rules must have exactly one of all, any, not, field, in_list, not_in_list, event",
    );
  });

  it("validates rules before looking the segment up", async () => {
    const r = await s.api("PATCH", "/v1/segments/01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77", {
      rules: { all: [{ field: "opted_in", op: "bogus", value: 1 }] },
    });
    expect(r.status).toBe(422);
    expect(r.body.error).toStartWith("rules.all[0].op must be one of");
  });
});

describe("segment rules: bad input", () => {
  const cases: [string, unknown, string][] = [
    [
      "a bad op",
      {
        all: [
          { field: "first_name", op: "eq", value: "a" },
          { field: "first_name", op: "like", value: "a" },
        ],
      },
      "rules.all[1].op must be one of eq, neq, in, not_in, contains, starts_with, gt, gte, lt, lte, exists, not_exists",
    ],
    ["a missing op", { all: [{ field: "first_name", value: "a" }] }, "rules.all[0].op is required"],
    [
      "an unknown field",
      { any: [{ field: "shoe_size", op: "eq", value: 1 }] },
      "rules.any[0].field must be one of phone_number, first_name, last_name, email, external_id, source, timezone, state, opted_in, created_at, updated_at or fields.<key>",
    ],
    [
      "a node of no known shape",
      { all: [{ foo: 1 }] },
      "rules.all[0] must have one of all, any, not, field, in_list, not_in_list, event",
    ],
    ["a non-object", "everyone", "rules must be an object"],
    ["all that is not an array", { all: {} }, "rules.all must be an array"],
    [
      "a wrong value type",
      { all: [{ field: "opted_in", op: "eq", value: "yes" }] },
      "rules.all[0].value must be a boolean",
    ],
    ["in without an array", { field: "fields.plan", op: "in", value: "pro" }, "rules.value must be an array"],
    ["a missing value", { field: "fields.plan", op: "eq" }, "rules.value is required"],
    [
      "a bad date",
      { field: "created_at", op: "before", value: "last tuesday" },
      "rules.value must be a date (ISO 8601)",
    ],
    [
      "a day that does not exist",
      { field: "created_at", op: "before", value: "2026-02-30" },
      "rules.value must be a date (ISO 8601)",
    ],
    [
      "a negative day count",
      { field: "created_at", op: "within_last_days", value: -1 },
      "rules.value must be an integer between 0 and 36500",
    ],
    [
      "a bad activity event",
      { event: "opened", op: "any_within_days", value: 3 },
      "rules.event must be one of inbound, outbound, clicked, conversion",
    ],
    [
      "a bad activity op",
      { event: "inbound", op: "within", value: 3 },
      "rules.op must be one of any_within_days, none_within_days",
    ],
    [
      "an unknown list",
      { all: [{ in_list: "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77" }] },
      "rules.all[0].in_list does not exist",
    ],
    ["a malformed list id", { not_in_list: "x" }, "rules.not_in_list does not exist"],
  ];
  for (const [what, rules, message] of cases) {
    it(`answers 422 for ${what}`, async () => {
      const r = await s.api("POST", "/v1/segments/preview", { rules });
      expect(r.status).toBe(422);
      expect(r.body).toEqual({ ok: false, error: message });
    });
  }

  it("answers 422 for names every JavaScript object has (constructor, __proto__, toString) as fields", async () => {
    for (const field of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const preview = await s.api("POST", "/v1/segments/preview", { rules: { field, op: "eq", value: "x" } });
      expect(preview.status).toBe(422);
      expect(preview.body.error).toStartWith("rules.field must be one of");
      const created = await s.api("POST", "/v1/segments", {
        name: field,
        rules: { all: [{ field, op: "eq", value: 1 }] },
      });
      expect(created.status).toBe(422);
    }
  });

  it("answers 422 for rules nested deeper than 10 groups, and accepts 10", async () => {
    const nest = (levels: number) => {
      let rules: unknown = { field: "first_name", op: "exists" };
      for (let i = 0; i < levels; i++) rules = i % 2 ? { not: rules } : { all: [rules] };
      return rules;
    };
    const r = await s.api("POST", "/v1/segments/preview", { rules: nest(11) });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("rules must not be nested deeper than 10 levels");
    expect((await s.api("POST", "/v1/segments", { name: "deep", rules: nest(11) })).status).toBe(422);
    expect((await s.api("POST", "/v1/segments/preview", { rules: nest(10) })).status).toBe(200);
  });

  it("answers 422 for over 100 conditions", async () => {
    const cond = { field: "first_name", op: "exists" };
    const r = await s.api("POST", "/v1/segments/preview", { rules: { any: Array(101).fill(cond) } });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("rules must have at most 100 conditions");
    expect(
      (await s.api("POST", "/v1/segments/preview", { rules: { any: Array(100).fill(cond) } })).status,
    ).toBe(200);
  });

  it("answers 422 for another workspace's list id and creates nothing", async () => {
    const other = await s.newWorkspace();
    const foreign = (await s.api("POST", "/v1/lists", { name: "theirs" }, { key: other.key })).body.list;
    const r = await s.api("POST", "/v1/segments", { name: "x", rules: { in_list: foreign.id } });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("rules.in_list does not exist");
    const all = await s.api("GET", "/v1/segments");
    expect(all.body.segments.some((g: { name: string }) => g.name === "x")).toBe(false);
  });

  it("binds user text as parameters (quotes and wildcards match literally)", async () => {
    const w = await world();
    await w.call("POST", "/v1/contacts", { phone_number: phone(), first_name: "O'Brien%_" });
    expect(await names(w.call, { field: "first_name", op: "eq", value: "O'Brien%_" })).toEqual(["O'Brien%_"]);
    expect(await names(w.call, { field: "first_name", op: "contains", value: "%" })).toEqual(["O'Brien%_"]);
    expect(await names(w.call, { field: "fields.x') OR 1=1 --", op: "exists" })).toEqual([]);
  });
});

describe("segments CRUD and members", () => {
  it("creates, gets with a live count, lists, patches and deletes", async () => {
    const w = await world();
    const rules = { all: [{ field: "fields.plan", op: "eq", value: "pro" }] };
    const created = await w.call("POST", "/v1/segments", { name: "Pros", description: "paying", rules });
    expect(created.status).toBe(200);
    const seg = created.body.segment;
    expect(seg).toMatchObject({ name: "Pros", description: "paying", rules });
    expect(seg.count).toBeUndefined();
    const got = await w.call("GET", `/v1/segments/${seg.id}`);
    expect(got.body.segment).toMatchObject({ id: seg.id, count: 1 });
    const list = await w.call("GET", "/v1/segments");
    expect(list.body).toMatchObject({ total: 1, limit: 50, offset: 0 });
    const patched = await w.call("PATCH", `/v1/segments/${seg.id}`, {
      rules: { field: "fields.plan", op: "exists" },
    });
    expect(patched.body.segment.rules).toEqual({ field: "fields.plan", op: "exists" });
    expect((await w.call("GET", `/v1/segments/${seg.id}`)).body.segment.count).toBe(3);
    const bad = await w.call("PATCH", `/v1/segments/${seg.id}`, {
      rules: { field: "x", op: "eq", value: 1 },
    });
    expect(bad.status).toBe(422);
    expect((await w.call("GET", `/v1/segments/${seg.id}`)).body.segment.rules).toEqual({
      field: "fields.plan",
      op: "exists",
    });
    expect((await w.call("DELETE", `/v1/segments/${seg.id}`)).body).toEqual({ ok: true, deleted: true });
    expect((await w.call("GET", `/v1/segments/${seg.id}`)).status).toBe(404);
  });

  it("ignores unknown keys in rules: never stored, never echoed", async () => {
    const w = await world();
    const rules = {
      all: [
        { field: "opted_in", op: "eq", value: true, zzz: 1 },
        { not: { in_list: "x", note: "n" }, extra: 2 },
      ],
      comment: "mine",
    };
    const created = await w.call("POST", "/v1/segments", { name: "Clean", rules });
    expect(created.status).toBe(422); // in_list "x" is no list: the rules are still checked whole
    const list = (await w.call("POST", "/v1/lists", { name: "L" })).body.list.id;
    rules.all[1] = { not: { in_list: list, note: "n" }, extra: 2 };
    const ok = await w.call("POST", "/v1/segments", { name: "Clean", rules });
    const expected = { all: [{ field: "opted_in", op: "eq", value: true }, { not: { in_list: list } }] };
    expect(ok.body.segment.rules).toEqual(expected);
    expect((await w.call("GET", `/v1/segments/${ok.body.segment.id}`)).body.segment.rules).toEqual(expected);
    const patched = await w.call("PATCH", `/v1/segments/${ok.body.segment.id}`, {
      rules: { field: "fields.plan", op: "exists", value: null, why: "x" },
    });
    expect(patched.body.segment.rules).toEqual({ field: "fields.plan", op: "exists", value: null });
  });

  it("answers 422 'name is required' and 'rules is required'", async () => {
    const noName = await s.api("POST", "/v1/segments", { rules: { all: [] } });
    expect(noName.status).toBe(422);
    expect(noName.body.error).toBe("name is required");
    const noRules = await s.api("POST", "/v1/segments", { name: "x" });
    expect(noRules.status).toBe(422);
    expect(noRules.body.error).toBe("rules is required");
  });

  it("GET /v1/segments/{id}/members is live: a contact edited to match shows up on the next call", async () => {
    const w = await world();
    const seg = (
      await w.call("POST", "/v1/segments", {
        name: "Pros",
        rules: { field: "fields.plan", op: "eq", value: "pro" },
      })
    ).body.segment;
    const first = await w.call("GET", `/v1/segments/${seg.id}/members`);
    expect(first.body).toMatchObject({ ok: true, total: 1, limit: 50, offset: 0 });
    expect(first.body.contacts.map((c: { id: string }) => c.id)).toEqual([w.ada.id]);
    expect(first.body.contacts[0]).toMatchObject({
      id: w.ada.id,
      phone_number: w.ada.phone_number,
      first_name: "Ada",
      last_name: null,
      source: "api",
      opted_in: true,
      created_at: w.ada.created_at,
    });
    await w.call("PATCH", `/v1/contacts/${w.dee.id}`, { fields: { plan: "pro" } });
    const second = await w.call("GET", `/v1/segments/${seg.id}/members`);
    expect(second.body.total).toBe(2);
    expect(second.body.contacts.map((c: { id: string }) => c.id)).toEqual([w.dee.id, w.ada.id]);
  });

  it("counts stay exact after writes made outside the API (cached totals follow every contact and membership write)", async () => {
    const w = await world();
    const seg = (
      await w.call("POST", "/v1/segments", {
        name: "Opted-in list members",
        rules: { all: [{ field: "opted_in", op: "eq", value: true }, { in_list: w.list.id }] },
      })
    ).body.segment;
    expect((await w.call("GET", `/v1/segments/${seg.id}`)).body.segment.count).toBe(1);
    const db = s.server.handle.db;
    await db.update(contacts).set({ optedIn: true }).where(eq(contacts.id, w.cy.id)).run();
    expect((await w.call("GET", `/v1/segments/${seg.id}`)).body.segment.count).toBe(2);
    await db
      .insert(listMembers)
      .values({
        listId: w.list.id,
        contactId: w.bob.id,
        workspaceId: w.ws.workspaceId,
        createdAt: Date.now(),
      })
      .run();
    const members = await w.call("GET", `/v1/segments/${seg.id}/members`);
    expect(members.body.total).toBe(3);
    await db.delete(contacts).where(eq(contacts.id, w.ada.id)).run();
    expect((await w.call("GET", `/v1/segments/${seg.id}/members`)).body.total).toBe(2);
  });

  it("treats a list deleted after the segment was saved as empty", async () => {
    const w = await world();
    const seg = (await w.call("POST", "/v1/segments", { name: "Listed", rules: { in_list: w.list.id } })).body
      .segment;
    expect((await w.call("GET", `/v1/segments/${seg.id}`)).body.segment.count).toBe(2);
    await w.call("DELETE", `/v1/lists/${w.list.id}`);
    expect((await w.call("GET", `/v1/segments/${seg.id}`)).body.segment.count).toBe(0);
    expect((await w.call("GET", `/v1/segments/${seg.id}/members`)).body).toMatchObject({
      total: 0,
      contacts: [],
    });
  });

  it("pages members with limit (max 200) and offset", async () => {
    const w = await world();
    const seg = (await w.call("POST", "/v1/segments", { name: "All", rules: { all: [] } })).body.segment;
    const page = await w.call("GET", `/v1/segments/${seg.id}/members?limit=2&offset=1`);
    expect(page.body).toMatchObject({ total: 4, limit: 2, offset: 1 });
    expect(page.body.contacts.map((c: { first_name: string }) => c.first_name)).toEqual(["Cy", "Bob"]);
    const clamped = await w.call("GET", `/v1/segments/${seg.id}/members?limit=500`);
    expect(clamped.body.limit).toBe(200);
    expect((await w.call("GET", `/v1/segments/${seg.id}/members?limit=abc`)).status).toBe(422);
  });

  it("answers 404 for another workspace's segment", async () => {
    const w = await world();
    const seg = (await w.call("POST", "/v1/segments", { name: "All", rules: { all: [] } })).body.segment;
    for (const path of [`/v1/segments/${seg.id}`, `/v1/segments/${seg.id}/members`]) {
      const r = await s.api("GET", path);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ ok: false, error: "Not found" });
    }
    expect((await s.api("DELETE", `/v1/segments/${seg.id}`)).status).toBe(404);
  });
});
