/**
 * Daily budgets (API.md §7.2): `one_off_daily_limit` counts POST /v1/messages and POST /v1/calls,
 * `number_orders_daily_limit` counts numbers ordered, per workspace and UTC day. Over budget: 429
 * naming the setting and its value, nothing written; concurrent requests never pass the budget.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({}, { SIMULATED_DELIVERY_MS: "20", SIMULATED_CALL_MS: "60" });
});
afterAll(async () => await s.stop());

let phoneSeq = 1000;
const newPhone = () => `+1415555${String(phoneSeq++).padStart(4, "0")}`;
let numberSeq = 100;
/** A number the simulated carrier grants (never ending in 0000). */
const newNumber = () => `+1628555${String(numberSeq++).padStart(4, "0")}`;

/** A workspace with a sending number and the given settings. */
async function workspace(settings: Record<string, unknown> = {}) {
  const ws = await s.newWorkspace("Budgets");
  const api = async (method: string, path: string, body?: unknown) =>
    await s.api(method, path, body, { key: ws.key });
  const ordered = await api("POST", "/v1/numbers", { number: newNumber() });
  if (ordered.body.added !== 1) throw new Error(JSON.stringify(ordered.body));
  const patched = await api("PATCH", "/v1/settings", settings);
  if (patched.status !== 200) throw new Error(JSON.stringify(patched.body));
  const totals = async () => ({
    messages: (await api("GET", "/v1/messages")).body.total as number,
    calls: (await api("GET", "/v1/calls")).body.total as number,
    contacts: (await api("GET", "/v1/contacts")).body.total as number,
    numbers: (await api("GET", "/v1/numbers")).body.total as number,
  });
  return { ...ws, api, totals };
}

const message = () => ({ to: newPhone(), body: "Your code is 1234" });
const call = () => ({ to: newPhone(), say: "Your code is 1234" });

describe("settings: one_off_daily_limit and number_orders_daily_limit", () => {
  it("default to 5000 and 50, change, and take null", async () => {
    const w = await s.newWorkspace("Budget settings");
    const read = await s.api("GET", "/v1/settings", undefined, { key: w.key });
    expect(read.body.settings).toMatchObject({ one_off_daily_limit: 5000, number_orders_daily_limit: 50 });
    const patched = await s.api(
      "PATCH",
      "/v1/settings",
      { one_off_daily_limit: 0, number_orders_daily_limit: null },
      { key: w.key },
    );
    expect(patched.status).toBe(200);
    expect(patched.body.settings).toMatchObject({ one_off_daily_limit: 0, number_orders_daily_limit: null });
    const again = await s.api("GET", "/v1/settings", undefined, { key: w.key });
    expect(again.body.settings).toMatchObject({ one_off_daily_limit: 0, number_orders_daily_limit: null });
  });

  it("answers 422 naming the field for a value that is not a non-negative integer or null, and changes nothing", async () => {
    const w = await s.newWorkspace("Bad budgets");
    const cases: [string, unknown][] = [
      ["one_off_daily_limit", -1],
      ["one_off_daily_limit", 2.5],
      ["one_off_daily_limit", "100"],
      ["one_off_daily_limit", true],
      ["number_orders_daily_limit", -5],
      ["number_orders_daily_limit", 0.5],
      ["number_orders_daily_limit", {}],
      // Past what a 32-bit column keeps: refused on both databases.
      ["one_off_daily_limit", 2147483648],
      ["number_orders_daily_limit", 1_000_000_001],
    ];
    for (const [field, value] of cases) {
      const r = await s.api("PATCH", "/v1/settings", { [field]: value }, { key: w.key });
      expect({ field, value, status: r.status, error: r.body.error }).toEqual({
        field,
        value,
        status: 422,
        error: expect.stringMatching(new RegExp(`^${field} must be`)),
      });
    }
    const read = await s.api("GET", "/v1/settings", undefined, { key: w.key });
    expect(read.body.settings).toMatchObject({ one_off_daily_limit: 5000, number_orders_daily_limit: 50 });
  });
});

describe("one_off_daily_limit", () => {
  it("counts messages and calls together; past it answers 429 with the setting's name and value and writes nothing", async () => {
    const w = await workspace({ one_off_daily_limit: 3 });
    const accepted = [
      await w.api("POST", "/v1/messages", message()),
      await w.api("POST", "/v1/calls", call()),
      await w.api("POST", "/v1/messages", message()),
    ];
    expect(accepted.map((r) => r.status)).toEqual([200, 200, 200]);
    const before = await w.totals();
    const cases: [string, string, Record<string, unknown>][] = [
      ["a message", "/v1/messages", message()],
      ["a call", "/v1/calls", call()],
    ];
    for (const [what, path, body] of cases) {
      const r = await w.api("POST", path, body);
      expect({ what, status: r.status, body: r.body }).toEqual({
        what,
        status: 429,
        body: {
          ok: false,
          error: "Daily limit reached: one_off_daily_limit is 3",
          retry_after: expect.any(Number),
        },
      });
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(Number(r.headers.get("retry-after"))).toBeLessThanOrEqual(86_400);
    }
    expect(await w.totals()).toEqual(before);
  });

  it("counts the team's replies in a thread (POST /v1/conversations/{id}): past it, 429 and nothing sent", async () => {
    const w = await workspace({ one_off_daily_limit: 3 });
    expect((await w.api("POST", "/v1/messages", message())).status).toBe(200);
    const thread = (await w.api("GET", "/v1/conversations")).body.conversations[0].id;
    const replies = [];
    for (let i = 0; i < 4; i++)
      replies.push(await w.api("POST", `/v1/conversations/${thread}`, { body: "Hi again" }));
    expect(replies.map((r) => [r.status, r.body.error ?? null])).toEqual([
      [200, null],
      [200, null],
      [429, "Daily limit reached: one_off_daily_limit is 3"],
      [429, "Daily limit reached: one_off_daily_limit is 3"],
    ]);
    expect((await w.totals()).messages).toBe(3);
    // A reply refused for another reason spends nothing.
    const open = await workspace({ one_off_daily_limit: 2 });
    expect((await open.api("POST", "/v1/messages", message())).status).toBe(200);
    const unknown = await open.api("POST", "/v1/conversations/01900000-0000-7000-8000-000000000000", {
      body: "Hi",
    });
    expect(unknown.status).toBe(404);
    const own = (await open.api("GET", "/v1/conversations")).body.conversations[0].id;
    expect((await open.api("POST", `/v1/conversations/${own}`, { body: "Hi" })).status).toBe(200);
  });

  it("a 429 is not kept for the request's Idempotency-Key: the same key sends once the budget allows", async () => {
    const w = await workspace({ one_off_daily_limit: 0 });
    const body = message();
    const send = async () =>
      await s.api("POST", "/v1/messages", body, {
        key: w.key,
        headers: { "idempotency-key": "budget-retry" },
      });
    const refused = await send();
    expect({ status: refused.status, replayed: refused.headers.get("idempotent-replayed") }).toEqual({
      status: 429,
      replayed: null,
    });
    await w.api("PATCH", "/v1/settings", { one_off_daily_limit: 1 });
    const sent = await send();
    expect({ status: sent.status, replayed: sent.headers.get("idempotent-replayed") }).toEqual({
      status: 200,
      replayed: null,
    });
    const again = await send();
    expect({ status: again.status, replayed: again.headers.get("idempotent-replayed") }).toEqual({
      status: 200,
      replayed: "true",
    });
    expect((await w.totals()).messages).toBe(1);
  });

  it("a refused send spends nothing", async () => {
    const w = await workspace({ one_off_daily_limit: 1 });
    const refused = await w.api("POST", "/v1/messages", { to: newPhone(), from: "+14155559999", body: "Hi" });
    expect(refused.status).toBe(422);
    expect((await w.api("POST", "/v1/messages", message())).status).toBe(200);
  });

  it("concurrent sends never pass the budget", async () => {
    const w = await workspace({ one_off_daily_limit: 7 });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        i % 3 === 0 ? w.api("POST", "/v1/calls", call()) : w.api("POST", "/v1/messages", message()),
      ),
    );
    const statuses = answers.map((r) => r.status);
    expect({
      accepted: statuses.filter((x) => x === 200).length,
      refused: statuses.filter((x) => x === 429).length,
    }).toEqual({ accepted: 7, refused: 23 });
    const totals = await w.totals();
    expect(totals.messages + totals.calls).toBe(7);
  });

  it("null sets no budget, and 0 refuses every send", async () => {
    const open = await workspace({ one_off_daily_limit: null });
    const zero = await workspace({ one_off_daily_limit: 0 });
    const statuses = await Promise.all(
      Array.from({ length: 5 }, () => open.api("POST", "/v1/messages", message()).then((r) => r.status)),
    );
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const refused = await zero.api("POST", "/v1/messages", message());
    expect({ status: refused.status, error: refused.body.error }).toEqual({
      status: 429,
      error: "Daily limit reached: one_off_daily_limit is 0",
    });
  });

  it("raising the setting lets sends go on the same day", async () => {
    const w = await workspace({ one_off_daily_limit: 1 });
    expect((await w.api("POST", "/v1/messages", message())).status).toBe(200);
    expect((await w.api("POST", "/v1/messages", message())).status).toBe(429);
    await w.api("PATCH", "/v1/settings", { one_off_daily_limit: 2 });
    expect((await w.api("POST", "/v1/messages", message())).status).toBe(200);
    expect((await w.api("POST", "/v1/messages", message())).status).toBe(429);
  });

  it("is counted per workspace", async () => {
    const spent = await workspace({ one_off_daily_limit: 1 });
    const other = await workspace({ one_off_daily_limit: 1 });
    expect((await spent.api("POST", "/v1/messages", message())).status).toBe(200);
    expect((await spent.api("POST", "/v1/messages", message())).status).toBe(429);
    expect((await other.api("POST", "/v1/messages", message())).status).toBe(200);
  });
});

describe("number_orders_daily_limit", () => {
  it("counts each number of a request; a request that would pass it answers 429 and orders nothing", async () => {
    const w = await workspace({ number_orders_daily_limit: 4 }); // one number ordered already
    const first = await w.api("POST", "/v1/numbers", { numbers: [newNumber(), newNumber()] });
    expect(first.body.added).toBe(2);
    const before = await w.totals();
    const over = await w.api("POST", "/v1/numbers", { numbers: [newNumber(), newNumber()] });
    expect({ status: over.status, body: over.body }).toEqual({
      status: 429,
      body: {
        ok: false,
        error: "Daily limit reached: number_orders_daily_limit is 4",
        retry_after: expect.any(Number),
      },
    });
    expect(await w.totals()).toEqual(before);
    const last = await w.api("POST", "/v1/numbers", { number: newNumber() });
    expect(last.body.added).toBe(1);
    const single = await w.api("POST", "/v1/numbers", { number: newNumber() });
    expect({ status: single.status, error: single.body.error }).toEqual({
      status: 429,
      error: "Daily limit reached: number_orders_daily_limit is 4",
    });
  });

  it("does not count numbers the carrier did not grant, nor a re-order of a number already held", async () => {
    const w = await workspace({ number_orders_daily_limit: 2 }); // one spent
    const held = (await w.api("GET", "/v1/numbers")).body.numbers[0].number;
    const unavailable = await w.api("POST", "/v1/numbers", { numbers: ["+16285550000", held] });
    expect({ status: unavailable.status, added: unavailable.body.added }).toEqual({ status: 200, added: 0 });
    expect((await w.api("POST", "/v1/numbers", { number: newNumber() })).body.added).toBe(1);
    expect((await w.api("POST", "/v1/numbers", { number: newNumber() })).status).toBe(429);
  });

  it("concurrent orders never pass the budget, and other workspaces keep theirs", async () => {
    const w = await workspace({ number_orders_daily_limit: 5 }); // one spent
    const other = await workspace({ number_orders_daily_limit: 5 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => w.api("POST", "/v1/numbers", { number: newNumber() })),
    );
    expect({
      added: answers.filter((r) => r.status === 200 && r.body.added === 1).length,
      refused: answers.filter((r) => r.status === 429).length,
    }).toEqual({ added: 4, refused: 8 });
    expect((await w.totals()).numbers).toBe(5);
    expect((await other.api("POST", "/v1/numbers", { number: newNumber() })).body.added).toBe(1);
  });

  it("null sets no budget", async () => {
    const w = await workspace({ number_orders_daily_limit: null });
    const many = Array.from({ length: 8 }, newNumber);
    const r = await w.api("POST", "/v1/numbers", { numbers: many });
    expect({ status: r.status, added: r.body.added }).toEqual({ status: 200, added: 8 });
  });
});
