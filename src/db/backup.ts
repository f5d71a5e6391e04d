import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { closeSync, openSync, renameSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import {
  checkIntegrity,
  DatabaseFileError,
  fileProblem,
  removeDatabaseFiles,
  requireDatabaseFile,
  requireMigrationsTable,
  sqliteCode,
  syncFile,
  syncFolder,
} from "./database-file";

export interface BackupResult {
  /** Absolute path of the file written. */
  path: string;
  bytes: number;
  /** The newest migration in the copy. */
  lastMigration: string | null;
  durationMs: number;
}

/** Opens an existing database without creating it or changing its settings. */
function openExisting(path: string): Database {
  requireDatabaseFile(path);
  let sqlite: Database;
  try {
    sqlite = new Database(path, { readwrite: true, create: false });
    sqlite.exec("PRAGMA busy_timeout = 5000");
    sqlite.query("SELECT count(*) FROM sqlite_master").get();
  } catch (error) {
    const code = sqliteCode(error);
    if (code === "SQLITE_NOTADB") throw new DatabaseFileError(`${path} is not an SQLite database`);
    throw new DatabaseFileError(`cannot open the database ${path}: ${(error as Error).message}`);
  }
  return sqlite;
}

/**
 * Checks, before any work, that `out` can be written: its folder exists and is a folder, it is not
 * the database itself, and it does not exist unless `force`. Then creates the temporary file beside
 * it, empty and exclusively (VACUUM INTO accepts an empty file): that is the check that the folder
 * is writable.
 */
function createTemporaryBeside(out: string, label: string, dbPath: string, force: boolean): string {
  const folder = dirname(out);
  const folderStat = statSync(folder, { throwIfNoEntry: false });
  if (!folderStat) throw new DatabaseFileError(`cannot write ${label}: folder ${folder} does not exist`);
  if (!folderStat.isDirectory())
    throw new DatabaseFileError(`cannot write ${label}: ${folder} is not a folder`);
  const existing = statSync(out, { throwIfNoEntry: false });
  if (existing?.isDirectory()) throw new DatabaseFileError(`cannot write ${label}: it is a folder`);
  const source = statSync(dbPath);
  if (existing && existing.ino === source.ino && existing.dev === source.dev)
    throw new DatabaseFileError(`${label} is the database itself: choose another file`);
  if (existing && !force) throw new DatabaseFileError(`${label} already exists: use --force to replace it`);
  const temporary = join(folder, `${basename(out)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    closeSync(openSync(temporary, "wx"));
  } catch (error) {
    throw new DatabaseFileError(
      `cannot write ${label}: folder ${folder} is not writable (${fileProblem(error)})`,
    );
  }
  return temporary;
}

/**
 * Copies the live database at `dbPath` into the single file `out` while servers keep using it.
 *
 * 1. `VACUUM INTO` a temporary file beside `out`: one read transaction, so the copy is the
 *    database as it was at one instant, and it never blocks the servers' writes (WAL).
 * 2. Switch the copy out of WAL mode (one self-contained file), check its integrity, sync it.
 * 3. Rename it onto `out`. Any failure removes the temporary file: `out` is either untouched or
 *    the complete copy, never half written.
 */
export function backupDatabase(dbPath: string, out: string, options: { force?: boolean } = {}): BackupResult {
  const started = performance.now();
  const target = resolve(out);
  const source = openExisting(dbPath);
  let temporary: string;
  try {
    requireMigrationsTable(source, dbPath);
    temporary = createTemporaryBeside(target, out, dbPath, options.force === true);
  } catch (error) {
    source.close();
    throw error;
  }

  try {
    try {
      // Database.run finalizes its statement: a statement left unfinalized keeps the connection
      // open past close(), and Bun then checkpoints it at exit while holding the WAL write lock,
      // which makes the servers' writes fail meanwhile.
      source.run("VACUUM INTO ?", [temporary]);
    } catch (error) {
      if (sqliteCode(error) === "SQLITE_FULL")
        throw new DatabaseFileError(`cannot write ${out}: no space left on the device`);
      throw new DatabaseFileError(`cannot copy ${dbPath}: ${(error as Error).message}`);
    } finally {
      source.close();
    }

    const copy = new Database(temporary, { readwrite: true, create: false });
    let lastMigration: string | null;
    try {
      copy.exec("PRAGMA journal_mode = DELETE");
      checkIntegrity(copy, `the copy of ${dbPath}`);
      lastMigration = requireMigrationsTable(copy, `the copy of ${dbPath}`);
    } finally {
      copy.close();
    }
    syncFile(temporary);
    try {
      renameSync(temporary, target);
    } catch (error) {
      throw new DatabaseFileError(`cannot write ${out}: ${fileProblem(error)}`);
    }
    syncFolder(dirname(target));
    return {
      path: target,
      bytes: statSync(target).size,
      lastMigration,
      durationMs: Math.round(performance.now() - started),
    };
  } catch (error) {
    if (error instanceof DatabaseFileError) throw error;
    throw new DatabaseFileError(`backup failed, ${out} not written: ${fileProblem(error)}`);
  } finally {
    removeDatabaseFiles(temporary);
  }
}
