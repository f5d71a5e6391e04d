import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAtColumn, idColumn, jsonColumn, timestampColumn, updatedAtColumn } from "./columns";

/**
 * Durable jobs. A job is inserted in the same transaction as the change that causes it, leased by
 * a worker (`lease_until`), and completed, retried with backoff, or marked dead.
 * status: queued | running | done | dead.
 */
export const jobs = sqliteTable(
  "jobs",
  {
    id: idColumn(),
    workspaceId: text("workspace_id"),
    kind: text("kind").notNull(),
    payload: jsonColumn<unknown>("payload").notNull(),
    status: text("status").notNull().default("queued"),
    runAt: timestampColumn("run_at").notNull(),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull(),
    leaseUntil: timestampColumn("lease_until"),
    lockedBy: text("locked_by"),
    lastError: text("last_error"),
    /** Optional uniqueness key: a second enqueue with the same key is a no-op. */
    dedupeKey: text("dedupe_key"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
    finishedAt: timestampColumn("finished_at"),
  },
  (t) => [
    index("jobs_due_idx").on(t.status, t.runAt),
    uniqueIndex("jobs_dedupe_idx").on(t.dedupeKey),
    index("jobs_workspace_idx").on(t.workspaceId, t.createdAt),
  ],
);

export type JobRow = typeof jobs.$inferSelect;
