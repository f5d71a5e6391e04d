import type { Database } from "bun:sqlite";

/** The WAL-index header: the first 48 bytes of `<db>-shm`, rewritten by every commit in WAL mode. */
const HEADER_WORDS = 12;

/**
 * A counter that changes whenever another connection (this process or another, e.g. the CLI)
 * commits to the database: SQLite's `PRAGMA data_version`. Caches that must never serve data
 * another process has changed (API keys) compare it on every request.
 *
 * The pragma opens a read transaction (≈ 1 µs, a third of a cached request). In WAL mode every
 * commit, by any connection, rewrites the WAL-index header at the start of the shared-memory file
 * `<db>-shm`, which SQLite maps into each connection. This maps the same file read-only and runs
 * the pragma only when those 48 bytes differ from what they were before the last pragma — so a
 * commit is never missed (a torn or changed header just means "ask SQLite"), and a database no
 * one writes to costs a 48-byte comparison. Own commits change the header too; the pragma then
 * tells them apart (data_version ignores this connection's commits).
 *
 * Storage-specific by nature: another dialect replaces this module (e.g. LISTEN/NOTIFY).
 * Without a WAL file to map (`:memory:`, rollback journal) it runs the pragma every time.
 */
export function createCommitWatch(sqlite: Database): () => number {
  const pragma = sqlite.prepare<{ data_version: number }, []>("PRAGMA data_version");
  const read = () => pragma.get()?.data_version ?? 0;
  const header = mapWalIndexHeader(sqlite);
  if (!header) return read;
  const seen = new Uint32Array(HEADER_WORDS);
  const snapshot = () => {
    for (let i = 0; i < HEADER_WORDS; i++) seen[i] = header[i];
  };
  // Snapshot before asking: a commit landing in between differs from the snapshot next time.
  snapshot();
  let version = read();
  return () => {
    for (let i = 0; i < HEADER_WORDS; i++) {
      if (header[i] !== seen[i]) {
        snapshot();
        version = read();
        return version;
      }
    }
    return version;
  };
}

function mapWalIndexHeader(sqlite: Database): Uint32Array | null {
  const file = sqlite.filename;
  if (!file || file === ":memory:") return null;
  try {
    const mode = sqlite.prepare<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode;
    if (mode !== "wal") return null;
    // Reading makes sure this connection has created and mapped the shared-memory file.
    sqlite.prepare("SELECT count(*) FROM sqlite_master").get();
    const map = Bun.mmap(`${file}-shm`, { shared: true, size: HEADER_WORDS * 4 });
    if (map.byteLength < HEADER_WORDS * 4) return null;
    return new Uint32Array(map.buffer, map.byteOffset, HEADER_WORDS);
  } catch {
    return null;
  }
}
