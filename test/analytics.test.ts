import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { outsideConnection } from "./support/database";
import { orderNumber } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers
type Json = any;
let s: TestServer;
const DAY = 86_400_000;
const now = Date.now();
let numberId: string;

beforeAll(async () => {
  s = await startTestServer();
  const available = (await s.api("GET", "/v1/numbers/available?area_code=512&limit=1")).body.numbers[0]
    .number;
  numberId = await orderNumber(s, available);
  const contact = (await s.api("POST", "/v1/contacts", { phone_number: "+15125550191" })).body.contact;
  // Messages seeded straight into the file: 3 delivered and 1 failed two days ago, 1 inbound today.
  const db = outsideConnection(s);
  const seed = (direction: string, status: string, at: number) =>
    db.run(
      "INSERT INTO messages (id, workspace_id, direction, sender, from_number, to_number, body, status, segments, encoding, contact_id, number_id, created_at, updated_at) VALUES (?, ?, ?, 'api', '+15125550000', '+15125550191', 'hi', ?, 1, 'GSM-7', ?, ?, ?, ?)",
      crypto.randomUUID(),
      s.workspaceId,
      direction,
      status,
      contact.id,
      numberId,
      at,
      at,
    );
  for (let i = 0; i < 3; i++) await seed("outbound", "DELIVERED", now - 2 * DAY);
  await seed("outbound", "FAILED", now - 2 * DAY);
  await seed("inbound", "RECEIVED", now - 1000);
  await seed("outbound", "DELIVERED", now - 40 * DAY);
  await db.close();
  await s.api("POST", "/v1/conversion", { txn: "t-1", value: 10.5, phone: "+15125550191" });
  await s.api("POST", "/v1/conversion", { txn: "t-2", value: 4.5, phone: "+15125550191" });
});
afterAll(async () => await s.stop());

describe("GET /v1/analytics/overview", () => {
  it("counts the last 30 days by default and echoes the window", async () => {
    const r = await s.api("GET", "/v1/analytics/overview");
    expect(r.status).toBe(200);
    const o = r.body.overview;
    expect(o.messages).toEqual({ sent: 3, delivered: 3, failed: 1, inbound: 1 });
    expect(o).toMatchObject({
      replies: 1,
      clicks: 0,
      conversions: 2,
      revenue: 15,
      calls: { placed: 0, completed: 0 },
    });
    expect(Date.parse(o.to) - Date.parse(o.from)).toBe(30 * DAY);
  });

  it("takes from and to", async () => {
    const from = new Date(now - 50 * DAY).toISOString();
    const to = new Date(now - 30 * DAY).toISOString();
    const r = await s.api("GET", `/v1/analytics/overview?from=${from}&to=${to}`);
    expect(r.body.overview).toMatchObject({
      from,
      to,
      conversions: 0,
      messages: { sent: 1, delivered: 1, failed: 0, inbound: 0 },
    });
  });

  for (const [q, error] of [
    ["from=yesterday", "from must be a date (ISO 8601)"],
    ["to=2026-13-45", "to must be a date (ISO 8601)"],
    ["from=2026-02-01&to=2026-01-01", "from must not be after to"],
    // Days that do not exist are refused, not rolled over into the next month.
    ["from=2026-02-30", "from must be a date (ISO 8601)"],
    ["to=2026-04-31T10:00:00Z", "to must be a date (ISO 8601)"],
    // `to` defaults to now, so a `from` in the future is after it.
    ["from=2999-01-01", "from must not be after to"],
  ]) {
    it(`answers 422 for ${q}`, async () => {
      const r = await s.api("GET", `/v1/analytics/overview?${q}`);
      expect(r.status).toBe(422);
      expect(r.body).toEqual({ ok: false, error });
    });
  }
});

describe("GET /v1/analytics/timeseries, an empty window", () => {
  it("answers no bucket for from = to", async () => {
    const at = "2026-01-05T10:30:00.000Z";
    const r = await s.api("GET", `/v1/analytics/timeseries?metric=sent&from=${at}&to=${at}`);
    expect(r.status).toBe(200);
    expect(r.body.series).toEqual([]);
  });
});

describe("GET /v1/analytics/timeseries", () => {
  it("answers one row per day, zeros included", async () => {
    const r = await s.api("GET", "/v1/analytics/timeseries?metric=delivered&interval=day");
    expect(r.status).toBe(200);
    expect(r.body.series.length).toBeGreaterThanOrEqual(30);
    expect(r.body.series.reduce((n: number, row: Json) => n + row.value, 0)).toBe(3);
    const revenue = await s.api(
      "GET",
      `/v1/analytics/timeseries?metric=revenue&interval=hour&from=${new Date(now - DAY).toISOString()}`,
    );
    expect(revenue.body.series.length).toBeGreaterThanOrEqual(24);
    expect(revenue.body.series.reduce((n: number, row: Json) => n + row.value, 0)).toBe(15);
  });

  for (const [q, error] of [
    ["interval=day", "metric is required"],
    [
      "metric=likes",
      "metric must be one of sent, delivered, replies, opt_outs, clicks, conversions, revenue",
    ],
    ["metric=sent&interval=week", "interval must be one of hour, day"],
    ["metric=sent&interval=hour&from=2020-01-01", "from and to span"],
  ]) {
    it(`answers 422 for ${q}`, async () => {
      const r = await s.api("GET", `/v1/analytics/timeseries?${q}`);
      expect(r.status).toBe(422);
      expect(r.body.error).toStartWith(error);
    });
  }
});

describe("GET /v1/analytics/numbers, campaigns and agents", () => {
  it("gives each number its delivery rate as a fraction", async () => {
    const r = await s.api("GET", "/v1/analytics/numbers");
    expect(r.body.numbers[0]).toMatchObject({
      number_id: numberId,
      sent: 3,
      delivered: 3,
      failed: 1,
      delivery_rate: 1,
      replies: 1,
    });
  });

  it("lists campaigns (none launched) and agents (none yet), each echoing its window", async () => {
    const window = "from=2026-01-01T00:00:00Z&to=2026-02-01T00:00:00Z";
    const echo = { from: "2026-01-01T00:00:00.000Z", to: "2026-02-01T00:00:00.000Z" };
    expect((await s.api("GET", `/v1/analytics/campaigns?${window}`)).body).toEqual({
      ok: true,
      ...echo,
      campaigns: [],
    });
    expect((await s.api("GET", `/v1/analytics/agents?${window}`)).body).toEqual({
      ok: true,
      ...echo,
      agents: [],
    });
    expect((await s.api("GET", `/v1/analytics/numbers?${window}`)).body).toMatchObject(echo);
  });

  it("never counts another workspace", async () => {
    const other = await s.newWorkspace("Other");
    const r = await s.api("GET", "/v1/analytics/overview", undefined, { key: other.key });
    expect(r.body.overview).toMatchObject({
      conversions: 0,
      messages: { sent: 0, delivered: 0, failed: 0, inbound: 0 },
    });
  });
});

describe("message counts over whole days and partial edges", () => {
  it("match a count of the messages themselves after inserts, status changes and deletes, whatever the window", async () => {
    const ws = await s.newWorkspace("Rollups");
    const db = outsideConnection(s);
    try {
      const base = Math.floor(now / DAY) * DAY - 6 * DAY;
      const statuses = ["PENDING", "SENT", "DELIVERED", "UNDELIVERED", "FAILED", "RECEIVED"];
      const ids: string[] = [];
      const sent: string[] = [];
      for (let i = 0; i < 240; i++) {
        const id = crypto.randomUUID();
        ids.push(id);
        const at = base + i * 37 * 60_000 + (i % 7) * 1000; // every 37 minutes over ~6 days
        const status = statuses[i % statuses.length];
        if (status === "SENT") sent.push(id);
        await db.run(
          "INSERT INTO messages (id, workspace_id, direction, sender, from_number, to_number, body, status, segments, encoding, created_at, updated_at) VALUES (?, ?, ?, 'api', '+15125550000', '+15125550191', 'hi', ?, 1, 'GSM-7', ?, ?)",
          id,
          ws.workspaceId,
          status === "RECEIVED" ? "inbound" : "outbound",
          status,
          at,
          at,
        );
      }
      // Status changes and deletes after the fact, as sends and retention do.
      const delivered = sent.filter((_, i) => i % 2 === 0);
      await db.run(
        `UPDATE messages SET status = 'DELIVERED' WHERE workspace_id = ? AND status = 'SENT' AND id IN (${delivered.map(() => "?").join(",")})`,
        ws.workspaceId,
        ...delivered,
      );
      await db.run(
        "UPDATE messages SET status = 'SENT' WHERE workspace_id = ? AND status = 'PENDING'",
        ws.workspaceId,
      );
      await db.run("UPDATE messages SET body = 'edited' WHERE workspace_id = ?", ws.workspaceId);
      for (const id of ids.slice(0, 240).filter((_, i) => i % 11 === 0))
        await db.run("DELETE FROM messages WHERE id = ?", id);
      const truth = async (from: number, to: number) => {
        const count = async (list: string[]) =>
          Number(
            (
              await db.all<{ n: number }>(
                `SELECT count(*) AS n FROM messages WHERE workspace_id = ? AND created_at >= ? AND created_at < ? AND status IN (${list.map(() => "?").join(",")})`,
                ws.workspaceId,
                from,
                to,
                ...list,
              )
            )[0].n,
          );
        return {
          sent: await count(["SENT", "DELIVERED", "UNDELIVERED"]),
          delivered: await count(["DELIVERED"]),
          failed: await count(["FAILED", "UNDELIVERED"]),
          inbound: await count(["RECEIVED"]),
        };
      };
      const windows = [
        [base, base + 6 * DAY], // whole days only
        [base + 3 * 3_600_000, base + 5 * DAY + 7 * 3_600_000], // partial first and last days
        [base + DAY + 1, base + DAY + 5 * 3_600_000], // inside one day
        [base + 2 * DAY - 60_000, base + 2 * DAY + 60_000], // across one midnight
        [base - 10 * DAY, base + 20 * DAY],
      ];
      for (const [from, to] of windows) {
        const r = await s.api(
          "GET",
          `/v1/analytics/overview?from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`,
          undefined,
          { key: ws.key },
        );
        expect(r.status).toBe(200);
        expect(r.body.overview.messages).toEqual(await truth(from, to));
      }
      const all = await truth(base, base + 6 * DAY);
      expect(all.sent).toBeGreaterThan(50);
      expect(all.delivered).toBeGreaterThan(10);
    } finally {
      await db.close();
    }
  });
});
