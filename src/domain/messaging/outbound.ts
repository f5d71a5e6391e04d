import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { preparedPerConnection, rowPlaceholders } from "../../db/prepared";
import { type ContactRow, type ConversationRow, type MessageRow, messages } from "../../db/schema";
import type { JobPayloads } from "../../jobs/catalog";
import { enqueueJob } from "../../jobs/queue";
import { newId } from "../../lib/ids";
import { smsShape } from "../../lib/sms-encoding";
import { emitEvent } from "../events";
import { type MessageSender, touchConversation } from "./conversations";
import { messageJson } from "./message-json";

export interface OutboundInput {
  workspaceId: string;
  contact: ContactRow;
  conversationId: string | null;
  /**
   * The thread as the caller holds it (from threadForContact or threadFrom): a thread already
   * stamped with `now` — made by this write — is not written again to move its last message time.
   */
  thread?: Pick<ConversationRow, "lastMessageAt" | "updatedAt">;
  /** The sending number (row id and E.164). */
  numberId: string | null;
  from: string;
  body: string;
  sender: MessageSender;
  campaignId?: string | null;
  /** An agent's follow-up: counted by the frequency cap as a marketing send. */
  followup?: boolean;
  /** Only the STOP confirmation: the one message allowed to an opted-out number. */
  optOutConfirmation?: boolean;
  runAt?: number;
  /**
   * A bulk sender's batch: the message's id joins it instead of getting a send job of its own;
   * the caller enqueues the batch's one job (enqueueSendBatch) in the same transaction.
   */
  batch?: string[];
  /**
   * A group's message rows (with `batch`): the row joins them instead of being inserted now, as
   * the write's last step (nothing after it can roll the write back), and the caller inserts them
   * all (insertRows) in the same transaction before anything reads them: one statement for a
   * group's messages on PostgreSQL.
   */
  rows?: MessageRow[];
  /**
   * Deferred by the send-time rules until this instant (API.md §6.1): the message is recorded
   * QUEUED with `send_at` and no send job; its bulk path asks the rules again when it comes due and
   * then releases it (releaseDeferredMessage) or drops it (dropDeferredMessage).
   */
  deferredUntil?: number;
  now: number;
}

const insertMessage = preparedPerConnection((db) =>
  db.insert(messages).values(rowPlaceholders(messages)).prepare(),
);

/**
 * Records an outbound message (PENDING) and enqueues its durable send job in the caller's
 * transaction. Every outbound path (one-off, reply, keyword replies, campaigns, flows, agents)
 * comes through here, so the send-time checks and crash safety are the same for all.
 */
export async function queueOutboundMessage(tx: DbOrTx, input: OutboundInput): Promise<MessageRow> {
  const shape = smsShape(input.body);
  const row: MessageRow = {
    id: newId(),
    workspaceId: input.workspaceId,
    direction: "outbound",
    sender: input.sender,
    fromNumber: input.from,
    toNumber: input.contact.phoneNumber,
    body: input.body,
    status: input.deferredUntil !== undefined ? "QUEUED" : "PENDING",
    segments: shape.segments,
    encoding: shape.encoding,
    contactId: input.contact.id,
    conversationId: input.conversationId,
    campaignId: input.campaignId ?? null,
    callId: null,
    followup: input.followup ?? false,
    numberId: input.numberId,
    carrierMessageId: null,
    errorCode: null,
    errorMessage: null,
    handoffStartedAt: null,
    sendAt: input.deferredUntil ?? null,
    createdAt: input.now,
    sentAt: null,
    deliveredAt: null,
    updatedAt: input.now,
  };
  if (!input.rows) await insertMessage(tx).run(row);
  const stamped =
    input.thread !== undefined &&
    (input.thread.lastMessageAt ?? 0) >= input.now &&
    input.thread.updatedAt === input.now;
  if (input.conversationId && !stamped) await touchConversation(tx, input.conversationId, input.now);
  if (input.deferredUntil !== undefined) return row;
  if (input.batch) {
    input.rows?.push(row);
    input.batch.push(row.id);
    return row;
  }
  const payload: JobPayloads["messages.send"] = { message_id: row.id };
  if (input.optOutConfirmation) payload.opt_out_confirmation = true;
  await enqueueJob(tx, "messages.send", payload, {
    workspaceId: input.workspaceId,
    runAt: input.runAt,
    now: input.now,
  });
  return row;
}

/**
 * A deferred message (QUEUED, `send_at` set, no job) comes due and may go: it takes its sender
 * (picked now, with its daily send reserved by the caller) and today's merge of the body, keeps
 * `send_at` (when it was allowed to go) and gets its send job, all in the caller's transaction.
 */
export async function releaseDeferredMessage(
  tx: DbOrTx,
  input: {
    messageId: string;
    workspaceId: string;
    numberId: string;
    from: string;
    /** The body merged again at release; absent keeps the one written at deferral (a tracked link). */
    body?: string;
    /** The batch it joins (see OutboundInput.batch); else it gets a send job of its own. */
    batch?: string[];
    now: number;
  },
) {
  const shape = input.body === undefined ? null : smsShape(input.body);
  await tx
    .update(messages)
    .set({
      numberId: input.numberId,
      fromNumber: input.from,
      ...(input.body !== undefined && shape
        ? { body: input.body, segments: shape.segments, encoding: shape.encoding }
        : {}),
      updatedAt: input.now,
    })
    .where(and(eq(messages.id, input.messageId), eq(messages.status, "QUEUED")))
    .run();
  if (input.batch) input.batch.push(input.messageId);
  else
    await enqueueJob(
      tx,
      "messages.send",
      { message_id: input.messageId },
      { workspaceId: input.workspaceId, now: input.now },
    );
}

/** Enqueues the one send job of a bulk sender's batch (nothing for an empty batch). */
export async function enqueueSendBatch(tx: DbOrTx, workspaceId: string, batch: string[], now: number) {
  if (batch.length === 0) return;
  await enqueueJob(tx, "messages.send_batch", { message_ids: batch }, { workspaceId, now });
}

/** A deferred message waits longer: new `send_at` (and the sender it would use now). */
export async function redeferMessage(
  tx: DbOrTx,
  messageId: string,
  sendAt: number,
  from: string,
  now: number,
) {
  await tx
    .update(messages)
    .set({ sendAt, fromNumber: from, updatedAt: now })
    .where(and(eq(messages.id, messageId), eq(messages.status, "QUEUED")))
    .run();
}

/**
 * A deferred message that will never go (the contact opted out, a cap or a paused state when it
 * came due, or its campaign was canceled): FAILED with the reason as `error_code`, and
 * `message.failed`. Nothing reached the carrier.
 */
export async function dropDeferredMessage(
  tx: DbOrTx,
  messageId: string,
  errorCode: string,
  errorMessage: string,
  now: number,
) {
  const current = await tx.select().from(messages).where(eq(messages.id, messageId)).get();
  if (current?.status !== "QUEUED" || current.handoffStartedAt !== null) return;
  const next: MessageRow = { ...current, status: "FAILED", errorCode, errorMessage, updatedAt: now };
  await tx
    .update(messages)
    .set({ status: "FAILED", errorCode, errorMessage, updatedAt: now })
    .where(eq(messages.id, messageId))
    .run();
  await emitEvent(tx, current.workspaceId, "message.failed", messageJson(next), now);
}
