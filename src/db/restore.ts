import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import {
  constants,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import {
  checkIntegrity,
  DatabaseFileError,
  fileProblem,
  hasSqliteHeader,
  inspectOutreachDatabase,
  processesUsing,
  removeDatabaseFiles,
  sqliteCode,
  syncFile,
  syncFolder,
} from "./database-file";

export interface RestoreResult {
  /** Absolute path of the database that was replaced (or created). */
  path: string;
  bytes: number;
  /** Where the replaced database is kept, or null when there was none. */
  kept: string | null;
  lastMigration: string | null;
  /** Migrations this binary will apply when a server starts on the restored file. */
  pendingMigrations: number;
}

/** `-wal`, `-shm` and `-journal` beside a database belong to that file only. */
const SIDE_FILES = ["-wal", "-shm", "-journal"];

function inUse(label: string, path: string): DatabaseFileError {
  const users = processesUsing(path);
  const who = users.length
    ? users.map((user) => `pid ${user.pid} (${user.command})`).join(", ")
    : "another process (a running server?)";
  return new DatabaseFileError(`${label} is in use by ${who}: stop it, then restore`);
}

/**
 * Takes SQLite's own exclusive lock on the current database, proving that no process has it open,
 * and keeps it until the swap is done (a server starting meanwhile waits, then fails clearly).
 * Every connection to a WAL database holds a shared lock on the file from its first read until it
 * closes, and the kernel drops it when the process dies (even by `kill -9`): a lock we can take
 * means no server, CLI command or backup is using the file, however many of them there are, and a
 * crashed server never blocks a restore. Nothing is written. Answers null when the file is not a
 * database at all (no server can be running on it).
 */
function lockCurrentDatabase(path: string, label: string): Database | null {
  let sqlite: Database;
  try {
    sqlite = new Database(path, { readwrite: true, create: false });
  } catch (error) {
    throw new DatabaseFileError(`cannot open the database ${label}: ${(error as Error).message}`);
  }
  try {
    sqlite.exec("PRAGMA busy_timeout = 1000");
    sqlite.exec("PRAGMA locking_mode = EXCLUSIVE");
    sqlite.exec("BEGIN EXCLUSIVE");
    sqlite.exec("COMMIT");
  } catch (error) {
    sqlite.close();
    const code = sqliteCode(error);
    if (code === "SQLITE_BUSY") throw inUse(label, path);
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") return null;
    throw new DatabaseFileError(`cannot lock the database ${label}: ${(error as Error).message}`);
  }
  return sqlite;
}

/**
 * Under the lock, folds the current database's WAL (a crashed server's last writes) into the file
 * and takes it out of WAL mode. journal_mode MEMORY leaves nothing beside the file, and closing
 * this connection after the swap then touches no file by name (the name is the restored file's).
 */
function detachWal(sqlite: Database, label: string) {
  try {
    sqlite.query("PRAGMA wal_checkpoint(TRUNCATE)").get();
    const mode = sqlite.query<{ journal_mode: string }, []>("PRAGMA journal_mode = MEMORY").get();
    if (mode?.journal_mode !== "memory") throw new Error(`journal mode stayed ${mode?.journal_mode}`);
  } catch (error) {
    throw new DatabaseFileError(`cannot prepare ${label} to be replaced: ${(error as Error).message}`);
  }
}

/**
 * Copies `file` beside the database and checks the copy: SQLite, an outreach database not newer
 * than this binary, `integrity_check` ok; then takes it out of WAL mode (one self-contained file).
 */
function prepareCopy(file: string, temporary: string) {
  try {
    copyFileSync(file, temporary, constants.COPYFILE_EXCL);
    // A database copied by hand may have committed data still in its WAL.
    if ((statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0)
      copyFileSync(`${file}-wal`, `${temporary}-wal`, constants.COPYFILE_EXCL);
  } catch (error) {
    throw new DatabaseFileError(`cannot copy ${file} beside the database: ${fileProblem(error)}`);
  }
  let copy: Database;
  try {
    copy = new Database(temporary, { readwrite: true, create: false });
    copy.query("SELECT count(*) FROM sqlite_master").get();
  } catch (error) {
    if (sqliteCode(error) === "SQLITE_NOTADB")
      throw new DatabaseFileError(`${file} is not an SQLite database`);
    throw new DatabaseFileError(`${file} cannot be read as a database: ${(error as Error).message}`);
  }
  try {
    const info = inspectOutreachDatabase(copy, file);
    try {
      checkIntegrity(copy, file);
    } catch (error) {
      if (error instanceof DatabaseFileError) throw error;
      throw new DatabaseFileError(`${file} is damaged (${(error as Error).message})`);
    }
    const mode = copy.query<{ journal_mode: string }, []>("PRAGMA journal_mode = DELETE").get();
    if (mode?.journal_mode !== "delete")
      throw new DatabaseFileError(`${file} cannot be taken out of WAL mode`);
    return info;
  } finally {
    copy.close();
  }
}

/** `outreach.db.before-restore-20250101T120000` (with `-2`, `-3`... when taken). */
function keptName(path: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").slice(0, 15);
  let name = `${path}.before-restore-${stamp}`;
  for (let n = 2; existsSync(name); n++) name = `${path}.before-restore-${stamp}-${n}`;
  return name;
}

/**
 * Replaces the database at `dbPath` with the backup `file`, refusing while anything holds the
 * database. The old file is never lost: it changes only by a checkpoint of its own WAL, once the
 * backup passed every check, and is then kept beside the new one as `<db>.before-restore-<time>`.
 *
 * 1. Lock the current database (lockCurrentDatabase): refused if a process has it open.
 * 2. Copy `file` to a temporary file beside the database and check the copy (prepareCopy).
 * 3. Fold the old WAL into the old file (detachWal), keep the old file under its new name (a hard
 *    link), remove what is left beside it, and rename the copy onto the database path: atomic, a
 *    reader sees the old file or the new one.
 * 4. Release the lock. A process that opened the old file meanwhile was held at its first read and
 *    notices the swap (see `openDatabase`).
 */
export function restoreDatabase(file: string, dbPath: string): RestoreResult {
  const fileStat = statSync(file, { throwIfNoEntry: false });
  if (!fileStat) throw new DatabaseFileError(`cannot read ${file}: no such file`);
  if (!fileStat.isFile()) throw new DatabaseFileError(`cannot read ${file}: not a file`);
  try {
    if (!hasSqliteHeader(file)) throw new DatabaseFileError(`${file} is not an SQLite database`);
  } catch (error) {
    if (error instanceof DatabaseFileError) throw error;
    throw new DatabaseFileError(`cannot read ${file}: ${fileProblem(error)}`);
  }

  // A symlinked database path is resolved so that the rename replaces the file, not the link.
  const target = existsSync(dbPath) ? realpathSync(dbPath) : resolve(dbPath);
  const current = statSync(target, { throwIfNoEntry: false });
  if (current && current.ino === fileStat.ino && current.dev === fileStat.dev)
    throw new DatabaseFileError(`${file} is the database itself: nothing to restore`);
  if (current && !current.isFile()) throw new DatabaseFileError(`the database ${dbPath} is not a file`);
  try {
    mkdirSync(dirname(target), { recursive: true });
  } catch (error) {
    throw new DatabaseFileError(`cannot create the folder for ${dbPath}: ${fileProblem(error)}`);
  }

  const lock = current ? lockCurrentDatabase(target, dbPath) : null;
  const temporary = join(
    dirname(target),
    `${basename(target)}.restore-${process.pid}-${randomBytes(4).toString("hex")}`,
  );
  let kept: string | null = null;
  let movedWal = false;
  let swapped = false;
  try {
    const info = prepareCopy(file, temporary);
    syncFile(temporary);

    if (current) {
      if (lock) detachWal(lock, dbPath);
      kept = keptName(target);
      try {
        linkSync(target, kept);
      } catch {
        // A file system without hard links: a copy (the lock keeps the file still meanwhile).
        copyFileSync(target, kept, constants.COPYFILE_EXCL);
      }
      // When the old file could not be locked it is not a database; its WAL, if any, goes with it.
      if (!lock && existsSync(`${target}-wal`)) {
        renameSync(`${target}-wal`, `${kept}-wal`);
        movedWal = true;
      }
    }
    // What is left beside the path is stale (the old WAL is folded in or moved), and a stale WAL
    // would be replayed into the restored file.
    for (const suffix of SIDE_FILES) rmSync(target + suffix, { force: true });
    try {
      renameSync(temporary, target);
    } catch (error) {
      throw new DatabaseFileError(`cannot replace ${dbPath}: ${fileProblem(error)}`);
    }
    swapped = true;
    syncFolder(dirname(target));
    return {
      path: target,
      bytes: statSync(target).size,
      kept,
      lastMigration: info.lastMigration,
      pendingMigrations: info.pendingMigrations,
    };
  } catch (error) {
    if (error instanceof DatabaseFileError) throw error;
    throw new DatabaseFileError(`restore failed, ${dbPath} is unchanged: ${fileProblem(error)}`);
  } finally {
    lock?.close();
    removeDatabaseFiles(temporary);
    if (kept && !swapped) {
      if (movedWal) renameSync(`${kept}-wal`, `${target}-wal`);
      rmSync(kept, { force: true });
    }
  }
}
