import { sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client";
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

type EventListener = (tx: DbOrTx, event: EmittedEvent) => void;
const listeners: EventListener[] = [];

/**
 * Registers a listener that runs inside the emitting transaction (webhook fan-out enqueues its
 * delivery jobs this way, so an event and its deliveries commit or roll back together).
 */
export function onEventEmitted(listener: EventListener) {
  listeners.push(listener);
}

type BatchListener = (tx: DbOrTx, events: EmittedEvent[]) => void;
const batchListeners: BatchListener[] = [];
/** Whether a listener fans events out as they are emitted: then they are written dispatched. */
let dispatchedOnEmit = false;

/**
 * Like `onEventEmitted`, but called once per batch: `emitEvent` passes one event, `emitEvents` the
 * whole batch (a bulk import's contact.created events), so a listener can do its per-batch work
 * (e.g. look up subscriptions) once instead of once per event. `dispatches: true` is the webhook
 * fan-out: events are then written with `dispatched_at` set, in the transaction that fans them out,
 * instead of written and then marked (the boot sweep only finds events written without it).
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
 * Writes an event to the outbox. Call it with the transaction that makes the change the event
 * describes: the event exists exactly when the change does.
 */
export function emitEvent(tx: DbOrTx, workspaceId: string, type: EventType, data: unknown, now = Date.now()) {
  const event: EmittedEvent = { id: newId(), workspaceId, type, data, createdAt: now };
  insertEvent(tx).run({
    id: event.id,
    workspaceId,
    type,
    data,
    createdAt: now,
    dispatchedAt: dispatchedOnEmit ? now : null,
  });
  for (const listener of listeners) listener(tx, event);
  for (const listener of batchListeners) listener(tx, [event]);
  return event;
}

/**
 * Many events of one type at once (bulk imports): the same outbox rows and listeners as
 * `emitEvent`, through one prepared insert for the whole batch.
 */
export function emitEvents(
  tx: DbOrTx,
  workspaceId: string,
  type: EventType,
  items: unknown[],
  now = Date.now(),
) {
  if (items.length === 0) return;
  const insert = insertEvent(tx);
  const emitted: EmittedEvent[] = [];
  for (const data of items) {
    const event: EmittedEvent = { id: newId(), workspaceId, type, data, createdAt: now };
    insert.run({
      id: event.id,
      workspaceId,
      type,
      data,
      createdAt: now,
      dispatchedAt: dispatchedOnEmit ? now : null,
    });
    for (const listener of listeners) listener(tx, event);
    emitted.push(event);
  }
  for (const listener of batchListeners) listener(tx, emitted);
}
