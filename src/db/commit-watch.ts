import type { Database } from "bun:sqlite";

/**
 * A counter that changes whenever another connection (this process or another, e.g. the CLI)
 * commits to the database: SQLite's `PRAGMA data_version`. Caches that must never serve data
 * another process has changed (API keys) compare it on every request; it costs one read
 * transaction (≈ 1 µs).
 *
 * Storage-specific by nature: another dialect replaces this module (e.g. LISTEN/NOTIFY on key
 * changes). Reading SQLite's shared-memory WAL header directly would be cheaper, but mapping
 * `<db>-shm` from a second file descriptor is unsafe: closing that descriptor drops every POSIX
 * lock this process holds on the file, SQLite's included.
 */
export function createCommitWatch(sqlite: Database): () => number {
  const pragma = sqlite.prepare<{ data_version: number }, []>("PRAGMA data_version");
  return () => pragma.get()?.data_version ?? 0;
}
