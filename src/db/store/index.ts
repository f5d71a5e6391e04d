/**
 * The store: one interface (./types) over SQLite (./sqlite) and PostgreSQL (./postgres). The
 * domain still runs on the synchronous SQLite handle (src/db/client.ts) until it is converted area
 * by area (docs/postgres.md); new code that writes goes through a store.
 */
export { createPgClient, createPgStore, DEFAULT_PG_POOL, type PgStore } from "./postgres";
export { createSqliteStore, type SqliteStore } from "./sqlite";
export type { BatchScope, Dialect, Isolation, Query, Store } from "./types";
