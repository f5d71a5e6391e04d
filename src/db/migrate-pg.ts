import { createHash } from "node:crypto";
import type postgres from "postgres";
import { DatabaseOpenError } from "./client";
import { type MigrationResult, migrationStatements, newerBinaryMessage } from "./migrate";
import { embeddedPgMigrations } from "./migrations.generated";

/**
 * The advisory lock every process takes to migrate a PostgreSQL database (and, later, to run the
 * first-boot bootstrap): one key for the whole product, held until the migration's transaction ends.
 */
export const MIGRATION_LOCK_KEY = 4_180_511_962_310_778n;

/**
 * migrate() for PostgreSQL (src/db/migrate.ts has the same contract): applies the embedded
 * migrations (migrations/pg/) the database has not seen, all in one transaction, so a failure
 * leaves the database exactly as it was, and refuses a database migrated by a newer binary. The
 * transaction first takes an advisory lock, so processes that start together migrate one after
 * the other: the first applies the migrations, the others find nothing left to do.
 *
 * `client` is a postgres.js client (createPgClient in src/db/store/postgres.ts).
 */
export async function migratePg(
  client: postgres.Sql,
  migrations = embeddedPgMigrations,
): Promise<MigrationResult> {
  return client.begin(async (sql) => {
    await sql.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
    await sql.unsafe(
      "CREATE TABLE IF NOT EXISTS schema_migrations (tag text PRIMARY KEY NOT NULL, hash text NOT NULL, applied_at bigint NOT NULL)",
    );
    const known = new Set(migrations.map((m) => m.tag));
    const done = await sql<{ tag: string }[]>`SELECT tag FROM schema_migrations`;
    const unknown = done.filter((row) => !known.has(row.tag));
    if (unknown.length > 0) throw new DatabaseOpenError(newerBinaryMessage(unknown[0].tag));
    const doneTags = new Set(done.map((row) => row.tag));
    const pending = migrations.filter((m) => !doneTags.has(m.tag));
    for (const migration of pending) {
      for (const statement of migrationStatements(migration.sql)) await sql.unsafe(statement);
      const hash = createHash("sha256").update(migration.sql).digest("hex");
      await sql`INSERT INTO schema_migrations (tag, hash, applied_at) VALUES (${migration.tag}, ${hash}, ${Date.now()})`;
    }
    return { applied: pending.map((m) => m.tag) };
  });
}
