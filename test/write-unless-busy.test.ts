import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DbHandle, openDatabase, writeUnlessBusy } from "../src/db/client";

// Bookkeeping writes on the request thread (a key's last use) must not sleep in SQLite's busy
// handler while the background thread or another process holds the write lock.
describe("writeUnlessBusy", () => {
  let dir: string;
  let handle: DbHandle;
  let other: Database;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "outreach-busy-"));
    handle = openDatabase(join(dir, "b.db"));
    handle.sqlite.exec("CREATE TABLE t (n INTEGER)");
    other = new Database(join(dir, "b.db"));
  });
  afterAll(() => {
    other.close();
    handle.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const busyTimeout = () => (handle.sqlite.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout;

  it("skips the write at once while another connection writes, then writes once it is done", () => {
    const insert = handle.sqlite.prepare("INSERT INTO t (n) VALUES (1)");
    other.exec("BEGIN IMMEDIATE");
    try {
      let waitAllowed = -1;
      const ran = writeUnlessBusy(handle.sqlite, () => {
        waitAllowed = busyTimeout();
        insert.run();
      });
      expect(ran).toBe(false);
      // It did not sleep the connection's 5 s busy timeout away first.
      expect(waitAllowed).toBe(0);
    } finally {
      other.exec("COMMIT");
    }
    expect(busyTimeout()).toBe(5000);
    expect(writeUnlessBusy(handle.sqlite, () => insert.run())).toBe(true);
    expect((handle.sqlite.query("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBe(1);
  });

  it("passes other errors on, and restores the busy timeout", () => {
    expect(() =>
      writeUnlessBusy(handle.sqlite, () => handle.sqlite.exec("INSERT INTO missing VALUES (1)")),
    ).toThrow(/no such table/);
    expect(busyTimeout()).toBe(5000);
  });
});
