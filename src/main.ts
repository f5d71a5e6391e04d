#!/usr/bin/env bun
/**
 * The outreach executable: `serve` runs the API; the other commands manage the same database.
 * Run `outreach help` for the list.
 */
import packageJson from "../package.json" with { type: "json" };
import { checkFlags, type ParsedArgs, parseArgs, requireFlag, UsageError } from "./cli/args";
import { runBackupCommand, runRestoreCommand } from "./cli/backup";
import { runContactsCommand } from "./cli/contacts";
import { runMigrateDbCommand } from "./cli/migrate-db";
import { runUsersCommand } from "./cli/users";
import {
  ConfigError,
  DatabaseUrlError,
  databaseUrlFrom,
  databaseUrlSource,
  dbPathFrom,
  describeDatabaseUrl,
  loadConfig,
} from "./config";
import { DatabaseOpenError, openDatabase } from "./db/client";
import { DatabaseFileError } from "./db/database-file";
import { migrate } from "./db/migrate";
import { DatabaseCopyError } from "./db/migrate-db";
import { migratePg } from "./db/migrate-pg";
import { createPgClient, probePostgres } from "./db/store/postgres";
import { createApiKey, listApiKeys, revokeApiKey, SCOPES, type Scope } from "./domain/workspace/api-keys";
import { createWorkspace, listWorkspaces } from "./domain/workspace/workspaces";
import { AppError } from "./lib/errors";
import { log } from "./lib/log";
import { toIso } from "./lib/time";
import { openConfiguredDatabase, type RunningServer, StartupError, startServer } from "./server";

const HELP = `outreach – self-hosted outreach platform

Usage:
  outreach serve [--port N] [--host H] [--db PATH | --database-url URL] [--carrier simulated|twilio] [--no-worker]
  outreach migrate [--db PATH]
  outreach workspaces create --name NAME [--db PATH] [--json]
  outreach workspaces list [--db PATH] [--json]
  outreach keys create --workspace ID [--name NAME] [--scopes read,write] [--db PATH] [--json]
  outreach keys list --workspace ID [--db PATH] [--json]
  outreach keys revoke KEY_ID [--db PATH] [--json]
  outreach users create --email E --workspace ID [--name N] [--role admin|agent] [--password-stdin] [--db PATH] [--json]
  outreach users list --workspace ID [--db PATH] [--json]
  outreach contacts import FILE.csv --workspace ID [--list ID] [--db PATH] [--json]
  outreach backup --out FILE [--force] [--db PATH] [--json]
  outreach restore FILE [--db PATH] [--json]
  outreach migrate-db --to postgres://USER:PASSWORD@HOST:PORT/DATABASE [--db PATH] [--json]

  outreach --version
  outreach serve --help     serve's flags and environment variables

--db defaults to $OUTREACH_DB, else ./data/outreach.db. See docs/configuration.md for every setting.
--database-url (or $DATABASE_URL) names a PostgreSQL database instead, for serve and every command
but backup and restore (use pg_dump and pg_restore there): docs/postgres.md.
Exit codes: 0 success, 1 a runtime problem, 2 a usage or configuration error (an unknown option too).
users create: --role defaults to admin; --password-stdin reads the password (at least 10 characters)
from the first line of stdin, else a one-time setup link (24 h, <PUBLIC_URL>/setup?token=…) is printed.
migrate-db copies the SQLite file (--db) into an empty PostgreSQL database (--to), in one
transaction, and checks every table's row count; a target that holds rows is refused.`;

const SERVE_HELP = `outreach serve – runs the API, the job worker and the scheduler on one database

Usage:
  outreach serve [--port N] [--host H] [--db PATH] [--carrier simulated|twilio] [--no-worker]

Flags (a flag wins over its environment variable):
  --port N          HTTP port; 0 picks a free one            (PORT, default 3000)
  --host H          interface to bind                        (HOST, default 0.0.0.0)
  --db PATH         SQLite database file, made if missing   (OUTREACH_DB, default ./data/outreach.db)
  --database-url URL  a PostgreSQL database instead (DATABASE_URL), migrated at start (docs/postgres.md)
  --carrier NAME    simulated (no network) or twilio         (CARRIER, default simulated)
  --no-worker       no job worker or scheduler in this process (WORKER=false)
  --help            this text

Environment:
  PUBLIC_URL                 base URL of links, setup links and callbacks (default http://localhost:$PORT)
  SQLITE_CACHE_MB            SQLite page cache in MB (default 16)
  DATABASE_POOL_MAX          connections in a PostgreSQL pool (default 10; with --database-url)
  RATE_LIMIT_RPS, RATE_LIMIT_BURST
                             request rate limit: refill per second (default 50; 0 disables) and bucket size (100)
  LOG_LEVEL                  debug, info, warn or error (default info)
  WORKER_THREAD              run the worker in a background thread (default true)
  SHUTDOWN_GRACE_SEC         on SIGTERM, how long running jobs may finish (default 10)
  JOB_LEASE_SCALE            every job lease times this, 0.05-10 (default 1): how soon other nodes take a dead node's jobs
  SIMULATED_DELIVERY_MS, SIMULATED_CALL_MS, SIMULATED_REVIEW_MS
                             simulated carrier and voice timings
  VOICE                      simulated or retell (default simulated)
  RETELL_API_KEY, RETELL_API_BASE, RETELL_TIMEOUT_MS
  TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_API_BASE, TWILIO_CALLBACK_BASE_URL, TWILIO_TIMEOUT_MS
  WEBHOOK_ALLOW_PRIVATE      allow webhook URLs on private and loopback addresses
  WEBHOOK_TIMEOUT_MS         webhook delivery timeout (default 15000)
  BODY_TIMEOUT_MS            how long a callback, sign-in or tracking body may take to arrive (default 10000; then 408)
  LINK_DOMAIN_CHECK_BASE     where link domain checks are sent instead of https://<domain> (the domain in Host)
  LINK_DOMAIN_CHECK_TIMEOUT_MS
                             how long a link domain's check may take (default 5000)
  LLM_BASE_URL, LLM_API_KEY, LLM_MODEL, LLM_MODEL_FAST, LLM_MODEL_BALANCED, LLM_MODEL_SMART, LLM_TIMEOUT_MS
                             OpenAI-compatible model server for SMS agents (unset: the offline engine)
  OAUTH_GITHUB_CLIENT_ID, OAUTH_GITHUB_CLIENT_SECRET, OAUTH_GOOGLE_CLIENT_ID, OAUTH_GOOGLE_CLIENT_SECRET
                             sign-in with GitHub or Google for existing users

Daily budgets of one-off sends and number orders are workspace settings (PATCH /v1/settings).
See docs/configuration.md for every setting.`;

function print(flags: ParsedArgs["flags"], json: unknown, text: string) {
  console.log(flags.json ? JSON.stringify(json, null, 2) : text);
}

/** Opens and migrates the database for a management command (the SQLite file, or DATABASE_URL). */
function openForCommand(flags: ParsedArgs["flags"]) {
  return openConfiguredDatabase({ dbPath: dbPathFrom(flags), databaseUrl: databaseUrlFrom(flags) });
}

/**
 * A PostgreSQL database named by --database-url or DATABASE_URL: malformed or unreachable → one
 * line, exit 1, before anything is written; never a silent fallback to the SQLite file. `backup`
 * and `restore` work on the SQLite file only: on PostgreSQL they name pg_dump and pg_restore.
 */
async function checkPostgres(command: string, flags: ParsedArgs["flags"]) {
  // migrate-db reads the SQLite file and writes the database of --to: DATABASE_URL plays no part.
  if (command === "migrate-db") return;
  const url = databaseUrlFrom(flags);
  if (url === null) return;
  const name = databaseUrlSource(flags);
  const problem = await probePostgres(url);
  if (problem !== null)
    throw new DatabaseUrlError(
      `${name}: cannot connect to PostgreSQL at ${describeDatabaseUrl(url)}: ${problem}`,
    );
  if (command === "backup" || command === "restore")
    throw new DatabaseUrlError(
      `${command} works on the SQLite file; on PostgreSQL use ${command === "backup" ? "pg_dump -Fc" : "pg_restore into an empty database"} (docs/operations.md)`,
    );
}

function parseScopes(raw: string | boolean | undefined): Scope[] | undefined {
  if (typeof raw !== "string") return undefined;
  const scopes = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const scope of scopes) {
    if (!SCOPES.includes(scope as Scope))
      throw new UsageError(`--scopes must be a comma-separated list of ${SCOPES.join(", ")}`);
  }
  return scopes as Scope[];
}

async function run(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv);
  const { positionals, flags } = parsed;
  const [command, sub] = positionals;
  checkFlags(command, parsed);
  if (flags.version || command === "version") {
    console.log(`outreach ${packageJson.version}`);
    return 0;
  }
  if (!command) {
    if (flags.help) {
      console.log(HELP);
      return 0;
    }
    // A bare `outreach` is a usage error (exit 2), with the usage to read.
    console.error(HELP);
    return 2;
  }
  if (command === "help" || flags.help) {
    console.log(command === "serve" || (command === "help" && sub === "serve") ? SERVE_HELP : HELP);
    return 0;
  }
  await checkPostgres(command, flags);

  switch (command) {
    case "serve": {
      const config = loadConfig(flags);
      // Signals are taken from the start: one that arrives while the server starts stops it
      // once it has (its background thread may still be loading when the port opens).
      let server: RunningServer | null = null;
      let requested: string | null = null;
      const stop = async (signal: string) => {
        if (!server) {
          requested ??= signal;
          return;
        }
        log.info("shutting down", { signal });
        void server.shutdown().then(() => process.exit(0));
      };
      process.on("SIGTERM", async () => await stop("SIGTERM"));
      process.on("SIGINT", async () => await stop("SIGINT"));
      server = await startServer(config);
      // The database it runs on: the PostgreSQL URL without its password, else the SQLite file.
      const database = config.databaseUrl
        ? `postgres ${describeDatabaseUrl(config.databaseUrl)}`
        : config.dbPath;
      log.info("listening", {
        url: `http://${config.host}:${server.port}`,
        db: database,
        carrier: config.carrier,
      });
      console.log(`outreach listening on http://localhost:${server.port} (db ${database})`);
      if (requested) await stop(requested);
      return -1; // keep running
    }
    case "migrate": {
      const url = databaseUrlFrom(flags);
      let applied: string[];
      if (url) {
        const pg = createPgClient(url, { max: 1 });
        try {
          applied = (await migratePg(pg)).applied;
        } finally {
          await pg.end({ timeout: 1 });
        }
      } else {
        const handle = openDatabase(dbPathFrom(flags));
        try {
          applied = migrate(handle.sqlite).applied;
        } finally {
          await handle.close();
        }
      }
      print(flags, { applied }, applied.length ? `applied ${applied.join(", ")}` : "database is up to date");
      return 0;
    }
    case "workspaces": {
      const handle = await openForCommand(flags);
      try {
        if (sub === "create") {
          const name = requireFlag(flags, "name");
          if (name.length > 200) throw new UsageError("--name is too long (max 200)");
          const workspace = await createWorkspace(handle.db, { name });
          print(
            flags,
            { id: workspace.id, name: workspace.name },
            `created workspace ${workspace.id} (${workspace.name})`,
          );
          return 0;
        }
        if (sub === "list") {
          const rows = (await listWorkspaces(handle.db)).map((w) => ({
            id: w.id,
            name: w.name,
            created_at: toIso(w.createdAt),
          }));
          print(flags, rows, rows.map((w) => `${w.id}  ${w.name}`).join("\n") || "no workspaces");
          return 0;
        }
        throw new UsageError("usage: outreach workspaces create|list");
      } finally {
        await handle.close();
      }
    }
    case "keys": {
      const handle = await openForCommand(flags);
      try {
        if (sub === "create") {
          const key = await createApiKey(handle.db, {
            workspaceId: requireFlag(flags, "workspace"),
            name: typeof flags.name === "string" ? flags.name : undefined,
            scopes: parseScopes(flags.scopes),
          });
          print(
            flags,
            { id: key.id, key: key.key, prefix: key.prefix, scopes: key.scopes },
            `created key ${key.id} (${key.scopes.join(",")}). It is shown only this once:\n${key.key}`,
          );
          return 0;
        }
        if (sub === "list") {
          const rows = (await listApiKeys(handle.db, requireFlag(flags, "workspace"))).map((k) => ({
            id: k.id,
            name: k.name,
            prefix: k.prefix,
            scopes: k.scopes,
            created_at: toIso(k.createdAt),
            last_used_at: toIso(k.lastUsedAt),
            revoked_at: toIso(k.revokedAt),
          }));
          const text = rows
            .map(
              (k) =>
                `${k.id}  opk_${k.prefix}…  ${k.scopes.join(",")}  ${k.name}${k.revoked_at ? "  (revoked)" : ""}`,
            )
            .join("\n");
          print(flags, rows, text || "no keys");
          return 0;
        }
        if (sub === "revoke") {
          const keyId = positionals[2];
          if (!keyId) throw new UsageError("usage: outreach keys revoke KEY_ID");
          const row = await revokeApiKey(handle.db, keyId);
          print(flags, { id: row.id, revoked: true }, `revoked key ${row.id}`);
          return 0;
        }
        throw new UsageError("usage: outreach keys create|list|revoke");
      } finally {
        await handle.close();
      }
    }
    case "contacts":
      return runContactsCommand(sub, positionals, flags);
    case "users":
      return runUsersCommand(sub, flags);
    case "backup":
      return runBackupCommand(positionals, flags);
    case "restore":
      return runRestoreCommand(positionals, flags);
    case "migrate-db":
      return runMigrateDbCommand(positionals, flags);
    default:
      throw new UsageError(`unknown command "${command}"\n\n${HELP}`);
  }
}

run(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error) => {
    if (error instanceof UsageError || error instanceof ConfigError) {
      console.error(`outreach: ${error.message}`);
      process.exit(2);
    }
    if (
      error instanceof DatabaseUrlError ||
      error instanceof DatabaseOpenError ||
      error instanceof StartupError ||
      error instanceof DatabaseFileError ||
      error instanceof DatabaseCopyError
    ) {
      console.error(`outreach: ${error.message}`);
      process.exit(1);
    }
    if (error instanceof AppError) {
      console.error(`outreach: ${error.code === "not_found" ? "not found" : error.message}`);
      process.exit(1);
    }
    console.error(`outreach: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
