import type { StatusUpdate } from "../../carriers/carrier";
import type { Db, DbOrTx } from "../../db/client";
import { jsonList } from "../../db/dialect";
import { messageStatements, recordStatuses, type StatusWrite } from "../../db/message-statements";
import { forEachRowApart } from "../../db/prepared";
import type { MessageRow } from "../../db/schema";
import type { EventType } from "../../webhooks/events";
import { emitEvents } from "../events";
import { messageJson } from "./message-json";

/** How far along a message is; a status update never moves a message to a lower rank. */
export const STATUS_RANK: Record<string, number> = {
  PENDING: 0,
  QUEUED: 1,
  SENT: 2,
  DELIVERED: 3,
  UNDELIVERED: 3,
  FAILED: 3,
  RECEIVED: 3,
};

/** What a status report does to a message: nothing, record the carrier's id only, or move it on. */
type StatusChange =
  | { kind: "none" }
  | { kind: "learnt"; learntId: string }
  | {
      kind: "move";
      next: MessageRow;
      learntId: string | null;
      firstSent: boolean;
      isFailure: boolean;
    };

/** The change `update` makes to `current` (pure); applyStatusesTo writes it. */
function statusChange(current: MessageRow, update: StatusUpdate, now: number): StatusChange {
  if (current.direction !== "outbound") return { kind: "none" };
  const learntId =
    current.carrierMessageId === null && update.carrierMessageId ? update.carrierMessageId : null;
  const from = STATUS_RANK[current.status] ?? 0;
  const to = STATUS_RANK[update.status] ?? 0;
  if (to <= from) return learntId ? { kind: "learnt", learntId } : { kind: "none" };
  const next: MessageRow = { ...current, status: update.status, updatedAt: now };
  if (learntId) next.carrierMessageId = learntId;
  const isFailure = update.status === "FAILED" || update.status === "UNDELIVERED";
  const reachedCarrier =
    update.status === "SENT" || update.status === "DELIVERED" || update.status === "UNDELIVERED";
  const firstSent = reachedCarrier && current.sentAt === null;
  if (firstSent) next.sentAt = now;
  if (update.status === "DELIVERED") next.deliveredAt = now;
  if (isFailure) {
    next.errorCode = update.errorCode ?? (update.status === "UNDELIVERED" ? "undelivered" : "failed");
    next.errorMessage = update.errorMessage ?? null;
  }
  return { kind: "move", next, learntId, firstSent, isFailure };
}

/**
 * Moves one message forward to the reported status (never back), stamping sent_at/delivered_at
 * and emitting `message.sent` (when sent_at is first set), `message.delivered` or `message.failed`.
 * Also records the carrier's id for the message when it is first learnt.
 */
export async function applyStatus(tx: DbOrTx, current: MessageRow, update: StatusUpdate, now: number) {
  await applyStatusesTo(tx, [{ current, update, at: now }]);
}

/** The events of a status change that was written, in the order they happen. */
function statusEvents(
  change: Extract<StatusChange, { kind: "move" }>,
): { type: "message.sent" | "message.delivered" | "message.failed"; data: unknown }[] {
  const { next } = change;
  const out: ReturnType<typeof statusEvents> = [];
  if (change.firstSent)
    out.push({ type: "message.sent", data: messageJson({ ...next, status: "SENT", deliveredAt: null }) });
  if (next.status === "DELIVERED") out.push({ type: "message.delivered", data: messageJson(next) });
  if (change.isFailure) out.push({ type: "message.failed", data: messageJson(next) });
  return out;
}

/** The order of a message's status events: its `message.sent` comes before the others. */
const EVENT_ORDER: readonly EventType[] = ["message.sent", "message.delivered", "message.failed"];

/**
 * The events of written changes, emitted a type and workspace at a time (emitEvents: the listeners
 * see the batch, so the campaign recipients follow in one statement), every `message.sent` first:
 * each message's still comes before its `message.delivered` or `message.failed`.
 */
async function emitStatusEvents(
  tx: DbOrTx,
  changes: { current: MessageRow; change: Extract<StatusChange, { kind: "move" }> }[],
  now: number,
) {
  const groups = new Map<string, { workspaceId: string; type: EventType; items: unknown[] }>();
  for (const { current, change } of changes)
    for (const { type, data } of statusEvents(change)) {
      const key = `${type}\u0000${current.workspaceId}`;
      let group = groups.get(key);
      if (!group) {
        group = { workspaceId: current.workspaceId, type, items: [] };
        groups.set(key, group);
      }
      group.items.push(data);
    }
  const ordered = [...groups.values()].sort(
    (a, b) => EVENT_ORDER.indexOf(a.type) - EVENT_ORDER.indexOf(b.type),
  );
  for (const { workspaceId, type, items } of ordered) await emitEvents(tx, workspaceId, type, items, now);
}

/** Applies `update` to the message as it is now, after a compare-and-set found it changed. */
async function applyToLatest(tx: DbOrTx, stale: MessageRow, update: StatusUpdate, now: number) {
  const latest = await messageStatements(tx).loadMessage.get({ id: stale.id });
  // Unchanged means the row is gone or this was the writer; nothing to decide again.
  if (latest && latest.status !== stale.status) await applyStatus(tx, latest, update, now);
}

/**
 * What a change writes: a compare-and-set from the status it was decided from, with the carrier's
 * id when it is learnt (alone, for a report that moves nothing else).
 */
function statusWrite(
  current: MessageRow,
  change: Exclude<StatusChange, { kind: "none" }>,
  now: number,
): StatusWrite {
  const row = change.kind === "learnt" ? { ...current, carrierMessageId: change.learntId } : change.next;
  return {
    id: row.id,
    fromStatus: current.status,
    status: row.status,
    carrierMessageId: row.carrierMessageId,
    sentAt: row.sentAt,
    deliveredAt: row.deliveredAt,
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
    now,
    learnt: change.learntId !== null,
  };
}

/**
 * Applies carrier status reports in one transaction. Idempotent: a repeated or late report
 * changes nothing (DELIVERED stays DELIVERED). Reports for unknown messages are ignored.
 */
export async function applyStatusUpdates(db: Db, updates: StatusUpdate[], now = Date.now()) {
  if (!updates.length) return;
  // A message's updates stay in their order; different messages' need none between them.
  const byMessage = new Map<string, StatusUpdate[]>();
  for (const update of updates) {
    const key = update.messageId ? `id:${update.messageId}` : `carrier:${update.carrierMessageId}`;
    const ofMessage = byMessage.get(key);
    if (ofMessage) ofMessage.push(update);
    else byMessage.set(key, [update]);
  }
  await db.transaction(async (tx) => {
    const statements = messageStatements(tx);
    // The messages reported by our id, read together, and their first reports' moves written
    // together (recordStatuses: one statement on PostgreSQL); the rest one by one, in order.
    const ids = [...new Set(updates.flatMap((update) => (update.messageId ? [update.messageId] : [])))];
    const loaded = new Map(
      (ids.length > 0 ? await statements.loadMessages.all({ ids: jsonList(ids) }) : []).map((row) => [
        row.id,
        row,
      ]),
    );
    const first: { current: MessageRow; update: StatusUpdate; at: number }[] = [];
    const rest: StatusUpdate[][] = [];
    for (const ofMessage of byMessage.values()) {
      const [head, ...later] = ofMessage;
      const current = head.messageId ? loaded.get(head.messageId) : undefined;
      if (current) {
        first.push({ current, update: head, at: now });
        if (later.length > 0) rest.push(later);
      } else if (!head.messageId) rest.push(ofMessage);
      // Else no message has that id: none of its reports applies.
    }
    await applyStatusesTo(tx, first);
    await forEachRowApart(tx, rest, async (ofMessage) => {
      for (const update of ofMessage) {
        const current = update.messageId
          ? await statements.loadMessage.get({ id: update.messageId })
          : await statements.loadMessageByCarrierId.get({ carrierMessageId: update.carrierMessageId });
        if (current) await applyStatus(tx, current, update, now);
      }
    });
  });
}

/**
 * Applies each update to its message as the caller read it (in this transaction, or a row it
 * knows is current but for the status), many at once: the moves decided in JavaScript and written
 * together (recordStatuses: one compare-and-set statement on PostgreSQL), their events emitted a
 * type and workspace at a time; a message another writer moved first is decided again from a
 * fresh read, as applyStatus does. Each update counts at its own `at`.
 */
export async function applyStatusesTo(
  tx: DbOrTx,
  items: readonly { current: MessageRow; update: StatusUpdate; at: number }[],
): Promise<void> {
  const changes = items.flatMap((item) => {
    const change = statusChange(item.current, item.update, item.at);
    return change.kind === "none" ? [] : [{ ...item, change }];
  });
  if (changes.length === 0) return;
  const written = await recordStatuses(
    tx,
    changes.map(({ current, change, at }) => statusWrite(current, change, at)),
  );
  await emitStatusEvents(
    tx,
    changes.flatMap(({ current, change }) =>
      written.has(current.id) && change.kind === "move" ? [{ current, change }] : [],
    ),
    Math.max(...changes.map((item) => item.at)),
  );
  // Another writer moved it first: its events are its own; this report is decided again from
  // where that one left the message (a DELIVERED report that raced the hand-off's SENT still
  // moves it on, and a copy of the same report changes nothing).
  await forEachRowApart(
    tx,
    changes.filter(({ current }) => !written.has(current.id)),
    async ({ current, update, at }) => await applyToLatest(tx, current, update, at),
  );
}
