import { and, asc, count, desc, eq, isNull, lt, ne, sql } from "drizzle-orm";
import { changeWatchOf, type Db, type DbOrTx, memo } from "../../db/client";
import { CommitCheckedCaches } from "../../db/commit-watch";
import { newestFirstPage } from "../../db/paging";
import { preparedPerConnection } from "../../db/prepared";
import {
  events,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookRow,
  webhookAttempts,
  webhookDeliveries,
  webhooks,
} from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import type { JobHandler, JobPayloads } from "../../jobs/catalog";
import { RescheduleJob } from "../../jobs/catalog";
import { enqueueJob } from "../../jobs/queue";
import { invalid, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { log } from "../../lib/log";
import { type Clock, toIso } from "../../lib/time";
import { postWebhook, type WebhookResponse } from "../../webhooks/deliver";
import { type EventType, isEventType } from "../../webhooks/events";
import { generateWebhookSecret, webhookHeaders } from "../../webhooks/sign";
import { checkWebhookUrl } from "../../webhooks/targets";
import { type EmittedEvent, onEventsEmitted } from "../events";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Delays before retries 1..7 (Svix's schedule); each gets ±20 % jitter. */
export const RETRY_SCHEDULE_MS = [
  5_000,
  300_000,
  1_800_000,
  2 * HOUR_MS,
  5 * HOUR_MS,
  10 * HOUR_MS,
  10 * HOUR_MS,
];
/** After a rotation, the previous secret keeps signing this long. */
export const PREVIOUS_SECRET_GRACE_MS = DAY_MS;
/** An endpoint whose attempts have all failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * DAY_MS;

/** Delivery settings from the configuration, per database (tests run several servers at once). */
export interface WebhookDeliverySettings {
  allowPrivate: boolean;
  timeoutMs: number;
}
const DEFAULT_SETTINGS: WebhookDeliverySettings = { allowPrivate: false, timeoutMs: 15_000 };
const settingsByDb = new WeakMap<Db, WebhookDeliverySettings>();
/** Sets how webhooks on `db` are checked and sent (called when the app is built). */
export function configureWebhookDelivery(db: Db, settings: WebhookDeliverySettings) {
  settingsByDb.set(db, { ...settings });
}
export function settingsFor(db: Db): WebhookDeliverySettings {
  return settingsByDb.get(db) ?? DEFAULT_SETTINGS;
}

// ── Records ─────────────────────────────────────────────────────────────────────────────────────

export interface WebhookJson {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  created_at: string;
}

export function webhookJson(row: WebhookRow): WebhookJson {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    created_at: toIso(row.createdAt) as string,
  };
}

/** One attempt as `POST …/test` and `…/retry` answer it. */
export interface DeliveryJson {
  id: string;
  event: string;
  status: "succeeded" | "failed";
  response_status: number | null;
  duration_ms: number;
  attempt: number;
  created_at: string;
}

/** One attempt as the delivery log lists it. */
export interface DeliveryLogJson extends DeliveryJson {
  attempt_id: string;
  event_id: string;
  response_body: string | null;
  error: string | null;
}

function deliveryJson(
  attempt: WebhookAttemptRow,
  delivery: Pick<WebhookDeliveryRow, "eventType">,
): DeliveryJson {
  return {
    id: attempt.deliveryId,
    event: delivery.eventType,
    status: attempt.status as DeliveryJson["status"],
    response_status: attempt.responseStatus,
    duration_ms: attempt.durationMs,
    attempt: attempt.attempt,
    created_at: toIso(attempt.createdAt) as string,
  };
}

// ── Subscriptions ───────────────────────────────────────────────────────────────────────────────

export interface WebhookInput {
  url: string;
  events: string[];
  description?: string | null;
  enabled?: boolean;
}

function checkUrl(settings: WebhookDeliverySettings, url: string) {
  const problem = checkWebhookUrl(url.trim(), settings.allowPrivate);
  if (problem) throw invalid(`url ${problem}`);
  return url.trim();
}

/** Validates `events` against the catalogue (`*` = all) and drops repeats. */
function checkEvents(list: string[]): string[] {
  list.forEach((type, i) => {
    if (type !== "*" && !isEventType(type)) throw invalid(`events[${i}] is not a known event: ${type}`);
  });
  return [...new Set(list)];
}

async function findWebhook(db: DbOrTx, workspaceId: string, id: string): Promise<WebhookRow> {
  const row = await workspaceRow(db, webhooks, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

/** Creates a subscription; the answer carries its secret (the only time besides a rotation). */
export async function createWebhook(db: Db, workspaceId: string, input: WebhookInput, now = Date.now()) {
  const url = checkUrl(settingsFor(db), input.url);
  const list = checkEvents(input.events);
  const row: WebhookRow = {
    id: newId(),
    workspaceId,
    url,
    events: list,
    description: input.description ?? null,
    enabled: input.enabled ?? true,
    secret: generateWebhookSecret(),
    previousSecret: null,
    previousSecretExpiresAt: null,
    failingSince: null,
    disabledReason: null,
    createdAt: now,
    updatedAt: now,
  };
  await db.insert(webhooks).values(row).run();
  forgetSubscriptions();
  return { ...webhookJson(row), secret: row.secret };
}

export async function listWebhooks(db: Db, workspaceId: string, page: { limit: number; offset: number }) {
  const where = eq(webhooks.workspaceId, workspaceId);
  const { rows, total } = await newestFirstPage(db, webhooks, where, [webhooks.createdAt, webhooks.id], page);
  return { webhooks: rows.map(webhookJson), total, ...page };
}

export async function getWebhook(db: Db, workspaceId: string, id: string): Promise<WebhookJson> {
  return webhookJson(await findWebhook(db, workspaceId, id));
}

/** Partial update. Re-enabling clears the failure history that disabled it. */
export async function updateWebhook(
  db: Db,
  workspaceId: string,
  id: string,
  patch: Partial<WebhookInput>,
  now = Date.now(),
): Promise<WebhookJson> {
  const settings = settingsFor(db);
  const updated = await db.transaction(async (tx) => {
    const row = await findWebhook(tx, workspaceId, id);
    const changes: Partial<WebhookRow> = { updatedAt: now };
    if (patch.url !== undefined) changes.url = checkUrl(settings, patch.url);
    if (patch.events !== undefined) changes.events = checkEvents(patch.events);
    if (patch.description !== undefined) changes.description = patch.description;
    if (patch.enabled !== undefined) {
      changes.enabled = patch.enabled;
      if (patch.enabled) {
        changes.failingSince = null;
        changes.disabledReason = null;
      }
    }
    await tx.update(webhooks).set(changes).where(eq(webhooks.id, row.id)).run();
    return webhookJson({ ...row, ...changes });
  });
  forgetSubscriptions();
  return updated;
}

/** Deletes a subscription with its delivery log; its pending deliveries are dropped. */
export async function deleteWebhook(db: Db, workspaceId: string, id: string): Promise<WebhookJson> {
  const deleted = await db.transaction(async (tx) => {
    const row = await findWebhook(tx, workspaceId, id);
    await tx
      .delete(webhookAttempts)
      .where(and(eq(webhookAttempts.workspaceId, workspaceId), eq(webhookAttempts.webhookId, id)))
      .run();
    await tx
      .delete(webhookDeliveries)
      .where(and(eq(webhookDeliveries.workspaceId, workspaceId), eq(webhookDeliveries.webhookId, id)))
      .run();
    await tx.delete(webhooks).where(eq(webhooks.id, row.id)).run();
    return webhookJson(row);
  });
  forgetSubscriptions();
  return deleted;
}

/** New secret now; the old one keeps signing (beside it) for 24 h. */
export async function rotateWebhookSecret(db: Db, workspaceId: string, id: string, now = Date.now()) {
  return await db.transaction(async (tx) => {
    const row = await findWebhook(tx, workspaceId, id);
    const changes = {
      secret: generateWebhookSecret(),
      previousSecret: row.secret,
      previousSecretExpiresAt: now + PREVIOUS_SECRET_GRACE_MS,
      updatedAt: now,
    };
    await tx.update(webhooks).set(changes).where(eq(webhooks.id, row.id)).run();
    return { ...webhookJson(row), secret: changes.secret };
  });
}

/** The secrets that sign at `now`: the current one, and the previous one during its grace. */
export function signingSecrets(row: WebhookRow, now: number): string[] {
  const secrets = [row.secret];
  if (row.previousSecret && (row.previousSecretExpiresAt ?? 0) > now) secrets.push(row.previousSecret);
  return secrets;
}

// ── Fan-out (runs inside the emitting transaction) ──────────────────────────────────────────────

function payloadOf(type: string, createdAt: number, data: unknown): string {
  return JSON.stringify({ type, timestamp: toIso(createdAt), data });
}

/**
 * The fan-out's statements, prepared once per database session. Listeners get the emitting
 * transaction, not the database; drizzle runs a transaction on its database's session, so the
 * session identifies the connection the statements belong to. Without this, the lookup that runs
 * on every emitted event (mostly in workspaces with no subscription) cost more than the emit.
 */
function prepareFanOut(tx: DbOrTx) {
  const ph = sql.placeholder;
  return {
    subscriptions: memo(tx, subscriptionCaches, () => subscriptionCaches.create(changeWatchOf(tx), 10_000)),
    subscriptionsOf: tx
      .select({ id: webhooks.id, events: webhooks.events, createdAt: webhooks.createdAt })
      .from(webhooks)
      .where(and(eq(webhooks.workspaceId, ph("workspaceId")), eq(webhooks.enabled, true)))
      .prepare(),
    insertDelivery: tx
      .insert(webhookDeliveries)
      .values({
        id: ph("id"),
        workspaceId: ph("workspaceId"),
        webhookId: ph("webhookId"),
        messageId: ph("messageId"),
        eventType: ph("eventType"),
        payload: ph("payload"),
        status: "pending",
        attempts: 0,
        nextAttemptAt: ph("createdAt"),
        createdAt: ph("createdAt"),
        updatedAt: ph("createdAt"),
      })
      .prepare(),
  };
}
const fanOutStatementsFor = preparedPerConnection(prepareFanOut);

interface Subscription {
  id: string;
  events: string[];
  createdAt: number;
}
/**
 * Enabled subscriptions per workspace, remembered per connection: every emitted event asks (two
 * per message sent). Emptied by `forgetSubscriptions` when this process writes an endpoint, and
 * when another connection or process commits.
 */
const subscriptionCaches = new CommitCheckedCaches<string, Subscription[]>();
function forgetSubscriptions() {
  subscriptionCaches.clear();
}

/**
 * Inserts a delivery and its first job for each enabled subscription that wants each event (the
 * events are fanned out as they are emitted, or claimed by the boot sweep). Subscriptions are looked up once per workspace per batch (a
 * bulk import emits thousands of events at once); a workspace without subscriptions costs one
 * indexed lookup. `createdBefore` limits the boot sweep to subscriptions that existed when the
 * event happened.
 */
async function fanOut(tx: DbOrTx, batch: EmittedEvent[], createdBefore?: number) {
  if (batch.length === 0) return;
  const statements = fanOutStatementsFor(tx);
  const subscriptionsByWorkspace = new Map<string, { id: string; events: string[]; createdAt: number }[]>();
  for (const event of batch) {
    let subscriptions = subscriptionsByWorkspace.get(event.workspaceId);
    if (!subscriptions) {
      subscriptions = statements.subscriptions.get(event.workspaceId);
      if (!subscriptions) {
        subscriptions = await statements.subscriptionsOf.all({ workspaceId: event.workspaceId });
        statements.subscriptions.set(event.workspaceId, subscriptions);
      }
      subscriptionsByWorkspace.set(event.workspaceId, subscriptions);
    }
    let payload: string | null = null;
    for (const subscription of subscriptions) {
      if (createdBefore !== undefined && subscription.createdAt > createdBefore) continue;
      if (!subscription.events.includes("*") && !subscription.events.includes(event.type)) continue;
      payload ??= payloadOf(event.type, event.createdAt, event.data);
      const deliveryId = newId();
      await statements.insertDelivery.run({
        id: deliveryId,
        workspaceId: event.workspaceId,
        webhookId: subscription.id,
        messageId: event.id,
        eventType: event.type,
        payload,
        createdAt: event.createdAt,
      });
      await enqueueJob(
        tx,
        "webhook.deliver",
        { deliveryId, retry: 0 },
        {
          workspaceId: event.workspaceId,
          runAt: event.createdAt,
          now: event.createdAt,
          dedupeKey: `webhook:${deliveryId}:0`,
        },
      );
    }
  }
}

onEventsEmitted(async (tx, batch) => await fanOut(tx, batch), { dispatches: true });

/**
 * Fans out outbox events that were written without the listener (e.g. by a process that did not
 * load this module). Run at boot; returns how many events it dispatched.
 */
export async function dispatchPendingEvents(db: Db, batch = 500): Promise<number> {
  let dispatched = 0;
  for (;;) {
    const rows = await db
      .select()
      .from(events)
      .where(isNull(events.dispatchedAt))
      .orderBy(asc(events.createdAt))
      .limit(batch)
      .all();
    if (rows.length === 0) return dispatched;
    await db.transaction(async (tx) => {
      for (const row of rows) {
        if (!isEventType(row.type)) {
          await tx.update(events).set({ dispatchedAt: row.createdAt }).where(eq(events.id, row.id)).run();
          continue;
        }
        // Claim the row first: another process sweeping at the same time fans it out only once.
        const claimed = await tx
          .update(events)
          .set({ dispatchedAt: row.createdAt })
          .where(and(eq(events.id, row.id), isNull(events.dispatchedAt)))
          .returning({ id: events.id })
          .all();
        if (claimed.length > 0) await fanOut(tx, [{ ...row, type: row.type as EventType }], row.createdAt);
      }
    });
    dispatched += rows.length;
  }
}

// ── Hot path ────────────────────────────────────────────────────────────────────────────────────

/**
 * The statements every delivery attempt runs, prepared once per database: building and preparing
 * them per attempt costs more CPU than the HTTP request itself at thousands of deliveries a second.
 */
function prepareHotPath(db: DbOrTx) {
  const ph = sql.placeholder;
  return {
    deliveryById: db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, ph("id")))
      .prepare(),
    webhookById: db
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.workspaceId, ph("workspaceId")), eq(webhooks.id, ph("id"))))
      .prepare(),
    insertAttempt: db
      .insert(webhookAttempts)
      .values({
        id: ph("id"),
        workspaceId: ph("workspaceId"),
        webhookId: ph("webhookId"),
        deliveryId: ph("deliveryId"),
        attempt: ph("attempt"),
        status: ph("status"),
        responseStatus: ph("responseStatus"),
        responseBody: ph("responseBody"),
        error: ph("error"),
        durationMs: ph("durationMs"),
        createdAt: ph("createdAt"),
      })
      .prepare(),
    /** Counts an attempt; moves the delivery to `status` only while it is still pending. */
    settleDelivery: db
      .update(webhookDeliveries)
      .set({
        attempts: sql`${webhookDeliveries.attempts} + 1`,
        lastResponseStatus: sql`${ph("responseStatus")}`,
        status: sql`case when ${webhookDeliveries.status} = 'pending' then ${ph("status")} else ${webhookDeliveries.status} end`,
        nextAttemptAt: sql`case when ${webhookDeliveries.status} = 'pending' then ${ph("nextAttemptAt")} else ${webhookDeliveries.nextAttemptAt} end`,
        updatedAt: sql`${ph("updatedAt")}`,
      })
      .where(eq(webhookDeliveries.id, ph("id")))
      .prepare(),
  };
}
const hotPath = preparedPerConnection(prepareHotPath);

// ── Attempts ────────────────────────────────────────────────────────────────────────────────────

/** Sends one attempt of a delivery to the subscription as it is now. */
function attemptDelivery(db: Db, webhook: WebhookRow, delivery: WebhookDeliveryRow, now: number) {
  const settings = settingsFor(db);
  const headers = webhookHeaders(
    signingSecrets(webhook, now),
    delivery.messageId,
    Math.floor(now / 1000),
    delivery.payload,
  );
  return postWebhook({
    url: webhook.url,
    headers,
    body: delivery.payload,
    timeoutMs: settings.timeoutMs,
    allowPrivate: settings.allowPrivate,
  });
}

/**
 * Writes an attempt, counts it on its delivery (moving a pending delivery to `settle.status`), and
 * updates the endpoint's health. Runs inside the caller's transaction.
 */
async function recordAttempt(
  tx: DbOrTx,
  webhook: WebhookRow,
  delivery: WebhookDeliveryRow,
  response: WebhookResponse,
  startedAt: number,
  finishedAt: number,
  settle: { status: string; nextAttemptAt: number | null } | null,
): Promise<WebhookAttemptRow> {
  const attempt: WebhookAttemptRow = {
    id: newId(),
    workspaceId: delivery.workspaceId,
    webhookId: delivery.webhookId,
    deliveryId: delivery.id,
    attempt: delivery.attempts + 1,
    status: response.ok ? "succeeded" : "failed",
    responseStatus: response.status,
    responseBody: response.body,
    error: response.error,
    durationMs: response.durationMs,
    createdAt: startedAt,
  };
  const statements = hotPath(tx);
  await statements.insertAttempt.run(attempt);
  await statements.settleDelivery.run({
    id: delivery.id,
    responseStatus: response.status,
    status: settle?.status ?? "pending",
    nextAttemptAt: settle ? settle.nextAttemptAt : delivery.nextAttemptAt,
    updatedAt: finishedAt,
  });
  if (response.ok) {
    if (webhook.failingSince !== null) {
      await tx.update(webhooks).set({ failingSince: null }).where(eq(webhooks.id, webhook.id)).run();
    }
  } else {
    await markEndpointFailure(tx, webhook, response, finishedAt);
  }
  return attempt;
}

/** 410 disables at once; otherwise five days of nothing but failures does. */
async function markEndpointFailure(tx: DbOrTx, webhook: WebhookRow, response: WebhookResponse, now: number) {
  const current = await tx
    .select({ enabled: webhooks.enabled, failingSince: webhooks.failingSince })
    .from(webhooks)
    .where(eq(webhooks.id, webhook.id))
    .get();
  if (!current) return;
  const failingSince = current.failingSince ?? now;
  let disabledReason: string | null = null;
  if (response.status === 410) disabledReason = "receiver answered 410 Gone";
  else if (now - failingSince >= DISABLE_AFTER_FAILING_MS) disabledReason = "every attempt failed for 5 days";
  if (disabledReason && current.enabled) {
    log.warn("webhook endpoint disabled", { webhook_id: webhook.id, reason: disabledReason });
    await tx
      .update(webhooks)
      .set({ enabled: false, disabledReason, failingSince, updatedAt: now })
      .where(eq(webhooks.id, webhook.id))
      .run();
    forgetSubscriptions();
  } else if (current.failingSince === null) {
    await tx.update(webhooks).set({ failingSince }).where(eq(webhooks.id, webhook.id)).run();
  }
}

/** The delay before retry `retry` (1-based), with ±20 % jitter, at least the receiver's Retry-After. */
export function retryDelayMs(retry: number, retryAfterMs: number | null, random = Math.random): number {
  const base = RETRY_SCHEDULE_MS[retry - 1];
  const jittered = Math.round(base * (0.8 + random() * 0.4));
  return Math.max(jittered, retryAfterMs ?? 0);
}

/**
 * The `webhook.deliver` job: one attempt of one delivery. The attempt's record, the delivery's new
 * state, the next retry's job and this job's completion commit together, so a crash repeats at
 * most the attempt in flight and never loses the schedule.
 */
export const deliverWebhookJob: JobHandler<JobPayloads["webhook.deliver"]> = async (payload, ctx) => {
  const { db, clock } = ctx;
  const statements = hotPath(db);
  const delivery = await statements.deliveryById.get({ id: payload.deliveryId });
  // Deleted with its endpoint, already delivered (a replay succeeded), or given up.
  if (delivery?.status !== "pending") return;
  const webhook = await statements.webhookById.get({
    workspaceId: delivery.workspaceId,
    id: delivery.webhookId,
  });
  if (!webhook?.enabled) {
    await ctx.completeWith(
      async (tx) =>
        await tx
          .update(webhookDeliveries)
          .set({ status: "failed", nextAttemptAt: null, updatedAt: clock.now() })
          .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.status, "pending")))
          .run(),
    );
    return;
  }
  // A lease running out (a node frozen past it) leaves the attempt to the job's next holder.
  if (!ctx.leaseHolds()) throw new RescheduleJob(clock.now());
  const startedAt = clock.now();
  const response = await attemptDelivery(db, webhook, delivery, startedAt);
  const finishedAt = clock.now();
  const nextRetry = payload.retry + 1;
  let settle: { status: string; nextAttemptAt: number | null };
  if (response.ok) settle = { status: "succeeded", nextAttemptAt: null };
  else if (response.status === 410 || nextRetry > RETRY_SCHEDULE_MS.length) {
    settle = { status: "failed", nextAttemptAt: null };
  } else {
    settle = {
      status: "pending",
      nextAttemptAt: finishedAt + retryDelayMs(nextRetry, response.retryAfterMs),
    };
  }
  await ctx.completeWith(async (tx) => {
    // A replay may have delivered it meanwhile: its 2xx stands, this attempt is still logged.
    await recordAttempt(tx, webhook, delivery, response, startedAt, finishedAt, settle);
    if (settle.status === "pending" && settle.nextAttemptAt !== null) {
      await enqueueJob(
        tx,
        "webhook.deliver",
        { deliveryId: delivery.id, retry: nextRetry },
        {
          workspaceId: delivery.workspaceId,
          runAt: settle.nextAttemptAt,
          now: finishedAt,
          dedupeKey: `webhook:${delivery.id}:${nextRetry}`,
        },
      );
    }
  });
};

// ── Test, log, replay ───────────────────────────────────────────────────────────────────────────

/** Delivers a signed `webhook.test` once, now, and answers the attempt. Not retried. */
export async function sendTestEvent(
  db: Db,
  workspaceId: string,
  id: string,
  clock: Clock,
): Promise<DeliveryJson> {
  const webhook = await findWebhook(db, workspaceId, id);
  const now = clock.now();
  const delivery: WebhookDeliveryRow = {
    id: newId(),
    workspaceId,
    webhookId: webhook.id,
    messageId: newId(),
    eventType: "webhook.test",
    payload: payloadOf("webhook.test", now, {
      webhook_id: webhook.id,
      message: "This is a test event from outreach.",
    }),
    status: "pending",
    attempts: 0,
    lastResponseStatus: null,
    nextAttemptAt: null,
    createdAt: now,
    updatedAt: now,
  };
  const response = await attemptDelivery(db, webhook, delivery, now);
  const finishedAt = clock.now();
  return await db.transaction(async (tx) => {
    // The endpoint may have been deleted while the request was in flight.
    await findWebhook(tx, workspaceId, id);
    await tx.insert(webhookDeliveries).values(delivery).run();
    const attempt = await recordAttempt(tx, webhook, delivery, response, now, finishedAt, {
      status: response.ok ? "succeeded" : "failed",
      nextAttemptAt: null,
    });
    return deliveryJson(attempt, delivery);
  });
}

function attemptLogJson(row: WebhookAttemptRow & { eventType: string; messageId: string }): DeliveryLogJson {
  return {
    ...deliveryJson(row, row),
    attempt_id: row.id,
    event_id: row.messageId,
    response_body: row.responseBody,
    error: row.error,
  };
}

/** Every attempt to one endpoint, newest first. */
export async function listDeliveryAttempts(
  db: Db,
  workspaceId: string,
  webhookId: string,
  page: { limit: number; offset: number },
) {
  await findWebhook(db, workspaceId, webhookId);
  const where = and(eq(webhookAttempts.workspaceId, workspaceId), eq(webhookAttempts.webhookId, webhookId));
  const rows = await db
    .select({
      attempt: webhookAttempts,
      eventType: webhookDeliveries.eventType,
      messageId: webhookDeliveries.messageId,
    })
    .from(webhookAttempts)
    .innerJoin(webhookDeliveries, eq(webhookDeliveries.id, webhookAttempts.deliveryId))
    .where(where)
    .orderBy(desc(webhookAttempts.createdAt), desc(webhookAttempts.id))
    .limit(page.limit)
    .offset(page.offset)
    .all();
  const total = (await db.select({ n: count() }).from(webhookAttempts).where(where).get())?.n ?? 0;
  return {
    deliveries: rows.map((row) =>
      attemptLogJson({ ...row.attempt, eventType: row.eventType, messageId: row.messageId }),
    ),
    total,
    ...page,
  };
}

/**
 * Replays one delivery now (by delivery id, or the id of one of its attempts), signed afresh, and
 * answers the new attempt. A 2xx marks the delivery succeeded and ends its retry schedule.
 */
export async function retryDelivery(
  db: Db,
  workspaceId: string,
  webhookId: string,
  deliveryId: string,
  clock: Clock,
): Promise<DeliveryJson> {
  const webhook = await findWebhook(db, workspaceId, webhookId);
  if (!isUuid(deliveryId)) throw notFound();
  const scope = and(
    eq(webhookDeliveries.workspaceId, workspaceId),
    eq(webhookDeliveries.webhookId, webhook.id),
  );
  let delivery = await db
    .select()
    .from(webhookDeliveries)
    .where(and(scope, eq(webhookDeliveries.id, deliveryId)))
    .get();
  if (!delivery) {
    const viaAttempt = await db
      .select({ deliveryId: webhookAttempts.deliveryId })
      .from(webhookAttempts)
      .where(and(eq(webhookAttempts.workspaceId, workspaceId), eq(webhookAttempts.id, deliveryId)))
      .get();
    if (viaAttempt) {
      delivery = await db
        .select()
        .from(webhookDeliveries)
        .where(and(scope, eq(webhookDeliveries.id, viaAttempt.deliveryId)))
        .get();
    }
  }
  if (!delivery) throw notFound();
  const found = delivery;
  const startedAt = clock.now();
  const response = await attemptDelivery(db, webhook, found, startedAt);
  const finishedAt = clock.now();
  return await db.transaction(async (tx) => {
    const current = await tx.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, found.id)).get();
    if (!current) throw notFound();
    // A 2xx settles the delivery whatever its state; a failure leaves it as it was.
    if (response.ok && current.status !== "pending") {
      await tx
        .update(webhookDeliveries)
        .set({ status: "pending" })
        .where(eq(webhookDeliveries.id, current.id))
        .run();
    }
    const attempt = await recordAttempt(
      tx,
      webhook,
      current,
      response,
      startedAt,
      finishedAt,
      response.ok ? { status: "succeeded", nextAttemptAt: null } : null,
    );
    return deliveryJson(attempt, current);
  });
}

/** How long the delivery log is kept. */
export const WEBHOOK_LOG_RETENTION_MS = 30 * DAY_MS;

/** Deletes attempts and settled deliveries older than the retention (maintenance). */
export async function pruneWebhookLog(tx: DbOrTx, now: number) {
  const before = now - WEBHOOK_LOG_RETENTION_MS;
  await tx.delete(webhookAttempts).where(lt(webhookAttempts.createdAt, before)).run();
  await tx
    .delete(webhookDeliveries)
    .where(and(lt(webhookDeliveries.createdAt, before), ne(webhookDeliveries.status, "pending")))
    .run();
}
