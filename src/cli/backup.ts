import { dbPathFrom } from "../config";
import { backupDatabase } from "../db/backup";
import { formatBytes } from "../db/database-file";
import { restoreDatabase } from "../db/restore";
import { type ParsedArgs, requireFlag, UsageError } from "./args";

/** `outreach backup --out FILE [--force] [--db PATH] [--json]` */
export function runBackupCommand(positionals: string[], flags: ParsedArgs["flags"]): number {
  if (positionals.length > 1) throw new UsageError("usage: outreach backup --out FILE [--force] [--db PATH]");
  const out = requireFlag(flags, "out");
  const dbPath = dbPathFrom(flags);
  const result = backupDatabase(dbPath, out, { force: flags.force === true });
  if (flags.json) {
    console.log(
      JSON.stringify(
        {
          path: result.path,
          bytes: result.bytes,
          db: dbPath,
          last_migration: result.lastMigration,
          duration_ms: result.durationMs,
        },
        null,
        2,
      ),
    );
  } else {
    console.log(
      `backed up ${dbPath} to ${result.path} (${formatBytes(result.bytes)}) in ${(result.durationMs / 1000).toFixed(1)} s`,
    );
  }
  return 0;
}

/** `outreach restore FILE [--db PATH] [--json]` */
export function runRestoreCommand(positionals: string[], flags: ParsedArgs["flags"]): number {
  const file = positionals[1];
  if (!file || positionals.length > 2) throw new UsageError("usage: outreach restore FILE [--db PATH]");
  const dbPath = dbPathFrom(flags);
  const result = restoreDatabase(file, dbPath);
  if (flags.json) {
    console.log(
      JSON.stringify(
        {
          path: result.path,
          bytes: result.bytes,
          from: file,
          kept: result.kept,
          last_migration: result.lastMigration,
          pending_migrations: result.pendingMigrations,
        },
        null,
        2,
      ),
    );
    return 0;
  }
  const lines = [`restored ${result.path} from ${file} (${formatBytes(result.bytes)})`];
  if (result.kept)
    lines.push(`the replaced database is kept as ${result.kept} (delete it when no longer needed)`);
  if (result.pendingMigrations > 0)
    lines.push(
      `${result.pendingMigrations} migration${result.pendingMigrations === 1 ? "" : "s"} will apply when the server starts`,
    );
  console.log(lines.join("\n"));
  return 0;
}
