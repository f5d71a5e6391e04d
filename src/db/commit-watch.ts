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

/**
 * A map of values read from the database that is never stale: emptied when another connection or
 * process commits (checked once per event-loop turn) and by `clear()`, which whatever changes the
 * cached rows in this process calls. Past `maxSize` entries it starts over. Used for rows read on
 * hot paths and rarely written (API keys, tracked links, webhook subscriptions).
 *
 * Checked by the first `get` of each turn: the requests of a turn are the ones the poll that
 * started it found waiting, so each was sent before that check; a change committed elsewhere before
 * a request was sent is always seen by it, and one committed later raced with the requests of the
 * turn. setImmediate runs before the next poll.
 */
export class CommitCheckedCache<K, V> {
  private readonly entries = new Map<K, V>();
  private readonly othersCommitted: () => number;
  private seenVersion: number;
  private seenRows: number | undefined;
  private checkedThisTurn = false;

  /**
   * `rowsVersion`, when given, reads a counter that triggers bump whenever the cached rows may
   * have changed: another connection's commit then empties the cache only if it moved, so the
   * background thread's unrelated writes leave it warm.
   */
  constructor(
    othersCommitted: () => number,
    private readonly maxSize: number,
    private readonly rowsVersion?: () => number,
  ) {
    this.othersCommitted = othersCommitted;
    this.seenVersion = this.othersCommitted();
    this.seenRows = rowsVersion?.();
  }

  get(key: K): V | undefined {
    if (!this.checkedThisTurn) {
      this.checkedThisTurn = true;
      setImmediate(() => {
        this.checkedThisTurn = false;
      });
      const version = this.othersCommitted();
      if (version !== this.seenVersion) {
        this.seenVersion = version;
        const rows = this.rowsVersion?.();
        if (rows === undefined || rows !== this.seenRows) this.entries.clear();
        this.seenRows = rows;
      }
    }
    return this.entries.get(key);
  }

  set(key: K, value: V) {
    if (this.entries.size >= this.maxSize) this.entries.clear();
    this.entries.set(key, value);
  }

  clear() {
    this.entries.clear();
  }
}

/**
 * The caches of one kind in this process, one per connection, so that whatever changes their rows
 * here empties all of them at once (the request thread's and any other connection's of this
 * thread).
 */
export class CommitCheckedCaches<K, V> {
  private readonly caches = new Set<CommitCheckedCache<K, V>>();

  /** A cache of this kind for one connection (see CommitCheckedCache for `rowsVersion`). */
  create(
    othersCommitted: () => number,
    maxSize: number,
    rowsVersion?: () => number,
  ): CommitCheckedCache<K, V> {
    const cache = new CommitCheckedCache<K, V>(othersCommitted, maxSize, rowsVersion);
    this.caches.add(cache);
    return cache;
  }

  clear() {
    for (const cache of this.caches) cache.clear();
  }
}
