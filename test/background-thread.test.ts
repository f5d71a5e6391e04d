import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { statSync } from "node:fs";
import { eventually, orderNumber } from "./support/messaging";
import { TEST_DIALECT } from "./support/postgres";
import { startTestServer, type TestServer } from "./support/server";

// The server's background work (job worker, delivery reports, scheduler, search indexer) runs in
// a thread of its own by default (src/jobs/thread.ts); WORKER_THREAD=false keeps it on the thread
// that answers requests. The tests run in the server's process, so blocking this thread blocks
// the server's request thread: what happens meanwhile happened in the background thread.

const FROM = "+14155550100";
/** WAL checkpoints are SQLite's: those cases have no meaning on PostgreSQL. */
const onSqlite = process.env[TEST_DIALECT] !== "postgres";

async function sendThenBlock(s: TestServer, to: string, blockMs: number) {
  const answer = await s.api("POST", "/v1/messages", { to, body: "Your order shipped" });
  expect(answer.status).toBe(200);
  const id = answer.body.message.id as string;
  Bun.sleepSync(blockMs);
  const unblockedAt = Date.now();
  const message = await eventually(
    async () => await s.api("GET", `/v1/messages/${id}`),
    (r) => r.body.message?.status === "DELIVERED",
  );
  expect(message.body.message.status).toBe("DELIVERED");
  // sent_at is stamped by the same write that records SENT (and emits message.sent).
  const sentAt = Date.parse(message.body.message.sent_at);
  expect(Number.isFinite(sentAt)).toBe(true);
  return { sentAt, unblockedAt };
}

describe("serve's background thread (the default)", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    await orderNumber(s, FROM);
  });
  afterAll(async () => await s.stop());

  it.if(onSqlite)(
    "takes the checkpoints: the request thread's commits below its 10,000-page backstop are copied back by it",
    async () => {
      const sqlite = s.server.handle.sqlite!;
      expect(
        (sqlite.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number })
          .wal_autocheckpoint,
      ).toBe(10_000);
      const file = s.dbPath;
      const before = statSync(file).size;
      sqlite.exec("CREATE TABLE checkpoint_probe (b BLOB)");
      const insert = sqlite.prepare("INSERT INTO checkpoint_probe (b) VALUES (randomblob(4096))");
      sqlite.transaction(() => {
        for (let i = 0; i < 2000; i++) insert.run();
      })();
      // 8 MB committed: below the request thread's own checkpoint, so the thread copies it back.
      expect(statSync(file).size).toBe(before);
      const after = await eventually(
        async () => statSync(file).size,
        (size) => size > before + 8_000_000,
      );
      expect(after).toBeGreaterThan(before + 8_000_000);
      sqlite.exec("DROP TABLE checkpoint_probe");
    },
  );

  it("sends while the request thread is held", async () => {
    const { sentAt, unblockedAt } = await sendThenBlock(s, "+14155550123", 1500);
    expect(sentAt).toBeLessThan(unblockedAt);
  });
});

describe("WORKER_THREAD=false", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({}, { WORKER_THREAD: "false" });
    await orderNumber(s, FROM);
  });
  afterAll(async () => await s.stop());

  it("sends from the request thread: nothing moves while it is held, then the message is delivered", async () => {
    const { sentAt, unblockedAt } = await sendThenBlock(s, "+14155550124", 1500);
    expect(sentAt).toBeGreaterThanOrEqual(unblockedAt);
  });

  it.if(onSqlite)("checkpoints on its own commits", () => {
    const sqlite = s.server.handle.sqlite!;
    expect(
      (sqlite.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint,
    ).toBe(10000);
  });
});
