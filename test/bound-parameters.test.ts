import { Database } from "bun:sqlite";
import { afterAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bindParametersOnce, PARTIAL_INDEX_COLUMNS } from "../src/db/bound-parameters";
import { openDatabase } from "../src/db/client";
import { migrate } from "../src/db/migrate";

describe("bindParametersOnce", () => {
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
      "ranges, inequalities and lists stay as they are; a limit and an offset do not",
      "SELECT a.k FROM a JOIN b ON b.id = a.b_id WHERE a.t >= ? AND a.t <= ? AND a.s != ? AND a.u IN (?, ?) LIMIT ? OFFSET ?",
      "SELECT a.k FROM a JOIN b ON b.id = a.b_id WHERE a.t >= ? AND a.t <= ? AND a.s != ? AND a.u IN (?, ?) LIMIT +? OFFSET +?",
    ],
    [
      "numbered parameters stay as they are",
      "SELECT a.k FROM a JOIN b ON b.id = a.b_id WHERE a.rowid = ?1 LIMIT ?2",
      "SELECT a.k FROM a JOIN b ON b.id = a.b_id WHERE a.rowid = ?1 LIMIT ?2",
    ],
    [
      "one table: a column a partial index's condition names keeps its bare parameter",
      'select 1 from "flow_runs" where ("flow_runs"."contact_id" = ? and "flow_runs"."status" = ?) limit ?',
      'select 1 from "flow_runs" where ("flow_runs"."contact_id" = +? and "flow_runs"."status" = ?) limit +?',
    ],
    [
      "one table, unquoted and upper-case: the same",
      "SELECT id FROM numbers WHERE workspace_id=? AND STATUS = ? ORDER BY created_at",
      "SELECT id FROM numbers WHERE workspace_id=+? AND STATUS = ? ORDER BY created_at",
    ],
    [
      "one table with an ORDER BY over the index it binds",
      'select "id" from "clicks" where ("clicks"."workspace_id" = ? and "clicks"."contact_id" = ? and "clicks"."created_at" >= ?) order by "clicks"."created_at" desc limit ?',
      'select "id" from "clicks" where ("clicks"."workspace_id" = +? and "clicks"."contact_id" = +? and "clicks"."created_at" >= ?) order by "clicks"."created_at" desc limit +?',
    ],
    [
      "an expression on the left is not a column",
      'select "id" from "contacts" where ("contacts"."workspace_id" = ? and lower(email) = lower(?)) order by "contacts"."created_at" limit ?',
      'select "id" from "contacts" where ("contacts"."workspace_id" = +? and lower(email) = lower(?)) order by "contacts"."created_at" limit +?',
    ],
    [
      "one table with a subquery on a table-valued function",
      'select "reason" from "suppressions" where "workspace_id" = ? and "phone_number" IN (SELECT value FROM json_each(?))',
      'select "reason" from "suppressions" where "workspace_id" = +? and "phone_number" IN (SELECT value FROM json_each(?))',
    ],
    [
      "an update's SET and WHERE in a join",
      "UPDATE a SET k = ? FROM b WHERE a.rowid = ? AND b.id = a.b_id",
      "UPDATE a SET k = +? FROM b WHERE a.rowid = +? AND b.id = a.b_id",
    ],
    [
      "an update on one table: a partial index's column stays bare, in SET as in WHERE",
      'update "sandbox_sends" set "delivered_at" = ?, "note" = ? where "sandbox_sends"."id" IN (SELECT value FROM json_each(?))',
      'update "sandbox_sends" set "delivered_at" = ?, "note" = +? where "sandbox_sends"."id" IN (SELECT value FROM json_each(?))',
    ],
  ];
  for (const [name, sql, expected] of cases)
    it(name, () => {
      expect(bindParametersOnce(sql)).toBe(expected);
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
      const rewritten = bindParametersOnce(sql);
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
  const dir = mkdtempSync(join(tmpdir(), "outreach-bound-parameters-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("compiles statements rewritten, by prepare and by query, and keeps their answers", () => {
    const handle = openDatabase(join(dir, "db.sqlite"));
    const { sqlite } = handle;
    sqlite.run("CREATE TABLE a (id TEXT PRIMARY KEY, b_id TEXT NOT NULL, n INTEGER, status TEXT)");
    sqlite.run("CREATE TABLE b (id TEXT PRIMARY KEY, name TEXT)");
    sqlite.run("INSERT INTO b VALUES ('b1', 'one')");
    sqlite.run("INSERT INTO a VALUES ('a1', 'b1', 7, 'active')");
    const sql = "SELECT b.name FROM a JOIN b ON b.id = a.b_id WHERE a.n = ?";
    const prepared = sqlite.prepare(sql);
    // toString() is the statement's SQL as compiled, its parameters shown with their bound values.
    expect(prepared.toString()).toContain("WHERE a.n = +NULL");
    expect(prepared.values("7")).toEqual([["one"]]);
    expect(sqlite.query(sql).values(7)).toEqual([["one"]]);
    const single = sqlite.prepare("SELECT n FROM a WHERE id = ? LIMIT ?");
    expect(single.toString()).toBe("SELECT n FROM a WHERE id = +NULL LIMIT +NULL");
    expect(single.values("a1", 1)).toEqual([[7]]);
    const partial = sqlite.prepare("SELECT n FROM a WHERE status = ?");
    expect(partial.toString()).toBe("SELECT n FROM a WHERE status = NULL");
    handle.close();
  });
});

describe("a limit and an offset given as `+?` answer what they answered before", () => {
  const db = new Database(":memory:");
  db.run("CREATE TABLE t (id INTEGER PRIMARY KEY, g TEXT)");
  for (let i = 1; i <= 6; i++) db.run("INSERT INTO t VALUES (?, ?)", [i, i % 2 ? "odd" : "even"]);
  const sql = "SELECT id FROM t WHERE g = ? ORDER BY id DESC LIMIT ? OFFSET ?";
  const cases: unknown[][] = [
    ["odd", 1, 0],
    ["odd", 2, 1],
    ["even", -1, 0],
    ["even", "2", "1"],
    ["even", 0, 0],
    ["odd", 10, 5],
  ];
  for (const args of cases)
    it(JSON.stringify(args), () => {
      expect(db.query(bindParametersOnce(sql)).all(...(args as never[]))).toEqual(
        db.query(sql).all(...(args as never[])),
      );
    });
});

describe("PARTIAL_INDEX_COLUMNS", () => {
  it("names exactly the columns of every partial index's condition in the migrated schema", () => {
    const db = new Database(":memory:");
    migrate(db);
    const named = new Set<string>();
    const indexes = db
      .query<{ sql: string }, []>(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql LIKE '% WHERE %'",
      )
      .all();
    expect(indexes.length).toBeGreaterThan(0);
    for (const { sql } of indexes) {
      const condition = sql.slice(sql.search(/\bWHERE\b/i) + 5).replace(/'[^']*'/g, "");
      for (const word of condition.match(/[A-Za-z_]\w*/g) ?? [])
        if (!/^(is|not|null|and|or|in)$/i.test(word)) named.add(word.toLowerCase());
    }
    expect([...named].sort()).toEqual([...PARTIAL_INDEX_COLUMNS].sort());
    db.close();
  });
});
