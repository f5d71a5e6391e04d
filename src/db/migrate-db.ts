/**
 * `outreach migrate-db`: a whole SQLite database copied into an empty PostgreSQL database.
 *
 * The source is opened read-only and read in one read transaction (one instant of it, even if a
 * server still writes); the target is migrated, then written in one transaction that either holds
 * every row with every table's count checked, or is rolled back.
 *
 * What the PostgreSQL triggers derive is handled by what it is:
 * - the counters (audience_versions, message_daily_counts, link_versions) are views over delta
 *   tables and a sequence there (migrations/pg/0003). Their triggers are disabled while the rows
 *   are copied (as the table owner: no superuser), and SQLite's counter rows are copied verbatim
 *   into the deltas and the sequence, as 0003 itself converts them, then compared with the views;
 *   letting the triggers run would rebuild the versions from the copy's inserts, not SQLite's.
 * - thread search (conversation_search, search_backlog) is not copied: its triggers stay on, so
 *   every copied thread and message lands in the backlog, which the server indexes (FTS5's tables
 *   have no PostgreSQL meaning).
 * - identities (conversations.search_key) are copied as they are and their sequences set past
 *   the greatest value copied.
 */
import { Database } from "bun:sqlite";
import { is } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import type postgres from "postgres";
import {
  DatabaseFileError,
  hasSqliteHeader,
  inspectOutreachDatabase,
  requireDatabaseFile,
  sqliteCode,
} from "./database-file";
import { migratePg } from "./migrate-pg";
import * as pgSchema from "./schema/pg";
import { createPgClient } from "./store/postgres";

/** A copy that cannot start or did not finish; the message is one line for the operator. */
export class DatabaseCopyError extends Error {}

/** PostgreSQL's limit of bind parameters in one statement. */
const MAX_PARAMETERS = 65_535;
/** Rows per INSERT at most (fewer when a table's columns would pass MAX_PARAMETERS). */
const MAX_ROWS_PER_INSERT = 1000;

/** One table's rows: in the SQLite file and, after the copy, in the PostgreSQL database. */
export interface TableCount {
  table: string;
  source: number;
  target: number;
}

export interface CopyProgress {
  table: string;
  /** Rows of `table` copied so far, of `tableTotal`. */
  tableRows: number;
  tableTotal: number;
  /** Rows of every table copied so far, of `total`. */
  copied: number;
  total: number;
}

export interface CopyReport {
  /** Every table, in the order copied. */
  tables: TableCount[];
  /** Tables whose counts (or, for the counters, contents) differ: non-empty means nothing was kept. */
  mismatches: string[];
  rows: number;
  durationMs: number;
}

export interface CopyOptions {
  /**
   * How a connection failure names the target: who gave it (`--to`) and where it is
   * (`host:port/database`; never the URL: it may hold a password).
   */
  target?: { name: string; where: string };
  /** Called after every INSERT (and once at the start of each table). */
  onProgress?: (progress: CopyProgress) => void;
}

interface TablePlan {
  name: string;
  columns: { name: string; type: string }[];
}

/**
 * The counters that are views on PostgreSQL: how SQLite's rows go in (`copy`), the view's rows
 * to compare with them (`read`, `sourceRows`: the same columns in the same order), and the
 * functions of the triggers that keep them (migrations/pg/0006: one per kind of statement).
 */
interface CounterPlan {
  name: string;
  triggers: string[];
  sourceRows: string;
  read: string;
  copy(sql: postgres.TransactionSql, rows: unknown[][]): Promise<void>;
}

const COUNTERS: CounterPlan[] = [
  {
    name: "audience_versions",
    triggers: ["audience_versions_written", "audience_versions_removed"],
    sourceRows: "SELECT workspace_id, version, contact_count FROM audience_versions",
    read: "SELECT workspace_id, version, contact_count FROM audience_versions",
    copy: (sql, rows) =>
      insertRows(sql, "audience_version_deltas", ["workspace_id", "writes", "contacts"], rows),
  },
  {
    name: "message_daily_counts",
    triggers: [
      "message_daily_counts_inserted",
      "message_daily_counts_updated",
      "message_daily_counts_deleted",
    ],
    sourceRows: "SELECT workspace_id, day, status, n FROM message_daily_counts",
    read: "SELECT workspace_id, day, status, n FROM message_daily_counts",
    copy: (sql, rows) =>
      insertRows(sql, "message_daily_count_deltas", ["workspace_id", "day", "status", "n"], rows),
  },
  {
    name: "link_versions",
    triggers: ["link_versions_bump"],
    // The view has no row until the sequence's first value (0003 converts only a version > 0).
    sourceRows: "SELECT id, version FROM link_versions WHERE version > 0",
    read: "SELECT id, version FROM link_versions",
    async copy(sql, rows) {
      for (const [, version] of rows) await sql`SELECT setval('link_versions_seq', ${String(version)})`;
    },
  },
];

const COUNTER_NAMES = new Set(COUNTERS.map((counter) => counter.name));

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The PostgreSQL tables of the schema (src/db/schema/pg), parents before the tables that refer to them. */
function tablesInForeignKeyOrder(): TablePlan[] {
  const configs = (Object.values(pgSchema) as unknown[])
    .filter((value): value is PgTable => is(value, PgTable))
    .map((table) => getTableConfig(table))
    .sort((a, b) => a.name.localeCompare(b.name));
  const ordered: TablePlan[] = [];
  const placed = new Set<string>();
  const visit = (config: (typeof configs)[number], path: string[]) => {
    if (placed.has(config.name)) return;
    if (path.includes(config.name))
      throw new DatabaseCopyError(`foreign keys form a cycle: ${[...path, config.name].join(" → ")}`);
    for (const key of config.foreignKeys) {
      const parent = getTableConfig(key.reference().foreignTable);
      if (parent.name !== config.name) visit(parent, [...path, config.name]);
    }
    placed.add(config.name);
    ordered.push({
      name: config.name,
      columns: config.columns.map((column) => ({ name: column.name, type: column.getSQLType() })),
    });
  };
  for (const config of configs) visit(config, []);
  return ordered;
}

/**
 * Opens the SQLite file read-only (never creating it) and checks that it is an outreach database
 * migrated exactly as far as this binary: its tables are then the ones the copy expects.
 */
function openSource(path: string): Database {
  requireDatabaseFile(path);
  if (!hasSqliteHeader(path)) throw new DatabaseFileError(`${path} is not an SQLite database`);
  let sqlite: Database;
  try {
    // Integers as bigint: an epoch-ms or a version is copied digit for digit, whatever its size.
    sqlite = new Database(path, { readonly: true, safeIntegers: true });
    sqlite.exec("PRAGMA busy_timeout = 5000");
  } catch (error) {
    throw new DatabaseFileError(`cannot open the database ${path}: ${(error as Error).message}`);
  }
  try {
    const { pendingMigrations } = inspectOutreachDatabase(sqlite, path);
    if (pendingMigrations > 0)
      throw new DatabaseFileError(
        `${path} lacks ${pendingMigrations} migration${pendingMigrations === 1 ? "" : "s"} of this binary: run outreach migrate --db ${path} first`,
      );
  } catch (error) {
    sqlite.close();
    if (error instanceof DatabaseFileError) throw error;
    if (sqliteCode(error) === "SQLITE_NOTADB")
      throw new DatabaseFileError(`${path} is not an SQLite database`);
    throw new DatabaseFileError(`cannot read the database ${path}: ${(error as Error).message}`);
  }
  return sqlite;
}

/** Base tables of the target's schema that hold a row (schema_migrations aside). */
async function tablesHoldingRows(sql: postgres.Sql | postgres.TransactionSql): Promise<string[]> {
  const tables = await sql<{ name: string }[]>`
    SELECT tablename AS name FROM pg_tables
    WHERE schemaname = current_schema() AND tablename <> 'schema_migrations' ORDER BY tablename`;
  const holding: string[] = [];
  for (const { name } of tables) {
    const [row] = await sql.unsafe(`SELECT EXISTS (SELECT 1 FROM ${quote(name)}) AS any`);
    if (row.any) holding.push(name);
  }
  return holding;
}

/** `rows` into `table` in multi-row INSERTs, each within PostgreSQL's bind-parameter limit. */
async function insertRows(
  sql: postgres.TransactionSql,
  table: string,
  columns: string[],
  rows: unknown[][],
  onInserted?: (n: number) => void,
) {
  const perInsert = Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_PARAMETERS / columns.length));
  const head = `INSERT INTO ${quote(table)} (${columns.map(quote).join(", ")}) OVERRIDING SYSTEM VALUE VALUES `;
  for (let start = 0; start < rows.length; start += perInsert) {
    const batch = rows.slice(start, start + perInsert);
    const tuples = batch.map(
      (_, row) => `(${columns.map((_, column) => `$${row * columns.length + column + 1}`).join(", ")})`,
    );
    // Prepared by name: a table's full batches share one statement (one round trip each).
    await sql.unsafe(head + tuples.join(", "), batch.flat() as postgres.ParameterOrJSON<never>[], {
      prepare: true,
    });
    onInserted?.(batch.length);
  }
}

/**
 * A SQLite value as PostgreSQL takes it for a column of `type`: booleans from 0/1, JSON as its
 * text (never re-serialized, so keys keep their order and numbers their spelling), integers from
 * bigint as their digits.
 */
function targetValue(value: unknown, type: string, where: string): unknown {
  if (value === null) return null;
  if (value instanceof Uint8Array)
    throw new DatabaseCopyError(`${where} holds binary data, which no PostgreSQL column here takes`);
  if (type === "boolean") return Number(value) !== 0;
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return String(value);
  return value;
}

/** A row as comparable text, for the counters' comparison. */
const rowKey = (row: unknown[]) =>
  JSON.stringify(row.map((value) => (value === null ? null : String(value))));

/**
 * Copies the SQLite database at `sourcePath` into the PostgreSQL database at `targetUrl` (see the
 * file's comment). Throws DatabaseFileError for a source it cannot use, DatabaseCopyError for a
 * target that holds rows (before anything is written) or a copy that failed (rolled back). A
 * count that differs is rolled back too and answered in `mismatches`.
 */
export async function copySqliteToPostgres(
  sourcePath: string,
  targetUrl: string,
  options: CopyOptions = {},
): Promise<CopyReport> {
  const started = performance.now();
  const sqlite = openSource(sourcePath);
  const client = createPgClient(targetUrl, { max: 1 });
  // JSON goes in as the text SQLite holds (postgres.js would JSON.stringify it again).
  const serializers = client.options.serializers as Record<string, (value: unknown) => unknown>;
  serializers[114] = (value) => value;
  serializers[3802] = (value) => value;
  try {
    try {
      await client`SELECT 1`;
    } catch (error) {
      const { message, code } = error as { message?: string; code?: string };
      throw new DatabaseCopyError(
        `${options.target?.name ?? "the target"}: cannot connect to PostgreSQL${options.target ? ` at ${options.target.where}` : ""}: ${(message || code || String(error)).split("\n")[0]}`,
      );
    }
    // 1. Refuse a target with rows before anything is written, migrations included.
    const holding = await tablesHoldingRows(client);
    if (holding.length > 0)
      throw new DatabaseCopyError(
        `the target database is not empty (${holding.slice(0, 3).join(", ")}${holding.length > 3 ? ", …" : ""} hold rows): migrate-db copies into an empty database only; nothing was written`,
      );
    await migratePg(client);

    // 2. One instant of the source: every count and row below is read in this transaction.
    sqlite.exec("BEGIN");
    const tables = tablesInForeignKeyOrder().filter((table) => !COUNTER_NAMES.has(table.name));
    const countOf = (name: string) =>
      Number((sqlite.query(`SELECT count(*) AS n FROM ${quote(name)}`).get() as { n: bigint }).n);
    const sourceCounts = new Map<string, number>();
    for (const table of tables) sourceCounts.set(table.name, countOf(table.name));
    const counterRows = new Map<string, unknown[][]>();
    for (const counter of COUNTERS) {
      const rows = sqlite.query(counter.sourceRows).values() as unknown[][];
      counterRows.set(
        counter.name,
        rows.map((row) => row.map((value) => (typeof value === "bigint" ? value.toString() : value))),
      );
      sourceCounts.set(counter.name, rows.length);
    }
    for (const table of tables) checkColumns(sqlite, table);
    const total = [...sourceCounts.values()].reduce((a, b) => a + b, 0);

    // 3. One target transaction: every row, the counters, the sequences, then the counts.
    const mismatches: string[] = [];
    const counts: TableCount[] = [];
    try {
      await client.begin(async (sql) => {
        const counterTriggers = await sql<{ table: string; trigger: string }[]>`
          SELECT c.relname AS table, t.tgname AS trigger
          FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
          WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace
            AND p.proname IN ${sql(COUNTERS.flatMap((counter) => counter.triggers))}
          ORDER BY c.relname, t.tgname`;
        for (const { table, trigger } of counterTriggers)
          await sql.unsafe(`ALTER TABLE ${quote(table)} DISABLE TRIGGER ${quote(trigger)}`);
        // Checked again under the transaction: a server started on the target meanwhile.
        const written = await tablesHoldingRows(sql);
        if (written.length > 0)
          throw new DatabaseCopyError(
            `the target database is no longer empty (${written.slice(0, 3).join(", ")} hold rows): nothing was written`,
          );

        let copied = 0;
        const progress = (table: string, tableRows: number, tableTotal: number) =>
          options.onProgress?.({ table, tableRows, tableTotal, copied, total });
        for (const table of tables) {
          const tableTotal = sourceCounts.get(table.name) ?? 0;
          let tableRows = 0;
          progress(table.name, 0, tableTotal);
          const names = table.columns.map((column) => column.name);
          const select = sqlite.query(`SELECT ${names.map(quote).join(", ")} FROM ${quote(table.name)}`);
          const perRead = Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_PARAMETERS / names.length));
          let pending: unknown[][] = [];
          const flush = async () => {
            await insertRows(sql, table.name, names, pending, (n) => {
              tableRows += n;
              copied += n;
              progress(table.name, tableRows, tableTotal);
            });
            pending = [];
          };
          for (const row of select.iterate() as IterableIterator<Record<string, unknown>>) {
            pending.push(
              table.columns.map((column) =>
                targetValue(row[column.name], column.type, `${table.name}.${column.name}`),
              ),
            );
            if (pending.length >= perRead) await flush();
          }
          if (pending.length > 0) await flush();
        }
        for (const counter of COUNTERS) {
          const rows = counterRows.get(counter.name) ?? [];
          progress(counter.name, 0, rows.length);
          await counter.copy(sql, rows);
          copied += rows.length;
          progress(counter.name, rows.length, rows.length);
        }
        for (const { table, trigger } of counterTriggers)
          await sql.unsafe(`ALTER TABLE ${quote(table)} ENABLE TRIGGER ${quote(trigger)}`);
        await setIdentitiesPastCopiedValues(sql, new Set(tables.map((table) => table.name)));

        // 4. Every table's count, and the counters' rows, as on SQLite; else roll back.
        for (const table of tables) {
          const [row] = await sql.unsafe(`SELECT count(*)::bigint AS n FROM ${quote(table.name)}`);
          const count = {
            table: table.name,
            source: sourceCounts.get(table.name) ?? 0,
            target: Number(row.n),
          };
          counts.push(count);
          if (count.source !== count.target) mismatches.push(table.name);
        }
        for (const counter of COUNTERS) {
          const target = (await sql.unsafe(counter.read).values()) as unknown[][];
          const source = counterRows.get(counter.name) ?? [];
          counts.push({ table: counter.name, source: source.length, target: target.length });
          const sorted = (rows: unknown[][]) => rows.map(rowKey).sort().join("\n");
          if (sorted(source) !== sorted(target)) mismatches.push(counter.name);
        }
        if (mismatches.length > 0) throw new CountsDiffer();
      });
    } catch (error) {
      if (!(error instanceof CountsDiffer)) throw copyError(error);
    } finally {
      sqlite.exec("COMMIT");
    }
    return { tables: counts, mismatches, rows: total, durationMs: Math.round(performance.now() - started) };
  } finally {
    sqlite.close();
    await client.end({ timeout: 5 }).catch(() => {});
  }
}

/** Thrown inside the target transaction to roll it back when a count differs. */
class CountsDiffer extends Error {}

/** A failure of the copy in one line (PostgreSQL's own message and, when it names one, the table). */
function copyError(error: unknown): Error {
  if (error instanceof DatabaseCopyError || error instanceof DatabaseFileError) return error;
  const { message, table_name: table } = error as { message?: string; table_name?: string };
  const first = (message ?? String(error)).split("\n")[0];
  return new DatabaseCopyError(
    `the copy failed${table ? ` in ${table}` : ""}: ${first}; nothing was copied (the target is migrated and empty)`,
  );
}

/** Refuses a source whose table lacks a column the target has (a schema this binary does not know). */
function checkColumns(sqlite: Database, table: TablePlan) {
  const present = new Set(
    (sqlite.query(`PRAGMA table_info(${quote(table.name)})`).all() as { name: string }[]).map((c) => c.name),
  );
  const missing = table.columns.find((column) => !present.has(column.name));
  if (missing)
    throw new DatabaseCopyError(
      `the source's table ${table.name} has no column ${missing.name}: nothing was written`,
    );
}

/**
 * Moves the sequence behind every identity or serial column of the copied tables past the
 * greatest value copied, so the next row the server inserts does not take a copied key.
 */
async function setIdentitiesPastCopiedValues(sql: postgres.TransactionSql, copied: Set<string>) {
  const columns = await sql<{ table: string; column: string }[]>`
    SELECT table_name AS table, column_name AS column FROM information_schema.columns
    WHERE table_schema = current_schema() AND (is_identity = 'YES' OR column_default LIKE 'nextval(%')`;
  for (const { table, column } of columns) {
    if (!copied.has(table)) continue;
    await sql.unsafe(
      `SELECT setval(pg_get_serial_sequence($1, $2), m) FROM (SELECT max(${quote(column)}) AS m FROM ${quote(table)}) AS copied WHERE m IS NOT NULL`,
      [quote(table), column],
    );
  }
}
