import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { type DbHandle, openDatabase } from "../src/db/client";
import { groupAppend, groupCommit } from "../src/db/group-commit";
import { jobs } from "../src/db/schema";
import { startTestServer, type TestServer } from "./support/server";

describe("groupCommit", () => {
  let dir: string;
  let handle: DbHandle;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "outreach-group-"));
    handle = openDatabase(join(dir, "g.db"));
    handle.sqlite.exec("CREATE TABLE t (x INTEGER NOT NULL)");
  });
  afterAll(() => {
    handle.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const rows = () => handle.sqlite.query("SELECT x FROM t ORDER BY x").values().flat();

  it("runs the writes of one turn in one transaction; a failing write rolls back alone", async () => {
    const insert = (x: number) => async (tx: Parameters<Parameters<typeof groupCommit>[1]>[0]) => {
      await tx.run(sql`INSERT INTO t (x) VALUES (${x})`);
      return x;
    };
    const failing = groupCommit(handle.db, async (tx) => {
      await tx.run(sql`INSERT INTO t (x) VALUES (2)`);
      throw new Error("refused");
    });
    const outcomes = await Promise.allSettled([
      groupCommit(handle.db, insert(1)),
      failing,
      groupCommit(handle.db, insert(3)),
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
      groupAppend(handle.db, "xs", 21, finish),
      groupCommit(handle.db, async (tx) => await tx.run(sql`INSERT INTO t (x) VALUES (22)`)),
      groupAppend(handle.db, "xs", 23, finish),
    ]);
    expect(finishes).toEqual([[21, 23]]);
    const failing = async () => {
      throw new Error("finish refused");
    };
    const outcomes = await Promise.allSettled([
      groupAppend(handle.db, "ys", 24, failing),
      groupCommit(handle.db, async (tx) => await tx.run(sql`INSERT INTO t (x) VALUES (25)`)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected"]);
    expect(rows().filter((x) => Number(x) > 20)).toEqual([21, 22, 23]);
    handle.sqlite.exec("DELETE FROM t WHERE x > 20");
  });

  it("keeps a write's own nested transaction inside its savepoint, committed or rolled back with it", async () => {
    const nestedThenFail = groupCommit(handle.db, async (tx) => {
      await tx.transaction(async (inner) => await inner.run(sql`INSERT INTO t (x) VALUES (11)`));
      await tx.run(sql`INSERT INTO t (x) VALUES (12)`);
      throw new Error("refused after nesting");
    });
    const nestedOk = groupCommit(handle.db, async (tx) => {
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
    handle.sqlite.exec("DELETE FROM t WHERE x > 10");
  });

  it("shares a collected value between the writes of a group and writes it once, after the last write, in the group's transaction", async () => {
    const finished: number[][] = [];
    const write = (x: number, fail = false) =>
      groupCommit(handle.db, async (tx, group) => {
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
      groupCommit(handle.db, async (tx, group) => {
        group.collect(
          "boom",
          () => 0,
          () => {
            throw new Error("finish failed");
          },
        );
        await tx.run(sql`INSERT INTO t (x) VALUES (-201)`);
      }),
      groupCommit(handle.db, async (tx) => await tx.run(sql`INSERT INTO t (x) VALUES (-202)`)),
    ]);
    expect(doomed.map((o) => o.status)).toEqual(["rejected", "rejected"]);
    expect(rows()).toEqual(before);
  });

  it("answers nobody before the commit: the rows are readable when the promise settles", async () => {
    const value = await groupCommit(handle.db, async (tx) => {
      await tx.run(sql`INSERT INTO t (x) VALUES (4)`);
      return "done";
    });
    expect(value).toBe("done");
    const other = openDatabase(join(dir, "g.db"));
    expect(other.sqlite.query("SELECT count(*) AS n FROM t WHERE x = 4").get()).toEqual({ n: 1 });
    other.close();
  });

  it("waits for another connection's write lock without holding this thread, then commits", async () => {
    const other = new Database(join(dir, "g.db"));
    other.exec("BEGIN IMMEDIATE");
    other.exec("INSERT INTO t (x) VALUES (20)");
    const started = Date.now();
    const write = groupCommit(handle.db, async (tx) => {
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
    expect((handle.sqlite.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout).toBe(5000);
    handle.sqlite.exec("DELETE FROM t WHERE x >= 20");
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
});
