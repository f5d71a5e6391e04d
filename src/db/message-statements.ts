import { and, eq, inArray, sql } from "drizzle-orm";
import type { DbOrTx } from "./client";
import { preparedPerConnection } from "./prepared";
import { messages } from "./schema";

/**
 * Prepared statements for the per-message hot path (send job, carrier status reports), built once
 * per database. On SQLite a transaction runs on the database's one connection, so these statements
 * take part in whatever transaction is open when they run; a dialect with a connection pool swaps
 * this module for transaction-bound queries. Inside a transaction, callers ask with the transaction
 * (`messageStatements(tx)`: the same statements here), so every statement of it names its handle.
 */
function prepare(db: DbOrTx) {
  const id = sql.placeholder("id");
  // The hand-off's own writes apply only to a message not handed off yet.
  const notYetSent = and(eq(messages.id, id), inArray(messages.status, ["PENDING", "QUEUED"]));
  // A status change applies only to the status it was decided from (compare-and-set): of two
  // reports applied at once (two processes, a carrier retrying a callback), one changes the row
  // and the other finds nothing to change, so only one emits the event.
  const fromStatus = and(eq(messages.id, id), eq(messages.status, sql.placeholder("fromStatus")));
  const changed = { id: messages.id };
  // The columns every status change writes (recordStatus adds the carrier's id).
  const statusChange = {
    status: sql`${sql.placeholder("status")}`,
    sentAt: sql`${sql.placeholder("sentAt")}`,
    deliveredAt: sql`${sql.placeholder("deliveredAt")}`,
    errorCode: sql`${sql.placeholder("errorCode")}`,
    errorMessage: sql`${sql.placeholder("errorMessage")}`,
    updatedAt: sql`${sql.placeholder("now")}`,
  };
  return {
    loadMessage: db.select().from(messages).where(eq(messages.id, id)).prepare(),
    loadMessageByCarrierId: db
      .select()
      .from(messages)
      .where(eq(messages.carrierMessageId, sql.placeholder("carrierMessageId")))
      .limit(1)
      .prepare(),
    /** The hand-off marker: committed before the carrier is called. */
    markHandoffStarted: db
      .update(messages)
      .set({
        status: "QUEUED",
        handoffStartedAt: sql`${sql.placeholder("now")}`,
        updatedAt: sql`${sql.placeholder("now")}`,
      })
      .where(notYetSent)
      .prepare(),
    /** A marketing message whose send-time window closed before its hand-off: QUEUED until `sendAt`. */
    holdUntil: db
      .update(messages)
      .set({
        status: "QUEUED",
        sendAt: sql`${sql.placeholder("sendAt")}`,
        updatedAt: sql`${sql.placeholder("now")}`,
      })
      .where(notYetSent)
      .prepare(),
    /** A status change that also records the carrier's id for the message (first learnt). */
    recordStatus: db
      .update(messages)
      .set({
        ...statusChange,
        carrierMessageId: sql`coalesce(${sql.placeholder("carrierMessageId")}, ${messages.carrierMessageId})`,
      })
      .where(fromStatus)
      .returning(changed)
      .prepare(),
    /**
     * A status change alone (the carrier's id already known): without the id in its SET, SQLite
     * leaves messages_carrier_id_idx alone instead of rewriting the same entry.
     */
    recordStatusOnly: db.update(messages).set(statusChange).where(fromStatus).returning(changed).prepare(),
  };
}

export type MessageStatements = ReturnType<typeof prepare>;
export const messageStatements: (db: DbOrTx) => MessageStatements = preparedPerConnection(prepare);
