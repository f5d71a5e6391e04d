import type { Db, DbOrTx } from "../db/client";
import type { JobRow } from "../db/schema";
import type { Clock } from "../lib/time";

/**
 * The job catalogue: every kind of durable work, its payload type and its retry policy, in one
 * place. Handlers live with their domain and are wired in src/jobs/handlers.ts.
 */
export interface JobPayloads {
  /** Deletes finished jobs and expired idempotency records. */
  "maintenance.prune": { now?: number };
  /** Hands one outbound message to the carrier (src/domain/messaging/send-job.ts). */
  "messages.send": { message_id: string; opt_out_confirmation?: boolean };
  /**
   * Hands a bulk sender's batch of outbound messages to the carrier (a campaign's dispatch step):
   * one job for the batch instead of one per message, each message handed off exactly once as by
   * `messages.send`; a message the carrier cannot take now gets a `messages.send` job of its own.
   */
  "messages.send_batch": {
    message_ids: string[];
    /**
     * When an attempt of the job started handing its messages off (its hand-off marker, written by
     * the job itself): a later attempt looks up every message still unsent before sending it.
     */
    handoff_started_at?: number;
  };
  /** Starts a scheduled campaign at its send_at (src/domain/campaigns/dispatch.ts). */
  "campaigns.start": { campaign_id: string };
  /** Writes one chunk of a launched campaign's recipients, then queues the next chunk. */
  "campaigns.resolve": { campaign_id: string; after: { created_at: number; id: string } | null };
  /** Hands a campaign's due recipients to the send queue, batch by batch; `generation` stops stale runs. */
  "campaigns.dispatch": { campaign_id: string; generation: number };
  /** The reply an SMS agent owes on a thread, due at `due_at` (src/domain/agents/runtime.ts). */
  "agents.reply": { conversation_id: string; due_at: number };
  /** A follow-up after the agent's message at `after`, if the contact has stayed quiet. */
  "agents.followup": { conversation_id: string; after: number };
  /** Places one QUEUED call with its provider, exactly once (src/domain/calls/calls.ts). */
  "calls.place": { call_id: string };
  /** Runs a flow's due runs, batch by batch; `generation` stops a stale dispatcher (src/domain/flows). */
  "flows.dispatch": { flow_id: string; generation: number };
  /** One attempt of a flow webhook node's POST; `retry` is 0 for the first. */
  "flows.webhook": { flow_id: string; run_id: string; node_id: string; retry: number };
  /** The carrier's registry reviews one pending 10DLC brand or campaign, or short-code request step. */
  "registry.review": { kind: "brand" | "campaign" | "short_code"; id: string };
  /** One attempt of one webhook delivery; `retry` is 0 for the first (src/domain/webhooks/webhooks.ts). */
  "webhook.deliver": { deliveryId: string; retry: number };
}

export type JobKind = keyof JobPayloads;

export interface JobPolicy {
  /** Attempts before the job is marked dead. */
  maxAttempts: number;
  /** How long one attempt may run; also the lease length, after which another worker may take it. */
  timeoutMs: number;
  /** Delay before attempt `attempt + 1`, given the attempt that just failed (1-based). */
  backoffMs(attempt: number): number;
}

/** Exponential backoff with ±20 % jitter: 1 s, 2 s, 4 s ... capped at `capMs`. */
export function exponentialBackoff(baseMs = 1000, capMs = 3_600_000) {
  return (attempt: number) => {
    const raw = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
    return Math.round(raw * (0.8 + Math.random() * 0.4));
  };
}

export const JOB_POLICIES: Record<JobKind, JobPolicy> = {
  "maintenance.prune": { maxAttempts: 3, timeoutMs: 60_000, backoffMs: exponentialBackoff(60_000) },
  // The lease (timeoutMs) is how soon a send orphaned by a crash is picked up again; one hand-off
  // takes well under it. ~25 attempts with backoff capped at 10 min keep a send QUEUED through a
  // few hours of carrier outage before it is reported FAILED.
  "messages.send": { maxAttempts: 25, timeoutMs: 12_000, backoffMs: exponentialBackoff(2_000, 600_000) },
  // A batch's hand-offs run at once; its retries are re-runs, in which every message already
  // handed off is skipped (or looked up) as a send job's retry would.
  "messages.send_batch": {
    maxAttempts: 25,
    timeoutMs: 30_000,
    backoffMs: exponentialBackoff(2_000, 600_000),
  },
  // Campaign steps are short transactions that reschedule themselves; the lease is how soon a step
  // orphaned by a crash runs again.
  "campaigns.start": { maxAttempts: 10, timeoutMs: 30_000, backoffMs: exponentialBackoff(1_000, 60_000) },
  "campaigns.resolve": { maxAttempts: 10, timeoutMs: 30_000, backoffMs: exponentialBackoff(1_000, 60_000) },
  "campaigns.dispatch": { maxAttempts: 10, timeoutMs: 30_000, backoffMs: exponentialBackoff(1_000, 60_000) },
  // The lease covers the engine's answer (an LLM's timeout and retries) and the write after it.
  "agents.reply": { maxAttempts: 8, timeoutMs: 120_000, backoffMs: exponentialBackoff(2_000, 300_000) },
  "agents.followup": { maxAttempts: 8, timeoutMs: 120_000, backoffMs: exponentialBackoff(2_000, 300_000) },
  // Like a send: the lease is how soon a placement orphaned by a crash is looked up again; ~20
  // attempts with backoff capped at 10 min keep a call QUEUED through an hour or two of outage.
  "calls.place": { maxAttempts: 20, timeoutMs: 30_000, backoffMs: exponentialBackoff(2_000, 600_000) },
  "flows.dispatch": { maxAttempts: 10, timeoutMs: 30_000, backoffMs: exponentialBackoff(1_000, 60_000) },
  // Its own retry schedule (the webhooks' one) is kept by re-enqueueing with `retry`; this policy
  // only covers a handler that could not finish. Lease > the 15 s HTTP timeout.
  "flows.webhook": { maxAttempts: 5, timeoutMs: 60_000, backoffMs: exponentialBackoff(1_000, 60_000) },
  "registry.review": { maxAttempts: 10, timeoutMs: 30_000, backoffMs: exponentialBackoff(1_000, 60_000) },
  // The webhook retry schedule lives in the delivery records (each retry is its own job); this
  // policy only covers a handler that could not record its attempt. Lease > the 15 s HTTP timeout.
  "webhook.deliver": { maxAttempts: 5, timeoutMs: 60_000, backoffMs: exponentialBackoff(1_000, 60_000) },
};

export interface JobContext {
  db: Db;
  clock: Clock;
  job: JobRow;
  /**
   * Whether this job's lease still has enough time left to start an effect outside the database
   * (a carrier hand-off, a webhook): false once another worker could soon take the job (a node
   * frozen past its lease and resumed, a slow batch), and the effect must be left to that worker.
   */
  leaseHolds(): boolean;
  /**
   * Runs `work` in a transaction that also marks this job done, so a handler whose effects are all
   * in the database takes effect exactly once.
   */
  completeWith<T>(work: (tx: DbOrTx) => Promise<T> | T): Promise<T>;
  /**
   * Marks this job done inside a transaction the handler already holds (for handlers that apply
   * several jobs' effects in one transaction). Returns false when the lease was lost: the handler
   * must then leave this job's effects out.
   */
  completeIn(tx: DbOrTx): Promise<boolean>;
}

export type JobHandler<P> = (payload: P, ctx: JobContext) => Promise<void> | void;

/** A handler with its policy, as the worker runs it. Tests may register kinds of their own. */
export interface RegisteredJob {
  policy: JobPolicy;
  handle: JobHandler<never>;
}

/** Thrown by a handler to run again at `runAt` without counting a failed attempt (e.g. a daily cap). */
export class RescheduleJob extends Error {
  constructor(readonly runAt: number) {
    super("rescheduled");
  }
}
