import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { and, eq } from "drizzle-orm";
import { dailyBudgetUsage, numberDailyUsage } from "../src/db/schema";
import { localDay, reserveDailySend, resolveSender } from "../src/domain/messaging/numbers";
import { startSecondNode, startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

/** A fresh number the simulated carrier offers (different per call). */
let seq = 0;
async function availableNumber(areaCode = "415"): Promise<string> {
  const { body } = await s.api("GET", `/v1/numbers/available?area_code=${areaCode}&limit=50`);
  return body.numbers[seq++].number;
}

async function order(number: string, extra: Record<string, unknown> = {}, key?: string) {
  return await s.api("POST", "/v1/numbers", { number, ...extra }, key ? { key } : {});
}

describe("GET /v1/numbers/available", () => {
  it("lists deterministic numbers for an area code", async () => {
    const a = await s.api("GET", "/v1/numbers/available?area_code=212&limit=5");
    const b = await s.api("GET", "/v1/numbers/available?area_code=212&limit=5");
    expect(a.status).toBe(200);
    expect(a.body.numbers).toHaveLength(5);
    expect(a.body.numbers).toEqual(b.body.numbers);
    for (const n of a.body.numbers) {
      expect(n.number).toMatch(/^\+1212\d{7}$/);
      expect(n).toMatchObject({ type: "local", region: "NY", locality: "New York" });
      expect(n.capabilities).toEqual({ sms: true, voice: true, mms: true });
      expect(typeof n.monthly_cost).toBe("number");
    }
  });

  it("honours contains and type=toll_free", async () => {
    const c = await s.api("GET", "/v1/numbers/available?contains=777&limit=3");
    expect(c.body.numbers.length).toBe(3);
    for (const n of c.body.numbers) expect(n.number).toContain("777");
    const tf = await s.api("GET", "/v1/numbers/available?type=toll_free&limit=3");
    for (const n of tf.body.numbers) {
      expect(n.type).toBe("toll_free");
      expect(n.number).toMatch(/^\+18(00|33|44|55|66|77|88)/);
    }
  });

  it("leaves out numbers already held on this server", async () => {
    const first = (await s.api("GET", "/v1/numbers/available?area_code=303&limit=5")).body.numbers[0].number;
    expect((await order(first)).body.added).toBe(1);
    const again = await s.api("GET", "/v1/numbers/available?area_code=303&limit=5");
    expect(again.body.numbers.map((n: { number: string }) => n.number)).not.toContain(first);
  });

  it("answers 422 for a bad area_code, type or limit", async () => {
    expect((await s.api("GET", "/v1/numbers/available?area_code=12")).body.error).toBe(
      "area_code must be a three-digit area code",
    );
    expect((await s.api("GET", "/v1/numbers/available?type=mobile")).body.error).toBe(
      "type must be one of local, toll_free",
    );
    const bad = await s.api("GET", "/v1/numbers/available?limit=abc");
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe("limit must be a positive integer");
  });
});

describe("POST /v1/numbers", () => {
  it("orders a number: ordered record, added 1, skipped 0", async () => {
    const number = await availableNumber();
    const res = await order(number, { daily_limit: 100 });
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    expect(res.body.added).toBe(1);
    expect(res.body.skipped).toBe(0);
    expect(res.body.ordered).toMatchObject({
      number,
      pool_id: null,
      daily_limit: 100,
      status: "active",
      sent_today: 0,
    });
    expect(res.body.ordered.id).toMatch(/^[0-9a-f-]{36}$/);
    const got = await s.api("GET", `/v1/numbers/${res.body.ordered.id}`);
    expect(got.body.number).toMatchObject({ id: res.body.ordered.id, number, status: "active" });
  });

  it("normalises a 10-digit US number", async () => {
    const number = await availableNumber();
    const res = await order(number.slice(2));
    expect(res.body.ordered.number).toBe(number);
  });

  it("skips a re-order of a number the workspace has: never charged twice", async () => {
    const number = await availableNumber();
    expect((await order(number)).body.added).toBe(1);
    const again = await order(number);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ ok: true, added: 0, skipped: 1, ordered: null });
    const list = await s.api("GET", "/v1/numbers?limit=200");
    expect(list.body.numbers.filter((n: { number: string }) => n.number === number)).toHaveLength(1);
  });

  it("skips a number another workspace holds", async () => {
    const number = await availableNumber();
    expect((await order(number)).body.added).toBe(1);
    const other = await s.newWorkspace("Other");
    const res = await order(number, {}, other.key);
    expect(res.body).toMatchObject({ added: 0, skipped: 1 });
    const theirs = await s.api("GET", "/v1/numbers", undefined, { key: other.key });
    expect(theirs.body.numbers).toHaveLength(0);
  });

  it("counts an unavailable number (ending 0000) as skipped", async () => {
    const res = await order("+14155550000");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ added: 0, skipped: 1, ordered: null });
  });

  it("orders numbers[]: ordered is the array of new records, duplicates and held ones skipped", async () => {
    const a = await availableNumber("617");
    const b = await availableNumber("617");
    expect((await order(a)).body.added).toBe(1);
    const res = await s.api("POST", "/v1/numbers", { numbers: [a, b, b, "+16175550000"] });
    expect(res.status).toBe(200);
    expect(res.body.added).toBe(1);
    expect(res.body.skipped).toBe(3);
    expect(Array.isArray(res.body.ordered)).toBe(true);
    expect(res.body.ordered.map((n: { number: string }) => n.number)).toEqual([b]);
  });

  it("puts the number in pool_id", async () => {
    const pool = (await s.api("POST", "/v1/pools", { name: "P" })).body.pool;
    const res = await order(await availableNumber(), { pool_id: pool.id });
    expect(res.body.ordered.pool_id).toBe(pool.id);
  });

  it("answers 422 'number is required' without number or numbers", async () => {
    const res = await s.api("POST", "/v1/numbers", {});
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ ok: false, error: "number is required" });
  });

  it("answers 422 for an invalid phone number, and orders nothing", async () => {
    const res = await order("not-a-number");
    expect(res.status).toBe(422);
    expect(res.body.error).toBe("number must be a valid phone number");
    const good = await availableNumber();
    const bulk = await s.api("POST", "/v1/numbers", { numbers: [good, "12"] });
    expect(bulk.body.error).toBe("numbers[1] must be a valid phone number");
    const list = await s.api("GET", "/v1/numbers?limit=200");
    expect(list.body.numbers.map((n: { number: string }) => n.number)).not.toContain(good);
  });

  it("answers 422 'pool_id does not exist' for an unknown or foreign pool", async () => {
    const other = await s.newWorkspace("Pools elsewhere");
    const foreign = (await s.api("POST", "/v1/pools", { name: "theirs" }, { key: other.key })).body.pool;
    for (const poolId of [foreign.id, "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77", "nope"]) {
      const res = await order(await availableNumber(), { pool_id: poolId });
      expect(res.status).toBe(422);
      expect(res.body.error).toBe("pool_id does not exist");
    }
  });

  it("answers 422 for a negative or non-integer daily_limit, a numeric string included", async () => {
    const message = "daily_limit must be an integer between 0 and 1000000, or null";
    for (const daily_limit of [-1, 1.5, "ten", "5"]) {
      const res = await order(await availableNumber(), { daily_limit });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ ok: false, error: message });
    }
  });

  it("answers 503 when the carrier is down, and records nothing", async () => {
    const res = await order("+15005550003");
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ ok: false, error: "Carrier unavailable: try again later" });
    const list = await s.api("GET", "/v1/numbers?limit=200");
    expect(list.body.numbers.map((n: { number: string }) => n.number)).not.toContain("+15005550003");
  });

  it("answers 403 for a read-only key", async () => {
    const read = await s.newKey(["read"]);
    const res = await order(await availableNumber(), {}, read.key);
    expect(res.status).toBe(403);
    expect(res.body.required_scope).toBe("write");
  });
});

describe("POST /v1/numbers on several servers sharing the database", () => {
  it("orders a number asked for by 8 requests at once on two servers once: added 1, skipped 7, charged once", async () => {
    const node = await startSecondNode(s);
    try {
      const w = await s.newWorkspace("Racing orders");
      const number = await availableNumber("512");
      const ordersToday = async () =>
        (
          await s.server.handle.db
            .select({ count: dailyBudgetUsage.count })
            .from(dailyBudgetUsage)
            .where(
              and(
                eq(dailyBudgetUsage.workspaceId, w.workspaceId),
                eq(dailyBudgetUsage.budget, "number_orders_daily_limit"),
              ),
            )
            .get()
        )?.count ?? 0;
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 === 0 ? s.api : node.api)("POST", "/v1/numbers", { number }, { key: w.key }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
      expect(answers.map((answer) => answer.body.added).sort()).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
      expect(answers.map((answer) => answer.body.skipped).sort()).toEqual([0, 1, 1, 1, 1, 1, 1, 1]);
      const listed = (await s.api("GET", "/v1/numbers?limit=200", undefined, { key: w.key })).body.numbers;
      expect(listed.map((n: { number: string }) => n.number)).toEqual([number]);
      expect(await ordersToday()).toBe(1);
      // Nothing is left claimed: the number, released, can be ordered again.
      const id = listed[0].id;
      expect((await s.api("DELETE", `/v1/numbers/${id}`, undefined, { key: w.key })).status).toBe(200);
      expect((await node.api("POST", "/v1/numbers", { number }, { key: w.key })).body.added).toBe(1);
    } finally {
      await node.stop();
    }
  });
});

describe("GET /v1/numbers", () => {
  it("lists the workspace's active numbers newest first, paginated", async () => {
    const ws = await s.newWorkspace("Lister");
    const ordered: string[] = [];
    for (let i = 0; i < 3; i++) {
      const number = await availableNumber("206");
      ordered.push(number);
      await order(number, {}, ws.key);
    }
    const res = await s.api("GET", "/v1/numbers?limit=2", undefined, { key: ws.key });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(3);
    expect(res.body.limit).toBe(2);
    expect(res.body.offset).toBe(0);
    expect(res.body.numbers.map((n: { number: string }) => n.number)).toEqual([ordered[2], ordered[1]]);
  });

  it("answers 422 for a bad status filter or limit", async () => {
    expect((await s.api("GET", "/v1/numbers?status=gone")).body.error).toBe(
      "status must be one of active, released",
    );
    expect((await s.api("GET", "/v1/numbers?limit=-1")).status).toBe(422);
  });
});

describe("GET /v1/numbers/{id}", () => {
  it("answers 404 for an unknown, malformed or foreign id", async () => {
    const other = await s.newWorkspace("Foreign");
    const theirs = (await order(await availableNumber(), {}, other.key)).body.ordered;
    for (const id of [theirs.id, "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77", "x"]) {
      const res = await s.api("GET", `/v1/numbers/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ ok: false, error: "Not found" });
    }
  });
});

describe("PATCH /v1/numbers/{id}", () => {
  it("changes pool, daily_limit and the default flag", async () => {
    const pool = (await s.api("POST", "/v1/pools", { name: "Patch pool" })).body.pool;
    const num = (await order(await availableNumber())).body.ordered;
    const res = await s.api("PATCH", `/v1/numbers/${num.id}`, {
      pool_id: pool.id,
      daily_limit: 5,
      default: true,
    });
    expect(res.status).toBe(200);
    expect(res.body.number).toMatchObject({ pool_id: pool.id, daily_limit: 5, default: true });
    const settings = await s.api("GET", "/v1/settings");
    expect(settings.body.settings.default_number_id).toBe(num.id);
    const cleared = await s.api("PATCH", `/v1/numbers/${num.id}`, {
      pool_id: null,
      daily_limit: null,
      default: false,
    });
    expect(cleared.body.number).toMatchObject({ pool_id: null, daily_limit: null, default: false });
    expect((await s.api("GET", "/v1/settings")).body.settings.default_number_id).toBeNull();
  });

  it("answers 422 'pool_id does not exist' and 404 for another workspace's number", async () => {
    const num = (await order(await availableNumber())).body.ordered;
    const bad = await s.api("PATCH", `/v1/numbers/${num.id}`, {
      pool_id: "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77",
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe("pool_id does not exist");
    const other = await s.newWorkspace("Patcher");
    const foreign = await s.api("PATCH", `/v1/numbers/${num.id}`, { daily_limit: 1 }, { key: other.key });
    expect(foreign.status).toBe(404);
    expect((await s.api("GET", `/v1/numbers/${num.id}`)).body.number.daily_limit).toBeNull();
  });
});

describe("PATCH /v1/settings default_number_id", () => {
  it("accepts a number of the workspace and refuses a foreign one", async () => {
    const num = (await order(await availableNumber())).body.ordered;
    const ok = await s.api("PATCH", "/v1/settings", { default_number_id: num.id });
    expect(ok.status).toBe(200);
    expect(ok.body.settings.default_number_id).toBe(num.id);
    const other = await s.newWorkspace("Settings");
    const res = await s.api("PATCH", "/v1/settings", { default_number_id: num.id }, { key: other.key });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe("default_number_id does not exist");
    // An empty id names no number either; null clears the default.
    const empty = await s.api("PATCH", "/v1/settings", { default_number_id: "" });
    expect(empty.body).toEqual({ ok: false, error: "default_number_id does not exist" });
    expect((await s.api("GET", "/v1/settings")).body.settings.default_number_id).toBe(num.id);
    const cleared = await s.api("PATCH", "/v1/settings", { default_number_id: null });
    expect(cleared.body.settings.default_number_id).toBeNull();
  });
});

describe("DELETE /v1/numbers/{id}", () => {
  it("releases the number: status released, no longer default, orderable again", async () => {
    const number = await availableNumber();
    const num = (await order(number)).body.ordered;
    await s.api("PATCH", `/v1/numbers/${num.id}`, { default: true });
    const res = await s.api("DELETE", `/v1/numbers/${num.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, deleted: true, number: { id: num.id, status: "released" } });
    expect((await s.api("GET", `/v1/numbers/${num.id}`)).body.number.status).toBe("released");
    expect((await s.api("GET", "/v1/settings")).body.settings.default_number_id).toBeNull();
    const active = await s.api("GET", "/v1/numbers?limit=200");
    expect(active.body.numbers.map((n: { id: string }) => n.id)).not.toContain(num.id);
    const released = await s.api("GET", "/v1/numbers?status=released&limit=200");
    expect(released.body.numbers.map((n: { id: string }) => n.id)).toContain(num.id);
    const again = await s.api("DELETE", `/v1/numbers/${num.id}`);
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("Number is already released");
    const other = await s.newWorkspace("Reorder");
    expect((await order(number, {}, other.key)).body.added).toBe(1);
  });

  it("answers 404 for another workspace's number and changes nothing", async () => {
    const num = (await order(await availableNumber())).body.ordered;
    const other = await s.newWorkspace("Deleter");
    const res = await s.api("DELETE", `/v1/numbers/${num.id}`, undefined, { key: other.key });
    expect(res.status).toBe(404);
    expect((await s.api("GET", `/v1/numbers/${num.id}`)).body.number.status).toBe("active");
  });
});

describe("daily caps (resolveSender, reserveDailySend)", () => {
  it("reserves up to daily_limit, then refuses; sent_today shows the count", async () => {
    const ws = await s.newWorkspace("Caps");
    const num = (await order(await availableNumber(), { daily_limit: 2 }, ws.key)).body.ordered;
    const { db } = s.server.handle;
    const now = Date.now();
    const results = await db.transaction(async (tx) => {
      const sender = await resolveSender(tx, ws.workspaceId);
      return [
        await reserveDailySend(tx, sender, now),
        await reserveDailySend(tx, sender, now),
        await reserveDailySend(tx, sender, now),
      ];
    });
    expect(results).toEqual([true, true, false]);
    expect(
      (await s.api("GET", `/v1/numbers/${num.id}`, undefined, { key: ws.key })).body.number.sent_today,
    ).toBe(2);
    // Full: the number is still the sender, and a send from it is refused before anything else.
    expect((await resolveSender(db, ws.workspaceId, num.number)).id).toBe(num.id);
    const refused = await s.api(
      "POST",
      "/v1/messages",
      { to: "+14155550199", from: num.number, body: "One more" },
      { key: ws.key },
    );
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ ok: false, error: "from has reached its daily_limit" });
    const usage = await db.select().from(numberDailyUsage).where(eq(numberDailyUsage.numberId, num.id)).all();
    expect(usage).toEqual([
      { numberId: num.id, workspaceId: ws.workspaceId, day: localDay("America/Los_Angeles", now), count: 2 },
    ]);
  });

  it("a send refused after its count was reserved (opted-out recipient) gives the count back", async () => {
    const ws = await s.newWorkspace("Refunds");
    const num = (await order(await availableNumber(), { daily_limit: 5 }, ws.key)).body.ordered;
    const api = async (method: string, path: string, body?: unknown) =>
      await s.api(method, path, body, { key: ws.key });
    await api("POST", "/v1/contacts", { phone_number: "+14155550177", opted_in: false });
    const refused = await api("POST", "/v1/messages", { to: "+14155550177", body: "Hi" });
    expect(refused.status).toBe(422);
    expect((await api("GET", `/v1/numbers/${num.id}`)).body.number.sent_today).toBe(0);
    expect((await api("POST", "/v1/messages", { to: "+14155550178", body: "Hi" })).status).toBe(200);
    expect((await api("GET", `/v1/numbers/${num.id}`)).body.number.sent_today).toBe(1);
  });

  it("resolveSender: no number, foreign from, default number, oldest number", async () => {
    const ws = await s.newWorkspace("Senders");
    const { db } = s.server.handle;
    await expect(resolveSender(db, ws.workspaceId)).rejects.toThrow(
      "No sending number: order one with POST /v1/numbers",
    );
    const first = (await order(await availableNumber(), {}, ws.key)).body.ordered;
    const second = (await order(await availableNumber(), {}, ws.key)).body.ordered;
    expect((await resolveSender(db, ws.workspaceId)).id).toBe(first.id);
    await s.api("PATCH", `/v1/numbers/${second.id}`, { default: true }, { key: ws.key });
    expect((await resolveSender(db, ws.workspaceId)).id).toBe(second.id);
    const foreign = (await order(await availableNumber())).body.ordered;
    await expect(resolveSender(db, ws.workspaceId, foreign.number)).rejects.toThrow(
      "from is not a number of this workspace",
    );
    expect((await resolveSender(db, ws.workspaceId, first.number)).id).toBe(first.id);
  });
});
