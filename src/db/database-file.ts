/**
 * The database as a file: what `outreach backup` and `outreach restore` need besides SQL (checking
 * that a file is an outreach database, durable writes, one-line explanations of file-system errors).
 */
import type { Database } from "bun:sqlite";
import {
  closeSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
  rmSync,
  statSync,
} from "node:fs";
import { embeddedMigrations } from "./migrations.generated";

/** A backup or restore that cannot go on; the message is one line for the operator. */
export class DatabaseFileError extends Error {}

const SQLITE_HEADER = "SQLite format 3\0";

/** True when the file starts with SQLite's 16-byte header (an empty or short file is not SQLite). */
export function hasSqliteHeader(path: string): boolean {
  const fd = openSync(path, "r");
  try {
    const header = Buffer.alloc(16);
    const read = readSync(fd, header, 0, 16, 0);
    return read === 16 && header.toString("latin1") === SQLITE_HEADER;
  } finally {
    closeSync(fd);
  }
}

/** Throws unless the database `path` is an existing file (one line saying why it cannot be read). */
export function requireDatabaseFile(path: string) {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch (error) {
    throw new DatabaseFileError(`cannot read the database ${path}: ${fileProblem(error)}`);
  }
  if (!stat.isFile()) throw new DatabaseFileError(`the database ${path} is not a file`);
}

/** SQLite's error code (`SQLITE_BUSY`, `SQLITE_NOTADB`, ...) of a bun:sqlite error, if it has one. */
export function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

/** `EACCES` and friends as a few words an operator understands. */
export function fileProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EROFS":
      return "read-only file system";
    case "ENOSPC":
      return "no space left on the device";
    case "ENOENT":
      return "no such file or folder";
    case "ENOTDIR":
      return "not a folder";
    case "EISDIR":
      return "is a folder";
    default:
      return (error as Error).message ?? String(error);
  }
}

export interface OutreachDatabaseInfo {
  /** The newest migration the file has, or null when it has none yet. */
  lastMigration: string | null;
  /** Migrations of this binary the file has not had yet (they apply when a server starts on it). */
  pendingMigrations: number;
}

/**
 * Throws unless the file has our `schema_migrations` table; answers the newest migration it lists
 * (tags are numbered, so the greatest is the newest).
 */
export function requireMigrationsTable(sqlite: Database, label: string): string | null {
  const table = sqlite
    .query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    .get();
  if (!table)
    throw new DatabaseFileError(`${label} is not an outreach database (no schema_migrations table)`);
  return (
    sqlite.query<{ tag: string | null }, []>("SELECT max(tag) AS tag FROM schema_migrations").get()?.tag ??
    null
  );
}

/**
 * Checks that an open SQLite file is an outreach database this binary can run: it has our
 * `schema_migrations` table and no migration this binary does not know. `label` names the file in
 * the message.
 */
export function inspectOutreachDatabase(
  sqlite: Database,
  label: string,
  migrations = embeddedMigrations,
): OutreachDatabaseInfo {
  requireMigrationsTable(sqlite, label);
  const done = sqlite
    .query<{ tag: string }, []>("SELECT tag FROM schema_migrations")
    .all()
    .map((row) => row.tag);
  const known = new Set(migrations.map((m) => m.tag));
  const unknown = done.find((tag) => !known.has(tag));
  if (unknown) {
    throw new DatabaseFileError(
      `${label} comes from a newer version of outreach (migration ${unknown} is unknown to this binary): upgrade outreach first`,
    );
  }
  const doneTags = new Set(done);
  const applied = migrations.filter((m) => doneTags.has(m.tag));
  return {
    lastMigration: applied.at(-1)?.tag ?? null,
    pendingMigrations: migrations.length - applied.length,
  };
}

/** `PRAGMA integrity_check`; a damaged file throws with SQLite's first finding. */
export function checkIntegrity(sqlite: Database, label: string) {
  const rows = sqlite.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all();
  if (rows[0]?.integrity_check === "ok") return;
  // SQLite's findings, less its "*** in database main ***" headings, on one line.
  const findings = rows
    .flatMap((row) => row.integrity_check.split("\n"))
    .filter((line) => line && !line.startsWith("***"));
  throw new DatabaseFileError(`${label} is damaged (integrity_check: ${findings.slice(0, 3).join("; ")})`);
}

/** Writes the file's data to the disk (so a rename after it cannot expose an empty file after a crash). */
export function syncFile(path: string) {
  const fd = openSync(path, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes a rename in `folder` durable. Some file systems refuse fsync on a folder: that is not fatal. */
export function syncFolder(folder: string) {
  try {
    const fd = openSync(folder, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // best effort
  }
}

/** Removes a database file and the journal files SQLite may have left beside it. */
export function removeDatabaseFiles(path: string) {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(path + suffix, { force: true });
}

/** `1234567` → `1.2 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = -1;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export interface FileUser {
  pid: number;
  /** The process's command line, shortened. */
  command: string;
}

/**
 * Processes of this machine that have `path` open (Linux `/proc`, like `fuser`), to name them in a
 * message. Best effort: other users' processes and other containers are not visible, so an empty
 * answer proves nothing.
 */
export function processesUsing(path: string): FileUser[] {
  if (process.platform !== "linux") return [];
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return [];
  }
  const users: FileUser[] = [];
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return [];
  }
  for (const pid of pids) {
    try {
      const fds = readdirSync(`/proc/${pid}/fd`);
      if (!fds.some((fd) => safeReadlink(`/proc/${pid}/fd/${fd}`) === real)) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
      users.push({ pid: Number(pid), command: command.length > 100 ? `${command.slice(0, 99)}…` : command });
    } catch {
      // the process ended or is not ours to look at
    }
  }
  return users;
}

function safeReadlink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
