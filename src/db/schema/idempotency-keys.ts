import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAtColumn, workspaceIdColumn } from "./columns";

/**
 * Stored first responses for `Idempotency-Key` (24 h). A row with a null `status_code` is a
 * request still in flight.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    workspaceId: workspaceIdColumn(),
    key: text("key").notNull(),
    /** SHA-256 of method, path and raw body: the same key with another request is a 409. */
    requestHash: text("request_hash").notNull(),
    statusCode: integer("status_code"),
    responseBody: text("response_body"),
    createdAt: createdAtColumn(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.key] })],
);
