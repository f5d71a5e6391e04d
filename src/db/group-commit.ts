import { AsyncLocalStorage } from "node:async_hooks";
import { sql } from "drizzle-orm";
import { type Db, dialectOf, inTransaction, sqliteOf, type Tx } from "./client";
import { writeAlone } from "./store/batch";
import { Mutex } from "./store/mutex";

/**
 * What the writes of one group share: `collect` gives every write of the group the same value for
 * `key` (made by `create` for the first), and `finish` writes it once, in the group's transaction,
 * after the last write. A bulk write made once per group instead of once per write (one send job
 * for the group's messages). A write whose savepoint is rolled back may leave its part in the
 * value: `finish` must tolerate references to rows that were never written.
 */
export interface GroupScope {
  collect<T>(key: string, create: () => T, finish: (tx: Tx, value: T) => Promise<void> | void): T;
}

/**
 * What must commit with a write's effect or not at all: the answer of a request with an
 * Idempotency-Key, so that a process killed after the commit, before the answer was kept apart,
 * leaves the key answered instead of free to run the request again.
 */
export interface CommitWitness {
  /** Writes, in the write's own savepoint, after it succeeded, what goes with its `value`. */
  record(tx: Tx, value: unknown): Promise<unknown> | unknown;
}

const witnesses = new AsyncLocalStorage<CommitWitness>();

/** Runs `work`, whose group-committed writes each commit `witness`'s record with their effect. */
export function withCommitWitness<R>(witness: CommitWitness, work: () => R): R {
  return witnesses.run(witness, work);
}

/**
 * For a write that is one transaction of its own (not group-committed): records the current
 * witness's part with `value` in `tx`, the transaction of the effect, and returns `value`.
 */
export async function witnessed<T>(tx: Tx, value: T): Promise<T> {
  const witness = witnesses.getStore();
  if (witness) await witness.record(tx, value);
  return value;
}

/** What a batched write answers for one of its inputs: its value, or the error refusing it. */
export type BatchOutcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

/** A batched write's inputs of one group, all run at once (see groupBatch). */
type BatchRun = (tx: Tx, inputs: unknown[]) => Promise<BatchOutcome<unknown>[]>;

interface Pending {
  work: (tx: Tx, group: GroupScope) => unknown;
  /** Set for a write run with the others of its key at once (groupBatch); `work` is unused then. */
  batch?: { key: string; input: unknown; run: BatchRun };
  witness?: CommitWitness;
  /** Only collects into the group (groupAppend): it writes nothing of its own, so needs no savepoint. */
  collectsOnly?: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Submit = (
  work: (tx: Tx, group: GroupScope) => unknown,
  collectsOnly?: boolean,
  batch?: Pending["batch"],
) => Promise<unknown>;
const committers = new WeakMap<Db, Submit>();

function committerOf(db: Db): Submit {
  let submit = committers.get(db);
  if (!submit) {
    submit = createGroupCommitter(db);
    committers.set(db, submit);
  }
  return submit;
}

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
export async function groupCommit<T>(
  db: Db,
  work: (tx: Tx, group: GroupScope) => Promise<T> | T,
): Promise<T> {
  return (await committerOf(db)(work)) as Promise<T>;
}

/**
 * A row for the group's one multi-row write: `row` joins the rows collected under `key` during
 * this event-loop turn, and `finish` writes them all in the group's transaction (one statement, a
 * round trip, instead of one per row on PostgreSQL). Resolves after the commit. The row has no
 * savepoint of its own (nothing of it is written before `finish`): when `finish` fails, the whole
 * group fails, as when its commit fails. For appends that cannot be refused one by one (a click).
 */
export async function groupAppend<R>(
  db: Db,
  key: string,
  row: R,
  finish: (tx: Tx, rows: R[]) => Promise<void>,
): Promise<void> {
  await committerOf(db)((_tx, group) => {
    group.collect(key, (): R[] => [], finish).push(row);
  }, true);
}

/**
 * A write that runs together with the other writes of its `key` in this event-loop turn: `run`
 * gets all of their inputs at once, in the group's transaction and a savepoint of their own, and
 * answers each input's outcome in order (a value, or the error refusing that input alone); its
 * reads and writes are then a statement per batch instead of per write. If `run` throws, its
 * savepoint is rolled back and each input runs again alone (`run` of one, in a savepoint of its
 * own), so an unforeseen failure fails only the write it belongs to. `run` writes everything
 * itself (the group's `collect` is not offered: a batch rolled back must leave nothing in it).
 * Resolves with this input's value after the commit, or rejects with its error.
 */
export async function groupBatch<I, O>(
  db: Db,
  key: string,
  input: I,
  run: (tx: Tx, inputs: I[]) => Promise<BatchOutcome<O>[]>,
): Promise<O> {
  const batch = { key, input, run: run as unknown as BatchRun };
  return (await committerOf(db)(() => undefined, false, batch)) as O;
}

function createGroupCommitter(db: Db) {
  let pending: Pending[] = [];
  let scheduled = false;
  // Each write's savepoint. SQLite: three prepared statements on the connection (drizzle's nested
  // `tx.transaction()` runs SAVEPOINT/RELEASE as new statements, about 20 µs a write; these cost
  // about 1 µs); the write gets the group's transaction handle (one connection: its statements run
  // inside the savepoint). PostgreSQL: the same three statements on the group's transaction, whose
  // one commit (one WAL flush) serves the whole group, and whose counter rows (a number's daily
  // use, a budget) each write updates in turn instead of waiting for another transaction's commit.
  const savepoints = dialectOf(db) === "postgres" ? pgSavepoints() : sqliteSavepoints(sqliteOf(db));

  // Groups take turns; writes asked for meanwhile join the next group. On SQLite a group's turn
  // lasts until its commit (its transactions run one after another anyway). On PostgreSQL the next
  // group starts once this one has run its last statement, while its COMMIT (a WAL flush) is on
  // its way: the next group's statements run meanwhile, on another connection, and wait only for
  // the rows this one holds until that commit (a counter row, a contact both make). This one asks
  // for nothing more by then, so the two never wait on each other: no deadlock.
  const overlapCommits = dialectOf(db) === "postgres";
  const turns = new Mutex();
  const flush = () => turns.runHandingOn((handOn) => flushGroup(overlapCommits ? handOn : () => {}));

  /** Runs the pending writes as one group; `beforeCommit` is called once its last statement ran. */
  async function flushGroup(beforeCommit: () => void) {
    scheduled = false;
    const group = pending;
    pending = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      // The transaction waits for the write lock without sleeping the thread (see
      // asyncTransactions in ./client): requests are answered meanwhile, and their writes join
      // the next group.
      await db.transaction(async (tx) => {
        const shared = new Map<string, { value: unknown; finish: (tx: Tx, value: unknown) => unknown }>();
        const scope: GroupScope = {
          collect<T>(key: string, create: () => T, finish: (tx: Tx, value: T) => Promise<void> | void): T {
            let entry = shared.get(key);
            if (!entry) {
              entry = { value: create(), finish: finish as (tx: Tx, value: unknown) => unknown };
              shared.set(key, entry);
            }
            return entry.value as T;
          },
        };
        // A savepoint's SAVEPOINT and RELEASE are not waited for: they go to the database with the
        // write's first statement and the next write's (one round trip where there were three on
        // PostgreSQL; the connection runs them in order). Their outcomes are checked before the
        // shared writes and the commit: one that failed fails the group.
        const unawaited: Promise<unknown>[] = [];
        const inOrder = (step: unknown) => {
          if (step instanceof Promise) unawaited.push(step.catch((error: unknown) => ({ failed: error })));
        };
        const batches = new Map<string, { run: BatchRun; at: number[] }>();
        for (const [i, item] of group.entries()) {
          if (item.batch) {
            const batch = batches.get(item.batch.key) ?? { run: item.batch.run, at: [] };
            batch.at.push(i);
            batches.set(item.batch.key, batch);
            outcomes.push({ ok: false, value: undefined });
            continue;
          }
          if (item.collectsOnly) {
            outcomes.push({ ok: true, value: await item.work(tx, scope) });
            continue;
          }
          inOrder(savepoints.begin(tx));
          let value: unknown;
          try {
            value = await item.work(tx, scope);
            if (item.witness) await item.witness.record(tx, value);
          } catch (error) {
            // Undo this write only; RELEASE then ends its (now empty) savepoint.
            await savepoints.rollback(tx);
            outcomes.push({ ok: false, value: error });
            continue;
          }
          inOrder(savepoints.release(tx));
          outcomes.push({ ok: true, value });
        }
        for (const { run, at } of batches.values()) {
          const answers = await runBatch(
            tx,
            run,
            at.map((i) => group[i]),
            inOrder,
          );
          at.forEach((i, n) => {
            outcomes[i] = answers[n];
          });
        }
        for (const outcome of await Promise.all(unawaited)) {
          if (outcome && typeof outcome === "object" && "failed" in outcome) throw outcome.failed;
        }
        for (const { value, finish } of shared.values()) await finish(tx, value);
        beforeCommit();
      });
    } catch (error) {
      for (const item of group) item.reject(error);
      return;
    }
    group.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.value);
    });
  }

  /**
   * A batch's writes in one savepoint; if it throws, each alone in a savepoint of its own. Each
   * write's witness records its value in the savepoint that commits it. The savepoint's SAVEPOINT
   * and RELEASE go unawaited with the statements next to them, as the group's writes' do (their
   * outcomes are checked before the commit, through `inOrder`).
   */
  async function runBatch(
    tx: Tx,
    run: BatchRun,
    items: Pending[],
    inOrder: (step: unknown) => void,
  ): Promise<{ ok: boolean; value: unknown }[]> {
    const attempt = async (part: Pending[]) => {
      inOrder(savepoints.begin(tx));
      try {
        const answers = await run(
          tx,
          part.map((item) => item.batch?.input),
        );
        for (const [n, answer] of answers.entries())
          if (answer.ok) await part[n].witness?.record(tx, answer.value);
        inOrder(savepoints.release(tx));
        return answers.map((answer) =>
          answer.ok ? { ok: true, value: answer.value } : { ok: false, value: answer.error },
        );
      } catch (error) {
        await savepoints.rollback(tx);
        throw error;
      }
    };
    try {
      return await attempt(items);
    } catch (error) {
      if (items.length === 1) return [{ ok: false, value: error }];
    }
    const alone: { ok: boolean; value: unknown }[] = [];
    for (const item of items) {
      try {
        alone.push(...(await attempt([item])));
      } catch (error) {
        alone.push({ ok: false, value: error });
      }
    }
    return alone;
  }

  return async (
    work: (tx: Tx, group: GroupScope) => unknown,
    collectsOnly?: boolean,
    batch?: Pending["batch"],
  ) => {
    // Inside a transaction the write joins it: waiting for the next group would wait for the
    // transaction that waits for this write.
    const witness = witnesses.getStore();
    if (inTransaction(db)) {
      if (!batch) return await writeAloneIn(db, work, witness);
      // A batch of this one write, in a savepoint of the open transaction.
      return await db.transaction(async (tx) => {
        const [answer] = await batch.run(tx, [batch.input]);
        if (!answer.ok) throw answer.error;
        await witness?.record(tx, answer.value);
        return answer.value;
      });
    }
    return new Promise<unknown>((resolve, reject) => {
      pending.push({ work, batch, witness, resolve, reject, collectsOnly });
      if (!scheduled) {
        scheduled = true;
        // Outside the first writer's witness: the group's transaction is nobody's in particular.
        witnesses.exit(() => setImmediate(flush));
      }
    });
  };
}

/** One write in a transaction of its own (a savepoint inside an open one), its group of one. */
function writeAloneIn(
  db: Db,
  work: (tx: Tx, group: GroupScope) => unknown,
  witness: CommitWitness | undefined,
): Promise<unknown> {
  return db.transaction(async (tx) => {
    const value = await writeAlone(tx, work);
    if (witness) await witness.record(tx, value);
    return value;
  });
}

interface Savepoints {
  begin(tx: Tx): unknown;
  release(tx: Tx): unknown;
  /** Undoes the write and ends its savepoint. */
  rollback(tx: Tx): unknown;
}

function sqliteSavepoints(sqlite: ReturnType<typeof sqliteOf>): Savepoints {
  const savepoint = sqlite.prepare("SAVEPOINT group_commit_write");
  const release = sqlite.prepare("RELEASE group_commit_write");
  const rollback = sqlite.prepare("ROLLBACK TO group_commit_write");
  return {
    begin: () => savepoint.run(),
    release: () => release.run(),
    rollback: () => {
      rollback.run();
      release.run();
    },
  };
}

function pgSavepoints(): Savepoints {
  return {
    begin: (tx) => tx.run(sql.raw("SAVEPOINT group_commit_write")),
    release: (tx) => tx.run(sql.raw("RELEASE SAVEPOINT group_commit_write")),
    rollback: async (tx) => {
      await tx.run(sql.raw("ROLLBACK TO SAVEPOINT group_commit_write"));
      await tx.run(sql.raw("RELEASE SAVEPOINT group_commit_write"));
    },
  };
}
