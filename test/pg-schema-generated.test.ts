/**
 * The one table spec (docs/postgres.md): the PostgreSQL tables (src/db/schema/pg/) are generated
 * from the SQLite ones, and each dialect's migrations are up to date with its tables. Fails when a
 * table changed and `npm run db:generate` was not run. Needs no PostgreSQL.
 */
import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  generateDrizzleJson,
  generateMigration,
  generateSQLiteDrizzleJson,
  generateSQLiteMigration,
} from "drizzle-kit/api";
import { is } from "drizzle-orm";
import { PgTable, getTableConfig as pgTableConfig } from "drizzle-orm/pg-core";
import { SQLiteTable, getTableConfig as sqliteTableConfig } from "drizzle-orm/sqlite-core";
import { stalePgSchemaFiles } from "../scripts/generate-pg-schema";
import { embeddedMigrations, embeddedPgMigrations } from "../src/db/migrations.generated";
import * as sqliteSchema from "../src/db/schema";
import * as pgSchema from "../src/db/schema/pg";

const root = join(import.meta.dir, "..");

// The rows have the same TypeScript shape in both dialects (the domain is typed against SQLite's),
// but for conversations.search_key: an identity column, never null on PostgreSQL.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Lite = typeof sqliteSchema;
type Pg = typeof pgSchema;
type TableName = { [K in keyof Lite]: Lite[K] extends { $inferSelect: object } ? K : never }[keyof Lite];
type Row<S, K extends keyof S> = S[K] extends { $inferSelect: infer R } ? R : never;
type Differ = {
  [K in TableName]: Same<Row<Lite, K>, Row<Pg, K>> extends true ? never : K;
}[TableName];
const onlyConversationsDiffer: Same<Differ, "conversations"> = true;
const searchKey: Same<
  Row<Pg, "conversations">,
  Omit<Row<Lite, "conversations">, "searchKey"> & { searchKey: number }
> = true;

/** A migrations folder's journal tags, in order, and its latest snapshot. */
function journal(folder: string): { tags: string[]; snapshot: unknown } {
  const entries = (
    JSON.parse(readFileSync(join(root, folder, "meta/_journal.json"), "utf8")) as {
      entries: { idx: number; tag: string }[];
    }
  ).entries.sort((a, b) => a.idx - b.idx);
  const last = entries[entries.length - 1];
  const snapshot = JSON.parse(
    readFileSync(join(root, folder, `meta/${String(last.idx).padStart(4, "0")}_snapshot.json`), "utf8"),
  );
  return { tags: entries.map((e) => e.tag), snapshot };
}

describe("one table spec for SQLite and PostgreSQL", () => {
  it("src/db/schema/pg is what scripts/generate-pg-schema.ts writes from the SQLite tables", async () => {
    expect(await stalePgSchemaFiles()).toEqual([]);
  });

  it("exports the same names as src/db/schema, and the same tables with the same columns", () => {
    expect(Object.keys(pgSchema).sort()).toEqual(Object.keys(sqliteSchema).sort());
    const sqlite = sqliteSchema as Record<string, unknown>;
    for (const [name, table] of Object.entries(pgSchema as Record<string, unknown>)) {
      if (!is(table, PgTable)) {
        expect(is(sqlite[name], SQLiteTable)).toBe(false);
        continue;
      }
      const pg = pgTableConfig(table);
      const lite = sqliteTableConfig(sqlite[name] as SQLiteTable);
      expect(pg.name).toBe(lite.name);
      expect(pg.columns.map((c) => c.name)).toEqual(lite.columns.map((c) => c.name));
      expect(pg.columns.map((c) => c.notNull || c.generatedIdentity !== undefined)).toEqual(
        lite.columns.map((c) => c.notNull || (c.name === "search_key" && lite.name === "conversations")),
      );
      expect(pg.indexes.map((i) => [i.config.name, i.config.unique, !!i.config.where])).toEqual(
        lite.indexes.map((i) => [i.config.name, i.config.unique, !!i.config.where]),
      );
      expect(pg.primaryKeys.length).toBe(lite.primaryKeys.length);
      expect(pg.foreignKeys.length).toBe(lite.foreignKeys.length);
    }
  });

  it("gives rows the same TypeScript shape as SQLite's (checked by tsc)", () => {
    expect(onlyConversationsDiffer).toBe(true);
    expect(searchKey).toBe(true);
  });

  it("maps the column types as docs/postgres.md says", () => {
    const types = (table: PgTable) =>
      Object.fromEntries(pgTableConfig(table).columns.map((c) => [c.name, c.getSQLType()]));
    const contacts = types(pgSchema.contacts);
    expect(contacts.fields).toBe("jsonb");
    expect(contacts.opted_in).toBe("boolean");
    expect(contacts.created_at).toBe("bigint");
    expect(types(pgSchema.events).data).toBe("json");
    expect(types(pgSchema.workspaces).cost_sms_segment).toBe("double precision");
    expect(types(pgSchema.jobs).run_at).toBe("bigint");
    expect(types(pgSchema.messageDailyCounts).day).toBe("integer");
    const searchKey = pgTableConfig(pgSchema.conversations).columns.find((c) => c.name === "search_key");
    expect(searchKey?.generatedIdentity?.type).toBe("byDefault");
  });

  it("migrations/ and migrations/pg/ are up to date with the tables (drizzle-kit has nothing to generate)", async () => {
    const lite = journal("migrations");
    const liteSnapshot = lite.snapshot as Parameters<typeof generateSQLiteMigration>[0];
    const liteNow = await generateSQLiteDrizzleJson(sqliteSchema, liteSnapshot.id);
    expect(await generateSQLiteMigration(liteSnapshot, liteNow)).toEqual([]);

    const pg = journal("migrations/pg");
    const pgSnapshot = pg.snapshot as Parameters<typeof generateMigration>[0];
    const pgNow = generateDrizzleJson(pgSchema, pgSnapshot.id);
    expect(await generateMigration(pgSnapshot, pgNow)).toEqual([]);
  });

  it("embeds every migration of both journals (src/db/migrations.generated.ts)", () => {
    expect(embeddedMigrations.map((m) => m.tag)).toEqual(journal("migrations").tags);
    expect(embeddedPgMigrations.map((m) => m.tag)).toEqual(journal("migrations/pg").tags);
  });
});
