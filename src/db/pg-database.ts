import { drizzle } from "drizzle-orm/postgres-js";
import type postgres from "postgres";
import { log } from "../lib/log";
import { type Db, registerPgChangeWatch } from "./client";
import { setDialect } from "./dialect";
import { migratePg } from "./migrate-pg";
import { installPgTerminals } from "./store/pg-terminals";
import { createPgClient } from "./store/postgres";

/** The channel the change triggers notify (migrations/pg): the caches' invalidation. */
export const CHANGES_CHANNEL = "outreach_changes";

export interface PgDatabase {
  db: Db;
  client: postgres.Sql;
  close(): Promise<void>;
}

/**
 * Opens the PostgreSQL database of DATABASE_URL for the domain: a postgres.js pool (createPgClient)
 * through drizzle, the domain's SQLite-typed tables and terminals on it (./store/pg-terminals), the
 * migrations applied (once, under an advisory lock), and the change notifications its caches
 * compare: every notification moves the counter, and so does every (re)subscription, so a
 * reconnection empties every cache (whatever changed while it was away).
 *
 * JSON and booleans: the tables are SQLite's, whose JSON columns parse JSON text themselves and
 * whose booleans read 1/true alike and bind 1/0: json and jsonb come back as text, and a boolean
 * parameter of 1 is true.
 */
export async function openPgDatabase(
  url: string,
  options: { max?: number; migrate?: boolean } = {},
): Promise<PgDatabase> {
  const client = createPgClient(url, { max: options.max });
  const parsers = client.options.parsers as Record<string, (text: string) => unknown>;
  parsers[114] = (text) => text;
  parsers[3802] = (text) => text;
  // SQLite's boolean columns bind 1 and 0; postgres.js would write every value but `true` as false.
  const serializers = client.options.serializers as Record<string, (value: unknown) => unknown>;
  serializers[16] = (value) => (value === true || value === 1 || value === "1" || value === "t" ? "t" : "f");
  try {
    if (options.migrate !== false) {
      const { applied } = await migratePg(client);
      if (applied.length) log.info("database migrated", { applied: applied.join(",") });
    }
    setDialect("postgres");
    installPgTerminals();
    const db = drizzle({ client }) as unknown as Db;
    let changes = 0;
    await client.listen(
      CHANGES_CHANNEL,
      () => {
        changes++;
      },
      () => {
        changes++;
      },
    );
    registerPgChangeWatch((db as unknown as { dialect: object }).dialect, () => changes);
    return {
      db,
      client,
      close: () => client.end({ timeout: 5 }),
    };
  } catch (error) {
    await client.end({ timeout: 1 }).catch(() => {});
    throw error;
  }
}
