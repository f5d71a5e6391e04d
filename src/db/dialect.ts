import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/**
 * The few expressions whose spelling differs between SQLite and PostgreSQL, kept in one place so a
 * PostgreSQL dialect is a storage change. Every value is a bound parameter.
 */

/** A custom field of a JSON column: `json_extract(col, '$."key"')` (PostgreSQL: `col->>key`). */
export function jsonField(column: SQLiteColumn | SQL, key: string): SQL {
  return sql`json_extract(${column}, ${`$."${key}"`})`;
}

/** A custom field read as a number (text like "42" included; PostgreSQL: a guarded numeric cast). */
export function jsonNumber(column: SQLiteColumn | SQL, key: string): SQL {
  return sql`CAST(json_extract(${column}, ${`$."${key}"`}) AS REAL)`;
}

/**
 * A value as a JSON field compares against it. SQLite's json_extract yields 1/0 for true/false, so
 * booleans are bound as integers.
 */
export function jsonComparable(value: unknown): unknown {
  return typeof value === "boolean" ? (value ? 1 : 0) : value;
}

/** Case-insensitive LIKE with `\` as the escape character (PostgreSQL: ILIKE). */
export function likeInsensitive(expr: SQLiteColumn | SQL, pattern: string): SQL {
  return sql`(${expr} LIKE ${pattern} ESCAPE '\\')`;
}

/**
 * A list's `q` filter: the column contains the text, case-insensitive, wildcards matched literally;
 * undefined (no condition) for an absent or empty `q`.
 */
export function containsText(expr: SQLiteColumn | SQL, text: string | undefined): SQL | undefined {
  return text ? likeInsensitive(expr, `%${escapeLike(text)}%`) : undefined;
}

/** Escapes LIKE wildcards so user text matches literally (used with ESCAPE '\\'). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * `column IN (values)` with the list bound as one JSON parameter (PostgreSQL: `= ANY($1)`). The SQL
 * text is the same whatever the list's length, so one compiled statement serves every call; drizzle's
 * `inArray` spells a placeholder per value, and each length is a statement of its own (a list of
 * 1,000 compiles to ~100 KB).
 */
export function inJsonList(column: SQLiteColumn | SQL, values: readonly (string | number)[]): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
}

/** `inJsonList` for a prepared statement: the list arrives as the JSON text of placeholder `name`. */
export function inJsonListParam(column: SQLiteColumn | SQL, name: string): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${sql.placeholder(name)}))`;
}

let dialect: "sqlite" | "postgres" = "sqlite";
/** The database this process runs on (one process, one database): set when it is opened. */
export function setDialect(d: "sqlite" | "postgres"): void {
  dialect = d;
}
export function currentDialect(): "sqlite" | "postgres" {
  return dialect;
}
