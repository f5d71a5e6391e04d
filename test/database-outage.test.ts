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

  /** Refuses new connections to the server's database and ends the open ones. */
  async function cut() {
    await admin.unsafe(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
    await admin.unsafe(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database}' AND pid <> pg_backend_pid()`,
    );
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
});
