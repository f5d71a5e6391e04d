import { is, SQL } from "drizzle-orm";
import { type Db, type DbHandle, onConnection, openDatabase, pingDatabase } from "../client";
import { groupCommit } from "../group-commit";
import { limitedToOne } from "./batch";
import type { BatchScope, Query, Store } from "./types";

export type SqliteStore = Store<Db, Db> & {
  /** The connection (SQLite-only mechanics under src/db/: migrations, backups). */
  readonly writer: DbHandle;
};

/**
 * The SQLite store: the server's own connection (openDatabase in ../client), whose transactions
 * are asynchronous and run one at a time (a manual `BEGIN IMMEDIATE` … `COMMIT` under an async
 * mutex; a statement outside them waits for them), and whose `writeBatched` is the group commit
 * (../group-commit: the writes of one event-loop turn in one transaction, a savepoint each).
 */
export function createSqliteStore(path: string, options: { cacheMb?: number } = {}): SqliteStore {
  const writer = openDatabase(path, { cacheMb: options.cacheMb });
  const { db } = writer;
  let closed = false;
  return {
    dialect: "sqlite",
    db,
    writer,
    tx: (fn) => db.transaction(async (tx) => await fn(tx as unknown as Db)),
    writeBatched<R>(fn: (tx: Db, batch: BatchScope<Db>) => Promise<R> | R): Promise<R> {
      return groupCommit(db, (tx, group) => fn(tx as unknown as Db, group));
    },
    async first<R>(query: Query<R>) {
      if (is(query, SQL)) return ((await db.all(query)) as R[])[0];
      return ((await limitedToOne(query)) as R[])[0];
    },
    async rows<R>(query: Query<R>) {
      if (is(query, SQL)) return (await db.all(query)) as R[];
      return (await query) as R[];
    },
    async exec(text) {
      await onConnection(db, () => writer.sqlite.exec(text));
    },
    ping: () => pingDatabase(db),
    async close() {
      if (closed) return;
      closed = true;
      // Transactions run in turn: this one begins after every open or waiting one ended.
      await db.transaction(async (_empty) => {});
      writer.close();
    },
  };
}
