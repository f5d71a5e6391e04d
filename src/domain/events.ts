import { and, isNotNull, lt, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../db/client";
import { preparedPerConnection } from "../db/prepared";
import { events } from "../db/schema";
import { newId } from "../lib/ids";
import type { EventType } from "../webhooks/events";

export interface EmittedEvent {
  id: string;
  workspaceId: string;
  type: EventType;
  data: unknown;
  createdAt: number;
}

type EventListener = (tx: DbOrTx, event: EmittedEvent) => Promise<void> | void;
const listeners: EventListener[] = [];

/**
 * Registers a listener that runs inside the emitting transaction (webhook fan-out enqueues its
 * delivery jobs this way, so an event and its deliveries commit or roll back together).
 */
export function onEventEmitted(listener: EventListener) {
  listeners.push(listener);
}

type BatchListener = (tx: DbOrTx, events: EmittedEvent[]) => Promise<void> | void;
const batchListeners: BatchListener[] = [];
/** Whether a listener fans events out as they are emitted: then they are written dispatched. */
let dispatchedOnEmit = false;

/**
 * Like `onEventEmitted`, but called once per batch: `emitEvent` passes one event, `emitEvents` the
 * whole batch (a bulk import's contact.created events), so a listener can do its per-batch work
 * (e.g. look up subscriptions) once instead of once per event. `dispatches: true` is the webhook
 * fan-out: once it is registered, events are fanned out in the transaction that emits them and no
 * outbox row is written for them (each delivery keeps its own payload, and nothing else reads the
 * outbox). Without it (a process that did not load the fan-out), events are written undispatched
 * for the boot sweep.
 */
export function onEventsEmitted(listener: BatchListener, options: { dispatches?: boolean } = {}) {
  batchListeners.push(listener);
  if (options.dispatches) dispatchedOnEmit = true;
}

const insertEvent = preparedPerConnection((db) =>
  db
    .insert(events)
    .values({
      id: sql.placeholder("id"),
      workspaceId: sql.placeholder("workspaceId"),
      type: sql.placeholder("type"),
      data: sql.placeholder("data"),
      createdAt: sql.placeholder("createdAt"),
      dispatchedAt: sql.placeholder("dispatchedAt"),
    })
    .prepare(),
);

/**
 * Emits an event. Call it with the transaction that makes the change the event describes: its
 * webhook deliveries (or, in a process without the fan-out, its outbox row) commit exactly when
 * the change does.
 */
export async function emitEvent(
  tx: DbOrTx,
  workspaceId: string,
  type: EventType,
  data: unknown,
  now = Date.now(),
) {
  const event: EmittedEvent = { id: newId(), workspaceId, type, data, createdAt: now };
  if (!dispatchedOnEmit) await insertEvent(tx).run(outboxRow(event));
  for (const listener of listeners) await listener(tx, event);
  for (const listener of batchListeners) await listener(tx, [event]);
  return event;
}

/** An event's outbox row, for the boot sweep to fan out (`dispatchPendingEvents`). */
function outboxRow(event: EmittedEvent) {
  return { ...event, dispatchedAt: null };
}

/**
 * Many events of one type at once (bulk imports): the same outbox rows and listeners as
 * `emitEvent`, through one prepared insert for the whole batch.
 */
export async function emitEvents(
  tx: DbOrTx,
  workspaceId: string,
  type: EventType,
  items: unknown[],
  now = Date.now(),
) {
  if (items.length === 0) return;
  const insert = dispatchedOnEmit ? null : insertEvent(tx);
  const emitted: EmittedEvent[] = [];
  for (const data of items) {
    const event: EmittedEvent = { id: newId(), workspaceId, type, data, createdAt: now };
    await insert?.run(outboxRow(event));
    for (const listener of listeners) await listener(tx, event);
    emitted.push(event);
  }
  for (const listener of batchListeners) await listener(tx, emitted);
}

/**
 * How long dispatched outbox rows (those the boot sweep fanned out) are kept; webhook deliveries
 * keep their own copy of the payload.
 */
export const EVENT_RETENTION_MS = 7 * 86_400_000;
/** Outbox rows deleted per transaction, so a first prune of a large outbox does not hold the server. */
const PRUNE_BATCH = 5000;

/**
 * Deletes outbox rows that were dispatched and are older than EVENT_RETENTION_MS, PRUNE_BATCH at a
 * time (the ids are UUID v7, so the oldest are a range of the primary key), yielding to the event
 * loop between batches. Rows never dispatched are kept for the boot sweep. Returns how many went.
 */
export async function pruneEvents(db: Db, now: number): Promise<number> {
  const cutoff = now - EVENT_RETENTION_MS;
  const before = uuidV7Floor(cutoff);
  let deleted = 0;
  for (;;) {
    const batch = await db.transaction(async (tx) => {
      const old = tx
        .select({ id: events.id })
        .from(events)
        .where(and(lt(events.id, before), lt(events.createdAt, cutoff), isNotNull(events.dispatchedAt)))
        .limit(PRUNE_BATCH);
      return (await tx.delete(events).where(sql`${events.id} IN (${old})`).returning({ id: events.id }).all())
        .length;
    });
    deleted += batch;
    if (batch < PRUNE_BATCH) return deleted;
    await Bun.sleep(0);
  }
}

/** The smallest UUID v7 of millisecond `ms`: every id made before it sorts lower. */
function uuidV7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}
