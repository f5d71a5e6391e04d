import type { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { DatabaseOpenError } from "./client";
import { embeddedMigrations } from "./migrations.generated";

/** True when a statement has something besides comments and white space. */
export function hasSql(statement: string): boolean {
  return (
    statement
      .replace(/--.*$/gm, "")
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .trim() !== ""
  );
}

export interface MigrationResult {
  applied: string[];
}

/** Why a database migrated by a newer binary is refused (`tag`: its first migration this one does not know). */
export function newerBinaryMessage(tag: string): string {
  return `the database was migrated by a newer version of outreach (migration ${tag} is unknown to this binary); upgrade the binary`;
}

/** The statements of a drizzle-kit migration, in order (comment-only pieces left out). */
export function migrationStatements(migrationSql: string): string[] {
  return migrationSql.split("--> statement-breakpoint").filter(hasSql);
}

/**
 * Applies the embedded drizzle-kit migrations that the database has not seen, all in one
 * transaction: a failure leaves the database exactly as it was. Refuses a database that was
 * migrated by a newer binary (it has migrations this one does not know).
 */
export function migrate(sqlite: Database, migrations = embeddedMigrations): MigrationResult {
  try {
    sqlite.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (tag TEXT PRIMARY KEY NOT NULL, hash TEXT NOT NULL, applied_at INTEGER NOT NULL)",
    );
  } catch (error) {
    const message = (error as Error).message;
    if (/readonly|read-only/i.test(message)) {
      throw new DatabaseOpenError(
        "the database is read-only: the server needs to write to it (check permissions)",
      );
    }
    throw error;
  }
  const known = new Set(migrations.map((m) => m.tag));
  const done = sqlite.query<{ tag: string }, []>("SELECT tag FROM schema_migrations").all();
  const unknown = done.filter((row) => !known.has(row.tag));
  if (unknown.length > 0) {
    throw new DatabaseOpenError(newerBinaryMessage(unknown[0].tag));
  }
  const doneTags = new Set(done.map((row) => row.tag));
  const pending = migrations.filter((m) => !doneTags.has(m.tag));
  if (pending.length === 0) return { applied: [] };
  const insert = sqlite.prepare("INSERT INTO schema_migrations (tag, hash, applied_at) VALUES (?, ?, ?)");
  sqlite.transaction(() => {
    for (const migration of pending) {
      for (const statement of migrationStatements(migration.sql)) sqlite.exec(statement);
      insert.run(migration.tag, createHash("sha256").update(migration.sql).digest("hex"), Date.now());
    }
  })();
  return { applied: pending.map((m) => m.tag) };
}
