import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { and, eq } from "drizzle-orm";
import { type CampaignRow, type ContactRow, numberDailyUsage, poolStickySenders } from "../src/db/schema";
import { SenderBook } from "../src/domain/campaigns/send-plan";
import { localDay, nextLocalMidnight } from "../src/domain/messaging/numbers";
import { pickSender } from "../src/domain/messaging/senders";
import { startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

let seq = 0;
/** Orders a fresh number in `areaCode` for the key's workspace and returns its record. */
async function newNumber(areaCode = "415", extra: Record<string, unknown> = {}, key?: string) {
  const available = await s.api("GET", `/v1/numbers/available?area_code=${areaCode}&limit=50`);
  const number = available.body.numbers[seq++ % 50].number;
  const res = await s.api("POST", "/v1/numbers", { number, ...extra }, key ? { key } : {});
  expect(res.body.added).toBe(1);
  return res.body.ordered as { id: string; number: string };
}

async function newPool(name = "Pool", key?: string) {
  const res = await s.api("POST", "/v1/pools", { name, description: "for tests" }, key ? { key } : {});
  expect(res.status).toBe(200);
  return res.body.pool as { id: string };
}

describe("POST /v1/pools", () => {
  it("creates a pool with a numbers count of 0", async () => {
    const res = await s.api("POST", "/v1/pools", { name: "East", description: "East coast numbers" });
    expect(res.status).toBe(200);
    expect(res.body.pool).toMatchObject({ name: "East", description: "East coast numbers", numbers: 0 });
    expect(res.body.pool.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.pool.created_at).toMatch(/Z$/);
  });

  it("answers 422 'name is required' without name, and for a long name", async () => {
    const missing = await s.api("POST", "/v1/pools", {});
    expect(missing.status).toBe(422);
    expect(missing.body).toEqual({ ok: false, error: "name is required" });
    const long = await s.api("POST", "/v1/pools", { name: "x".repeat(201) });
    expect(long.status).toBe(422);
    expect(long.body.error).toBe("name is too long (max 200)");
  });
});

describe("GET /v1/pools", () => {
  it("lists pools newest first with their numbers count", async () => {
    const ws = await s.newWorkspace("Pool lister");
    const first = await newPool("First", ws.key);
    const second = await newPool("Second", ws.key);
    const a = await newNumber("212", { pool_id: second.id }, ws.key);
    await newNumber("212", { pool_id: second.id }, ws.key);
    await newNumber("212", {}, ws.key);
    const res = await s.api("GET", "/v1/pools", undefined, { key: ws.key });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(2);
    expect(res.body.pools.map((p: { id: string; numbers: number }) => [p.id, p.numbers])).toEqual([
      [second.id, 2],
      [first.id, 0],
    ]);
    // `q`: the name contains it, case-insensitive; a wildcard is matched literally.
    const named = await s.api("GET", "/v1/pools?q=SEC", undefined, { key: ws.key });
    expect(named.body.pools.map((p: { id: string }) => p.id)).toEqual([second.id]);
    expect(named.body.total).toBe(1);
    expect((await s.api("GET", "/v1/pools?q=%25", undefined, { key: ws.key })).body.total).toBe(0);
    // A released number no longer counts.
    await s.api("DELETE", `/v1/numbers/${a.id}`, undefined, { key: ws.key });
    expect((await s.api("GET", `/v1/pools/${second.id}`, undefined, { key: ws.key })).body.pool.numbers).toBe(
      1,
    );
  });

  it("does not show another workspace's pools", async () => {
    const ws = await s.newWorkspace("Empty");
    await newPool("Mine");
    const res = await s.api("GET", "/v1/pools", undefined, { key: ws.key });
    expect(res.body).toEqual({ ok: true, pools: [], total: 0, limit: 50, offset: 0 });
  });
});

describe("GET/PATCH /v1/pools/{id}", () => {
  it("gets and updates a pool", async () => {
    const pool = await newPool("Before");
    const res = await s.api("PATCH", `/v1/pools/${pool.id}`, { name: "After", description: null });
    expect(res.status).toBe(200);
    expect(res.body.pool).toMatchObject({ id: pool.id, name: "After", description: null });
    expect((await s.api("GET", `/v1/pools/${pool.id}`)).body.pool.name).toBe("After");
  });

  it("answers 404 for unknown, malformed and foreign ids", async () => {
    const other = await s.newWorkspace("Foreign pools");
    const theirs = await newPool("Theirs", other.key);
    for (const id of [theirs.id, "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77", "nope"]) {
      expect((await s.api("GET", `/v1/pools/${id}`)).status).toBe(404);
      const patched = await s.api("PATCH", `/v1/pools/${id}`, { name: "hijack" });
      expect(patched.status).toBe(404);
      expect(patched.body).toEqual({ ok: false, error: "Not found" });
    }
    expect((await s.api("GET", `/v1/pools/${theirs.id}`, undefined, { key: other.key })).body.pool.name).toBe(
      "Theirs",
    );
  });
});

describe("POST /v1/pools/{id}/numbers", () => {
  it("adds numbers; unknown, foreign, released and already-member ids are skipped", async () => {
    const pool = await newPool("Members");
    const a = await newNumber();
    const b = await newNumber();
    const released = await newNumber();
    await s.api("DELETE", `/v1/numbers/${released.id}`);
    const other = await s.newWorkspace("Other numbers");
    const foreign = await newNumber("415", {}, other.key);
    const res = await s.api("POST", `/v1/pools/${pool.id}/numbers`, {
      number_ids: [a.id, b.id, released.id, foreign.id, "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77", "junk"],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, added: 2, skipped: 4 });
    const again = await s.api("POST", `/v1/pools/${pool.id}/numbers`, { number_ids: [a.id] });
    expect(again.body).toEqual({ ok: true, added: 0, skipped: 1 });
    expect((await s.api("GET", `/v1/numbers/${a.id}`)).body.number.pool_id).toBe(pool.id);
    expect(
      (await s.api("GET", `/v1/numbers/${foreign.id}`, undefined, { key: other.key })).body.number.pool_id,
    ).toBeNull();
    expect((await s.api("GET", `/v1/pools/${pool.id}`)).body.pool.numbers).toBe(2);
  });

  it("answers 404 for another workspace's pool and 422 without number_ids", async () => {
    const other = await s.newWorkspace("Pool owner");
    const theirs = await newPool("Theirs", other.key);
    const mine = await newNumber();
    const res = await s.api("POST", `/v1/pools/${theirs.id}/numbers`, { number_ids: [mine.id] });
    expect(res.status).toBe(404);
    expect((await s.api("GET", `/v1/numbers/${mine.id}`)).body.number.pool_id).toBeNull();
    const missing = await s.api("POST", `/v1/pools/${theirs.id}/numbers`, {}, { key: other.key });
    expect(missing.status).toBe(422);
    expect(missing.body.error).toBe("number_ids is required");
  });
});

describe("DELETE /v1/pools/{id}/numbers", () => {
  it("takes numbers out of the pool, leaving them in the workspace", async () => {
    const pool = await newPool("Remove");
    const a = await newNumber("415", { pool_id: pool.id });
    const res = await s.api("DELETE", `/v1/pools/${pool.id}/numbers`, { number_ids: [a.id] });
    expect(res.body).toEqual({ ok: true, removed: 1 });
    const number = (await s.api("GET", `/v1/numbers/${a.id}`)).body.number;
    expect(number).toMatchObject({ pool_id: null, status: "active" });
  });
});

describe("DELETE /v1/pools/{id}", () => {
  it("deletes the pool; its numbers stay in the workspace with no pool (seed rule 3)", async () => {
    const pool = await newPool("Doomed");
    const a = await newNumber("415", { pool_id: pool.id });
    const res = await s.api("DELETE", `/v1/pools/${pool.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, deleted: true });
    expect((await s.api("GET", `/v1/pools/${pool.id}`)).status).toBe(404);
    expect((await s.api("GET", `/v1/numbers/${a.id}`)).body.number).toMatchObject({
      status: "active",
      pool_id: null,
    });
    expect((await s.api("DELETE", `/v1/pools/${pool.id}`)).status).toBe(404);
  });

  it("answers 404 for another workspace's pool and deletes nothing", async () => {
    const other = await s.newWorkspace("Keeper");
    const theirs = await newPool("Kept", other.key);
    expect((await s.api("DELETE", `/v1/pools/${theirs.id}`)).status).toBe(404);
    expect((await s.api("GET", `/v1/pools/${theirs.id}`, undefined, { key: other.key })).status).toBe(200);
  });

  it("answers 403 for a read-only key", async () => {
    const pool = await newPool("Read only");
    const read = await s.newKey(["read"]);
    const res = await s.api("DELETE", `/v1/pools/${pool.id}`, undefined, { key: read.key });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      ok: false,
      error: "This API key cannot create and edit.",
      required_scope: "write",
    });
  });
});

/** A promise and the function that resolves it: one transaction waits on it while another runs. */
function signal() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** A contact as a pick sees it (no row needed: pins and counters do not refer to contacts). */
const contact = (n: number, phone = "+12125550100") => ({
  id: `0193bbbb-0000-7000-8000-${String(n).padStart(12, "0")}`,
  phoneNumber: phone,
});

describe("pickSender(pool, contact)", () => {
  it("keeps a contact on the number it first got (sticky sender)", async () => {
    const ws = await s.newWorkspace("Sticky");
    const pool = await newPool("Sticky", ws.key);
    await newNumber("415", { pool_id: pool.id }, ws.key);
    await newNumber("415", { pool_id: pool.id }, ws.key);
    const { db } = s.server.handle;
    const now = Date.now();
    const first = await pickSender(db, ws.workspaceId, pool.id, contact(1), now);
    expect(first.sender).not.toBeNull();
    for (let i = 0; i < 5; i++) {
      expect((await pickSender(db, ws.workspaceId, pool.id, contact(1), now)).sender?.id).toBe(
        first.sender?.id as string,
      );
    }
    const stored = await db
      .select()
      .from(poolStickySenders)
      .where(and(eq(poolStickySenders.poolId, pool.id), eq(poolStickySenders.contactId, contact(1).id)))
      .all();
    expect(stored.map((row) => row.numberId)).toEqual([first.sender?.id as string]);
  });

  it("spreads new contacts to the least-used number, an area-code match breaking ties", async () => {
    const ws = await s.newWorkspace("Spread");
    const pool = await newPool("Spread", ws.key);
    const sf = await newNumber("415", { pool_id: pool.id }, ws.key);
    const ny = await newNumber("212", { pool_id: pool.id }, ws.key);
    const { db } = s.server.handle;
    const now = Date.now();
    // Equal use: the New York contact gets the 212 number, the San Francisco one the 415 number.
    expect((await pickSender(db, ws.workspaceId, pool.id, contact(10, "+12125550111"), now)).sender?.id).toBe(
      ny.id,
    );
    expect((await pickSender(db, ws.workspaceId, pool.id, contact(11, "+14155550111"), now)).sender?.id).toBe(
      sf.id,
    );
    // 212 has now sent 1 and 415 sent 1; another 212 contact still prefers the matching number.
    expect((await pickSender(db, ws.workspaceId, pool.id, contact(12, "+12125550112"), now)).sender?.id).toBe(
      ny.id,
    );
    // 212 has sent 2, 415 one: the least-used wins over the area-code match.
    expect((await pickSender(db, ws.workspaceId, pool.id, contact(13, "+12125550113"), now)).sender?.id).toBe(
      sf.id,
    );
  });

  it("never exceeds a cap: a capped sticky number hands over, all capped → wait for the next local day", async () => {
    const ws = await s.newWorkspace("Capped");
    const pool = await newPool("Capped", ws.key);
    const a = await newNumber("415", { pool_id: pool.id, daily_limit: 2 }, ws.key);
    const b = await newNumber("212", { pool_id: pool.id, daily_limit: 1 }, ws.key);
    const { db } = s.server.handle;
    const now = Date.now();
    // Contact 101 twice (sticky), then three new contacts.
    const picks = [];
    for (const n of [101, 101, 102, 103, 104])
      picks.push(await pickSender(db, ws.workspaceId, pool.id, contact(n, "+14155550123"), now));
    const used = picks.map((p) => p.sender?.id ?? null);
    expect(used.filter((id) => id === a.id)).toHaveLength(2);
    expect(used.filter((id) => id === b.id)).toHaveLength(1);
    expect(used.slice(3)).toEqual([null, null]);
    const waiting = picks[4];
    expect(waiting.sender).toBeNull();
    expect(waiting.retryAt).toBe(
      Math.min(nextLocalMidnight("America/Los_Angeles", now), nextLocalMidnight("America/New_York", now)),
    );
    const counts = (
      await db.select().from(numberDailyUsage).where(eq(numberDailyUsage.workspaceId, ws.workspaceId)).all()
    ).map((row) => [row.numberId, row.day, row.count]);
    expect(counts).toContainEqual([a.id, localDay("America/Los_Angeles", now), 2]);
    expect(counts).toContainEqual([b.id, localDay("America/New_York", now), 1]);
    // The next local day has room again.
    const tomorrow = await pickSender(db, ws.workspaceId, pool.id, contact(104), waiting.retryAt as number);
    expect(tomorrow.sender).not.toBeNull();
  });

  it("keeps the first pin when two transactions pick for a new contact at once (two servers)", async () => {
    const ws = await s.newWorkspace("Pinned once");
    const pool = await newPool("Pinned once", ws.key);
    const a = await newNumber("415", { pool_id: pool.id, daily_limit: 1 }, ws.key);
    const b = await newNumber("415", { pool_id: pool.id }, ws.key);
    const { db } = s.server.handle;
    const who = contact(300, "+14155550300");
    const now = Date.now();
    // The first pick (a: the oldest) is written and not yet committed while the second picks.
    const { opened: held, open: release } = signal();
    const { opened: firstPicked, open: picked } = signal();
    const first = db.transaction(async (tx) => {
      const pick = await pickSender(tx, ws.workspaceId, pool.id, who, now);
      picked();
      await held;
      return pick;
    });
    await firstPicked;
    const second = db.transaction(async (tx) => await pickSender(tx, ws.workspaceId, pool.id, who, now));
    await Bun.sleep(200);
    release();
    const [one, two] = await Promise.all([first, second]);
    // a is at its cap after the first send, so the second goes from b; the contact stays on a.
    expect([one.sender?.id, two.sender?.id]).toEqual([a.id, b.id]);
    const stored = await db
      .select()
      .from(poolStickySenders)
      .where(and(eq(poolStickySenders.poolId, pool.id), eq(poolStickySenders.contactId, who.id)))
      .all();
    expect(stored.map((row) => row.numberId)).toEqual([a.id]);
  });

  it("answers no sender and no retry time for an empty pool", async () => {
    const ws = await s.newWorkspace("Empty pool");
    const pool = await newPool("Empty", ws.key);
    expect(await pickSender(s.server.handle.db, ws.workspaceId, pool.id, contact(200), Date.now())).toEqual({
      sender: null,
      retryAt: null,
    });
  });
});

describe("SenderBook (a dispatch step's picks)", () => {
  const campaignOf = (workspaceId: string, poolId: string) =>
    ({ id: "c", workspaceId, poolId, fromNumber: null }) as unknown as CampaignRow;

  it("picks as pickSender does, then writes the step's counters and new pins at flush", async () => {
    const ws = await s.newWorkspace("Book");
    const pool = await newPool("Book", ws.key);
    const a = await newNumber("415", { pool_id: pool.id, daily_limit: 2 }, ws.key);
    const b = await newNumber("212", { pool_id: pool.id, daily_limit: 1 }, ws.key);
    const { db } = s.server.handle;
    const now = Date.now();
    // Contact 121 is already pinned to b; 122–125 are new.
    expect(
      (await pickSender(db, ws.workspaceId, pool.id, contact(121, "+12125550121"), now)).sender?.id,
    ).toBe(b.id);
    await db.update(numberDailyUsage).set({ count: 0 }).where(eq(numberDailyUsage.numberId, b.id)).run();
    const people = [121, 122, 123, 124, 125].map((n) => contact(n, "+14155550123"));
    const picks = await db.transaction(async (tx) => {
      const book = new SenderBook(
        tx,
        campaignOf(ws.workspaceId, pool.id),
        now,
        people.map((p) => p.id),
      );
      const picked = [];
      for (const who of people) picked.push(await book.pick(who as unknown as ContactRow));
      await book.flush();
      return picked;
    });
    // b for its pinned contact, a twice, then every number at its cap.
    expect(picks.map((p) => p.sender?.id ?? null)).toEqual([b.id, a.id, a.id, null, null]);
    const counts = (
      await db.select().from(numberDailyUsage).where(eq(numberDailyUsage.workspaceId, ws.workspaceId)).all()
    ).map((row) => [row.numberId, row.count]);
    expect(counts).toContainEqual([a.id, 2]);
    expect(counts).toContainEqual([b.id, 1]);
    const pins = await db.select().from(poolStickySenders).where(eq(poolStickySenders.poolId, pool.id)).all();
    expect(Object.fromEntries(pins.map((row) => [row.contactId, row.numberId]))).toEqual({
      [contact(121).id]: b.id,
      [contact(122).id]: a.id,
      [contact(123).id]: a.id,
    });
  });

  it("holds a number's counter for its step: two steps at once never pass its cap (two servers)", async () => {
    const ws = await s.newWorkspace("Two steps");
    const pool = await newPool("Two steps", ws.key);
    const a = await newNumber("415", { pool_id: pool.id, daily_limit: 4 }, ws.key);
    const { db } = s.server.handle;
    const now = Date.now();
    // One send counted and committed before: the counter row exists when the steps read it.
    expect((await pickSender(db, ws.workspaceId, pool.id, contact(139), now)).sender?.id).toBe(a.id);
    const { opened: held, open: release } = signal();
    const { opened: firstPicked, open: picked } = signal();
    const step = (from: number, pause: Promise<void> | null) =>
      db.transaction(async (tx) => {
        const people = [0, 1].map((i) => contact(from + i, "+14155550140"));
        const book = new SenderBook(
          tx,
          campaignOf(ws.workspaceId, pool.id),
          now,
          people.map((p) => p.id),
        );
        const out = [];
        for (const who of people)
          out.push((await book.pick(who as unknown as ContactRow)).sender?.id ?? null);
        if (pause !== null) {
          picked();
          await pause;
        }
        await book.flush();
        return out;
      });
    // The first step has read the counter and counted two sends, and not written them yet, while
    // the second picks.
    const first = step(140, held);
    await firstPicked;
    const second = step(150, null);
    await Bun.sleep(200);
    release();
    const [one, two] = await Promise.all([first, second]);
    expect(one).toEqual([a.id, a.id]);
    expect(two).toEqual([a.id, null]);
    const usage = await db.select().from(numberDailyUsage).where(eq(numberDailyUsage.numberId, a.id)).get();
    expect(usage?.count).toBe(4);
  });
});
