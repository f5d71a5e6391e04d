import { Database } from "bun:sqlite";
import { afterAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/client";
import { CommitCheckedCache, createCommitWatch } from "../src/db/commit-watch";

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

describe("CommitCheckedCache with a rows version", () => {
  it("stays warm through other connections' unrelated commits and empties when the version moves", async () => {
    const path = join(dir, "rows.db");
    const own = openDatabase(path);
    own.sqlite.exec("CREATE TABLE t (x INTEGER); CREATE TABLE v (n INTEGER); INSERT INTO v VALUES (0)");
    const version = own.sqlite.prepare("SELECT n FROM v");
    const cache = new CommitCheckedCache<string, number>(
      createCommitWatch(own.sqlite),
      10,
      () => (version.get() as { n: number }).n,
    );
    const plain = new CommitCheckedCache<string, number>(createCommitWatch(own.sqlite), 10);
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    cache.set("a", 1);
    plain.set("a", 1);

    const other = new Database(path);
    other.exec("INSERT INTO t VALUES (1)");
    await nextTurn();
    expect(cache.get("a")).toBe(1);
    // Without a rows version, any other connection's commit empties the cache.
    expect(plain.get("a")).toBeUndefined();

    other.exec("UPDATE v SET n = n + 1");
    await nextTurn();
    expect(cache.get("a")).toBeUndefined();
    other.close();
    own.close();
  });
});
