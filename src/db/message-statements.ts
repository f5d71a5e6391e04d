import { and, eq, inArray, sql } from "drizzle-orm";
import { type DbOrTx, dialectOf } from "./client";
import { inJsonListParam } from "./dialect";
import { preparedPerConnection, withJsonRows } from "./prepared";
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
  const unsent = inArray(messages.status, ["PENDING", "QUEUED"]);
  const notYetSent = and(eq(messages.id, id), unsent);
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
    /** Many messages by id (a send batch's, a carrier's batch of reports). */
    loadMessages: db.select().from(messages).where(inJsonListParam(messages.id, "ids")).prepare(),
    loadMessageByCarrierId: db
      .select()
      .from(messages)
      .where(eq(messages.carrierMessageId, sql.placeholder("carrierMessageId")))
      .limit(1)
      .prepare(),
    /** The hand-off markers (committed before the carrier is called) of a turn's hand-offs, at one time. */
    markHandoffsStarted: db
      .update(messages)
      .set({
        status: "QUEUED",
        handoffStartedAt: sql`${sql.placeholder("now")}`,
        updatedAt: sql`${sql.placeholder("now")}`,
      })
      .where(and(inJsonListParam(messages.id, "ids"), unsent))
      .prepare(),
    /**
     * The hand-off markers of a send batch's messages that leave it for jobs of their own, at the
     * batch's marker: an earlier marker of a message is kept.
     */
    keepHandoffsStarted: db
      .update(messages)
      .set({
        status: "QUEUED",
        handoffStartedAt: sql`coalesce(${messages.handoffStartedAt}, ${sql.placeholder("now")})`,
        updatedAt: sql`${sql.placeholder("now")}`,
      })
      .where(and(inJsonListParam(messages.id, "ids"), unsent))
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

/** One message's compare-and-set status change, as `recordStatus`/`recordStatusOnly` bind it. */
export interface StatusWrite {
  id: string;
  fromStatus: string;
  status: string;
  carrierMessageId: string | null;
  sentAt: number | null;
  deliveredAt: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  now: number;
  /** The carrier's id is learnt with this change (recordStatus); else the id is left as it is. */
  learnt: boolean;
}

/**
 * Many messages' status changes, each applied only from its own `fromStatus` (the compare-and-set
 * of `recordStatus`), answering the ids changed: on SQLite (or for one change) the prepared row
 * statements one by one (cheapest there); on PostgreSQL one `UPDATE … FROM json_to_recordset(…)`
 * instead of a round trip each (a carrier's batch of delivery reports).
 */
export async function recordStatuses(tx: DbOrTx, writes: readonly StatusWrite[]): Promise<Set<string>> {
  const changed = new Set<string>();
  if (writes.length === 0) return changed;
  if (dialectOf(tx) === "sqlite" || writes.length === 1) {
    const statements = messageStatements(tx);
    for (const { learnt, ...params } of writes) {
      const rows = await (learnt ? statements.recordStatus : statements.recordStatusOnly).all(params);
      for (const row of rows) changed.add(row.id);
    }
    return changed;
  }
  await withJsonRows(
    writes,
    [
      ["id", "text"],
      ["from_status", "text"],
      ["status", "text"],
      ["carrier_message_id", "text"],
      ["learnt", "boolean"],
      ["sent_at", "bigint"],
      ["delivered_at", "bigint"],
      ["error_code", "text"],
      ["error_message", "text"],
      ["now", "bigint"],
    ],
    (w) => [
      w.id,
      w.fromStatus,
      w.status,
      w.carrierMessageId,
      w.learnt,
      w.sentAt,
      w.deliveredAt,
      w.errorCode,
      w.errorMessage,
      w.now,
    ],
    async (v) => {
      const rows = await tx.all<{ id: string }>(sql`
        UPDATE messages AS m SET
          status = v.status,
          carrier_message_id = CASE WHEN v.learnt THEN coalesce(v.carrier_message_id, m.carrier_message_id) ELSE m.carrier_message_id END,
          sent_at = v.sent_at, delivered_at = v.delivered_at,
          error_code = v.error_code, error_message = v.error_message, updated_at = v.now
        FROM ${v}
        WHERE m.id = v.id AND m.status = v.from_status
        RETURNING m.id`);
      for (const row of rows) changed.add(row.id);
    },
  );
  return changed;
}
