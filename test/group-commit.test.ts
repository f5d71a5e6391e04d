import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { type DbHandle, openDatabase, type Tx, writeSignalBuffer } from "../src/db/client";
import { currentDialect, setDialect } from "../src/db/dialect";
import { type BatchOutcome, groupAppend, groupBatch, groupCommit } from "../src/db/group-commit";
import { openPgDatabase, type PgDatabase } from "../src/db/pg-database";
import { conversations, jobs, messages } from "../src/db/schema";
import { dropDatabase, freshDatabase, testPostgres, testsRunOn } from "./support/postgres";
import { startTestServer, type TestServer } from "./support/server";

/**
 * A SQLite file with a table `t (x)` in a temp folder for the calling `describe`: opened before its
 * tests, removed after them.
 */
function tableDatabase(prefix: string) {
  const opened = { dir: "", path: "", handle: undefined as unknown as DbHandle };
  beforeAll(() => {
    opened.dir = mkdtempSync(join(tmpdir(), prefix));
    opened.path = join(opened.dir, "t.db");
    opened.handle = openDatabase(opened.path);
    opened.handle.sqlite.exec("CREATE TABLE t (x INTEGER NOT NULL)");
  });
  afterAll(() => {
    opened.handle.close();
    rmSync(opened.dir, { recursive: true, force: true });
  });
  return {
    get path() {
      return opened.path;
    },
    get handle() {
      return opened.handle;
    },
    rows: () => opened.handle.sqlite.query("SELECT x FROM t ORDER BY x").values().flat(),
  };
}

describe("groupCommit", () => {
  const db = tableDatabase("outreach-group-");
  const rows = db.rows;

  it("runs the writes of one turn in one transaction; a failing write rolls back alone", async () => {
    const insert = (x: number) => async (tx: Parameters<Parameters<typeof groupCommit>[1]>[0]) => {
      await tx.run(sql`INSERT INTO t (x) VALUES (${x})`);
      return x;
    };
    const failing = groupCommit(db.handle.db, async (tx) => {
      await tx.run(sql`INSERT INTO t (x) VALUES (2)`);
      throw new Error("refused");
    });
    const outcomes = await Promise.allSettled([
      groupCommit(db.handle.db, insert(1)),
      failing,
      groupCommit(db.handle.db, insert(3)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe("refused");
    expect(rows()).toEqual([1, 3]);
  });

  it("gives one turn's appends to one finish, beside the turn's other writes; a failing finish fails them all", async () => {
    const finishes: number[][] = [];
    const finish = async (tx: Parameters<Parameters<typeof groupCommit>[1]>[0], xs: number[]) => {
      finishes.push(xs);
      for (const x of xs) await tx.run(sql`INSERT INTO t (x) VALUES (${x})`);
    };
    await Promise.all([
      groupAppend(db.handle.db, "xs", 21, finish),
      groupCommit(db.handle.db, async (tx) => await tx.run(sql`INSERT INTO t (x) VALUES (22)`)),
      groupAppend(db.handle.db, "xs", 23, finish),
    ]);
    expect(finishes).toEqual([[21, 23]]);
    const failing = async () => {
      throw new Error("finish refused");
    };
    const outcomes = await Promise.allSettled([
      groupAppend(db.handle.db, "ys", 24, failing),
      groupCommit(db.handle.db, async (tx) => await tx.run(sql`INSERT INTO t (x) VALUES (25)`)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected"]);
    expect(rows().filter((x) => Number(x) > 20)).toEqual([21, 22, 23]);
    db.handle.sqlite.exec("DELETE FROM t WHERE x > 20");
  });

  it("keeps a write's own nested transaction inside its savepoint, committed or rolled back with it", async () => {
    const nestedThenFail = groupCommit(db.handle.db, async (tx) => {
      await tx.transaction(async (inner) => await inner.run(sql`INSERT INTO t (x) VALUES (11)`));
      await tx.run(sql`INSERT INTO t (x) VALUES (12)`);
      throw new Error("refused after nesting");
    });
    const nestedOk = groupCommit(db.handle.db, async (tx) => {
      await tx.transaction(async (inner) => await inner.run(sql`INSERT INTO t (x) VALUES (13)`));
      try {
        await tx.transaction(async (inner) => {
          await inner.run(sql`INSERT INTO t (x) VALUES (14)`);
          throw new Error("inner only");
        });
      } catch {
        // the inner savepoint alone is undone
      }
      return "kept";
    });
    const outcomes = await Promise.allSettled([nestedThenFail, nestedOk]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "fulfilled"]);
    expect(rows().filter((x) => (x as number) > 10)).toEqual([13]);
    db.handle.sqlite.exec("DELETE FROM t WHERE x > 10");
  });

  it("shares a collected value between the writes of a group and writes it once, after the last write, in the group's transaction", async () => {
    const finished: number[][] = [];
    const write = (x: number, fail = false) =>
      groupCommit(db.handle.db, async (tx, group) => {
        const seen = group.collect(
          "xs",
          (): number[] => [],
          async (inner, xs) => {
            finished.push([...xs]);
            await inner.run(sql`INSERT INTO t (x) VALUES (${-100 - xs.length})`);
          },
        );
        seen.push(x);
        if (fail) throw new Error("refused");
        await tx.run(sql`INSERT INTO t (x) VALUES (${x})`);
      });
    const outcomes = await Promise.allSettled([write(-1), write(-2, true), write(-3)]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(finished).toEqual([[-1, -2, -3]]);
    expect(rows().filter((x) => (x as number) < 0)).toEqual([-103, -3, -1]);
    // A finish that throws fails the whole group: none of its writes happened.
    const before = rows();
    const doomed = await Promise.allSettled([
      groupCommit(db.handle.db, async (tx, group) => {
        group.collect(
          "boom",
          () => 0,
          () => {
            throw new Error("finish failed");
          },
        );
        await tx.run(sql`INSERT INTO t (x) VALUES (-201)`);
      }),
      groupCommit(db.handle.db, async (tx) => await tx.run(sql`INSERT INTO t (x) VALUES (-202)`)),
    ]);
    expect(doomed.map((o) => o.status)).toEqual(["rejected", "rejected"]);
    expect(rows()).toEqual(before);
  });

  it("runs a turn's batched writes of one key at once, each answered its own outcome", async () => {
    db.handle.sqlite.exec("DELETE FROM t");
    const calls: number[][] = [];
    // Refuses odd inputs; writes the even ones.
    const run = async (tx: Parameters<Parameters<typeof groupCommit>[1]>[0], inputs: number[]) => {
      calls.push(inputs);
      const outcomes: BatchOutcome<number>[] = [];
      for (const x of inputs) {
        if (x % 2 === 1) {
          outcomes.push({ ok: false, error: new Error(`odd ${x}`) });
          continue;
        }
        await tx.run(sql`INSERT INTO t (x) VALUES (${x})`);
        outcomes.push({ ok: true, value: x * 10 });
      }
      return outcomes;
    };
    const outcomes = await Promise.allSettled(
      [10, 11, 12, 13].map((x) => groupBatch(db.handle.db, "even", x, run)),
    );
    expect(calls).toEqual([[10, 11, 12, 13]]);
    expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : String(o.reason)))).toEqual([
      100,
      "Error: odd 11",
      120,
      "Error: odd 13",
    ]);
    expect(rows()).toEqual([10, 12]);
    db.handle.sqlite.exec("DELETE FROM t");
  });

  it("runs each batched write alone when the batch throws: only the failing one fails, nothing of it stays", async () => {
    db.handle.sqlite.exec("DELETE FROM t");
    const calls: number[][] = [];
    const run = async (tx: Parameters<Parameters<typeof groupCommit>[1]>[0], inputs: number[]) => {
      calls.push(inputs);
      for (const x of inputs) {
        await tx.run(sql`INSERT INTO t (x) VALUES (${x})`);
        if (x === 22) throw new Error("unforeseen");
      }
      return inputs.map((x): BatchOutcome<number> => ({ ok: true, value: x }));
    };
    const outcomes = await Promise.allSettled(
      [21, 22, 23].map((x) => groupBatch(db.handle.db, "alone", x, run)),
    );
    expect(calls).toEqual([[21, 22, 23], [21], [22], [23]]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(rows()).toEqual([21, 23]);
    db.handle.sqlite.exec("DELETE FROM t");
  });

  it("answers nobody before the commit: the rows are readable when the promise settles", async () => {
    const value = await groupCommit(db.handle.db, async (tx) => {
      await tx.run(sql`INSERT INTO t (x) VALUES (4)`);
      return "done";
    });
    expect(value).toBe("done");
    const other = openDatabase(db.path);
    expect(other.sqlite.query("SELECT count(*) AS n FROM t WHERE x = 4").get()).toEqual({ n: 1 });
    other.close();
  });

  it("waits for another connection's write lock without holding this thread, then commits", async () => {
    const other = new Database(db.path);
    other.exec("BEGIN IMMEDIATE");
    other.exec("INSERT INTO t (x) VALUES (20)");
    const started = Date.now();
    const write = groupCommit(db.handle.db, async (tx) => {
      await tx.run(sql`INSERT INTO t (x) VALUES (21)`);
      return "committed";
    });
    // The thread keeps turning while the group waits: timers fire on time.
    const turns: number[] = [];
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      turns.push(Date.now() - started);
    }
    expect(turns[0]).toBeLessThan(80);
    expect(rows()).not.toContain(21);
    other.exec("COMMIT");
    other.close();
    expect(await write).toBe("committed");
    expect(rows().filter((x) => (x as number) >= 20)).toEqual([20, 21]);
    // The connection waits for locks again outside the group.
    expect((db.handle.sqlite.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout).toBe(5000);
    db.handle.sqlite.exec("DELETE FROM t WHERE x >= 20");
  });
});

describe("the write-lock signal of this process's SQLite connections", () => {
  const db = tableDatabase("outreach-signal-");
  const rows = db.rows;
  const signal = () => Atomics.load(new Int32Array(writeSignalBuffer()), 0);

  it("moves when a write transaction ends, committed or rolled back, on any thread that adopted it", async () => {
    const before = signal();
    await db.handle.db.transaction(async (tx) => {
      await tx.run(sql`INSERT INTO t (x) VALUES (1)`);
    });
    await db.handle.db
      .transaction(async () => {
        throw new Error("rolled back");
      })
      .catch(() => {});
    expect(signal()).toBe(before + 2);
    // A thread that adopted the buffer (as the server's background thread does) moves it as well.
    const thread = new Worker(new URL("./support/write-signal-thread.ts", import.meta.url).href);
    const done = new Promise((resolve) => {
      thread.onmessage = resolve;
    });
    thread.postMessage({ path: db.path, signal: writeSignalBuffer(), count: 3 });
    await done;
    thread.terminate();
    expect(signal()).toBe(before + 5);
    expect(rows()).toEqual([1, 1000, 1001, 1002]);
  });

  it("lets a BEGIN that found the lock taken by another connection of this process begin once that one ends", async () => {
    const other = openDatabase(db.path);
    const begun = Promise.withResolvers<void>();
    const released = Promise.withResolvers<void>();
    const held = other.db.transaction(async (tx) => {
      await tx.run(sql`INSERT INTO t (x) VALUES (2)`);
      begun.resolve();
      await released.promise;
    });
    await begun.promise;
    const waiting = db.handle.db.transaction(async (tx) => {
      await tx.run(sql`INSERT INTO t (x) VALUES (3)`);
      return "committed";
    });
    // Past the retries on the next turns: the BEGIN now waits on the signal.
    await Bun.sleep(50);
    expect(rows()).not.toContain(3);
    released.resolve();
    await held;
    expect(await waiting).toBe("committed");
    expect(rows().filter((x) => (x as number) < 1000)).toEqual([1, 2, 3]);
    other.close();
  });
});

describe("POST /v1/messages under concurrency", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({}, { WORKER: "false" });
    expect((await s.api("POST", "/v1/numbers", { number: "+14155550100" })).status).toBe(200);
    expect((await s.api("POST", "/v1/suppression", { phone_number: "+14155559999" })).status).toBe(200);
  });
  afterAll(async () => await s.stop());

  it("accepts each send on its own: refused ones record nothing, the rest are all recorded", async () => {
    const sends = Array.from({ length: 40 }, (_, i) =>
      s.api("POST", "/v1/messages", {
        to: i % 4 === 0 ? "+14155559999" : `+1415555${String(2000 + i)}`,
        body: `hello ${i}`,
      }),
    );
    const answers = await Promise.all(sends);
    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 422);
    expect(accepted.length).toBe(30);
    expect(refused.length).toBe(10);
    for (const r of refused) expect(r.body).toEqual({ ok: false, error: "Recipient is suppressed" });
    const listed = await s.api("GET", "/v1/messages?limit=200");
    expect(listed.body.total).toBe(30);
    expect(new Set(listed.body.messages.map((m: { id: string }) => m.id))).toEqual(
      new Set(accepted.map((a) => a.body.message.id)),
    );
    // Every accepted message is in exactly one send job, shared by the writes of its group.
    const batches = (
      await s.server.handle.db.select().from(jobs).where(eq(jobs.kind, "messages.send_batch")).all()
    ).map((job) => (job.payload as { message_ids: string[] }).message_ids);
    const batched = batches.flat().filter((id) => accepted.some((a) => a.body.message.id === id));
    expect(batched.sort()).toEqual(accepted.map((a) => a.body.message.id).sort());
    // The group commit (both databases) shares one job among the writes of a group.
    expect(batches.length).toBeLessThan(accepted.length);
  });

  it("accepts the sends of one turn together, each checked as if alone", async () => {
    const { submitOneOffMessage } = await import("../src/domain/messaging/one-off");
    const db = s.server.handle.db;
    const optedOut = "+14155553001";
    expect((await s.api("POST", "/v1/contacts", { phone_number: optedOut, opted_in: false })).status).toBe(
      200,
    );
    const fresh = "+14155553002";
    const before = (await s.api("GET", "/v1/contacts?limit=1")).body.total;
    // Started in one turn: one group, one batch.
    const outcomes = await Promise.allSettled([
      submitOneOffMessage(db, s.workspaceId, { to: fresh, body: "one" }),
      submitOneOffMessage(db, s.workspaceId, { to: "+14155559999", body: "suppressed" }),
      submitOneOffMessage(db, s.workspaceId, { to: fresh, body: "two" }),
      submitOneOffMessage(db, s.workspaceId, { to: optedOut, body: "opted out" }),
      submitOneOffMessage(db, s.workspaceId, { to: fresh, body: "three", from: "+14155550199" }),
    ]);
    expect(
      outcomes.map((o) => (o.status === "fulfilled" ? o.value.status : (o.reason as Error).message)),
    ).toEqual([
      "PENDING",
      "Recipient is suppressed",
      "PENDING",
      "Recipient has opted out",
      "from is not a number of this workspace",
    ]);
    // Two sends to one new number: one contact, one thread, both messages in it.
    expect((await s.api("GET", "/v1/contacts?limit=1")).body.total).toBe(before + 1);
    const { findContactByPhone } = await import("../src/domain/audience/contacts");
    const contact = await findContactByPhone(db, s.workspaceId, fresh);
    if (!contact) throw new Error("no contact");
    const threads = await db
      .select()
      .from(conversations)
      .where(eq(conversations.contactId, contact.id))
      .all();
    expect(threads).toHaveLength(1);
    const sent = await db.select().from(messages).where(eq(messages.conversationId, threads[0].id)).all();
    expect(sent.map((m) => m.body).sort()).toEqual(["one", "two"]);
  });
});

// On PostgreSQL the next group starts while a group's COMMIT is on its way (its WAL flush overlaps
// the next group's statements). A constraint trigger deferred to the commit makes one commit slow.
const pg = testsRunOn("postgres") ? await testPostgres() : null;
if (pg && "skip" in pg) console.log(`group commit on PostgreSQL SKIPPED: ${pg.skip}`);
if (pg && "url" in pg) {
  const adminUrl = pg.url;
  describe("groupCommit on PostgreSQL", () => {
    let url: string;
    let opened: PgDatabase;
    // Opening the database spells this process's SQL for PostgreSQL; the files after this one get
    // back what they had.
    const dialect = currentDialect();
    beforeAll(async () => {
      url = await freshDatabase(adminUrl);
      opened = await openPgDatabase(url, { max: 4, migrate: false });
      await opened.client.unsafe(`
        CREATE TABLE t (x integer NOT NULL);
        CREATE TABLE counter (id integer PRIMARY KEY, n integer NOT NULL);
        INSERT INTO counter VALUES (1, 0);
        CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_sleep(0.6); RETURN NULL; END $$;
        CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON t DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW WHEN (NEW.x < 0) EXECUTE FUNCTION slow_commit();`);
    });
    afterAll(async () => {
      await opened.close();
      await dropDatabase(adminUrl, url);
      setDialect(dialect);
    });

    const insert = (x: number) => async (tx: Tx) => {
      await tx.run(sql`INSERT INTO t (x) VALUES (${x})`);
    };

    it("runs the next group while a group's commit is on its way, and answers each after its own commit", async () => {
      const answered: string[] = [];
      const slow = groupCommit(opened.db, insert(-1)).then(() => answered.push("slow"));
      // The first group is in its commit by now (the trigger sleeps there).
      await Bun.sleep(150);
      const quick = groupCommit(opened.db, insert(1)).then(() => answered.push("quick"));
      await Promise.all([slow, quick]);
      expect(answered).toEqual(["quick", "slow"]);
      const rows = await opened.client.unsafe("SELECT x FROM t ORDER BY x");
      expect(rows.map((row) => row.x)).toEqual([-1, 1]);
    });

    it("lets the next group wait for a row the committing group holds, then see its write: no deadlock", async () => {
      const bump = async (tx: Tx) => {
        const [row] = await tx.all<{ n: number }>(sql`UPDATE counter SET n = n + 1 WHERE id = 1 RETURNING n`);
        return Number(row.n);
      };
      const first = groupCommit(opened.db, async (tx) => {
        const n = await bump(tx);
        await insert(-2)(tx);
        return n;
      });
      await Bun.sleep(150);
      const second = groupCommit(opened.db, bump);
      expect(await Promise.all([first, second])).toEqual([1, 2]);
    });
  });
}
