import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "bun";
import { eq } from "drizzle-orm";
import { type DbHandle, openDatabase } from "../src/db/client";
import { migrate } from "../src/db/migrate";
import { jobs } from "../src/db/schema";
import type { JobContext, JobPolicy, RegisteredJob } from "../src/jobs/catalog";
import { RescheduleJob } from "../src/jobs/catalog";
import {
  completeJob,
  enqueueAnyJob,
  expireLeasesOfGoneWorkers,
  failJob,
  getJob,
  leaseDueJobs,
  releaseLeases,
  updateLeasedPayload,
  workerIdFor,
} from "../src/jobs/queue";
import { createWorker } from "../src/jobs/worker";

let dir: string;
let handle: DbHandle;
const policy: JobPolicy = { maxAttempts: 3, timeoutMs: 1000, backoffMs: (attempt) => attempt * 1000 };
const policyOf = () => policy;
/** The kinds a test leases: everything these tests enqueue. */
let kinds: string[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "outreach-jobs-"));
  handle = openDatabase(join(dir, "jobs.db"));
  migrate(handle.sqlite);
});
afterAll(() => {
  handle.close();
  rmSync(dir, { recursive: true, force: true });
});

async function freshJob(kind = `k-${crypto.randomUUID()}`, now = 1_000_000) {
  const id = await enqueueAnyJob(handle.db, kind, { n: 1 }, policy, { now });
  kinds = [kind];
  return { id: id!, kind };
}

describe("job queue", () => {
  it("enqueues in the caller's transaction: a rollback leaves no job", async () => {
    const kind = `k-${crypto.randomUUID()}`;
    await expect(
      handle.db.transaction(async (tx) => {
        await enqueueAnyJob(tx, kind, {}, policy);
        throw new Error("the change failed");
      }),
    ).rejects.toThrow("the change failed");
    expect(await handle.db.select().from(jobs).where(eq(jobs.kind, kind)).all()).toEqual([]);
  });

  it("ignores a second enqueue with the same dedupe key", async () => {
    const dedupeKey = `d-${crypto.randomUUID()}`;
    expect(await enqueueAnyJob(handle.db, "k", {}, policy, { dedupeKey })).not.toBeNull();
    expect(await enqueueAnyJob(handle.db, "k", {}, policy, { dedupeKey })).toBeNull();
  });

  it("leases a due job once, retries it with backoff, and marks it dead after its last attempt", async () => {
    const { id } = await freshJob(undefined, 0);
    const now = 2_000_000_000_000;
    const first = (await leaseDueJobs(handle.db, { workerId: "w1", limit: 1000, kinds, now, policyOf })).find(
      (j) => j.id === id,
    )!;
    expect(first.attempts).toBe(1);
    // Leased: nobody else gets it while the lease holds.
    expect(
      (await leaseDueJobs(handle.db, { workerId: "w2", limit: 1000, kinds, now: now + 10, policyOf })).some(
        (j) => j.id === id,
      ),
    ).toBe(false);
    await failJob(handle.db, first, "boom", policy, now);
    expect(await getJob(handle.db, id)).toMatchObject({
      status: "queued",
      runAt: now + 1000,
      lastError: "boom",
    });
    // Not due before the backoff ends.
    expect(
      (await leaseDueJobs(handle.db, { workerId: "w1", limit: 1000, kinds, now: now + 999, policyOf })).some(
        (j) => j.id === id,
      ),
    ).toBe(false);
    const second = (
      await leaseDueJobs(handle.db, {
        workerId: "w1",
        limit: 1000,
        kinds,
        now: now + 1000,
        policyOf,
      })
    ).find((j) => j.id === id)!;
    await failJob(handle.db, second, "boom", policy, now + 1000);
    const third = (
      await leaseDueJobs(handle.db, {
        workerId: "w1",
        limit: 1000,
        kinds,
        now: now + 5000,
        policyOf,
      })
    ).find((j) => j.id === id)!;
    expect(third.attempts).toBe(3);
    await failJob(handle.db, third, "still boom", policy, now + 5000);
    expect(await getJob(handle.db, id)).toMatchObject({
      status: "dead",
      attempts: 3,
      lastError: "still boom",
    });
  });

  it("keeps a payload its holder rewrote through a failure and a released lease, and refuses a lost lease's rewrite", async () => {
    const { id } = await freshJob(undefined, 0);
    const now = 2_050_000_000_000;
    const lease = async (workerId: string, at: number) =>
      (await leaseDueJobs(handle.db, { workerId, limit: 1000, kinds, now: at, policyOf })).find(
        (j) => j.id === id,
      )!;
    const first = await lease("w1", now);
    expect(await updateLeasedPayload(handle.db, first, { n: 1, marker: now }, now)).toBe(true);
    await failJob(handle.db, first, "boom", policy, now);
    const second = await lease("w1", now + 1000);
    expect(second.payload).toEqual({ n: 1, marker: now });
    expect(await releaseLeases(handle.db, "w1", now + 1001)).toBeGreaterThan(0);
    // Its lease ran out and another worker took it: the first holder's rewrite changes nothing.
    const third = await lease("w2", now + 2000);
    expect(third.payload).toEqual({ n: 1, marker: now });
    const late = await lease("w3", now + 2000 + policy.timeoutMs + 1);
    expect(await updateLeasedPayload(handle.db, third, { n: 1, marker: 0 }, now + 4000)).toBe(false);
    expect((await getJob(handle.db, id))?.payload).toEqual({ n: 1, marker: now });
    expect(await updateLeasedPayload(handle.db, late, { n: 2 }, now + 4000)).toBe(true);
    expect((await getJob(handle.db, id))?.payload).toEqual({ n: 2 });
  });

  it("lets another worker take a job whose lease expired, and refuses the first worker's late completion", async () => {
    const { id } = await freshJob(undefined, 0);
    const now = 2_100_000_000_000;
    const stale = (
      await leaseDueJobs(handle.db, {
        workerId: "dead-worker",
        limit: 1000,
        kinds,
        now,
        policyOf,
      })
    ).find((j) => j.id === id)!;
    const taken = (
      await leaseDueJobs(handle.db, {
        workerId: "live-worker",
        limit: 1000,
        kinds,
        now: now + 1001,
        policyOf,
      })
    ).find((j) => j.id === id)!;
    expect(taken.attempts).toBe(2);
    expect(await completeJob(handle.db, stale, now + 1002)).toBe(false);
    expect(await completeJob(handle.db, taken, now + 1003)).toBe(true);
    expect((await getJob(handle.db, id))?.status).toBe("done");
  });

  it("hands unfinished jobs back on release without counting the attempt", async () => {
    const { id } = await freshJob(undefined, 0);
    await leaseDueJobs(handle.db, {
      workerId: "stopping",
      limit: 1000,
      kinds,
      now: 2_200_000_000_000,
      policyOf,
    });
    expect(await releaseLeases(handle.db, "stopping")).toBeGreaterThanOrEqual(1);
    expect(await getJob(handle.db, id)).toMatchObject({ status: "queued", attempts: 0, lockedBy: null });
  });
});

/** Handlers of one new job kind (`<prefix>-<uuid>`), for a worker of one test. */
function oneKind(prefix: string, policy: JobPolicy, run: (payload: unknown, ctx: JobContext) => unknown) {
  const kind = `${prefix}-${crypto.randomUUID()}`;
  const handlers: Record<string, RegisteredJob> = {
    [kind]: { policy, handle: run as RegisteredJob["handle"] },
  };
  return { kind, handlers };
}

describe("worker", () => {
  it("runs a job, retries a failure, and reschedules without using an attempt", async () => {
    const kind = `w-${crypto.randomUUID()}`;
    const rescheduleKind = `r-${crypto.randomUUID()}`;
    const calls: number[] = [];
    let rescheduled = 0;
    const handlers: Record<string, RegisteredJob> = {
      [kind]: {
        policy: { maxAttempts: 3, timeoutMs: 1000, backoffMs: () => 10 },
        handle: ((_p: unknown, ctx) => {
          calls.push(ctx.job.attempts);
          if (ctx.job.attempts === 1) throw new Error("transient");
        }) as RegisteredJob["handle"],
      },
      [rescheduleKind]: {
        policy: { maxAttempts: 1, timeoutMs: 1000, backoffMs: () => 10 },
        handle: ((_p: unknown, ctx) => {
          rescheduled++;
          if (rescheduled === 1) throw new RescheduleJob(ctx.clock.now() + 20);
        }) as RegisteredJob["handle"],
      },
    };
    const worker = createWorker({ db: handle.db, handlers, pollMs: 5 });
    const id = (await enqueueAnyJob(handle.db, kind, {}, handlers[kind].policy))!;
    const rid = (await enqueueAnyJob(handle.db, rescheduleKind, {}, handlers[rescheduleKind].policy))!;
    worker.start();
    const deadline = Date.now() + 5000;
    while (
      Date.now() < deadline &&
      ((await getJob(handle.db, id))?.status !== "done" || (await getJob(handle.db, rid))?.status !== "done")
    ) {
      await Bun.sleep(10);
    }
    await worker.stop();
    expect(calls).toEqual([1, 2]);
    expect(await getJob(handle.db, id)).toMatchObject({ status: "done", attempts: 2 });
    // maxAttempts 1, yet it ran twice: the reschedule did not count.
    expect(rescheduled).toBe(2);
    expect(await getJob(handle.db, rid)).toMatchObject({ status: "done", attempts: 1 });
  });

  it("survives a reschedule it cannot write (the database gone): nothing is left unhandled, the job is not lost", async () => {
    let ran = 0;
    const { kind, handlers } = oneKind(
      "u",
      { maxAttempts: 1, timeoutMs: 60_000, backoffMs: () => 10 },
      () => {
        ran++;
        // run_at is NOT NULL: the reschedule's write fails, as it does with the database gone.
        throw new RescheduleJob(null as unknown as number);
      },
    );
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    const worker = createWorker({ db: handle.db, handlers, pollMs: 5 });
    try {
      const id = (await enqueueAnyJob(handle.db, kind, {}, handlers[kind].policy))!;
      worker.start();
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline && ran === 0) await Bun.sleep(10);
      await Bun.sleep(50);
      await worker.stop();
      expect(ran).toBe(1);
      expect(unhandled).toEqual([]);
      // Not lost: the stopped worker handed its lease back, and the job is queued to run again.
      expect((await getJob(handle.db, id))?.status).toBe("queued");
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("stopped while a round is leasing, runs nothing that round leased and hands it back", async () => {
    let ran = 0;
    const { kind, handlers } = oneKind("l", policy, () => {
      ran++;
    });
    const id = (await enqueueAnyJob(handle.db, kind, {}, policy))!;
    // Another writer holds the database: the worker's first round waits to lease.
    const held = Promise.withResolvers<void>();
    const entered = Promise.withResolvers<void>();
    const holding = handle.db.transaction(async () => {
      entered.resolve();
      await held.promise;
    });
    await entered.promise;
    const worker = createWorker({ db: handle.db, handlers, pollMs: 5 });
    worker.start();
    await Bun.sleep(50); // the round has started and waits for the writer
    const stopped = worker.stop();
    held.resolve();
    await holding;
    await stopped;
    await Bun.sleep(50); // a job started by that round would have run by now
    expect(ran).toBe(0);
    // Handed back as it was: queued, unleased, its attempt not counted.
    expect(await getJob(handle.db, id)).toMatchObject({
      status: "queued",
      leaseUntil: null,
      lockedBy: null,
      attempts: 0,
    });
  });

  it("scales every lease by leaseScale, and leaseHolds turns false in the lease's last quarter", async () => {
    const seen: { lease: number; holds: boolean[] }[] = [];
    const twoSeconds = { maxAttempts: 1, timeoutMs: 2000, backoffMs: () => 10 };
    const { kind, handlers } = oneKind("s", twoSeconds, async (_p, ctx) => {
      const lease = (ctx.job.leaseUntil ?? 0) - ctx.clock.now();
      const holds = [ctx.leaseHolds()];
      // 0.5 × 2,000 ms = a 1,000 ms lease: at 800 ms in, less than a quarter is left.
      await Bun.sleep(800);
      holds.push(ctx.leaseHolds());
      seen.push({ lease: Math.ceil(lease / 100) * 100, holds });
    });
    const worker = createWorker({ db: handle.db, handlers, pollMs: 5, leaseScale: 0.5 });
    const id = (await enqueueAnyJob(handle.db, kind, {}, handlers[kind].policy))!;
    worker.start();
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && (await getJob(handle.db, id))?.status !== "done") await Bun.sleep(10);
    await worker.stop();
    expect(seen).toEqual([{ lease: 1000, holds: [true, false] }]);
  });
});

describe("leases of stopped workers", () => {
  /** A pid that existed a moment ago and no longer does. */
  async function gonePid() {
    const child = spawn(["true"]);
    await child.exited;
    return child.pid;
  }
  const longPolicy: JobPolicy = { maxAttempts: 3, timeoutMs: 3_600_000, backoffMs: () => 10 };
  async function leasedBy(workerId: string, kind = `g-${crypto.randomUUID()}`) {
    const id = (await enqueueAnyJob(handle.db, kind, {}, longPolicy))!;
    await leaseDueJobs(handle.db, {
      workerId,
      limit: 1000,
      kinds: [kind],
      now: Date.now(),
      policyOf: () => longPolicy,
    });
    expect(await getJob(handle.db, id)).toMatchObject({ status: "running", lockedBy: workerId });
    return { id, kind };
  }

  it("expire at once when their process on this machine (and pid namespace) is gone, and only then", async () => {
    const host = hostname();
    const alive = spawn(["sleep", "30"]);
    try {
      const gone = await leasedBy(workerIdFor(host, await gonePid()));
      const living = await leasedBy(workerIdFor(host, alive.pid));
      const elsewhere = await leasedBy(workerIdFor("another-machine", await gonePid()));
      // A container of this host with the same hostname: its pids are not ours to look up.
      const twin = await leasedBy(workerIdFor(host, await gonePid(), "0123456789ab"));
      const unnamed = await leasedBy("w-custom");
      const now = Date.now();
      expect(await expireLeasesOfGoneWorkers(handle.db, { host, now })).toBe(1);
      expect((await getJob(handle.db, gone.id))?.leaseUntil).toBe(now);
      for (const kept of [living, elsewhere, twin, unnamed])
        expect((await getJob(handle.db, kept.id))?.leaseUntil).toBeGreaterThan(now + 3_000_000);
    } finally {
      alive.kill();
    }
  });

  it("a new worker runs a job whose worker was killed without waiting out its hour-long lease", async () => {
    const { id, kind } = await leasedBy(workerIdFor(hostname(), await gonePid()));
    const ran: number[] = [];
    const worker = createWorker({
      db: handle.db,
      pollMs: 5,
      handlers: {
        [kind]: {
          policy: longPolicy,
          handle: ((_p: unknown, ctx) => {
            ran.push(ctx.job.attempts);
          }) as RegisteredJob["handle"],
        },
      },
    });
    worker.start();
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && (await getJob(handle.db, id))?.status !== "done") await Bun.sleep(10);
    await worker.stop();
    // The killed worker's attempt counts, as an expired lease's does.
    expect(ran).toEqual([2]);
    expect(await getJob(handle.db, id)).toMatchObject({ status: "done", attempts: 2 });
  });
});

describe("durability across processes", () => {
  const child = join(import.meta.dir, "support", "job-child.ts");
  // Children are killed after the tests even when an assertion fails half-way.
  const children: { kill(signal?: string | number): void }[] = [];
  const track = <T extends { kill(signal?: string | number): void }>(proc: T) => {
    children.push(proc);
    return proc;
  };
  afterAll(() => {
    for (const proc of children) proc.kill("SIGKILL");
  });

  async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await predicate()) return;
      await Bun.sleep(25);
    }
    throw new Error(`timed out waiting for ${what}`);
  }
  const read = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : "");

  it("runs a job to completion exactly once after the worker is SIGKILLed mid-job", async () => {
    const dbPath = join(dir, "kill.db");
    const logPath = join(dir, "kill.log");
    const db = openDatabase(dbPath);
    migrate(db.sqlite);
    const id = (await enqueueAnyJob(db.db, "test.slow", {}, { maxAttempts: 5 }))!;

    const first = track(
      spawn([process.execPath, child, dbPath, logPath], {
        env: { ...process.env, SLOW_MS: "60000" },
      }),
    );
    await waitFor(() => read(logPath).includes(`started ${id}`), 10_000, "the job to start");
    first.kill("SIGKILL");
    await first.exited;
    expect(await getJob(db.db, id)).toMatchObject({ status: "running", attempts: 1 });

    const second = track(
      spawn([process.execPath, child, dbPath, logPath], {
        env: { ...process.env, SLOW_MS: "0" },
      }),
    );
    await waitFor(
      async () => (await getJob(db.db, id))?.status === "done",
      20_000,
      "the job to finish after restart",
    );
    second.kill("SIGTERM");
    await second.exited;

    expect(await getJob(db.db, id)).toMatchObject({ status: "done", attempts: 2 });
    const markers = await db.db.select().from(jobs).where(eq(jobs.kind, "test.marker")).all();
    expect(markers.filter((m) => (m.payload as { for: string }).for === id)).toHaveLength(1);
    expect(read(logPath).match(new RegExp(`completed ${id}`, "g"))).toHaveLength(1);
    db.close();
  });

  it("on SIGTERM stops taking work and hands running jobs back", async () => {
    const dbPath = join(dir, "term.db");
    const logPath = join(dir, "term.log");
    const db = openDatabase(dbPath);
    migrate(db.sqlite);
    const id = (await enqueueAnyJob(db.db, "test.slow", {}, { maxAttempts: 5 }))!;
    const proc = track(
      spawn([process.execPath, child, dbPath, logPath], {
        env: { ...process.env, SLOW_MS: "60000", GRACE_MS: "100" },
      }),
    );
    await waitFor(() => read(logPath).includes(`started ${id}`), 10_000, "the job to start");
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(read(logPath)).toContain("stopped");
    expect(await getJob(db.db, id)).toMatchObject({ status: "queued", attempts: 0, lockedBy: null });
    db.close();
  });
});

describe("maintenance.prune", () => {
  it("deletes finished jobs after a day and idempotency records after 24 h, and keeps the rest", async () => {
    const { jobHandlers } = await import("../src/jobs/handlers");
    const { idempotencyKeys } = await import("../src/db/schema");
    const { enqueueJob } = await import("../src/jobs/queue");
    const now = Date.now();
    const day = 86_400_000;
    const oldDone = (await enqueueAnyJob(handle.db, "k-old", {}, policy, { now: now - 3 * day }))!;
    const freshDone = (await enqueueAnyJob(handle.db, "k-fresh", {}, policy, { now }))!;
    const waiting = (await enqueueAnyJob(handle.db, "k-waiting", {}, policy, {
      now: now - 3 * day,
      runAt: now + day,
    }))!;
    await handle.db
      .update(jobs)
      .set({ status: "done", finishedAt: now - 2 * day })
      .where(eq(jobs.id, oldDone))
      .run();
    await handle.db
      .update(jobs)
      .set({ status: "done", finishedAt: now - 1000 })
      .where(eq(jobs.id, freshDone))
      .run();
    await handle.db
      .insert(idempotencyKeys)
      .values([
        {
          workspaceId: "w",
          key: "old",
          requestHash: "h",
          statusCode: 200,
          responseBody: "{}",
          createdAt: now - 2 * day,
        },
        {
          workspaceId: "w",
          key: "new",
          requestHash: "h",
          statusCode: 200,
          responseBody: "{}",
          createdAt: now,
        },
      ])
      .run();
    // Outbox: dispatched rows go after 7 days; never-dispatched ones stay for the boot sweep.
    const { events } = await import("../src/db/schema");
    const event = async (ms: number, dispatched: boolean) => {
      const id = Bun.randomUUIDv7("hex", ms);
      await handle.db
        .insert(events)
        .values({
          id,
          workspaceId: "w",
          type: "contact.created",
          data: {},
          createdAt: ms,
          dispatchedAt: dispatched ? ms : null,
        })
        .run();
      return id;
    };
    const oldEvents: string[] = [];
    for (let i = 0; i < 3; i++) oldEvents.push(await event(now - 8 * day, true));
    const oldUndispatched = await event(now - 8 * day, false);
    const recentEvent = await event(now - 6 * day, true);
    // Daily budget counts: today's and yesterday's stay; re-entry skips: the stats window's stay.
    const { dailyBudgetUsage, flowReentrySkips } = await import("../src/db/schema");
    const today = Math.floor(now / day);
    await handle.db
      .insert(dailyBudgetUsage)
      .values(
        [today, today - 1, today - 2, today - 40].map((d) => ({
          workspaceId: "w",
          budget: "one_off_daily_limit",
          day: d,
          count: 1,
        })),
      )
      .run();
    await handle.db
      .insert(flowReentrySkips)
      .values(
        [today, today - 29, today - 40].map((d) => ({ workspaceId: "w", flowId: "f", day: d, count: 1 })),
      )
      .run();
    const pruneId = (await enqueueJob(handle.db, "maintenance.prune", {}))!;
    const worker = createWorker({ db: handle.db, handlers: jobHandlers(), pollMs: 5 });
    worker.start();
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && (await getJob(handle.db, pruneId))?.status !== "done")
      await Bun.sleep(10);
    await worker.stop();
    expect((await getJob(handle.db, pruneId))?.status).toBe("done");
    expect(await getJob(handle.db, oldDone)).toBeUndefined();
    expect((await getJob(handle.db, freshDone))?.status).toBe("done");
    expect((await getJob(handle.db, waiting))?.status).toBe("queued");
    const keys = (await handle.db.select().from(idempotencyKeys).all()).map((k) => k.key);
    expect(keys).toContain("new");
    expect(keys).not.toContain("old");
    const left = new Set((await handle.db.select({ id: events.id }).from(events).all()).map((e) => e.id));
    for (const id of oldEvents) expect(left.has(id)).toBe(false);
    expect(left.has(oldUndispatched)).toBe(true);
    expect(left.has(recentEvent)).toBe(true);
    const days = (rows: { day: number }[]) => rows.map((r) => today - r.day).sort((a, b) => a - b);
    expect({
      budgets: days(await handle.db.select().from(dailyBudgetUsage).all()),
      skips: days(await handle.db.select().from(flowReentrySkips).all()),
    }).toEqual({ budgets: [0, 1], skips: [0, 29] });
  });
});

describe("pruneEvents", () => {
  it("deletes a large old outbox in batches, every old dispatched row and nothing else", async () => {
    const { events } = await import("../src/db/schema");
    const { pruneEvents, EVENT_RETENTION_MS } = await import("../src/domain/events");
    const now = Date.now();
    const workspaceId = `w-${crypto.randomUUID()}`;
    const insert = handle.sqlite.prepare(
      "INSERT INTO events (id, workspace_id, type, data, created_at, dispatched_at) VALUES (?, ?, 'contact.created', '{}', ?, ?)",
    );
    handle.sqlite.transaction(() => {
      for (let i = 0; i < 12_345; i++) {
        const at = now - EVENT_RETENTION_MS - 1000 - i;
        insert.run(Bun.randomUUIDv7("hex", at), workspaceId, at, at);
      }
      insert.run(Bun.randomUUIDv7("hex", now), workspaceId, now, now);
    })();
    expect(await pruneEvents(handle.db, now)).toBeGreaterThanOrEqual(12_345);
    const left = (await handle.db.select().from(events).all()).filter((e) => e.workspaceId === workspaceId);
    expect(left).toHaveLength(1);
    expect(left[0].createdAt).toBe(now);
  });
});
