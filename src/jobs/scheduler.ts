import { Cron } from "croner";
import type { Db } from "../db/client";
import { errorText, log } from "../lib/log";
import { enqueueJob } from "./queue";

/**
 * Periodic work. Each tick only enqueues a durable job with a per-period dedupe key, so several
 * server processes on one database run it once per period.
 */
export function startScheduler(db: Db): { stop(): void } {
  const crons = [
    new Cron("17 * * * *", { protect: true }, async () => {
      try {
        const hour = new Date().toISOString().slice(0, 13);
        await enqueueJob(db, "maintenance.prune", {}, { dedupeKey: `maintenance.prune:${hour}` });
      } catch (error) {
        log.error("could not schedule maintenance", { error: errorText(error) });
      }
    }),
  ];
  return {
    stop() {
      for (const cron of crons) cron.stop();
    },
  };
}
