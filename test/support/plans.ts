import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DbHandle, openDatabase } from "../../src/db/client";
import { migrate } from "../../src/db/migrate";

/**
 * A migrated database in a temp folder for the query-plan tests of the calling `describe`: opened
 * before its tests, removed after them. `plan` answers SQLite's EXPLAIN QUERY PLAN details, one
 * per line of the plan.
 */
export function planDatabase() {
  let dir = "";
  let handle: DbHandle | undefined;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "outreach-plans-"));
    handle = openDatabase(join(dir, "p.db"));
    migrate(handle.sqlite);
  });
  afterAll(() => {
    handle?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const opened = () => {
    if (!handle) throw new Error("the plan database opens before the tests");
    return handle;
  };
  return {
    get handle(): DbHandle {
      return opened();
    },
    plan(text: string, params: unknown[]): string[] {
      const rows = opened()
        .sqlite.query(`EXPLAIN QUERY PLAN ${text}`)
        .all(...(params as string[])) as { detail: string }[];
      return rows.map((row) => row.detail);
    },
  };
}
