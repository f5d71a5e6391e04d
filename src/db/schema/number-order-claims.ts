import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { timestampColumn } from "./columns";

/**
 * Numbers being ordered from the carrier right now, by any process: POST /v1/numbers claims a
 * number here before it asks the carrier, so a concurrent order of the same number (on this or
 * another server) is skipped instead of charged twice. The claim goes in the transaction that
 * records the number; a claim older than the order timeout is taken over (its process died).
 * Server-wide, like `numbers_active_number_idx`: a number is one line at the carrier.
 */
export const numberOrderClaims = sqliteTable("number_order_claims", {
  /** E.164. */
  number: text("number").primaryKey(),
  /** When the claim was taken: the compare-and-set key of a takeover. */
  claimedAt: timestampColumn("claimed_at").notNull(),
});

export type NumberOrderClaimRow = typeof numberOrderClaims.$inferSelect;
