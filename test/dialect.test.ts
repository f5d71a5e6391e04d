/**
 * The dialect helpers (src/db/dialect.ts) give the same answers on SQLite and on PostgreSQL: one
 * table of cases, each with its expected answer, run on both databases (a throwaway PostgreSQL
 * cluster: test/support/postgres.ts; the PostgreSQL half is skipped, with one line saying why, when
 * none can be started).
 */
import { afterAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc, count, desc, type SQL, sql } from "drizzle-orm";
import {
  jsonb,
  bigint as pgBigint,
  boolean as pgBoolean,
  pgTable,
  text as pgText,
} from "drizzle-orm/pg-core";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import {
  boolValue,
  containsText,
  countWhere,
  distinctFrom,
  greatest,
  inJsonList,
  inJsonListParam,
  jsonEquals,
  jsonField,
  jsonIn,
  jsonList,
  jsonNumber,
  likeInsensitive,
  lockedForUpdate,
  nullsFirst,
  nullsLast,
  sameLowerCase,
  setDialect,
  sqlFalse,
  sqlTrue,
} from "../src/db/dialect";
import { preparedPerConnection, withJsonRows } from "../src/db/prepared";
import { createPgStore, createSqliteStore, type Store } from "../src/db/store";
import { compileRule, type Rule } from "../src/domain/audience/segments";
import { freshDatabase, freshDatabaseWithLocale, testPostgres, testsRunOn } from "./support/postgres";

const sqliteItems = sqliteTable("dialect_items", {
  id: text().primaryKey(),
  name: text().notNull(),
  n: integer(),
  m: integer().notNull(),
  at: integer(),
  fields: text({ mode: "json" }).notNull(),
  flag: integer({ mode: "boolean" }).notNull(),
});
const pgItems = pgTable("dialect_items", {
  id: pgText().primaryKey(),
  name: pgText().notNull(),
  n: pgBigint({ mode: "number" }),
  m: pgBigint({ mode: "number" }).notNull(),
  at: pgBigint({ mode: "number" }),
  fields: jsonb().notNull(),
  flag: pgBoolean().notNull(),
});

const CREATE = {
  sqlite:
    "CREATE TABLE dialect_items (id text PRIMARY KEY, name text NOT NULL, n integer, m integer NOT NULL, at integer, fields text NOT NULL, flag integer NOT NULL)",
  postgres:
    "CREATE TABLE dialect_items (id text PRIMARY KEY, name text NOT NULL, n bigint, m bigint NOT NULL, at bigint, fields jsonb NOT NULL, flag boolean NOT NULL)",
};

/** The custom fields of test/segments.test.ts's contacts, in a `contacts` table of their own. */
const CONTACTS = {
  sqlite: "CREATE TABLE contacts (id text PRIMARY KEY, fields text NOT NULL)",
  postgres: "CREATE TABLE contacts (id text PRIMARY KEY, fields jsonb NOT NULL)",
  rows: `INSERT INTO contacts (id, fields) VALUES ('Ada', '{"plan":"pro","seats":5}'), ('Bob', '{"plan":"free","seats":"2"}'), ('Cy', '{"plan":"team","vip":true}'), ('Dee', '{}')`,
};

/** Custom fields as a contact's: numbers stored as numbers and as text, booleans, JSON null. */
const ROWS = [
  {
    id: "a",
    name: "Ada Lovelace",
    n: 5,
    m: 3,
    at: 100,
    fields: { plan: "pro", seats: 5, vip: true, score: 4.5 },
    flag: true,
  },
  {
    id: "b",
    name: "bob_smith",
    n: null,
    m: 2,
    at: null,
    fields: { plan: "free", seats: "2", vip: "true", score: "10" },
    flag: false,
  },
  {
    id: "c",
    name: "100% Cy",
    n: 1,
    m: 1,
    at: 300,
    fields: { plan: "team", seats: 2, vip: false, score: " 7 " },
    flag: true,
  },
  {
    id: "d",
    name: "back\\slash",
    n: null,
    m: 7,
    at: 200,
    fields: { plan: null, seats: 2.5, score: "1e2" },
    flag: false,
  },
  {
    id: "e",
    name: "ÉMILE ada",
    n: 3,
    m: 4,
    at: null,
    fields: { vip: 1, seats: "2.5", score: "-3" },
    flag: false,
  },
  {
    id: "f",
    name: "Fay",
    n: 1,
    m: 5,
    at: 50,
    fields: { plan: "PRO plus", vip: "false", seats: "x" },
    flag: true,
  },
];

// biome-ignore lint/suspicious/noExplicitAny: one case table drives both dialects' handles and tables
type Any = any;

interface Target {
  name: "sqlite" | "postgres";
  /** How the target is named in the tests' titles (its name unless set). */
  label?: string;
  table: Any;
  store(): Promise<Store<Any, Any>>;
  /** Runs `query` prepared, with `values` for its placeholders. */
  prepared(query: Any, values: Record<string, unknown>): Promise<Any[]>;
}

const dirs: string[] = [];
const opened: Store<Any, Any>[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  setDialect("sqlite");
});

function once(open: () => Promise<Store<Any, Any>>): () => Promise<Store<Any, Any>> {
  let store: Promise<Store<Any, Any>> | undefined;
  return () => {
    store ??= open().then(async (s) => {
      opened.push(s);
      await s.tx(async (tx: Any) => {
        await tx.insert(s.dialect === "postgres" ? pgItems : sqliteItems).values(ROWS);
      });
      return s;
    });
    return store;
  };
}

const sqliteTarget: Target = {
  name: "sqlite",
  table: sqliteItems,
  store: once(async () => {
    const dir = mkdtempSync(join(tmpdir(), "outreach-dialect-"));
    dirs.push(dir);
    const store = createSqliteStore(join(dir, "dialect.db"));
    await store.exec(CREATE.sqlite);
    await store.exec(CONTACTS.sqlite);
    await store.exec(CONTACTS.rows);
    return store;
  }),
  prepared: async (query, values) => await query.prepare().all(values),
};

const pg = testsRunOn("postgres") ? await testPostgres() : null;
if (pg && "skip" in pg) console.log(`dialect parity on PostgreSQL SKIPPED: ${pg.skip}`);

const targets: Target[] = testsRunOn("sqlite") ? [sqliteTarget] : [];
if (pg && "url" in pg) {
  const adminUrl = pg.url;
  let statement = 0;
  targets.push({
    name: "postgres",
    table: pgItems,
    store: once(async () => {
      const store = createPgStore(await freshDatabase(adminUrl), { max: 2 });
      await store.exec(CREATE.postgres);
      await store.exec(CONTACTS.postgres);
      await store.exec(CONTACTS.rows);
      return store;
    }),
    prepared: async (query, values) => await query.prepare(`dialect_${statement++}`).execute(values),
  });
  // The suite's cluster has the C locale; a production database often a UTF-8 one, under which
  // PostgreSQL folds and compares non-ASCII text otherwise. The helpers must answer the same there.
  let utf8: string | null = null;
  try {
    utf8 = await freshDatabaseWithLocale(adminUrl, "C.utf8");
  } catch (error) {
    console.log(`dialect parity on a PostgreSQL database with the C.utf8 locale SKIPPED: ${error}`);
  }
  if (utf8) {
    const url = utf8;
    targets.push({
      name: "postgres",
      label: "postgres (C.utf8)",
      table: pgItems,
      store: once(async () => {
        const store = createPgStore(url, { max: 2 });
        await store.exec(CREATE.postgres);
        await store.exec(CONTACTS.postgres);
        await store.exec(CONTACTS.rows);
        return store;
      }),
      prepared: async (query, values) => await query.prepare(`dialect_utf8_${statement++}`).execute(values),
    });
  }
}

const thousand = (hits: string[]) => [
  ...hits,
  ...Array.from({ length: 1000 - hits.length }, (_, i) => `missing-${i}`),
];

for (const target of targets) {
  const t = target.table;
  /** The current target's store, with this process's SQL spelled for it. */
  const open = async () => {
    setDialect(target.name);
    return await target.store();
  };
  /** The ids of the rows where `where` holds, sorted. */
  const ids = async (where: SQL | undefined) => {
    const store = await open();
    const rows = await store.rows<{ id: string }>(
      store.db.select({ id: t.id }).from(t).where(where).orderBy(asc(t.id)),
    );
    return rows.map((row) => row.id);
  };

  describe(`dialect helpers on ${target.label ?? target.name}`, () => {
    it("contains text case-insensitively (ASCII letters only), wildcards matched literally", async () => {
      expect({
        ada: await ids(containsText(t.name, "ada")),
        ADA: await ids(containsText(t.name, "ADA")),
        percent: await ids(containsText(t.name, "%")),
        underscore: await ids(containsText(t.name, "_")),
        joined: await ids(containsText(t.name, "b_s")),
        backslash: await ids(containsText(t.name, "\\")),
        empty: await ids(containsText(t.name, "")),
        prefix: await ids(likeInsensitive(t.name, "ada%")),
        pattern: await ids(likeInsensitive(t.name, "b_b%")),
        // Only ASCII letters fold, whatever the database's locale: É is not é.
        accented: await ids(containsText(t.name, "émile")),
        accentedAsWritten: await ids(containsText(t.name, "ÉMile")),
        lowerEqual: await ids(sameLowerCase(t.name, sql`${"ÉMILE ADA"}`)),
        lowerAccented: await ids(sameLowerCase(t.name, sql`${"émile ada"}`)),
      }).toEqual({
        ada: ["a", "e"],
        ADA: ["a", "e"],
        percent: ["c"],
        underscore: ["b"],
        joined: ["b"],
        backslash: ["d"],
        empty: ["a", "b", "c", "d", "e", "f"],
        prefix: ["a"],
        pattern: ["b"],
        accented: [],
        accentedAsWritten: ["e"],
        lowerEqual: ["e"],
        lowerAccented: [],
      });
    });

    it("matches lists of 0, 1 and 1,000 values bound as one parameter", async () => {
      expect({
        none: await ids(inJsonList(t.id, [])),
        one: await ids(inJsonList(t.id, ["c"])),
        thousand: await ids(inJsonList(t.id, thousand(["f", "a"]))),
        numbers: await ids(inJsonList(t.n, [5, 1])),
        none_of: await ids(sql`NOT (${inJsonList(t.id, ["a", "b"])})`),
      }).toEqual({
        none: [],
        one: ["c"],
        thousand: ["a", "f"],
        numbers: ["a", "c", "f"],
        none_of: ["c", "d", "e", "f"],
      });
    });

    it("matches a list bound to a prepared statement's placeholder", async () => {
      const store = await open();
      const query = store.db
        .select({ id: t.id })
        .from(t)
        .where(inJsonListParam(t.id, "ids"))
        .orderBy(asc(t.id));
      const run = async (list: string[]) =>
        (await target.prepared(query, { ids: jsonList(list) })).map((row: { id: string }) => row.id);
      expect({
        none: await run([]),
        one: await run(["b"]),
        thousand: await run(thousand(["e", "d"])),
      }).toEqual({
        none: [],
        one: ["b"],
        thousand: ["d", "e"],
      });
    });

    it("reads JSON fields as text: JSON null and a missing key are absent", async () => {
      const plan = jsonField(t.fields, "plan");
      expect({
        pro: await ids(sql`${plan} = ${"pro"}`),
        present: await ids(sql`${plan} IS NOT NULL`),
        absent: await ids(sql`${plan} IS NULL`),
        contains: await ids(likeInsensitive(plan, "%RO%")),
        quoted: await ids(sql`${jsonField(t.fields, "x') OR 1=1 --")} IS NOT NULL`),
      }).toEqual({
        pro: ["a"],
        present: ["a", "b", "c", "f"],
        absent: ["d", "e"],
        contains: ["a", "f"],
        quoted: [],
      });
    });

    it("compares JSON fields with numbers and their text form alike, and booleans", async () => {
      const seats = (values: (string | number | boolean)[]) => ids(jsonIn(t.fields, "seats", values));
      expect({
        // A segment rule's values: 2 binds as 2 and "2", "2.5" as "2.5" and 2.5 (segments.ts variants).
        two: await seats([2, "2"]),
        two_number_only: await seats([2]),
        two_text_only: await seats(["2"]),
        two_and_a_half: await seats(["2.5", 2.5]),
        vip_true: await ids(jsonEquals(t.fields, "vip", true)),
        vip_false: await ids(jsonEquals(t.fields, "vip", false)),
        vip_true_or_text: await ids(jsonIn(t.fields, "vip", [1, "true"])),
        plan: await ids(jsonIn(t.fields, "plan", ["pro", "team"])),
        not_plan: await ids(
          sql`(${jsonField(t.fields, "plan")} IS NULL OR NOT ${jsonIn(t.fields, "plan", ["pro"])})`,
        ),
        empty: await ids(jsonIn(t.fields, "plan", [])),
      }).toEqual({
        two: ["b", "c"],
        two_number_only: ["c"],
        two_text_only: ["b"],
        two_and_a_half: ["d", "e"],
        vip_true: ["a", "e"],
        vip_false: ["c"],
        vip_true_or_text: ["a", "b", "e"],
        plan: ["a", "c"],
        not_plan: ["b", "c", "d", "e", "f"],
        empty: [],
      });
    });

    it("reads JSON fields as numbers: numbers, numeric text and booleans", async () => {
      const score = jsonNumber(t.fields, "score");
      const seats = jsonNumber(t.fields, "seats");
      const vip = jsonNumber(t.fields, "vip");
      expect({
        score_over_4: await ids(sql`${score} > ${4}`),
        score_below_0: await ids(sql`${score} < ${0}`),
        seats_at_least_2: await ids(sql`${seats} >= ${2}`),
        seats_exactly_2_5: await ids(sql`${seats} = ${2.5}`),
        vip_is_1: await ids(sql`${vip} = ${1}`),
      }).toEqual({
        score_over_4: ["a", "b", "c", "d"],
        score_below_0: ["e"],
        seats_at_least_2: ["a", "b", "c", "d", "e"],
        seats_exactly_2_5: ["d", "e"],
        vip_is_1: ["a", "e"],
      });
    });

    it("orders NULLs as SQLite does: first ascending, last descending", async () => {
      const store = await open();
      const order = async (...by: SQL[]) =>
        (
          await store.rows<{ id: string }>(
            store.db
              .select({ id: t.id })
              .from(t)
              .orderBy(...by, asc(t.id)),
          )
        ).map((row) => row.id);
      expect({
        desc_nulls_last: await order(nullsLast(desc(t.n))),
        asc_nulls_first: await order(nullsFirst(asc(t.n))),
        at_desc: await order(nullsLast(sql`${t.at} DESC`)),
        asc_nulls_last: await order(nullsLast(asc(t.at))),
      }).toEqual({
        desc_nulls_last: ["a", "e", "c", "f", "b", "d"],
        asc_nulls_first: ["b", "d", "c", "f", "e", "a"],
        at_desc: ["c", "d", "a", "f", "b", "e"],
        asc_nulls_last: ["f", "a", "d", "c", "b", "e"],
      });
    });

    it("greatest, distinctFrom with NULLs, boolean literals", async () => {
      const store = await open();
      const values = async (expr: SQL) =>
        (
          await store.rows<{ id: string; v: unknown }>(
            store.db.select({ id: t.id, v: expr }).from(t).orderBy(asc(t.id)),
          )
        ).map((row) => Number(row.v));
      expect({
        greatest: await values(greatest(t.m, 3)),
        greatest_of_coalesced: await values(greatest(sql`coalesce(${t.at}, 0)`, 150)),
        distinct_from_1: await ids(distinctFrom(t.n, 1)),
        distinct_from_null: await ids(distinctFrom(t.n, null)),
        distinct_columns: await ids(distinctFrom(t.at, t.n)),
        flag_true: await ids(sql`${t.flag} = ${boolValue(true)}`),
        flag_false: await ids(sql`${t.flag} = ${boolValue(false)}`),
        always: await ids(sqlTrue()),
        never: await ids(sqlFalse()),
      }).toEqual({
        greatest: [3, 3, 3, 7, 4, 5],
        greatest_of_coalesced: [150, 150, 300, 200, 150, 150],
        distinct_from_1: ["a", "b", "d", "e"],
        distinct_from_null: ["a", "c", "e", "f"],
        distinct_columns: ["a", "c", "d", "e", "f"],
        flag_true: ["a", "c", "f"],
        flag_false: ["b", "d", "e"],
        always: ["a", "b", "c", "d", "e", "f"],
        never: [],
      });
    });

    it("compiles segment custom-field rules (segments.ts) to the same matches", async () => {
      const store = await open();
      const match = async (key: string, op: string, value?: unknown) => {
        const rule = { kind: "custom", key, op, value } as Rule;
        const where = compileRule(rule, "ws", Date.UTC(2026, 0, 1));
        const rows = await store.rows<{ id: string }>(
          sql`SELECT id FROM contacts WHERE ${where} ORDER BY id`,
        );
        return rows.map((row) => row.id);
      };
      expect({
        in: await match("plan", "in", ["pro", "team"]),
        neq: await match("plan", "neq", "pro"),
        not_in: await match("plan", "not_in", ["pro", "free"]),
        gte: await match("seats", "gte", 2),
        lt: await match("seats", "lt", 3),
        eq_number: await match("seats", "eq", 2),
        eq_text: await match("seats", "eq", "5"),
        eq_true: await match("vip", "eq", true),
        eq_true_text: await match("vip", "eq", "true"),
        neq_true: await match("vip", "neq", true),
        exists: await match("plan", "exists"),
        not_exists: await match("plan", "not_exists"),
        contains: await match("plan", "contains", "R"),
        starts_with: await match("plan", "starts_with", "T"),
        text_after: await match("plan", "after", "g"),
      }).toEqual({
        in: ["Ada", "Cy"],
        neq: ["Bob", "Cy", "Dee"],
        not_in: ["Cy", "Dee"],
        gte: ["Ada", "Bob"],
        lt: ["Bob"],
        eq_number: ["Bob"],
        eq_text: ["Ada"],
        eq_true: ["Cy"],
        eq_true_text: ["Cy"],
        neq_true: ["Ada", "Bob", "Dee"],
        exists: ["Ada", "Bob", "Cy"],
        not_exists: ["Dee"],
        contains: ["Ada", "Bob"],
        starts_with: ["Cy"],
        text_after: ["Ada", "Cy"],
      });
    });

    it("counts the rows where a condition holds, as numbers, 0 over no rows", async () => {
      const store = await open();
      const grouped = await store.rows<{ flag: unknown; n: number; big: number; nulls: number }>(
        store.db
          .select({
            flag: t.flag,
            n: count(),
            big: countWhere(sql`${t.m} > 2`),
            nulls: countWhere(sql`${t.at} IS NULL`),
          })
          .from(t)
          .groupBy(t.flag)
          .orderBy(asc(t.flag)),
      );
      const none = await store.first<{ n: number; total: number }>(
        store.db
          .select({
            n: countWhere(sql`${t.m} > 2`),
            total: sql<number>`coalesce(sum(${t.m}), 0)`.mapWith(Number),
          })
          .from(t)
          .where(sqlFalse()),
      );
      const all = await store.first<{ n: number; total: number }>(
        store.db
          .select({
            n: sql<number>`count(*)`.mapWith(Number),
            total: sql<number>`sum(${t.m})`.mapWith(Number),
          })
          .from(t),
      );
      expect({
        grouped: grouped.map((row) => ({ ...row, flag: Boolean(row.flag) })),
        none,
        all,
        types: [typeof grouped[0]?.big, typeof all?.n, typeof all?.total],
      }).toEqual({
        grouped: [
          { flag: false, n: 3, big: 2, nulls: 2 },
          { flag: true, n: 3, big: 2, nulls: 0 },
        ],
        none: { n: 0, total: 0 },
        all: { n: 6, total: 22 },
        types: ["number", "number", "number"],
      });
    });

    it("makes a second locking read of a row wait for the transaction holding it, then see its write", async () => {
      const store = await open();
      const lockedRead = (tx: Any) =>
        lockedForUpdate(tx.select({ name: t.name }).from(t).where(sql`${t.id} = 'a'`));
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked = () => {};
      const lockTaken = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const first = store.tx(async (tx: Any) => {
        await lockedRead(tx);
        locked();
        await held;
        await tx.update(t).set({ name: "Ada King" }).where(sql`${t.id} = 'a'`);
      });
      await lockTaken;
      const second = store.tx(async (tx: Any) => (await lockedRead(tx))[0]?.name);
      await Bun.sleep(100);
      release();
      await first;
      const seen = await second;
      await store.tx(async (tx: Any) => {
        await tx.update(t).set({ name: "Ada Lovelace" }).where(sql`${t.id} = 'a'`);
      });
      expect(seen).toBe("Ada King");
    });

    // On PostgreSQL every transaction has its own connection: statements built once are copied for
    // each, bound to its connection, so they see (and take part in) the transaction they run in.
    it.if(target.name === "postgres")(
      "runs statements prepared once on the connection of the transaction at hand",
      async () => {
        const store = await open();
        await store.exec("CREATE TABLE bound_items (id text PRIMARY KEY)");
        const counted = preparedPerConnection((db: Any) =>
          db
            .select({ n: count() })
            .from(pgTable("bound_items", { id: pgText().primaryKey() }))
            .prepare(),
        );
        const countOn = async (db: Any) => Number((await counted(db).execute())[0].n);
        expect(await countOn(store.db)).toBe(0);
        const seen: number[] = [];
        await expect(
          store.tx(async (tx: Any) => {
            await tx.execute(sql`INSERT INTO bound_items VALUES ('a')`);
            seen.push(await countOn(tx));
            await store.tx(async (inner: Any) => {
              await inner.execute(sql`INSERT INTO bound_items VALUES ('b')`);
              seen.push(await countOn(inner));
            });
            throw new Error("roll back");
          }),
        ).rejects.toThrow("roll back");
        // Each transaction saw its own uncommitted rows; the rollback left none behind.
        expect(seen).toEqual([1, 2]);
        expect(await countOn(store.db)).toBe(0);
        // A second transaction gets its own copy, not the first one's connection.
        await store.tx(async (tx: Any) => {
          await tx.execute(sql`INSERT INTO bound_items VALUES ('c')`);
          expect(await countOn(tx)).toBe(1);
        });
        expect(await countOn(store.db)).toBe(1);
      },
    );

    // PostgreSQL's many-row updates (recordStatuses, settleRecipients, updateRowsByKey) read their
    // rows from one JSON parameter; SQLite runs a prepared statement per row instead.
    it.if(target.name === "postgres")(
      "updates many rows from one JSON parameter: text with quotes and non-ASCII, bigints, booleans, NULLs",
      async () => {
        const store = await open();
        await store.exec(
          "CREATE TABLE json_rows_items (id text PRIMARY KEY, name text, at bigint, flag boolean NOT NULL)",
        );
        await store.exec(
          "INSERT INTO json_rows_items VALUES ('a', 'x', 1, false), ('b', 'y', 2, true), ('c', 'z', 3, false)",
        );
        const updates = [
          { id: "a", name: `O'Brien "quoted" \\ back\\slash`, at: 1_795_875_984_905, flag: true },
          { id: "b", name: null, at: null, flag: false },
          { id: "missing", name: "nobody", at: 9, flag: true },
          { id: "c", name: "Émile 😀", at: 2 ** 53 - 1, flag: true },
        ];
        await store.tx(async (tx: Any) => {
          await withJsonRows(
            updates,
            [
              ["id", "text"],
              ["name", "text"],
              ["at", "bigint"],
              ["flag", "boolean"],
            ],
            (u) => [u.id, u.name, u.at, u.flag],
            async (v) =>
              await tx.execute(
                sql`UPDATE json_rows_items AS i SET name = v.name, at = v.at, flag = v.flag FROM ${v} WHERE i.id = v.id`,
              ),
          );
        });
        const rows = await store.rows<{ id: string; name: string | null; at: string | null; flag: boolean }>(
          sql`SELECT id, name, at::text AS at, flag FROM json_rows_items ORDER BY id`,
        );
        expect(rows).toEqual([
          { id: "a", name: `O'Brien "quoted" \\ back\\slash`, at: "1795875984905", flag: true },
          { id: "b", name: null, at: null, flag: false },
          { id: "c", name: "Émile 😀", at: String(2 ** 53 - 1), flag: true },
        ]);
      },
    );
  });
}
