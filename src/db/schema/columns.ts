import type { Column } from "drizzle-orm";
import { integer, text } from "drizzle-orm/sqlite-core";

/**
 * How a column is declared on PostgreSQL where its SQLite declaration leaves a choice. The tables
 * here are the one spec of both dialects: scripts/generate-pg-schema.ts writes the pg-core twins
 * (src/db/schema/pg/) from them and reads these marks.
 *
 * - `bigint`: an integer that outgrows int4 (epoch-ms timestamps, ever-growing versions);
 * - `identity`: an integer key the database hands out (SQLite's rowid);
 * - `jsonb`: a JSON column queried by path (jsonb reorders keys, so opaque payloads stay `json`).
 *
 * Unmarked: integer → `integer`, boolean → `boolean`, JSON → `json`, real → `double precision`.
 */
export type PgColumnType = "bigint" | "identity" | "jsonb";

const pgTypes = new WeakMap<object, PgColumnType>();

/**
 * Marks a column's PostgreSQL type (see PgColumnType); the SQLite column is unchanged. Keyed by
 * the builder's config, which the built column keeps.
 */
export function onPostgres<B>(builder: B, type: PgColumnType): B {
  pgTypes.set((builder as unknown as { config: object }).config, type);
  return builder;
}

/** The PostgreSQL type a column was marked with (onPostgres), if any. */
export function postgresTypeOf(column: Column): PgColumnType | undefined {
  return pgTypes.get((column as unknown as { config: object }).config);
}

/**
 * Shared column helpers. Timestamps are epoch milliseconds (integer here, bigint on PostgreSQL);
 * the API renders them as ISO 8601. Ids are UUID v7 strings made by the application.
 */
export const idColumn = () => text("id").primaryKey();
export const workspaceIdColumn = () => text("workspace_id").notNull();
export const createdAtColumn = () => timestampColumn("created_at").notNull();
export const updatedAtColumn = () => timestampColumn("updated_at").notNull();
export const timestampColumn = (name: string) => onPostgres(integer(name, { mode: "number" }), "bigint");
export const boolColumn = (name: string) => integer(name, { mode: "boolean" });
export const jsonColumn = <T>(name: string) => text(name, { mode: "json" }).$type<T>();
