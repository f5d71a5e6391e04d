import type { StatusUpdate } from "../../carriers/carrier";
import type { Db, DbOrTx } from "../../db/client";
import { jsonList } from "../../db/dialect";
import { messageStatements, recordStatuses } from "../../db/message-statements";
import { forEachRowApart } from "../../db/prepared";
import type { MessageRow } from "../../db/schema";
import type { EventType } from "../../webhooks/events";
import { emitEvent, emitEvents } from "../events";
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

/** The change `update` makes to `current` (pure): applyStatus writes it, applyStatusUpdates many at once. */
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
  const change = statusChange(current, update, now);
  if (change.kind === "none") return;
  const statements = messageStatements(tx);
  if (change.kind === "learnt") {
    const recorded = await statements.recordStatus.all(
      statusParams({ ...current, carrierMessageId: change.learntId }, current.status, now),
    );
    if (recorded.length === 0) await applyToLatest(tx, current, update, now);
    return;
  }
  const moved = await (change.learntId ? statements.recordStatus : statements.recordStatusOnly).all(
    statusParams(change.next, current.status, now),
  );
  // Another writer moved it first: its events are its own; this report is decided again from
  // where that one left the message (a DELIVERED report that raced the hand-off's SENT still
  // moves it on, and a copy of the same report changes nothing).
  if (moved.length === 0) return await applyToLatest(tx, current, update, now);
  await emitStatusEvents(tx, current, change, now);
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

async function emitStatusEvents(
  tx: DbOrTx,
  current: MessageRow,
  change: Extract<StatusChange, { kind: "move" }>,
  now: number,
) {
  for (const { type, data } of statusEvents(change))
    await emitEvent(tx, current.workspaceId, type, data, now);
}

/**
 * The events of many written changes, emitted a type and workspace at a time (emitEvents: the
 * listeners see the batch, so the campaign recipients follow in one statement): each message's
 * `message.sent` still comes before its `message.delivered` or `message.failed`.
 */
async function emitStatusEventsOf(
  tx: DbOrTx,
  changes: { current: MessageRow; change: Extract<StatusChange, { kind: "move" }> }[],
  now: number,
) {
  const byTypeAndWorkspace = new Map<string, { workspaceId: string; type: EventType; items: unknown[] }>();
  for (const type of ["message.sent", "message.delivered", "message.failed"] as const)
    for (const { current, change } of changes)
      for (const event of statusEvents(change)) {
        if (event.type !== type) continue;
        const key = `${type}\u0000${current.workspaceId}`;
        let group = byTypeAndWorkspace.get(key);
        if (!group) {
          group = { workspaceId: current.workspaceId, type, items: [] };
          byTypeAndWorkspace.set(key, group);
        }
        group.items.push(event.data);
      }
  for (const { workspaceId, type, items } of byTypeAndWorkspace.values())
    await emitEvents(tx, workspaceId, type, items, now);
}

/** Applies `update` to the message as it is now, after a compare-and-set found it changed. */
async function applyToLatest(tx: DbOrTx, stale: MessageRow, update: StatusUpdate, now: number) {
  const latest = await messageStatements(tx).loadMessage.get({ id: stale.id });
  // Unchanged means the row is gone or this was the writer; nothing to decide again.
  if (latest && latest.status !== stale.status) await applyStatus(tx, latest, update, now);
}

function statusParams(row: MessageRow, fromStatus: string, now: number) {
  return {
    id: row.id,
    fromStatus,
    status: row.status,
    carrierMessageId: row.carrierMessageId,
    sentAt: row.sentAt,
    deliveredAt: row.deliveredAt,
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
    now,
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
      const current = ofMessage[0].messageId ? loaded.get(ofMessage[0].messageId) : undefined;
      if (current) {
        first.push({ current, update: ofMessage[0], at: now });
        if (ofMessage.length > 1) rest.push(ofMessage.slice(1));
      } else if (!ofMessage[0].messageId) rest.push(ofMessage);
      else if (ofMessage.length > 1) rest.push(ofMessage.slice(1));
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
  if (items.length === 0) return;
  const moves: {
    current: MessageRow;
    update: StatusUpdate;
    at: number;
    change: Extract<StatusChange, { kind: "move" }>;
  }[] = [];
  const alone: { current: MessageRow; update: StatusUpdate; at: number }[] = [];
  for (const item of items) {
    const change = statusChange(item.current, item.update, item.at);
    if (change.kind === "move") moves.push({ ...item, change });
    else if (change.kind === "learnt") alone.push(item);
  }
  const moved = await recordStatuses(
    tx,
    moves.map(({ current, change, at }) => ({
      ...statusParams(change.next, current.status, at),
      learnt: change.learntId !== null,
    })),
  );
  await emitStatusEventsOf(
    tx,
    moves.filter(({ current }) => moved.has(current.id)),
    Math.max(...items.map((item) => item.at)),
  );
  const missed = moves.filter(({ current }) => !moved.has(current.id));
  await forEachRowApart(tx, [...missed.map((item) => ({ ...item, missed: true })), ...alone], async (item) =>
    "missed" in item
      ? await applyToLatest(tx, item.current, item.update, item.at)
      : await applyStatus(tx, item.current, item.update, item.at),
  );
}
