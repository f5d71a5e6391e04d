import type { Carrier } from "../carriers/carrier";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { startPlannerStatistics } from "../db/planner-statistics";
import { startSearchIndexer } from "../db/search";
import { startAgents } from "../domain/agents/runtime";
import { configureTrackedLinks } from "../domain/attribution/offers";
import { startCalls } from "../domain/calls/calls";
import { startFlowTriggers } from "../domain/flows/triggers";
import { receiveInbound } from "../domain/messaging/inbound";
import { startMessaging } from "../domain/messaging/send-job";
import { startRegistration } from "../domain/registration/registration";
import { configureWebhookDelivery } from "../domain/webhooks/webhooks";
import { createEngine } from "../engines";
import type { VoiceProvider } from "../voice/provider";
import { jobHandlers } from "./handlers";
import { startScheduler } from "./scheduler";
import { createWorker, type Worker } from "./worker";

/**
 * What every connection that writes needs, in whichever thread it runs: the listeners that act
 * inside the transactions of the events, messages and list changes that concern them.
 */
export function startRuntimes(db: Db, config: Config, carrier: Carrier, voice: VoiceProvider) {
  // Webhook and flow-webhook targets and timeouts (WEBHOOK_ALLOW_PRIVATE, WEBHOOK_TIMEOUT_MS), in
  // this thread too: the background thread delivers most of them.
  configureWebhookDelivery(db, {
    allowPrivate: config.webhookAllowPrivate,
    timeoutMs: config.webhookTimeoutMs,
  });
  // Campaign sends merge {{offer_url}} as a link under PUBLIC_URL.
  configureTrackedLinks({ publicUrl: config.publicUrl });
  // Send jobs hand off to this carrier; its status reports and inbound messages land in the database.
  startMessaging(db, carrier, { onInbound: receiveInbound });
  // SMS agents answer with the configured engine (LLM_BASE_URL), else the built-in offline one.
  startAgents(db, createEngine(config));
  // Agent calls go through the voice provider (VOICE), `say` calls through the carrier.
  startCalls(db, carrier, voice);
  // Flow triggers enroll contacts in the transactions of the events that start them.
  startFlowTriggers();
  // 10DLC and short-code reviews are the carrier's (the simulated one decides; Twilio: its console).
  startRegistration(db, carrier.registry);
}

export interface Background {
  worker: Worker;
  /** Stops taking work, drains running jobs (up to graceMs), releases the rest. */
  stop(graceMs: number): Promise<void>;
}

/**
 * The background work of a server: the job worker, the adapters' delivery reports, the scheduler,
 * the search indexer and (PostgreSQL) the planner statistics. Runs in the background thread
 * (src/jobs/thread.ts) by default, so none of it holds the thread that answers requests; in the
 * server's own thread with WORKER_THREAD=false.
 */
export function startBackground(
  db: Db,
  carrier: Carrier,
  voice: VoiceProvider,
  config: Pick<Config, "jobLeaseScale">,
): Background {
  const worker = createWorker({ db, handlers: jobHandlers(), leaseScale: config.jobLeaseScale });
  worker.start();
  carrier.start();
  voice.start();
  const scheduler = startScheduler(db);
  // Indexing waits while jobs run (up to SEARCH_MAX_DEFER_MS): sends before search.
  const searchIndexer = startSearchIndexer(db, { busy: () => worker.running() > 0 });
  const statistics = startPlannerStatistics(db);
  return {
    worker,
    async stop(graceMs) {
      scheduler.stop();
      searchIndexer.stop();
      statistics.stop();
      await carrier.stop();
      await voice.stop();
      await worker.stop(graceMs);
    },
  };
}
