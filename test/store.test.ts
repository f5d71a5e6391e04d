/**
 * The store's contract (src/db/store), run against SQLite and against PostgreSQL (a throwaway
 * cluster: test/support/postgres.ts; the PostgreSQL half is skipped, with one line saying why,
 * when none can be started).
 */
import { afterAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc, eq, inArray, sql } from "drizzle-orm";
import { integer as pgInteger, pgTable, text as pgText } from "drizzle-orm/pg-core";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createPgStore, createSqliteStore, type Store } from "../src/db/store";
import { installPgTerminals, MAX_PREPARED_PARAMS } from "../src/db/store/pg-terminals";
import { createPgClient, parseInt8, parseNumeric } from "../src/db/store/postgres";
import { freshDatabase, testPostgres, testsRunOn } from "./support/postgres";

const sqliteItems = sqliteTable("store_items", { id: text().primaryKey(), n: integer().notNull() });
const pgItems = pgTable("store_items", { id: pgText().primaryKey(), n: pgInteger().notNull() });

interface Item {
  id: string;
  n: number;
}

// biome-ignore lint/suspicious/noExplicitAny: one case table drives both dialects' handles
type AnyHandle = any;

/** What a case needs from a dialect: a fresh store with the table, and the table to query. */
interface Target {
  name: "sqlite" | "postgres";
  open(): Promise<Store<AnyHandle, AnyHandle>>;
  table: typeof sqliteItems | typeof pgItems;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const CREATE = "CREATE TABLE store_items (id text PRIMARY KEY, n integer NOT NULL)";

const sqliteTarget: Target = {
  name: "sqlite",
  table: sqliteItems,
  async open() {
    const dir = mkdtempSync(join(tmpdir(), "outreach-store-"));
    dirs.push(dir);
    const store = createSqliteStore(join(dir, "store.db"));
    await store.exec(CREATE);
    return store;
  },
};

const pg = testsRunOn("postgres") ? await testPostgres() : null;
if (pg && "skip" in pg) console.log(`store contract on PostgreSQL SKIPPED: ${pg.skip}`);

const targets: Target[] = testsRunOn("sqlite") ? [sqliteTarget] : [];
if (pg && "url" in pg) {
  const adminUrl = pg.url;
  targets.push({
    name: "postgres",
    table: pgItems,
    async open() {
      const store = createPgStore(await freshDatabase(adminUrl), { max: 4 });
      await store.exec(CREATE);
      return store;
    },
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const target of targets) {
  const { table } = target;
  const insert = (tx: AnyHandle, id: string, n = 1) => tx.insert(table).values({ id, n });
  const all = (store: Store<AnyHandle, AnyHandle>) =>
    store.rows<Item>(store.db.select().from(table).orderBy(asc(table.id)));
  const ids = async (store: Store<AnyHandle, AnyHandle>) => (await all(store)).map((row) => row.id);

  describe(`store on ${target.name}: transactions`, () => {
    it("commits when the callback resolves, and answers its value", async () => {
      const store = await target.open();
      const value = await store.tx(async (tx) => {
        await insert(tx, "a");
        await insert(tx, "b");
        return "done";
      });
      expect({ value, ids: await ids(store) }).toEqual({ value: "done", ids: ["a", "b"] });
      await store.close();
    });

    it("rolls everything back when the callback throws, and rethrows", async () => {
      const store = await target.open();
      const outcome = await store
        .tx(async (tx) => {
          await insert(tx, "a");
          throw new Error("no");
        })
        .catch((error: Error) => error.message);
      expect({ outcome, ids: await ids(store) }).toEqual({ outcome: "no", ids: [] });
      await store.close();
    });

    it("rolls back a failed statement's transaction (a duplicate key)", async () => {
      const store = await target.open();
      await store.tx((tx) => insert(tx, "a"));
      const failed = await store
        .tx(async (tx) => {
          await insert(tx, "b");
          await insert(tx, "a");
        })
        .then(
          () => false,
          () => true,
        );
      expect({ failed, ids: await ids(store) }).toEqual({ failed: true, ids: ["a"] });
      await store.close();
    });

    it("a nested transaction's error rolls back everything when nobody catches it", async () => {
      const store = await target.open();
      const outcome = await store
        .tx(async (tx) => {
          await insert(tx, "outer");
          await store.tx(async (inner) => {
            await insert(inner, "inner");
            throw new Error("inner failed");
          });
        })
        .catch((error: Error) => error.message);
      expect({ outcome, ids: await ids(store) }).toEqual({ outcome: "inner failed", ids: [] });
      await store.close();
    });

    it("a nested transaction caught by the outer one undoes only its own part", async () => {
      const store = await target.open();
      await store.tx(async (tx) => {
        await insert(tx, "a");
        await store
          .tx(async (inner) => {
            await insert(inner, "b");
            throw new Error("inner failed");
          })
          .catch(() => {});
        await insert(tx, "c");
      });
      expect(await ids(store)).toEqual(["a", "c"]);
      await store.close();
    });

    it("takes an isolation level", async () => {
      const store = await target.open();
      await store.tx((tx) => insert(tx, "a"), { isolation: "serializable" });
      expect(await ids(store)).toEqual(["a"]);
      await store.close();
    });
  });

  describe(`store on ${target.name}: batched writes`, () => {
    it("commits the writes of one moment, undoes a failing one alone, and finishes collected values", async () => {
      const store = await target.open();
      const finished: string[][] = [];
      const write = (id: string, fail = false) =>
        store.writeBatched(async (tx, batch) => {
          const seen = batch.collect<string[]>(
            "seen",
            () => [],
            (_tx, value) => {
              finished.push([...value]);
            },
          );
          await insert(tx, id);
          if (fail) throw new Error(`${id} failed`);
          seen.push(id);
          return id;
        });
      const outcomes = await Promise.allSettled([write("a"), write("b", true), write("c")]);
      expect({
        outcomes: outcomes.map((o) => (o.status === "fulfilled" ? o.value : (o.reason as Error).message)),
        ids: await ids(store),
        finished: finished.flat().sort(),
        finishes: finished.length,
      }).toEqual({
        outcomes: ["a", "b failed", "c"],
        ids: ["a", "c"],
        finished: ["a", "c"],
        // SQLite: one transaction for the turn, so one finish; PostgreSQL: one per write (the failed one rolled back).
        finishes: target.name === "sqlite" ? 1 : 2,
      });
      await store.close();
    });
  });

  describe(`store on ${target.name}: batched writes inside a transaction`, () => {
    it("join the transaction: its rollback undoes them, and their collected values are finished", async () => {
      const store = await target.open();
      const finished: string[] = [];
      const outcome = await store
        .tx(async (tx) => {
          await insert(tx, "a");
          const id = await store.writeBatched(async (inner, batch) => {
            batch.collect(
              "k",
              () => "value",
              (_tx, value) => {
                finished.push(value);
              },
            );
            await insert(inner, "b");
            return "b";
          });
          const seen = await store.rows<Item>(tx.select().from(table).orderBy(asc(table.id)));
          throw new Error(`${id}: ${seen.map((row) => row.id).join(",")}`);
        })
        .catch((error: Error) => error.message);
      expect({ outcome, finished, ids: await ids(store) }).toEqual({
        outcome: "b: a,b",
        finished: ["value"],
        ids: [],
      });
      await store.close();
    });
  });

  describe(`store on ${target.name}: first, rows, exec, ping`, () => {
    it("reads through first and rows, builders and raw SQL alike", async () => {
      const store = await target.open();
      await store.tx(async (tx) => {
        for (const [id, n] of [
          ["a", 1],
          ["b", 2],
          ["c", 3],
        ] as const)
          await insert(tx, id, n);
      });
      const cases: [string, () => Promise<unknown>, unknown][] = [
        [
          "first of a select takes one row",
          () => store.first(store.db.select().from(table).orderBy(asc(table.id))),
          { id: "a", n: 1 },
        ],
        [
          "first of nothing",
          () => store.first(store.db.select().from(table).where(sql`${table.n} > 9`)),
          undefined,
        ],
        ["rows of a select", async () => (await all(store)).length, 3],
        [
          "first of raw SQL: count(*) is a number",
          () => store.first(sql`select count(*) as c from store_items`),
          { c: 3 },
        ],
        [
          "rows of raw SQL",
          () => store.rows(sql`select id from store_items where n >= 2 order by id`),
          [{ id: "b" }, { id: "c" }],
        ],
        [
          "sum of integers is a number",
          () => store.first(sql`select sum(n) as s from store_items`),
          { s: 6 },
        ],
      ];
      for (const [name, run, expected] of cases)
        expect({ name, got: await run() }).toEqual({ name, got: expected });
      await store.close();
    });

    it("reads its own writes inside a transaction", async () => {
      const store = await target.open();
      const seen = await store.tx(async (tx) => {
        await insert(tx, "a");
        return store.first(sql`select count(*) as c from store_items`);
      });
      expect(seen).toEqual({ c: 1 });
      await store.close();
    });

    it("pings an open database, and not a closed one", async () => {
      const store = await target.open();
      const before = await store.ping().then(() => "ok");
      await store.close();
      const after = await store.ping().then(
        () => "ok",
        () => "refused",
      );
      expect({ before, after }).toEqual({ before: "ok", after: "refused" });
    });
  });
}

if (testsRunOn("sqlite"))
  describe("store on sqlite: the one writer", () => {
    it("runs two concurrent transactions one after the other", async () => {
      const store = await sqliteTarget.open();
      const steps: string[] = [];
      const counter = async (name: string) =>
        store.tx(async (tx) => {
          steps.push(`${name} begins`);
          const row = await store.first<Item>(tx.select().from(sqliteItems));
          await sleep(20);
          if (row) await tx.update(sqliteItems).set({ n: row.n + 1 });
          else await tx.insert(sqliteItems).values({ id: "counter", n: 1 });
          steps.push(`${name} ends`);
        });
      await Promise.all([counter("first"), counter("second")]);
      expect({ steps, rows: await store.rows(store.db.select().from(sqliteItems)) }).toEqual({
        steps: ["first begins", "first ends", "second begins", "second ends"],
        rows: [{ id: "counter", n: 2 }],
      });
      await store.close();
    });

    it("runs a write outside a transaction after the open one, never inside it", async () => {
      const store = await sqliteTarget.open();
      // The transaction writes, waits, then fails: its rollback must not take the other write along.
      const failing = store
        .tx(async (tx) => {
          await tx.insert(sqliteItems).values({ id: "in-tx", n: 1 });
          await sleep(20);
          throw new Error("rolled back");
        })
        .catch((error: Error) => error.message);
      await sleep(5);
      // Started (not just built) while the transaction is open.
      const outside = store.db
        .insert(sqliteItems)
        .values({ id: "outside", n: 2 })
        .then(() => "written");
      expect(await failing).toBe("rolled back");
      expect(await outside).toBe("written");
      expect(await store.rows(store.db.select().from(sqliteItems))).toEqual([{ id: "outside", n: 2 }]);
      await store.close();
    });

    it("waits for an open transaction before closing", async () => {
      const store = await sqliteTarget.open();
      const writing = store.tx(async (tx) => {
        await sleep(20);
        await tx.insert(sqliteItems).values({ id: "a", n: 1 });
      });
      await store.close();
      await writing;
      const reopened = createSqliteStore(
        (store as unknown as { writer: { sqlite: { filename: string } } }).writer.sqlite.filename,
      );
      expect(await reopened.rows(reopened.db.select().from(sqliteItems))).toEqual([{ id: "a", n: 1 }]);
      await reopened.close();
    });
  });

if (testsRunOn("sqlite"))
  describe("PostgreSQL number parsing (no database)", () => {
    const cases: [string, (text: string) => unknown, string, unknown][] = [
      ["int8 within 2^53", parseInt8, "1700000000000", 1_700_000_000_000],
      ["a negative int8", parseInt8, "-42", -42],
      ["int8 beyond 2^53 stays exact text", parseInt8, "9007199254740993", "9007199254740993"],
      ["numeric with a fraction", parseNumeric, "2.5000000000000000", 2.5],
      ["a negative numeric", parseNumeric, "-0.125", -0.125],
      ["a whole numeric", parseNumeric, "120", 120],
      [
        "numeric with 16 significant digits stays text",
        parseNumeric,
        "1234567890.123456",
        "1234567890.123456",
      ],
      ["NaN stays text", parseNumeric, "NaN", "NaN"],
    ];
    for (const [name, parse, text, expected] of cases) {
      it(name, () => {
        expect({ name, value: parse(text) }).toEqual({ name, value: expected });
      });
    }
  });

describe.skipIf(!(pg && "url" in pg))("store on postgres: a session the server ends mid-transaction", () => {
  it("fails the transaction with the closed connection, and the process and the pool carry on", async () => {
    const store = createPgStore(await freshDatabase((pg as { url: string }).url), { max: 2 });
    try {
      await store.exec(CREATE);
      // The transaction's own session ended by the server: its ROLLBACK then goes to a closed
      // connection (postgres.js used to throw from an immediate there, ending the process).
      const outcome = store.tx(async (tx) => {
        await tx.insert(pgItems).values({ id: "gone", n: 1 });
        await tx.execute(sql`select pg_terminate_backend(pg_backend_pid())`);
      });
      await expect(outcome).rejects.toThrow(/CONNECTION_CLOSED|terminat/);
      await sleep(50);
      expect(await store.rows(store.db.select().from(pgItems))).toEqual([]);
      await store.tx(async (tx) => await tx.insert(pgItems).values({ id: "after", n: 2 }));
      expect((await store.rows<Item>(store.db.select().from(pgItems))).map((row) => row.id)).toEqual([
        "after",
      ]);
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(!(pg && "url" in pg))("postgres.js: a pool after a session the server ended", () => {
  it("ends with no query left waiting on the closed connection (no timeout needed)", async () => {
    const client = createPgClient(await freshDatabase((pg as { url: string }).url), { max: 2 });
    await expect(client`select pg_terminate_backend(pg_backend_pid())`).rejects.toThrow();
    expect([...(await client`select 1 as one`)]).toEqual([{ one: 1 }]);
    // No timeout: end waits for every connection's queries. The terminated connection used to
    // keep the query it rejected, and end waited for it for ever (scripts/patch-dependencies.mjs).
    await client.end();
  });
});

describe.skipIf(!(pg && "url" in pg))("store on postgres: statements prepared on their connection", () => {
  it("prepares builder and raw statements once per connection, and leaves long parameter lists unnamed", async () => {
    installPgTerminals();
    const store = createPgStore(await freshDatabase((pg as { url: string }).url), { max: 2 });
    try {
      await store.exec(CREATE);
      const prepared = await store.tx(async (tx: AnyHandle) => {
        for (let run = 0; run < 3; run++) {
          await tx.insert(pgItems).values({ id: `item-${run}`, n: run });
          await tx.select().from(pgItems).where(eq(pgItems.n, run));
          await tx.execute(sql`select n + ${run}::int as m from store_items where id = ${`item-${run}`}`);
          const many = Array.from({ length: MAX_PREPARED_PARAMS + 1 }, (_, i) => `item-${run}-${i}`);
          await tx.select().from(pgItems).where(inArray(pgItems.id, many));
        }
        // The session's own prepared statements: this transaction's connection.
        const rows = await tx.execute(sql`select statement from pg_prepared_statements`);
        return (rows as { statement: string }[]).map((row) => row.statement);
      });
      const count = (pattern: RegExp) => prepared.filter((statement) => pattern.test(statement)).length;
      expect(count(/^insert into "store_items"/)).toBe(1);
      expect(count(/^select .* from "store_items" where "store_items"\."n" = \$1$/)).toBe(1);
      expect(count(/^select n \+ \$1::int as m from store_items/)).toBe(1);
      expect(count(/ in \(\$1, /)).toBe(0);
    } finally {
      await store.close();
    }
  });
});
