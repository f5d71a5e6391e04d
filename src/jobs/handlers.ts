import { and, eq, inArray, lt, sql } from "drizzle-orm";
import { dialectOf } from "../db/client";
import { idempotencyKeys, jobs } from "../db/schema";
import { agentFollowupJob, agentReplyJob } from "../domain/agents/runtime";
import { placeCallJob } from "../domain/calls/calls";
import { dispatchCampaignJob, resolveRecipientsJob, startScheduledJob } from "../domain/campaigns/dispatch";
import { pruneEvents } from "../domain/events";
import { dispatchFlowJob, flowWebhookJob, pruneReentrySkips } from "../domain/flows/flows";
import { sendMessageBatchJob, sendMessageJob } from "../domain/messaging/send-job";
import { registryReviewJob } from "../domain/registration/registration";
import { deliverWebhookJob, pruneWebhookLog } from "../domain/webhooks/webhooks";
import { pruneDailyBudgets } from "../domain/workspace/daily-budgets";
import { JOB_POLICIES, type JobHandler, type JobKind, type JobPayloads, type RegisteredJob } from "./catalog";

const DAY_MS = 86_400_000;

/**
 * Deletes finished jobs after a day (dead ones after a week), idempotency records after 24 h,
 * dispatched outbox events after 7 days, the webhook delivery log after 30 days, daily budget
 * counts of days before yesterday and flow re-entry skip counts past the stats window. On
 * PostgreSQL it also folds the counters' delta rows into one row per key
 * (migrations/pg/0003_counters_without_hot_rows.sql), in a statement of its own.
 */
const pruneMaintenance: JobHandler<JobPayloads["maintenance.prune"]> = async (_payload, ctx) => {
  const now = ctx.clock.now();
  await pruneEvents(ctx.db, now);
  if (dialectOf(ctx.db) === "postgres") await ctx.db.run(sql`select outreach_roll_up_counters()`);
  await ctx.completeWith(async (tx) => {
    await tx
      .delete(jobs)
      .where(and(eq(jobs.status, "done"), lt(jobs.finishedAt, now - DAY_MS)))
      .run();
    await tx
      .delete(jobs)
      .where(and(inArray(jobs.status, ["dead"]), lt(jobs.finishedAt, now - 7 * DAY_MS)))
      .run();
    await tx
      .delete(idempotencyKeys)
      .where(lt(idempotencyKeys.createdAt, now - DAY_MS))
      .run();
    await pruneWebhookLog(tx, now);
    await pruneDailyBudgets(tx, now);
    await pruneReentrySkips(tx, now);
  });
};

const HANDLERS: { [K in JobKind]: JobHandler<JobPayloads[K]> } = {
  "maintenance.prune": pruneMaintenance,
  "messages.send": sendMessageJob,
  "messages.send_batch": sendMessageBatchJob,
  "webhook.deliver": deliverWebhookJob,
  "campaigns.start": startScheduledJob,
  "campaigns.resolve": resolveRecipientsJob,
  "campaigns.dispatch": dispatchCampaignJob,
  "agents.reply": agentReplyJob,
  "agents.followup": agentFollowupJob,
  "calls.place": placeCallJob,
  "flows.dispatch": dispatchFlowJob,
  "flows.webhook": flowWebhookJob,
  "registry.review": registryReviewJob,
};

/** Every catalogued kind with its handler and policy, as the worker takes them. */
export function jobHandlers(): Record<string, RegisteredJob> {
  const registered: Record<string, RegisteredJob> = {};
  for (const kind of Object.keys(HANDLERS) as JobKind[]) {
    registered[kind] = { policy: JOB_POLICIES[kind], handle: HANDLERS[kind] as RegisteredJob["handle"] };
  }
  return registered;
}
