import {
  and,
  asc,
  getTableColumns,
  getTableName,
  inArray,
  is,
  isNull,
  lte,
  type Placeholder,
  type SQL,
  sql,
} from "drizzle-orm";
import { PostgresJsPreparedQuery, PostgresJsSession } from "drizzle-orm/postgres-js";
import type { SQLiteColumn, SQLiteInsertBase, SQLiteInsertValue, SQLiteTable } from "drizzle-orm/sqlite-core";
import { type Db, type DbOrTx, dialectOf, type RunResult } from "./client";
import { claimingRows, inJsonListParam, jsonList } from "./dialect";

/**
 * Per-connection memo for drizzle prepared statements (`.prepare()` with `sql.placeholder()`), so
 * a hot query's SQL is built once instead of on every call. Keyed by the drizzle session, which a
 * database and its transactions share: on SQLite a transaction runs on the database's one
 * connection, so a statement prepared once takes part in whatever transaction is open when it
 * runs. On PostgreSQL every transaction has a session (and a connection) of its own: when `build`
 * answers prepared queries only (one, or an object of them), they are built once and each session
 * gets copies bound to its own connection (`boundTo`); anything else is built per session.
 */
export function preparedPerConnection<D extends DbOrTx, T>(build: (db: D) => T): (db: D) => T {
  const cache = new WeakMap<object, T>();
  let template: { value: T; rebindable: boolean } | undefined;
  return (db) => {
    const session = (db as unknown as { session?: object }).session;
    if (!session) return build(db);
    let statements = cache.get(session);
    if (!statements) {
      const client = (session as { client?: unknown }).client;
      if (template?.rebindable && is(session, PostgresJsSession) && client !== undefined) {
        statements = boundTo(template.value, client);
      } else {
        statements = build(db);
        template ??= {
          value: statements,
          rebindable: is(session, PostgresJsSession) && onlyPgQueries(statements),
        };
      }
      cache.set(session, statements);
    }
    return statements;
  };
}

/** Whether `value` is a postgres.js prepared query, or a plain object whose values all are. */
function onlyPgQueries(value: unknown): boolean {
  if (is(value, PostgresJsPreparedQuery)) return true;
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype)
    return false;
  const values = Object.values(value);
  return values.length > 0 && values.every((item) => is(item, PostgresJsPreparedQuery));
}

/** `statements` (see onlyPgQueries) run on `client`: each query a copy that differs in its connection only. */
function boundTo<T>(statements: T, client: unknown): T {
  const bind = (query: object) => Object.create(query, { client: { value: client } });
  if (is(statements, PostgresJsPreparedQuery)) return bind(statements as object) as T;
  const bound: Record<string, unknown> = {};
  for (const [name, query] of Object.entries(statements as Record<string, object>)) bound[name] = bind(query);
  return bound as T;
}

/**
 * `.values()` for a prepared insert of a whole row: every column of `table` bound to a placeholder
 * of the same (property) name, so `statement.run(row)` inserts the row object as is.
 */
export function rowPlaceholders<T extends SQLiteTable>(table: T): SQLiteInsertValue<T> {
  const values: Record<string, Placeholder> = {};
  for (const key of Object.keys(getTableColumns(table))) values[key] = sql.placeholder(key);
  return values as SQLiteInsertValue<T>;
}

/** Bind parameters a multi-row statement stays under (PostgreSQL allows 65,535). */
const ROWS_STATEMENT_PARAMS = 30_000;

const rowInserts = new WeakMap<SQLiteTable, (db: DbOrTx) => { run(row: unknown): Promise<unknown> }>();
const rowInsertsIgnoring = new WeakMap<
  SQLiteTable,
  (db: DbOrTx) => { run(row: unknown): Promise<unknown> }
>();

/**
 * Inserts `rows` of `table` in the caller's transaction in as few round trips as the database
 * needs: on SQLite (no round trips) one prepared single-row statement run per row, the cheapest
 * there; on PostgreSQL multi-row INSERTs of up to ROWS_STATEMENT_PARAMS parameters each.
 * `ignoreDuplicates` leaves out rows that meet a unique key (`ON CONFLICT DO NOTHING`).
 */
export async function insertRows<T extends SQLiteTable>(
  tx: DbOrTx,
  table: T,
  rows: SQLiteInsertValue<T>[],
  options: { ignoreDuplicates?: boolean } = {},
): Promise<void> {
  if (rows.length === 0) return;
  const ignore = options.ignoreDuplicates === true;
  if (dialectOf(tx) === "sqlite") {
    const memo = ignore ? rowInsertsIgnoring : rowInserts;
    let insert = memo.get(table);
    if (!insert) {
      insert = preparedPerConnection((db: DbOrTx) => {
        const values = db.insert(table).values(rowPlaceholders(table));
        return (ignore ? values.onConflictDoNothing() : values).prepare();
      });
      memo.set(table, insert);
    }
    const statement = insert(tx);
    for (const row of rows) await statement.run(row);
    return;
  }
  const asJson = rowsAsJson(table, rows);
  if (asJson) {
    await tx.run(
      sql`${sql.raw(asJson.head)}${asJson.json}${sql.raw(ignore ? `${JSON_TAIL} ON CONFLICT DO NOTHING` : JSON_TAIL)}`,
    );
    return;
  }
  const perRow = Object.keys(getTableColumns(table)).length;
  const chunk = Math.max(1, Math.floor(ROWS_STATEMENT_PARAMS / perRow));
  for (let i = 0; i < rows.length; i += chunk) {
    const values = tx.insert(table).values(rows.slice(i, i + chunk));
    await (ignore ? values.onConflictDoNothing() : values).run();
  }
}

const JSON_TAIL = "::json)";

/**
 * PostgreSQL: `rows` as one JSON parameter that `json_populate_recordset` turns into rows of the
 * table's own type — `INSERT INTO t (cols) SELECT cols FROM json_populate_recordset(NULL::t, $1::json)`
 * (`head` is all of it up to the parameter; JSON_TAIL closes it). One statement text per table and
 * column set whatever the number of rows, so it is prepared once, and the rows cost one
 * JSON.stringify instead of a bind parameter each column of each row (drizzle's multi-row insert
 * builds a new statement, and the server plans it anew, for every row count). Values are what the
 * columns bind (booleans as booleans, JSON columns as the JSON value itself). Null when the rows
 * do not all give the same columns, or leave one to a default of SQL: drizzle's insert then.
 */
function rowsAsJson(
  table: SQLiteTable,
  rows: readonly Record<string, unknown>[],
): { head: string; json: string } | null {
  const given: [string, SQLiteColumn][] = [];
  for (const [key, column] of Object.entries(getTableColumns(table)) as [string, SQLiteColumn][]) {
    if (rows[0][key] !== undefined) given.push([key, column]);
    // A default drizzle would apply, or the database's: not here.
    else if (column.hasDefault || column.defaultFn || column.onUpdateFn) return null;
  }
  const objects: Record<string, unknown>[] = [];
  for (const row of rows) {
    const object: Record<string, unknown> = {};
    let n = 0;
    for (const key in row) if (row[key] !== undefined) n++;
    if (n !== given.length) return null;
    for (const [key, column] of given) {
      const value = row[key];
      if (value === undefined) return null;
      object[column.name] =
        value === null
          ? null
          : column.columnType === "SQLiteTextJson"
            ? value
            : column.columnType === "SQLiteBoolean"
              ? Boolean(value)
              : column.mapToDriverValue(value);
    }
    objects.push(object);
  }
  const name = getTableName(table);
  let heads = jsonInsertHeads.get(table);
  if (!heads) {
    heads = new Map();
    jsonInsertHeads.set(table, heads);
  }
  const names = given.map(([, column]) => column.name);
  const signature = names.join(",");
  let head = heads.get(signature);
  if (!head) {
    const list = names.map((column) => `"${column}"`).join(", ");
    head = `INSERT INTO "${name}" (${list}) SELECT ${list} FROM json_populate_recordset(NULL::"${name}", `;
    heads.set(signature, head);
  }
  return { head, json: JSON.stringify(objects) };
}

const jsonInsertHeads = new WeakMap<SQLiteTable, Map<string, string>>();

/** The row a `RETURNING` of `columns` answers (a nullable column's value may be null). */
type Answered<C> = {
  [K in keyof C]: C[K] extends SQLiteColumn<infer T>
    ? T["notNull"] extends true
      ? T["data"]
      : T["data"] | null
    : never;
};

/** What completes `insertRowsReturning`'s insert: its `ON CONFLICT` clause and what it answers. */
export interface RowsInsert<C extends Record<string, SQLiteColumn>> {
  /**
   * Rows that meet a unique key: left out (`DO NOTHING`, on `target` or any key), or, with `set`,
   * the existing row updated (`DO UPDATE SET`, on `target`; `excluded.col` is the row not written).
   */
  conflict?: { target?: SQLiteColumn | SQLiteColumn[]; set?: Record<string, SQL> };
  /** The columns answered for each row written, by name. */
  returning: C;
}

type InsertBuilder<T extends SQLiteTable> = SQLiteInsertBase<T, "async", RunResult>;

/** `spec`'s `ON CONFLICT` clause as drizzle's insert builder spells it. */
function withConflict<T extends SQLiteTable>(
  insert: InsertBuilder<T>,
  conflict: RowsInsert<Record<string, SQLiteColumn>>["conflict"],
): InsertBuilder<T> {
  if (!conflict) return insert;
  if (conflict.set)
    return insert.onConflictDoUpdate({
      target: conflict.target as SQLiteColumn,
      set: conflict.set as never,
    }) as unknown as InsertBuilder<T>;
  return insert.onConflictDoNothing(
    conflict.target ? { target: conflict.target } : undefined,
  ) as unknown as InsertBuilder<T>;
}

/** `spec` as drizzle's insert builder spells it. */
function finishInsert<T extends SQLiteTable, C extends Record<string, SQLiteColumn>>(
  insert: InsertBuilder<T>,
  spec: RowsInsert<C>,
) {
  return withConflict(insert, spec.conflict).returning(spec.returning as never) as unknown as {
    all(): Promise<Answered<C>[]>;
    prepare(): { all(values: unknown): Promise<Answered<C>[]> };
  };
}

/** The value `build` makes once for a table and a name (a statement the caller names). */
function perTableAndName<S>(
  memo: WeakMap<SQLiteTable, Map<string, S>>,
  table: SQLiteTable,
  name: string,
  build: () => S,
): S {
  let byName = memo.get(table);
  if (!byName) {
    byName = new Map();
    memo.set(table, byName);
  }
  let made = byName.get(name);
  if (made === undefined) {
    made = build();
    byName.set(name, made);
  }
  return made;
}

const finishedInserts = new WeakMap<
  SQLiteTable,
  Map<string, (db: DbOrTx) => { all(values: unknown): Promise<unknown[]> }>
>();

/**
 * `insertRows` for an insert completed by `spec` (an `ON CONFLICT` clause, `RETURNING`) that
 * answers rows: every row's answer, in as few round trips as `insertRows` takes. `name` names the
 * finished statement (one prepared statement per table and name on SQLite). On PostgreSQL one
 * statement inserts many rows, and an `ON CONFLICT DO UPDATE` may not meet one key twice in it:
 * the caller merges rows of the same key first.
 */
export async function insertRowsReturning<T extends SQLiteTable, C extends Record<string, SQLiteColumn>>(
  tx: DbOrTx,
  table: T,
  rows: SQLiteInsertValue<T>[],
  name: string,
  spec: RowsInsert<C>,
  /**
   * Columns given by an expression instead of the rows' values (the same for every row). On
   * PostgreSQL an expression that is `DEFAULT` leaves the column to its default.
   */
  computed: Partial<Record<keyof SQLiteInsertValue<T>, SQL>> = {},
): Promise<Answered<C>[]> {
  if (rows.length === 0) return [];
  const answers: Answered<C>[] = [];
  if (dialectOf(tx) === "sqlite") {
    const echoed = echoedKeys(table, rows, spec, computed);
    if (echoed) return await insertRowsEchoing(tx, table, rows, name, spec, echoed, computed);
    const statement = perTableAndName(finishedInserts, table, name, () =>
      preparedPerConnection((db: DbOrTx) =>
        finishInsert(
          db.insert(table).values({ ...rowPlaceholders(table), ...computed }) as InsertBuilder<T>,
          spec,
        ).prepare(),
      ),
    )(tx);
    for (const row of rows) answers.push(...((await statement.all(row)) as Answered<C>[]));
    return answers;
  }
  const asJson = jsonInsertOf(tx, table, rows, spec, computed);
  if (asJson) return await tx.all<Answered<C>>(asJson);
  const perRow = Object.keys(getTableColumns(table)).length;
  const chunk = Math.max(1, Math.floor(ROWS_STATEMENT_PARAMS / perRow));
  for (let i = 0; i < rows.length; i += chunk)
    answers.push(
      ...(await finishInsert(
        tx
          .insert(table)
          .values(rows.slice(i, i + chunk).map((row) => ({ ...row, ...computed }))) as InsertBuilder<T>,
        spec,
      ).all()),
    );
  return answers;
}

/**
 * Where every column `spec` answers is a text column that each row gives itself, and a row that
 * meets a key is left out (`DO NOTHING`, or no conflict clause): the row's own keys for those
 * columns, by answered name; else null. A row written holds exactly those values, so SQLite can
 * answer them without `RETURNING`.
 */
function echoedKeys(
  table: SQLiteTable,
  rows: readonly Record<string, unknown>[],
  spec: RowsInsert<Record<string, SQLiteColumn>>,
  computed: Record<string, SQL | undefined>,
): [answered: string, key: string][] | null {
  if (spec.conflict?.set) return null;
  const columns = Object.entries(getTableColumns(table));
  const echoed: [string, string][] = [];
  for (const [answered, column] of Object.entries(spec.returning)) {
    const key = columns.find(([, own]) => own === column)?.[0];
    if (key === undefined || computed[key] !== undefined) return null;
    // Text as given: what SQLite would answer is the string bound (no JSON or mode mapping).
    if (column.columnType !== "SQLiteText" || (column as { mode?: string }).mode === "json") return null;
    if (!rows.every((row) => typeof row[key] === "string")) return null;
    echoed.push([answered, key]);
  }
  return echoed;
}

const quietInserts = new WeakMap<
  SQLiteTable,
  Map<string, (db: DbOrTx) => { run(values: unknown): Promise<RunResult> }>
>();

/**
 * SQLite: insertRowsReturning for the inserts `echoedKeys` accepts. Each row is one statement
 * without `RETURNING` (measured: ~5 µs a row less, a third of the insert), and a row it wrote
 * (`changes`: the statement's own rows, not its triggers') is answered with its own values.
 */
async function insertRowsEchoing<T extends SQLiteTable, C extends Record<string, SQLiteColumn>>(
  tx: DbOrTx,
  table: T,
  rows: SQLiteInsertValue<T>[],
  name: string,
  spec: RowsInsert<C>,
  echoed: [answered: string, key: string][],
  computed: Partial<Record<keyof SQLiteInsertValue<T>, SQL>>,
): Promise<Answered<C>[]> {
  const statement = perTableAndName(quietInserts, table, name, () =>
    preparedPerConnection((db: DbOrTx) =>
      withConflict(
        db.insert(table).values({ ...rowPlaceholders(table), ...computed }) as InsertBuilder<T>,
        spec.conflict,
      ).prepare(),
    ),
  )(tx);
  const answers: Answered<C>[] = [];
  for (const row of rows) {
    if ((await statement.run(row)).changes === 0) continue;
    const answer: Record<string, unknown> = {};
    for (const [answered, key] of echoed) answer[answered] = (row as Record<string, unknown>)[key];
    answers.push(answer as Answered<C>);
  }
  return answers;
}

/**
 * PostgreSQL: insertRowsReturning's statement with the rows as one JSON parameter (rowsAsJson), or
 * null where rowsAsJson declines or a computed column is more than `DEFAULT`.
 */
function jsonInsertOf(
  tx: DbOrTx,
  table: SQLiteTable,
  rows: readonly Record<string, unknown>[],
  spec: RowsInsert<Record<string, SQLiteColumn>>,
  computed: Record<string, SQL | undefined>,
): SQL | null {
  const columns = getTableColumns(table) as Record<string, SQLiteColumn>;
  const dialect = (tx as unknown as { dialect: { sqlToQuery(sql: SQL): { sql: string } } }).dialect;
  for (const expression of Object.values(computed))
    if (expression && dialect.sqlToQuery(expression).sql !== "DEFAULT") return null;
  const given = Object.keys(computed).length === 0 ? rows : rows.map((row) => withoutKeys(row, computed));
  const asJson = rowsAsJson(table, given);
  if (!asJson) return null;
  const parts: SQL[] = [sql`${sql.raw(asJson.head)}${asJson.json}${sql.raw(JSON_TAIL)}`];
  const { conflict } = spec;
  if (conflict) {
    const targets = conflict.target === undefined ? [] : [conflict.target].flat();
    const on = targets.length ? ` (${targets.map((column) => `"${column.name}"`).join(", ")})` : "";
    if (conflict.set) {
      const sets = Object.entries(conflict.set).map(
        ([key, value]) => sql`${sql.raw(`"${columns[key].name}"`)} = ${value}`,
      );
      parts.push(sql` ON CONFLICT${sql.raw(on)} DO UPDATE SET ${sql.join(sets, sql`, `)}`);
    } else parts.push(sql.raw(` ON CONFLICT${on} DO NOTHING`));
  }
  const answered = Object.entries(spec.returning).map(([key, column]) => `"${column.name}" AS "${key}"`);
  parts.push(sql.raw(` RETURNING ${answered.join(", ")}`));
  return sql.join(parts);
}

function withoutKeys(row: Record<string, unknown>, keys: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in row) if (!(key in keys)) out[key] = row[key];
  return out;
}

/**
 * One-row updates of many rows of `table`, each picked by its `key` value within `scope` and given
 * its own `value` (and the same `set` assignments), in as few round trips as the database needs:
 * `each` (a prepared single-row update) per item on SQLite, where that is cheapest; on PostgreSQL
 * one `UPDATE … FROM json_to_recordset(…)` for all the items (withJsonRows).
 */
export async function updateRowsByKey<T>(
  tx: DbOrTx,
  items: readonly T[],
  each: (item: T) => Promise<unknown>,
  together: {
    table: SQLiteTable;
    scope: SQL;
    key: SQLiteColumn;
    value: SQLiteColumn;
    set: SQL;
    pair: (item: T) => [string, string | null];
  },
): Promise<void> {
  if (items.length === 0) return;
  if (dialectOf(tx) === "sqlite") {
    for (const item of items) await each(item);
    return;
  }
  const { table, scope, key, value, set, pair } = together;
  await withJsonRows(
    items,
    [
      ["k", "text"],
      ["val", "text"],
    ],
    pair,
    async (v) =>
      await tx.run(
        sql`UPDATE ${table} SET ${sql.identifier(value.name)} = v.val, ${set} FROM ${v} WHERE ${scope} AND ${key} = v.k`,
      ),
  );
}

/**
 * PostgreSQL's many-row statements from a list of values: `statement` runs once, given the rows as
 * `json_to_recordset($1::json) AS v(…)` with `columns` (each a name and the PostgreSQL type its
 * values are read as: text, bigint, boolean, double precision) and each row's `values` in that
 * order. The rows are one JSON parameter: one statement text whatever their number, prepared once,
 * and one JSON.stringify instead of a bind parameter (and a drizzle SQL fragment) per value.
 */
export async function withJsonRows<T>(
  rows: readonly T[],
  columns: readonly (readonly [name: string, type: string])[],
  values: (row: T) => readonly unknown[],
  statement: (valuesList: SQL) => Promise<unknown>,
): Promise<void> {
  if (rows.length === 0) return;
  const objects = rows.map((row) => {
    const given = values(row);
    const object: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) object[columns[i][0]] = given[i] ?? null;
    return object;
  });
  const definition = sql.raw(columns.map(([name, type]) => `${name} ${type}`).join(", "));
  await statement(sql`json_to_recordset(${JSON.stringify(objects)}::json) AS v(${definition})`);
}

/**
 * Runs `work` for each item in the caller's transaction, for items whose writes touch different
 * rows and need no order between them: one after another on SQLite (no round trips to save); all
 * at once on PostgreSQL, whose transaction connection then receives their statements together and
 * answers them in order (a round trip for many instead of one each). A failure fails the whole
 * transaction either way.
 */
export async function forEachRowApart<T>(
  tx: DbOrTx,
  items: readonly T[],
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  if (dialectOf(tx) === "sqlite") {
    for (const item of items) await work(item);
    return;
  }
  await allOver(items.map(work));
}

/**
 * The outcomes of statements started together on one transaction (on PostgreSQL its connection
 * receives them together and answers them in order: one round trip for all), once every one of
 * them is over; the first failure is thrown then, so none still runs when the caller's savepoint
 * or transaction is rolled back.
 */
export async function allOver<T extends readonly unknown[]>(
  started: readonly [...{ [K in keyof T]: PromiseLike<T[K]> }],
): Promise<T> {
  const outcomes = await Promise.allSettled(started);
  const failed = outcomes.find((outcome) => outcome.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** How long a claimed ledger report waits before another reporter may take it again. */
export const LEDGER_RETRY_MS = 30_000;

/**
 * A ledger of due reports that any server may send (the simulated carrier's deliveries, its call
 * line's reports), for the table's `due` and `done` timestamp properties and an optional `scope`
 * over its rows (its placeholders come with `reportDue`'s parameters). `reportDue` claims up to
 * `limit` rows due at `now`, earliest first, hands them to `report`, and marks them reported;
 * answers how many rows were reported. A failed `report` gives them back at once. Built once per
 * connection by the caller.
 *
 * How a claim keeps other servers off its rows while `report` runs:
 * - PostgreSQL: the rows stay locked (`FOR UPDATE SKIP LOCKED`) in a transaction that ends after
 *   they are marked; another server passes them by, and a server that dies releases them with its
 *   connection. No write before the report (a claim that moved the due time rewrote every row and
 *   its index entries: a tenth of a campaign's statement time went on the two writes).
 * - SQLite: the rows move LEDGER_RETRY_MS later first, in a transaction of their own (`report`
 *   writes, and a transaction held around it would keep the one writer from them); a claim whose
 *   process died comes due again then.
 */
export function dueLedgerStatements<T extends SQLiteTable>(
  db: DbOrTx,
  table: T,
  keys: { due: keyof T["$inferSelect"] & string; done: keyof T["$inferSelect"] & string },
  scope?: SQL,
) {
  const columns = getTableColumns(table) as Record<string, SQLiteColumn>;
  const [id, due, done] = [columns.id, columns[keys.due], columns[keys.done]];
  const isDue = and(scope, isNull(done), lte(due, sql.placeholder("now")));
  /** The due rows, earliest first (`fields`: only those columns). */
  const dueFirst = (on: DbOrTx, fields?: Record<string, SQLiteColumn>) =>
    (fields ? on.select(fields) : on.select())
      .from(table as SQLiteTable)
      .where(isDue)
      .orderBy(asc(due))
      .limit(sql.placeholder("limit"));
  const markReported = (on: DbOrTx) =>
    on
      .update(table)
      .set({ [keys.done]: sql`${sql.placeholder("now")}` } as never)
      .where(inJsonListParam(id, "ids"))
      .prepare();
  type Row = T["$inferSelect"];
  const idsOf = (rows: Row[]) => jsonList(rows.map((row) => (row as { id: string }).id));
  type Params = Record<string, unknown> & { now: number; limit: number };
  if (dialectOf(db) === "postgres") {
    // Built once, and bound to each transaction's connection (preparedPerConnection).
    const locking = preparedPerConnection((tx: DbOrTx) => ({
      pick: claimingRows(dueFirst(tx)).prepare(),
      reported: markReported(tx),
    }));
    return {
      async reportDue(params: Params, report: (rows: Row[]) => Promise<void> | void): Promise<number> {
        return await (db as Db).transaction(async (tx) => {
          const statements = locking(tx);
          const rows = (await statements.pick.all(params)) as Row[];
          if (rows.length === 0) return 0;
          await report(rows);
          await statements.reported.run({ now: params.now, ids: idsOf(rows) });
          return rows.length;
        });
      },
    };
  }
  const moveTo = (name: string) => ({ [keys.due]: sql`${sql.placeholder(name)}` }) as never;
  const claim = db
    .update(table)
    .set(moveTo("retryAt"))
    .where(and(inArray(id, dueFirst(db, { id })), isDue))
    .returning()
    .prepare();
  const release = db
    .update(table)
    .set(moveTo("now"))
    .where(and(inJsonListParam(id, "ids"), isNull(done)))
    .prepare();
  const reported = markReported(db);
  return {
    async reportDue(params: Params, report: (rows: Row[]) => Promise<void> | void): Promise<number> {
      const rows = (await claim.all({ ...params, retryAt: params.now + LEDGER_RETRY_MS })) as Row[];
      if (rows.length === 0) return 0;
      const ids = idsOf(rows);
      try {
        await report(rows);
      } catch (error) {
        await release.run({ now: params.now, ids });
        throw error;
      }
      await reported.run({ now: params.now, ids });
      return rows.length;
    },
  };
}
