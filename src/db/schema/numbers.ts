import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, timestampColumn, updatedAtColumn, workspaceIdColumn } from "./columns";

/**
 * Phone numbers ordered from the carrier. A number belongs to at most one workspace of the server
 * while active (unique partial index); a released row stays for history.
 */
export const numbers = sqliteTable(
  "numbers",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    /** E.164. */
    number: text("number").notNull(),
    /** Pool the number rotates in; null = no pool. */
    poolId: text("pool_id"),
    /** Sends allowed per local day; null = no cap. */
    dailyLimit: integer("daily_limit"),
    /** Agent answering on this number (set by the agents feature). */
    agentId: text("agent_id"),
    /** Whether the number can place calls (from the carrier at order time). */
    voiceCapable: integer("voice_capable", { mode: "boolean" }).notNull().default(true),
    /** active | released */
    status: text("status").notNull(),
    /** The carrier's id for the number (Twilio's IncomingPhoneNumber sid), when it has one. */
    carrierNumberId: text("carrier_number_id"),
    /** IANA zone whose midnight resets the daily counter (from the area code, else the workspace's). */
    timezone: text("timezone").notNull(),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
    releasedAt: timestampColumn("released_at"),
  },
  (t) => [
    // Oldest first with id as the tie-break, as the default sender and listings read it: no sort.
    index("numbers_workspace_created_idx").on(t.workspaceId, t.createdAt, t.id),
    index("numbers_workspace_pool_idx").on(t.workspaceId, t.poolId),
    uniqueIndex("numbers_active_number_idx").on(t.number).where(sql`status = 'active'`),
  ],
);

export type NumberRow = typeof numbers.$inferSelect;

/**
 * A number is active, written as a literal. A bound `status = ?` on numbers, whose partial index
 * applies only to `status = 'active'`, makes SQLite read the value while planning and compile the
 * statement again on every run (src/db/bound-parameters.ts): the oldest active number, read by
 * every send without a `from`, cost ~40 µs a run that way.
 */
export const NUMBER_IS_ACTIVE = sql`${numbers.status} = 'active'`;
