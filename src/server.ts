import { createFetchHandler, HttpMetrics } from "./app";
import { issueSetupToken, SETUP_TOKEN_TTL_MS, setupUrl } from "./auth/setup-tokens";
import { countUsers } from "./auth/users";
import { createCarrier, loadCarrierSettings } from "./carriers";
import type { Carrier } from "./carriers/carrier";
import type { Config } from "./config";
import {
  type Db,
  isDatabaseUnavailable,
  lockForBootstrap,
  openDatabase,
  type SqliteConnection,
} from "./db/client";
import { setDialect } from "./db/dialect";
import { migrate } from "./db/migrate";
import { openPgDatabase } from "./db/pg-database";
import { startPlannerStatistics } from "./db/planner-statistics";
import { startSearchIndexer } from "./db/search";
import { createApiKey } from "./domain/workspace/api-keys";
import { countWorkspaces, createWorkspace } from "./domain/workspace/workspaces";
import { errorResponse } from "./http/errors";
import { type Background, startBackground, startRuntimes } from "./jobs/background";
import { type BackgroundThread, startBackgroundThread } from "./jobs/background-thread";
import { AppError } from "./lib/errors";
import { errorText, log, setLogLevel } from "./lib/log";
import { systemClock } from "./lib/time";
import { createVoiceProvider, loadVoiceSettings } from "./voice";
import type { VoiceProvider } from "./voice/provider";

export class StartupError extends Error {}

export interface RunningServer {
  port: number;
  url: string;
  handle: OpenDatabase;
  carrier: Carrier;
  /** Stops taking requests and work, drains running jobs, closes the database. */
  shutdown(): Promise<void>;
}

/**
 * Opens and migrates the database, creating the `Default` workspace, its first key and a one-time
 * setup link for its first admin (24 h) when the database is empty (printed once, to stdout).
 */
export async function prepareDatabase(
  config: Pick<Config, "dbPath"> &
    Partial<Pick<Config, "sqliteCacheMb" | "publicUrl" | "databaseUrl" | "databasePoolMax">>,
  announce: (text: string) => void = console.log,
): Promise<OpenDatabase> {
  const handle = await openConfiguredDatabase(config);
  try {
    if ((await countWorkspaces(handle.db)) === 0) {
      const created = await handle.db.transaction(async (tx) => {
        // Two servers starting on an empty PostgreSQL together: one creates the workspace.
        await lockForBootstrap(tx);
        if ((await countWorkspaces(tx)) !== 0) return null;
        const workspace = await createWorkspace(tx, { name: "Default" });
        const key = await createApiKey(tx, {
          workspaceId: workspace.id,
          name: "Default key",
          scopes: ["read", "write"],
        });
        // The link names no e-mail: whoever opens it first types theirs and becomes the admin.
        const setup = await issueSetupToken(tx, {
          workspaceId: workspace.id,
          role: "admin",
          now: Date.now(),
        });
        return { workspace, key, setup };
      });
      if (created)
        announce(
          [
            "",
            `Created workspace "Default" (${created.workspace.id}) with its first API key (read, write).`,
            "It is shown only this once; store it now:",
            "",
            `  ${created.key.key}`,
            "",
            `Create the dashboard's first admin with this one-time link (valid ${SETUP_TOKEN_TTL_MS / 3_600_000} hours):`,
            "",
            `  ${setupUrl(config.publicUrl ?? "", created.setup)}`,
            "",
          ].join("\n"),
        );
    } else if ((await countUsers(handle.db)) === 0) {
      // A database from before sign-in existed: nobody can use the dashboard yet.
      log.info("no dashboard users yet: outreach users create --email E --workspace ID --role admin");
    }
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

/** boot: config → db → migrate → jobs → listen. */
export async function startServer(
  config: Config,
  options: {
    announce?: (text: string) => void;
    /** Where adapter settings (CARRIER's and VOICE's) are read; default process.env. */
    env?: Record<string, string | undefined>;
  } = {},
): Promise<RunningServer> {
  setLogLevel(config.logLevel);
  // Carrier settings first: a bad one fails before the database is created or touched.
  const env = options.env ?? process.env;
  const carrierSettings = loadCarrierSettings(config, env);
  const voiceSettings = loadVoiceSettings(env);
  const handle = await prepareDatabase(config, options.announce);
  const metrics = new HttpMetrics();
  let carrier: Carrier;
  let voice: VoiceProvider;
  try {
    carrier = createCarrier(config, { db: handle.db, clock: systemClock }, carrierSettings);
    voice = createVoiceProvider(voiceSettings, { db: handle.db, clock: systemClock });
  } catch (error) {
    await handle.close();
    throw error;
  }
  startRuntimes(handle.db, config, carrier, voice);
  // Background work: in a thread of its own (the default), in this thread, or (WORKER=false) in
  // another process (this one keeps only its own upkeep, below). The thread starts while this one
  // builds the routes and opens the port; jobs enqueued meanwhile wait in the database for it.
  const threadStarting =
    config.workerEnabled && config.workerThread ? startBackgroundThread(config, env) : null;
  threadStarting?.catch(() => {}); // awaited below; a failure is reported there
  const { fetch } = await createFetchHandler({
    db: handle.db,
    config,
    clock: systemClock,
    metrics,
    carrier,
    voice,
  });
  let http: ReturnType<typeof Bun.serve>;
  try {
    http = Bun.serve({
      port: config.port,
      hostname: config.host,
      // Every route limits its body itself while it is read (src/http/body.ts) and answers
      // 413 in the API's envelope; Bun's own cap (an empty 413) stays out of the way of any
      // declared length. The unread rest is discarded as it arrives, never buffered, and the
      // connection ends at idleTimeout. (Closing at once would reset a client still sending,
      // which then never sees its 413.)
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      // Longer than anything a request may wait for (a webhook test waits up to 15 s for the
      // receiver); Bun's default of 10 s would cut such a request off without an answer.
      idleTimeout: 60,
      fetch,
      error(error) {
        if (isDatabaseUnavailable(error))
          return errorResponse(new AppError("unavailable", "Database unavailable"));
        log.error("unhandled server error", { error: errorText(error) });
        return Response.json({ ok: false, error: "Internal error" }, { status: 500 });
      },
    });
  } catch (error) {
    await threadStarting?.then(async (thread) => await thread.stop(0)).catch(() => {});
    await handle.close();
    const message = (error as Error).message ?? String(error);
    const code = (error as { code?: string }).code;
    if (code === "EADDRINUSE" || /in use|EADDRINUSE/i.test(message)) {
      throw new StartupError(
        `port ${config.port} is already in use: stop the other process or set PORT / --port`,
      );
    }
    if (code === "EACCES" || /permission|EACCES/i.test(message)) {
      throw new StartupError(`no permission to listen on port ${config.port}: choose a port above 1023`);
    }
    throw new StartupError(`cannot listen on ${config.host}:${config.port}: ${message}`);
  }
  const port = http.port ?? config.port;
  let thread: BackgroundThread | null = null;
  try {
    thread = await threadStarting;
  } catch (error) {
    await http.stop(true);
    await handle.close();
    throw error;
  }
  let background: Background | null = null;
  // Without a worker this process still indexes what it writes for search, and keeps the planner
  // statistics of the tables it fills (PostgreSQL): its reads are planned from them.
  const ownUpkeep: { stop(): void }[] = [];
  if (!config.workerEnabled) ownUpkeep.push(startSearchIndexer(handle.db), startPlannerStatistics(handle.db));
  else if (!config.workerThread) background = startBackground(handle.db, carrier, voice, config);

  let closing: Promise<void> | null = null;
  return {
    port,
    url: `http://localhost:${port}`,
    handle,
    carrier,
    shutdown() {
      closing ??= (async () => {
        for (const upkeep of ownUpkeep) upkeep.stop();
        await http.stop();
        await thread?.stop(config.shutdownGraceSec * 1000);
        await background?.stop(config.shutdownGraceSec * 1000);
        await handle.close();
      })();
      return closing;
    },
  };
}

/** A database the server runs on: the SQLite file (with its connection) or PostgreSQL. */
export interface OpenDatabase {
  db: Db;
  /** The SQLite connection; null on PostgreSQL. */
  sqlite: SqliteConnection | null;
  close(): Promise<void> | void;
}

/**
 * Opens the configured database and brings its schema up to date: PostgreSQL when DATABASE_URL
 * is set, else the SQLite file.
 */
export async function openConfiguredDatabase(
  config: Pick<Config, "dbPath"> & Partial<Pick<Config, "sqliteCacheMb" | "databaseUrl" | "databasePoolMax">>,
): Promise<OpenDatabase> {
  if (config.databaseUrl) {
    const pg = await openPgDatabase(config.databaseUrl, { max: config.databasePoolMax });
    return { db: pg.db, sqlite: null, close: pg.close };
  }
  const handle = openDatabase(config.dbPath, { cacheMb: config.sqliteCacheMb });
  // As openPgDatabase does for PostgreSQL: the SQL of this process is SQLite's from now on (a test
  // process may run a server on each database, one after the other).
  setDialect("sqlite");
  try {
    const { applied } = migrate(handle.sqlite);
    if (applied.length) log.info("database migrated", { applied: applied.join(",") });
  } catch (error) {
    handle.close();
    throw error;
  }
  return handle;
}
