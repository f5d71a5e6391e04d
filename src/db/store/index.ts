/**
 * The store: one interface (./types) over SQLite (./sqlite) and PostgreSQL (./postgres), each a
 * facade over the handle the server itself runs on (src/db/client.ts, src/db/pg-database.ts):
 * its transactions, its group commit, its terminals.
 */
export { createPgClient, createPgStore, DEFAULT_PG_POOL, type PgStore } from "./postgres";
export { createSqliteStore, type SqliteStore } from "./sqlite";
export type { BatchScope, Dialect, Isolation, Query, Store } from "./types";
