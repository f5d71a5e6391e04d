import { Database } from "bun:sqlite";
import { afterAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/client";
import { createCommitWatch } from "../src/db/commit-watch";

const dir = mkdtempSync(join(tmpdir(), "outreach-watch-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("createCommitWatch", () => {
  it("changes when another connection commits, not for this connection's own commits", () => {
    const path = join(dir, "watch.db");
    const own = openDatabase(path);
    own.sqlite.exec("CREATE TABLE t (x INTEGER)");
    const watch = createCommitWatch(own.sqlite);
    const start = watch();
    expect(watch()).toBe(start);

    own.sqlite.exec("INSERT INTO t VALUES (1)");
    expect(watch()).toBe(start);

    const other = new Database(path);
    other.exec("INSERT INTO t VALUES (2)");
    const afterOther = watch();
    expect(afterOther).not.toBe(start);
    expect(watch()).toBe(afterOther);

    // A checkpoint that empties the WAL, then a commit that starts it over, is still seen.
    other.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    other.exec("INSERT INTO t VALUES (3)");
    expect(watch()).not.toBe(afterOther);
    other.close();
    own.close();
  });

  it("sees a commit made by another process", () => {
    const path = join(dir, "process.db");
    const own = openDatabase(path);
    own.sqlite.exec("CREATE TABLE t (x INTEGER)");
    const watch = createCommitWatch(own.sqlite);
    const start = watch();
    const child = Bun.spawnSync([
      process.execPath,
      "-e",
      `const { Database } = require("bun:sqlite"); new Database(${JSON.stringify(path)}).exec("INSERT INTO t VALUES (1)");`,
    ]);
    expect(child.exitCode).toBe(0);
    expect(watch()).not.toBe(start);
    own.close();
  });

  it("falls back to asking SQLite every time for an in-memory database", () => {
    const memory = new Database(":memory:");
    const watch = createCommitWatch(memory);
    expect(typeof watch()).toBe("number");
    memory.close();
  });
});
