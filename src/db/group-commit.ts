import { BUSY_TIMEOUT_MS, type Db, isBusy, sqliteOf, type Tx, withoutBusyWait } from "./client";

/**
 * What the writes of one group share: `collect` gives every write of the group the same value for
 * `key` (made by `create` for the first), and `finish` writes it once, in the group's transaction,
 * after the last write. A bulk write made once per group instead of once per write (one send job
 * for the group's messages). A write whose savepoint is rolled back may leave its part in the
 * value: `finish` must tolerate references to rows that were never written.
 */
export interface GroupScope {
  collect<T>(key: string, create: () => T, finish: (tx: Tx, value: T) => void): T;
}

interface Pending {
  work: (tx: Tx, group: GroupScope) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Retries of a group that found the write lock taken before they back off to 1 ms apart. */
const IMMEDIATE_RETRIES = 20;

const committers = new WeakMap<Db, (work: (tx: Tx, group: GroupScope) => unknown) => Promise<unknown>>();

/**
 * Group commit: writes submitted during one event-loop turn run in one transaction, each in a
 * savepoint of its own, and every caller is answered after the commit. A write that throws rolls
 * back its savepoint only and rejects its own promise; the others still commit. If the commit
 * itself fails, every write of the group is rejected and none of them happened.
 *
 * For hot write routes (POST /v1/messages): a commit writes every page the transaction touched to
 * the WAL, and concurrent accepts touch mostly the same index pages, so one commit for the group
 * costs about what one commit for one write did. Durability is the same as one transaction per
 * request: nobody is answered before their write is committed.
 */
export function groupCommit<T>(db: Db, work: (tx: Tx, group: GroupScope) => T): Promise<T> {
  let submit = committers.get(db);
  if (!submit) {
    submit = createGroupCommitter(db);
    committers.set(db, submit);
  }
  return submit(work) as Promise<T>;
}

function createGroupCommitter(db: Db) {
  let pending: Pending[] = [];
  let scheduled = false;
  // Each write's savepoint, as two prepared statements on the connection: drizzle's nested
  // `tx.transaction()` builds a transaction object and runs SAVEPOINT/RELEASE as new statements,
  // about 20 µs a write; these cost about 1 µs. The write gets the group's transaction handle
  // (one connection: its statements run inside the savepoint).
  const sqlite = sqliteOf(db);
  const savepoint = sqlite.prepare("SAVEPOINT group_commit_write");
  const release = sqlite.prepare("RELEASE group_commit_write");
  const rollback = sqlite.prepare("ROLLBACK TO group_commit_write");

  // The write lock is asked for without waiting (`withoutBusyWait`). A group that finds another
  // connection (the background thread, another process) holding it is tried again on the next
  // turns, answering requests meanwhile (later writes join it), for up to BUSY_TIMEOUT_MS.
  let busySince = 0;
  let busyRetries = 0;

  function flush() {
    scheduled = false;
    const group = pending;
    pending = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
    let begun = false;
    let failure: { error: unknown } | null = null;
    try {
      withoutBusyWait(sqlite, () =>
        db.transaction((tx) => {
          begun = true;
          const shared = new Map<string, { value: unknown; finish: (tx: Tx, value: unknown) => void }>();
          const scope: GroupScope = {
            collect<T>(key: string, create: () => T, finish: (tx: Tx, value: T) => void): T {
              let entry = shared.get(key);
              if (!entry) {
                entry = { value: create(), finish: finish as (tx: Tx, value: unknown) => void };
                shared.set(key, entry);
              }
              return entry.value as T;
            },
          };
          for (const item of group) {
            savepoint.run();
            let value: unknown;
            try {
              value = item.work(tx, scope);
            } catch (error) {
              // Undo this write only; RELEASE then ends its (now empty) savepoint.
              rollback.run();
              release.run();
              outcomes.push({ ok: false, value: error });
              continue;
            }
            release.run();
            outcomes.push({ ok: true, value });
          }
          for (const { value, finish } of shared.values()) finish(tx, value);
        }),
      );
    } catch (error) {
      if (!begun && isBusy(error) && (busySince === 0 || Date.now() - busySince < BUSY_TIMEOUT_MS)) {
        // The first retries come at once (most transactions of the other thread are short),
        // then once a millisecond, so waiting does not spin this thread.
        if (busySince === 0) busySince = Date.now();
        pending = group.concat(pending);
        scheduled = true;
        if (++busyRetries <= IMMEDIATE_RETRIES) setImmediate(flush);
        else setTimeout(flush, 1);
        return;
      }
      failure = { error };
    }
    busySince = 0;
    busyRetries = 0;
    if (failure) {
      for (const item of group) item.reject(failure.error);
      return;
    }
    group.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.value);
    });
  }

  return (work: (tx: Tx, group: GroupScope) => unknown) =>
    new Promise<unknown>((resolve, reject) => {
      pending.push({ work, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
