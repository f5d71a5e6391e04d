/**
 * A worker process for the durability tests: the real queue and worker on a real database file,
 * with two job kinds defined here. `test.slow` appends "started" to a file, waits SLOW_MS, then
 * completes atomically with a marker job (its only effect).
 * Usage: bun test/support/job-child.ts DB_PATH LOG_PATH
 */
import { appendFileSync } from "node:fs";
import { openDatabase } from "../../src/db/client";
import type { RegisteredJob } from "../../src/jobs/catalog";
import { enqueueAnyJob } from "../../src/jobs/queue";
import { createWorker } from "../../src/jobs/worker";

const [dbPath, logPath] = process.argv.slice(2);
const slowMs = Number(process.env.SLOW_MS ?? 0);
const { db } = openDatabase(dbPath);

export const SLOW_POLICY = { maxAttempts: 5, timeoutMs: 1500, backoffMs: () => 100 };

const handlers: Record<string, RegisteredJob> = {
  "test.slow": {
    policy: { ...SLOW_POLICY, timeoutMs: Number(process.env.LEASE_MS ?? SLOW_POLICY.timeoutMs) },
    handle: (async (_payload: unknown, ctx) => {
      appendFileSync(logPath, `started ${ctx.job.id} attempt ${ctx.job.attempts}\n`);
      await Bun.sleep(slowMs);
      await ctx.completeWith(
        async (tx) => await enqueueAnyJob(tx, "test.marker", { for: ctx.job.id }, { maxAttempts: 1 }),
      );
      appendFileSync(logPath, `completed ${ctx.job.id}\n`);
    }) as RegisteredJob["handle"],
  },
  "test.marker": { policy: { maxAttempts: 1, timeoutMs: 1000, backoffMs: () => 0 }, handle: () => {} },
};

const worker = createWorker({ db, handlers, pollMs: 50 });
worker.start();
appendFileSync(logPath, "ready\n");
process.on("SIGTERM", async () => {
  await worker.stop(Number(process.env.GRACE_MS ?? 100));
  appendFileSync(logPath, "stopped\n");
  process.exit(0);
});
