import { Database } from "bun:sqlite";
import { afterAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/client";
import { bindJoinParametersOnce } from "../src/db/join-parameters";

describe("bindJoinParametersOnce", () => {
  const cases: [string, string, string][] = [
    [
      "an inner join's equality terms",
      'select "a"."k" from "a" inner join "b" on "b"."id" = "a"."b_id" where ("a"."ws" = ? and "b"."n" = ?)',
      'select "a"."k" from "a" inner join "b" on "b"."id" = "a"."b_id" where ("a"."ws" = +? and "b"."n" = +?)',
    ],
    [
      "a left join, and an equality without spaces",
      "SELECT a.k FROM a LEFT JOIN b ON b.id = a.b_id WHERE a.rowid=?",
      "SELECT a.k FROM a LEFT JOIN b ON b.id = a.b_id WHERE a.rowid=+?",
    ],
    [
      "tables listed with commas",
      "SELECT s.rowid FROM conversation_search s, conversations cv WHERE cv.id = ? AND s.message_id = ?",
      "SELECT s.rowid FROM conversation_search s, conversations cv WHERE cv.id = +? AND s.message_id = +?",
    ],
    [
      "ranges, inequalities, lists and limits stay as they are",
      "SELECT a.k FROM a JOIN b ON b.id = a.b_id WHERE a.t >= ? AND a.t <= ? AND a.s != ? AND a.u IN (?, ?) LIMIT ?",
      "SELECT a.k FROM a JOIN b ON b.id = a.b_id WHERE a.t >= ? AND a.t <= ? AND a.s != ? AND a.u IN (?, ?) LIMIT ?",
    ],
    [
      "numbered parameters stay as they are",
      "SELECT a.k FROM a JOIN b ON b.id = a.b_id WHERE a.rowid = ?1",
      "SELECT a.k FROM a JOIN b ON b.id = a.b_id WHERE a.rowid = ?1",
    ],
    [
      "one table: untouched (a bound value may pick a partial index there)",
      'select 1 from "flow_runs" where ("flow_runs"."contact_id" = ? and "flow_runs"."status" = ?) limit ?',
      'select 1 from "flow_runs" where ("flow_runs"."contact_id" = ? and "flow_runs"."status" = ?) limit ?',
    ],
    [
      "one table with a subquery on a table-valued function: untouched",
      'select "reason" from "suppressions" where "workspace_id" = ? and "phone_number" IN (SELECT value FROM json_each(?))',
      'select "reason" from "suppressions" where "workspace_id" = ? and "phone_number" IN (SELECT value FROM json_each(?))',
    ],
    [
      "an update's SET and WHERE in a join",
      "UPDATE a SET k = ? FROM b WHERE a.rowid = ? AND b.id = a.b_id",
      "UPDATE a SET k = +? FROM b WHERE a.rowid = +? AND b.id = a.b_id",
    ],
    [
      "an update with a subquery on one table: untouched",
      'update "sandbox_sends" set "delivered_at" = ? where "sandbox_sends"."id" IN (SELECT value FROM json_each(?))',
      'update "sandbox_sends" set "delivered_at" = ? where "sandbox_sends"."id" IN (SELECT value FROM json_each(?))',
    ],
  ];
  for (const [name, sql, expected] of cases)
    it(name, () => {
      expect(bindJoinParametersOnce(sql)).toBe(expected);
    });
});

describe("a join rewritten with `= +?` answers what it answered before", () => {
  const db = new Database(":memory:");
  db.run("CREATE TABLE a (id TEXT PRIMARY KEY, b_id TEXT NOT NULL, n INTEGER, label TEXT)");
  db.run("CREATE TABLE b (id TEXT PRIMARY KEY, name TEXT)");
  db.run("INSERT INTO b VALUES ('b1', 'one'), ('b2', 'two'), ('3', 'three')");
  db.run(
    "INSERT INTO a VALUES ('a1', 'b1', 10, '10'), ('a2', 'b2', 20, 'x'), ('a3', '3', 30, '30'), ('a4', 'b1', NULL, NULL)",
  );
  const queries = [
    "SELECT a.id, b.name FROM a JOIN b ON b.id = a.b_id WHERE a.n = ? ORDER BY a.id",
    "SELECT a.id, b.name FROM a JOIN b ON b.id = a.b_id WHERE a.label = ? ORDER BY a.id",
    "SELECT a.id, b.name FROM a LEFT JOIN b ON b.id = a.b_id AND b.name = ? WHERE a.b_id = ? ORDER BY a.id",
    "SELECT a.id FROM a, b WHERE b.id = a.b_id AND b.id = ? ORDER BY a.id",
  ];
  // Integers, numeric text, text, reals and NULL against INTEGER and TEXT columns: the column's
  // affinity decides the comparison either way.
  const values: unknown[][] = [
    [10],
    ["10"],
    [10.0],
    ["x"],
    [null],
    [20],
    ["30"],
    [30],
    ["one", "b1"],
    [3],
    ["3"],
  ];
  for (const sql of queries)
    it(sql, () => {
      const rewritten = bindJoinParametersOnce(sql);
      expect(rewritten).not.toBe(sql);
      for (const args of values) {
        const bound = args.slice(0, (sql.match(/\?/g) ?? []).length);
        while (bound.length < (sql.match(/\?/g) ?? []).length) bound.push(bound[0]);
        expect(db.query(rewritten).all(...(bound as never[]))).toEqual(
          db.query(sql).all(...(bound as never[])),
        );
      }
    });
});

describe("the service's connection", () => {
  const dir = mkdtempSync(join(tmpdir(), "outreach-join-parameters-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("compiles a join's statements rewritten, by prepare and by query, and keeps their answers", () => {
    const handle = openDatabase(join(dir, "db.sqlite"));
    const { sqlite } = handle;
    sqlite.run("CREATE TABLE a (id TEXT PRIMARY KEY, b_id TEXT NOT NULL, n INTEGER)");
    sqlite.run("CREATE TABLE b (id TEXT PRIMARY KEY, name TEXT)");
    sqlite.run("INSERT INTO b VALUES ('b1', 'one')");
    sqlite.run("INSERT INTO a VALUES ('a1', 'b1', 7)");
    const sql = "SELECT b.name FROM a JOIN b ON b.id = a.b_id WHERE a.n = ?";
    const prepared = sqlite.prepare(sql);
    // toString() is the statement's SQL as compiled, its parameters shown with their bound values.
    expect(prepared.toString()).toContain("WHERE a.n = +NULL");
    expect(prepared.values("7")).toEqual([["one"]]);
    expect(sqlite.query(sql).values(7)).toEqual([["one"]]);
    const single = sqlite.prepare("SELECT n FROM a WHERE id = ?");
    expect(single.toString()).toBe("SELECT n FROM a WHERE id = NULL");
    handle.close();
  });
});
