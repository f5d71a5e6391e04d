import { type AnyColumn, type Placeholder, type SQL, sql } from "drizzle-orm";
import type { DbOrTx } from "./client";

/**
 * The few expressions whose spelling differs between SQLite and PostgreSQL, kept in one place so a
 * PostgreSQL dialect is a storage change. Every value is a bound parameter.
 *
 * One process runs on one database: the store factory calls `setDialect` at startup. Each helper
 * answers an expression that picks its spelling when the query is built, not when the helper is
 * called, so expressions made at module load (constants) follow the dialect set later.
 */

/** Which database the SQL of this process is spelled for. */
export type SqlDialect = "sqlite" | "postgres";

let dialect: SqlDialect = "sqlite";

/** Sets the database this process's SQL is spelled for (the store factory, once, at startup). */
export function setDialect(d: SqlDialect): void {
  dialect = d;
}

/** The database this process's SQL is spelled for ("sqlite" until `setDialect` says otherwise). */
export function currentDialect(): SqlDialect {
  return dialect;
}

/** An expression spelled when its query is built: `sqlite()` or `postgres()` by the current dialect. */
function spelled(sqlite: () => SQL, postgres: () => SQL): SQL {
  return sql`${{
    getSQL: () => (dialect === "postgres" ? postgres() : sqlite()),
    shouldOmitSQLParens: () => true,
  }}`;
}

type Expr = AnyColumn | SQL;

/** A key of a JSON column as text (PostgreSQL: `->>`, the key bound as text). */
function pgText(column: Expr, key: string): SQL {
  return sql`(${column} ->> ${key}::text)`;
}

/** A key of a jsonb column as jsonb (PostgreSQL: `->`). */
function pgJson(column: Expr, key: string): SQL {
  return sql`(${column} -> ${key}::text)`;
}

/** PostgreSQL text in byte order, whatever the database's collation (`byteOrder`, `jsonText`). */
function pgByteOrder(expr: Expr | Placeholder): SQL {
  return sql`(${expr} COLLATE "C")`;
}

/** The JSON path of a top-level key (SQLite: `$."key"`, bound as a parameter). */
function sqlitePath(key: string): string {
  return `$."${key}"`;
}

/** A key of a JSON column as SQLite reads it (`json_extract`: 1/0 for true/false, NULL for null). */
function sqliteValue(column: Expr, key: string): SQL {
  return sql`json_extract(${column}, ${sqlitePath(key)})`;
}

/**
 * A custom field of a JSON column: `json_extract(col, '$."key"')` (PostgreSQL: `col->>key`, always
 * text: a JSON number is its JSON text, a boolean 'true'/'false', JSON null is NULL).
 */
export function jsonField(column: Expr, key: string): SQL {
  return spelled(
    () => sqliteValue(column, key),
    () => pgText(column, key),
  );
}

/**
 * Text that reads as a number: a JSON number literal, JSON whitespace around it allowed (what
 * SQLite's `json_valid` and `json_type` take as a number, spelled as a pattern for PostgreSQL).
 */
const NUMBER_TEXT = String.raw`^[ \t\n\r]*-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?[ \t\n\r]*$`;

/**
 * A custom field read as a number: a JSON number, text that is a number literal ("42", " 7 ",
 * "1e2"), a boolean as 1/0; anything else (other text, objects, arrays, null, no such key) is NULL,
 * on both databases, so a comparison with it holds for no contact.
 */
export function jsonNumber(column: Expr, key: string): SQL {
  return spelled(
    () => {
      const value = sqliteValue(column, key);
      return sql`(CASE json_type(${column}, ${sqlitePath(key)}) WHEN 'integer' THEN ${value} WHEN 'real' THEN ${value} WHEN 'true' THEN 1 WHEN 'false' THEN 0 WHEN 'text' THEN (CASE WHEN json_valid(${value}) THEN (CASE WHEN json_type(${value}) IN ('integer', 'real') THEN CAST(${value} AS REAL) END) END) END)`;
    },
    () => {
      const text = pgText(column, key);
      return sql`(CASE jsonb_typeof(${pgJson(column, key)}) WHEN 'number' THEN ${text}::numeric WHEN 'boolean' THEN (CASE WHEN ${text} = 'true' THEN 1 ELSE 0 END)::numeric WHEN 'string' THEN (CASE WHEN ${text} ~ ${NUMBER_TEXT} THEN ${text}::numeric END) END)`;
    },
  );
}

/**
 * A custom field when it holds text (a JSON string), else NULL: numbers, booleans, objects and
 * arrays are not text to compare, search or read a date from on either database (their JSON
 * spellings differ: SQLite reads true as 1, PostgreSQL keeps every digit of a number). Compared in
 * byte order on both (PostgreSQL: `COLLATE "C"`, whatever the database's collation).
 */
export function jsonText(column: Expr, key: string): SQL {
  return spelled(
    () =>
      sql`(CASE json_type(${column}, ${sqlitePath(key)}) WHEN 'text' THEN ${sqliteValue(column, key)} END)`,
    () =>
      pgByteOrder(
        sql`(CASE jsonb_typeof(${pgJson(column, key)}) WHEN 'string' THEN ${pgText(column, key)} END)`,
      ),
  );
}

/** Text that starts with an ISO 8601 date (`2026-11-01`, `2026-11-01T09:30:00Z`). */
export function startsWithIsoDate(expr: Expr): SQL {
  return spelled(
    () => sql`(${expr} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*')`,
    () => sql`(${expr} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}')`,
  );
}

/**
 * A value as a JSON field compares against it. SQLite's json_extract yields 1/0 for true/false, so
 * booleans are bound as integers.
 */
export function jsonComparable(value: unknown): unknown {
  return typeof value === "boolean" ? (value ? 1 : 0) : value;
}

/** The JSON values a SQLite comparison value equals: 1/0 are also JSON true/false there. */
function jsonEqualOn(value: string | number | boolean): unknown[] {
  if (typeof value === "boolean") return [value, value ? 1 : 0];
  if (value === 1 || value === 0) return [value, value === 1];
  return [value];
}

/**
 * A JSON field equals one of `values`, compared as SQLite compares json_extract's answer: a number
 * matches JSON numbers of that value (3 matches 3.0), a string JSON strings, and a boolean JSON
 * true/false and the numbers 1/0 (SQLite reads JSON booleans as 1/0). Strings never match
 * numbers: callers bind each form they accept ("3" and 3). PostgreSQL compares jsonb values
 * (`col->key IN ('3'::jsonb, …)`). An empty list matches nothing.
 */
export function jsonIn(column: Expr, key: string, values: readonly (string | number | boolean)[]): SQL {
  if (values.length === 0) return sqlFalse();
  return spelled(
    () =>
      sql`(${sqliteValue(column, key)} IN (${sql.join(
        values.map((v) => sql`${jsonComparable(v)}`),
        sql`, `,
      )}))`,
    () =>
      sql`(${pgJson(column, key)} IN (${sql.join(
        values.flatMap(jsonEqualOn).map((v) => sql`${JSON.stringify(v)}::jsonb`),
        sql`, `,
      )}))`,
  );
}

/** A JSON field equals `value` (see `jsonIn`): `jsonEquals(col, "vip", true)` is a JSON-boolean test. */
export function jsonEquals(column: Expr, key: string, value: string | number | boolean): SQL {
  return jsonIn(column, key, [value]);
}

/**
 * Text compared and ordered byte by byte on both databases (PostgreSQL: `COLLATE "C"`, whatever
 * the database's collation; SQLite's BINARY already is): the same rows and the same order on a
 * cluster initialised with another locale.
 */
export function byteOrder(expr: Expr): SQL {
  return spelled(
    () => sql`${expr}`,
    () => pgByteOrder(expr),
  );
}

/**
 * Case-insensitive LIKE with `\` as the escape character, folding ASCII letters only on both
 * databases: SQLite's LIKE does, and PostgreSQL's ILIKE under `COLLATE "C"` does too, where under a
 * UTF-8 locale (`C.UTF-8`, `en_US.UTF-8`, ICU) it would fold É to é as well and answer other rows
 * than SQLite.
 */
export function likeInsensitive(expr: Expr, pattern: string): SQL {
  return spelled(
    () => sql`(${expr} LIKE ${pattern} ESCAPE '\\')`,
    () => sql`(${pgByteOrder(expr)} ILIKE ${pattern} ESCAPE '\\')`,
  );
}

/**
 * `lower(expr) = lower(value)`, folding ASCII letters only on both databases, as SQLite's `lower`
 * does (PostgreSQL's folds every letter under a UTF-8 locale). An index on `lower(expr)` still
 * serves it: on PostgreSQL the comparison under `COLLATE "C"` filters what the index finds.
 */
export function sameLowerCase(expr: Expr, value: SQL | Placeholder): SQL {
  return spelled(
    () => sql`lower(${expr}) = lower(${value})`,
    () =>
      sql`(lower(${expr}) = lower(${value}) AND lower(${pgByteOrder(expr)}) = lower(${pgByteOrder(value)}))`,
  );
}

/**
 * A list's `q` filter: the column contains the text, case-insensitive, wildcards matched literally;
 * undefined (no condition) for an absent or empty `q`.
 */
export function containsText(expr: Expr, text: string | undefined): SQL | undefined {
  return text ? likeInsensitive(expr, `%${escapeLike(text)}%`) : undefined;
}

/** Escapes LIKE wildcards so user text matches literally (used with ESCAPE '\\'). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The PostgreSQL array type a list of values binds as. */
type ListType = "text" | "bigint" | "double precision";

function listTypeOf(values: readonly (string | number)[]): ListType {
  if (values.length === 0 || values.some((v) => typeof v === "string")) return "text";
  return values.every((v) => Number.isSafeInteger(v)) ? "bigint" : "double precision";
}

/**
 * `column IN (values)` with the list bound as one parameter: a JSON array on SQLite
 * (`IN (SELECT value FROM json_each(?))`), an array on PostgreSQL (`= ANY($1::text[])`; a list of
 * numbers binds as bigint[] or double precision[]). The SQL text is the same whatever the list's
 * length, so one compiled statement serves every call; drizzle's `inArray` spells a placeholder per
 * value, and each length is a statement of its own (a list of 1,000 compiles to ~100 KB).
 */
export function inJsonList(column: Expr, values: readonly (string | number)[]): SQL {
  return spelled(
    () => sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`,
    () => {
      const type = listTypeOf(values);
      const list = type === "text" ? values.map(String) : [...values];
      return sql`${column} = ANY(${sql.param(list)}::${sql.raw(type)}[])`;
    },
  );
}

/**
 * `inJsonList` for a prepared statement: the list arrives in placeholder `name`, bound as
 * `jsonList(values)` (a list of text; `type` says otherwise on PostgreSQL).
 */
export function inJsonListParam(column: Expr, name: string, type: ListType = "text"): SQL {
  return spelled(
    () => sql`${column} IN (SELECT value FROM json_each(${sql.placeholder(name)}))`,
    () => sql`${column} = ANY(${sql.placeholder(name)}::${sql.raw(type)}[])`,
  );
}

/** The value to bind to an `inJsonListParam` placeholder: JSON text on SQLite, an array on PostgreSQL. */
export function jsonList(values: readonly (string | number)[]): string | (string | number)[] {
  return dialect === "postgres" ? [...values] : JSON.stringify(values);
}

/**
 * The larger of two values: SQLite's two-argument `max(a, b)` (PostgreSQL: `GREATEST`). Neither
 * may be NULL: SQLite answers NULL, PostgreSQL the other value.
 */
export function greatest(a: unknown, b: unknown): SQL {
  return spelled(
    () => sql`max(${a}, ${b})`,
    () => sql`GREATEST(${a}, ${b})`,
  );
}

/** `a` differs from `b`, NULL counting as a value: SQLite's `IS NOT` (PostgreSQL: `IS DISTINCT FROM`). */
export function distinctFrom(a: unknown, b: unknown): SQL {
  return spelled(
    () => sql`(${a} IS NOT ${b})`,
    () => sql`(${a} IS DISTINCT FROM ${b})`,
  );
}

/**
 * How many rows of the group satisfy `condition` (0 for none, and for no rows), as a number:
 * SQLite sums the 1/0 of the condition (PostgreSQL: `count(*) FILTER (WHERE …)`).
 */
export function countWhere(condition: SQL): SQL<number> {
  return spelled(
    () => sql`coalesce(sum(${condition}), 0)`,
    () => sql`count(*) FILTER (WHERE ${condition})`,
  ).mapWith(Number);
}

/**
 * An ORDER BY term with NULLs after the values: `nullsLast(desc(col))` is SQLite's order for
 * DESC, which PostgreSQL reverses by default. Spelled `NULLS LAST` on both (SQLite plans a NULLS
 * clause that matches its default order exactly as it plans the term without it).
 */
export function nullsLast(order: SQL): SQL {
  return sql`${order} NULLS LAST`;
}

/** An ORDER BY term with NULLs before the values: `nullsFirst(asc(col))` is SQLite's order for ASC. */
export function nullsFirst(order: SQL): SQL {
  return sql`${order} NULLS FIRST`;
}

/** The boolean `b` as a literal for raw SQL (`${messages.followup} = ${boolValue(true)}`): 1/0 on SQLite. */
export function boolValue(b: boolean): SQL {
  return spelled(
    () => sql.raw(b ? "1" : "0"),
    () => sql.raw(b ? "true" : "false"),
  );
}

/** A condition that always holds. */
export function sqlTrue(): SQL {
  return boolValue(true);
}

/** A condition that never holds. */
export function sqlFalse(): SQL {
  return boolValue(false);
}

/**
 * A select that locks the rows it answers and skips rows another transaction holds (PostgreSQL's
 * `FOR UPDATE SKIP LOCKED`), for claiming work: two processes never claim the same row and neither
 * waits for the other. SQLite needs none (a write transaction runs alone): the query as it is.
 */
export function claimingRows<Q>(query: Q): Q {
  if (currentDialect() !== "postgres") return query;
  return (query as unknown as { for(strength: "update", config: { skipLocked: true }): Q }).for("update", {
    skipLocked: true,
  });
}

/**
 * A select that locks the rows it answers until the transaction ends (PostgreSQL's `FOR UPDATE`):
 * a second transaction reading them the same way waits, then reads what the first committed. For
 * a step that must not overlap its twin (one campaign's dispatch steps, whichever process runs
 * them). SQLite needs none (a write transaction runs alone): the query as it is.
 */
export function lockedForUpdate<Q>(query: Q): Q {
  if (currentDialect() !== "postgres") return query;
  return (query as unknown as { for(strength: "update"): Q }).for("update");
}

/**
 * A select that locks the rows it answers against change until the transaction ends (PostgreSQL's
 * `FOR SHARE`): readers holding them do not wait for each other, and a claim (`claimingRows`: FOR
 * UPDATE SKIP LOCKED) passes them by meanwhile. SQLite needs none (a write transaction runs alone):
 * the query as it is.
 */
export function lockedForShare<Q>(query: Q): Q {
  if (currentDialect() !== "postgres") return query;
  return (query as unknown as { for(strength: "share"): Q }).for("share");
}

/**
 * Statements that, run first in a transaction, make it wait for every other transaction holding one
 * of `keys` in `scope` until that one ends (PostgreSQL: transaction-scoped advisory locks, one per
 * key in a fixed order, so two holders never deadlock). For a read-then-write that must not
 * interleave with its twin, such as counting attempts before recording one. SQLite needs none (a
 * write transaction runs alone): no statements.
 */
export function transactionKeyLocks(scope: number, keys: readonly string[]): SQL[] {
  if (currentDialect() !== "postgres") return [];
  return [...new Set(keys)]
    .sort()
    .map((key) => sql`select pg_advisory_xact_lock(${scope}::integer, hashtext(${key}::text))`);
}

/** Whether `error` (or an error it wraps, as drizzle's query errors do) is a unique index's refusal. */
export function isUniqueViolation(error: unknown): boolean {
  for (let e = error; e instanceof Error || (typeof e === "object" && e !== null); ) {
    const code = (e as { code?: unknown }).code;
    // PostgreSQL's unique_violation; SQLite's extended codes for a UNIQUE index and a primary key.
    if (code === "23505" || code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY")
      return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs `write` in the caller's transaction and answers true, or false when a unique index refused
 * it because another transaction wrote the same key first (another process, on PostgreSQL): the
 * caller reads that transaction's row instead. For a write that cannot say `ON CONFLICT DO NOTHING`
 * (an UPDATE into a unique key). PostgreSQL runs it in a savepoint, since a refused statement
 * would otherwise end the transaction: `write` must run its statements on the handle it is given
 * (postgres.js fails the whole transaction for a statement that failed on the outer handle, even
 * one rolled back to a savepoint). SQLite needs none (a write transaction runs alone, so only the
 * caller's own writes could conflict, and it has checked for them): the write as it is, on `tx`.
 */
export async function unlessTakenMeanwhile(
  tx: DbOrTx,
  write: (tx: DbOrTx) => Promise<unknown>,
): Promise<boolean> {
  if (currentDialect() !== "postgres") {
    await write(tx);
    return true;
  }
  try {
    await tx.transaction(async (savepoint) => await write(savepoint));
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}
