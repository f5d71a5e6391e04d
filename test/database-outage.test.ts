/**
 * A PostgreSQL connection lost while serving (API.md §7.3): requests answer 503 `Database
 * unavailable` in the envelope (never a stack trace, never a 500), /healthz says so, and the server
 * recovers by itself once the database takes connections again. PostgreSQL pass only: SQLite is a
 * file in the process.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createPgClient } from "../src/db/store/postgres";
import { TEST_DIALECT } from "./support/postgres";
import { startTestServer, type TestServer } from "./support/server";

describe.if(process.env[TEST_DIALECT] === "postgres")("a PostgreSQL outage while serving", () => {
  let s: TestServer;
  let admin: ReturnType<typeof createPgClient>;
  let database: string;

  beforeAll(async () => {
    s = await startTestServer();
    const url = new URL(s.databaseUrl as string);
    database = url.pathname.slice(1);
    url.pathname = "/postgres";
    admin = createPgClient(url.toString(), { max: 1 });
  });
  afterAll(async () => {
    await admin.unsafe(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
    await admin.end({ timeout: 1 });
    await s.stop();
  });

  /**
   * Refuses new connections to the server's database and ends the open ones, until none is left:
   * a session that was starting as connections were refused (the server reconnects all the time)
   * is not listed yet at the first pass, and would keep the database in use.
   */
  async function cut() {
    await admin.unsafe(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
    for (let pass = 0; pass < 100; pass++) {
      const [ended] = await admin.unsafe(
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = '${database}' AND pid <> pg_backend_pid()`,
      );
      if (ended.n === 0) return;
      await Bun.sleep(50);
    }
  }

  it("answers 503 'Database unavailable' while the database is gone, and recovers without a restart", async () => {
    const before = await s.api("POST", "/v1/contacts", { phone_number: "+14155550101" });
    expect(before.status).toBe(200);

    await cut();
    const read = await s.api("GET", "/v1/contacts");
    const write = await s.api("POST", "/v1/contacts", { phone_number: "+14155550102" });
    const health = await fetch(`${s.url}/healthz`);
    expect({ status: read.status, body: read.body }).toEqual({
      status: 503,
      body: { ok: false, error: "Database unavailable" },
    });
    expect({ status: write.status, body: write.body }).toEqual({
      status: 503,
      body: { ok: false, error: "Database unavailable" },
    });
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ ok: false, status: "database unavailable", database: "postgres" });

    await admin.unsafe(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
    let after = await s.api("GET", "/v1/contacts");
    for (let i = 0; i < 50 && after.status !== 200; i++) {
      await Bun.sleep(100);
      after = await s.api("GET", "/v1/contacts");
    }
    expect(after.status).toBe(200);
    // The write refused during the outage left nothing behind; the one before it is there.
    expect(after.body.contacts.map((c: { phone_number: string }) => c.phone_number)).toEqual([
      "+14155550101",
    ]);
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
  });

  /** Polls `path` until it answers 200 (about 5 s at most), giving its last answer. */
  async function recovered(path: string) {
    let answer = await s.api("GET", path);
    for (let i = 0; i < 50 && answer.status !== 200; i++) {
      await Bun.sleep(100);
      answer = await s.api("GET", path);
    }
    return answer;
  }

  it("answers 503 while its database is dropped and while a restore has not yet made its tables, then recovers", async () => {
    expect((await s.api("POST", "/v1/contacts", { phone_number: "+14155550103" })).status).toBe(200);
    const saved = `${database}_saved`;
    // A copy to restore from: its source must have no connections while it is copied.
    await cut();
    await admin.unsafe(`CREATE DATABASE ${saved} TEMPLATE ${database}`);
    await admin.unsafe(`DROP DATABASE ${database} WITH (FORCE)`);
    const refused = [];
    refused.push(await s.api("GET", "/v1/contacts"));
    refused.push(await s.api("POST", "/v1/contacts", { phone_number: "+14155550104" }));
    // Restored by a tool that makes the database first and its tables later: an empty database.
    await admin.unsafe(`CREATE DATABASE ${database}`);
    refused.push(await s.api("GET", "/v1/contacts"));
    refused.push(await s.api("POST", "/v1/contacts", { phone_number: "+14155550105" }));
    expect(refused.map((r) => ({ status: r.status, body: r.body }))).toEqual(
      Array(4).fill({ status: 503, body: { ok: false, error: "Database unavailable" } }),
    );

    await admin.unsafe(`DROP DATABASE ${database} WITH (FORCE)`);
    await admin.unsafe(`CREATE DATABASE ${database} TEMPLATE ${saved}`);
    await admin.unsafe(`DROP DATABASE ${saved}`);
    const after = await recovered("/v1/contacts");
    expect(after.status).toBe(200);
    expect(after.body.contacts.map((c: { phone_number: string }) => c.phone_number).sort()).toEqual([
      "+14155550101",
      "+14155550103",
    ]);

    // It sends again too: the background thread (a new one, when the outage ended it) hands a
    // message to the carrier and records its delivery.
    const available = await s.api("GET", "/v1/numbers/available?area_code=415");
    expect((await s.api("POST", "/v1/numbers", { number: available.body.numbers[0].number })).status).toBe(
      200,
    );
    const sent = await s.api("POST", "/v1/messages", { to: "+14155550106", body: "back again" });
    expect(sent.status).toBe(200);
    let status = sent.body.message.status;
    for (let i = 0; i < 300 && status !== "DELIVERED"; i++) {
      await Bun.sleep(100);
      status = (await s.api("GET", `/v1/messages/${sent.body.message.id}`)).body.message?.status;
    }
    expect(status).toBe("DELIVERED");
  }, 60_000);
});
