import { Database } from "bun:sqlite";
import { afterAll, describe, expect, it } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/client";

const dir = mkdtempSync(join(tmpdir(), "outreach-stmt-journal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Files this process holds open that are already unlinked: SQLite's temporary files are. */
function openTempFiles(): number {
  let count = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).endsWith(" (deleted)")) count++;
    } catch {
      // Closed between the listing and the read.
    }
  }
  return count;
}

/**
 * Inside a transaction, a savepoint (each group-commit write) or a statement that can fail half way
 * keeps a copy of every page it changes, so it can be undone alone. SQLite writes that journal to a
 * temporary file once it passes 64 KiB, one pwrite per page, for the rest of the transaction: a
 * campaign step spent more in those writes than in its WAL frames. The service's connections keep
 * it in memory.
 */
function changeManyPagesInSavepoint(sqlite: Database): number {
  sqlite.exec("CREATE TABLE IF NOT EXISTS wide (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)");
  sqlite.exec("DELETE FROM wide");
  const insert = sqlite.prepare("INSERT INTO wide (id, payload) VALUES (?, ?)");
  sqlite.transaction(() => {
    for (let i = 0; i < 400; i++) insert.run(i, "x".repeat(900));
  })();
  let during = -1;
  sqlite.exec("BEGIN IMMEDIATE");
  try {
    sqlite.exec("SAVEPOINT many_pages");
    // ~100 pages that existed before the transaction: each is copied to the savepoint's journal.
    sqlite.exec("UPDATE wide SET payload = payload || 'y'");
    during = openTempFiles();
    sqlite.exec("RELEASE many_pages");
    sqlite.exec("COMMIT");
  } catch (error) {
    sqlite.exec("ROLLBACK");
    throw error;
  }
  return during;
}

describe.skipIf(!existsSync("/proc/self/fd"))("statement journals", () => {
  it("a plain connection spills a large savepoint journal to a temporary file (the probe works)", () => {
    const sqlite = new Database(join(dir, "plain.db"));
    sqlite.exec("PRAGMA journal_mode = WAL");
    try {
      expect(changeManyPagesInSavepoint(sqlite)).toBeGreaterThan(openTempFiles());
    } finally {
      sqlite.close();
    }
  });

  it("the service's connection keeps it in memory", () => {
    const handle = openDatabase(join(dir, "service.db"));
    try {
      expect(changeManyPagesInSavepoint(handle.sqlite)).toBe(openTempFiles());
      expect(handle.sqlite.query<{ temp_store: number }, []>("PRAGMA temp_store").get()?.temp_store).toBe(2);
    } finally {
      handle.close();
    }
  });
});
