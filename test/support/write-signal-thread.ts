/**
 * Worker thread for test/group-commit.test.ts: adopts the test thread's write-lock signal, as the
 * server's background thread does, opens the SQLite file PATH and runs COUNT write transactions on
 * it, then posts "done". Message in: { path, signal, count }.
 */
import { sql } from "drizzle-orm";
import { adoptWriteSignal, openDatabase } from "../../src/db/client";

declare const self: Worker;

self.onmessage = async (event: MessageEvent<{ path: string; signal: SharedArrayBuffer; count: number }>) => {
  const { path, signal, count } = event.data;
  adoptWriteSignal(signal);
  const handle = openDatabase(path);
  for (let i = 0; i < count; i++)
    await handle.db.transaction(async (tx) => {
      await tx.run(sql`INSERT INTO t (x) VALUES (${1000 + i})`);
    });
  handle.close();
  self.postMessage("done");
};
