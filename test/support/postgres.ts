/**
 * A throwaway PostgreSQL for tests: a cluster in a temp folder (Debian's `postgresql` package),
 * on a random port with its unix socket in the same folder, durability off (fsync, synchronous
 * commit and full-page writes: the data dies with the folder anyway), unless `durable` asks for a
 * production-like cluster (the benchmarks). As root, initdb and the server run as the `postgres`
 * user (initdb refuses root). Stopped and removed by `stop()`.
 *
 * `npm test` starts one for its PostgreSQL pass and hands it to the suite in OUTREACH_TEST_PG_URL;
 * a test file run alone starts its own through `testPostgres()` called at its top level (a test
 * server on PostgreSQL needs the URL: test/support/server.ts).
 */
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PgCluster {
  /** A superuser URL for the cluster's `postgres` database (TCP on 127.0.0.1). */
  url: string;
  dir: string;
  port: number;
  stop(): void;
}

/** Why no cluster could be started (no PostgreSQL installed, initdb failed …), in one line. */
export class PgUnavailable extends Error {}

/** The environment variable that hands a running cluster's URL to the test files. */
export const TEST_PG_URL = "OUTREACH_TEST_PG_URL";
/**
 * Which pass is running (`sqlite` or `postgres`; `npm test` sets it for each of its two passes).
 * Unset, a test file run alone runs its cases on both databases.
 */
export const TEST_DIALECT = "OUTREACH_TEST_DIALECT";
/** A migrated database on the pass's cluster that freshDatabase copies (set by the runner). */
export const TEST_PG_TEMPLATE = "OUTREACH_TEST_PG_TEMPLATE";

/** Whether this run's cases on `dialect` run (see TEST_DIALECT). */
export function testsRunOn(dialect: "sqlite" | "postgres"): boolean {
  const only = process.env[TEST_DIALECT];
  return !only || only === dialect;
}

/** The newest installed server's bin folder (`PG_BIN`, else /usr/lib/postgresql/<version>/bin). */
export function findPgBin(env: Record<string, string | undefined> = process.env): string | undefined {
  if (env.PG_BIN) return existsSync(join(env.PG_BIN, "initdb")) ? env.PG_BIN : undefined;
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(base, name, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(base, versions[0], "bin") : undefined;
}

/** A TCP port nothing listens on right now. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** Runs a PostgreSQL program, as the `postgres` user when this process is root. */
function run(program: string, args: string[], asPostgres: boolean) {
  const [command, argv] = asPostgres
    ? ["runuser", ["-u", "postgres", "--", program, ...args]]
    : [program, args];
  const result = spawnSync(command, argv, { encoding: "utf8", timeout: 60_000 });
  if (result.error) throw new PgUnavailable(`${program}: ${result.error.message}`);
  if (result.status !== 0) {
    const why = `${result.stderr}\n${result.stdout}`.trim().split("\n").filter(Boolean).slice(-1)[0] ?? "";
    throw new PgUnavailable(`${program.split("/").pop()} failed: ${why}`);
  }
}

export interface PgClusterOptions {
  /**
   * fsync, synchronous commit and full-page writes on (PostgreSQL's defaults, as in production)
   * instead of off: for measuring, not for tests.
   */
  durable?: boolean;
}

/** Starts a fresh cluster; throws PgUnavailable (one line) when it cannot. */
export async function startPgCluster(options: PgClusterOptions = {}): Promise<PgCluster> {
  const durability = options.durable ? "on" : "off";
  const bin = findPgBin();
  if (!bin) throw new PgUnavailable("no PostgreSQL server installed (apt-get install postgresql)");
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "outreach-pg-"));
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    mkdirSync(data, { mode: 0o700 });
    if (asRoot) {
      // The cluster's folder (and the socket in it) belong to the postgres user.
      const uid = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
      const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
      if (uid.status !== 0) throw new PgUnavailable("running as root and there is no postgres user");
      for (const path of [dir, data]) chownSync(path, Number(uid.stdout), Number(gid.stdout));
    }
    run(
      join(bin, "initdb"),
      ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"],
      asRoot,
    );
    const port = await freePort();
    const options = [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses=127.0.0.1",
      `-c fsync=${durability}`,
      `-c synchronous_commit=${durability}`,
      `-c full_page_writes=${durability}`,
      "-c max_connections=200",
    ].join(" ");
    run(join(bin, "pg_ctl"), ["-D", data, "-l", log, "-o", options, "-w", "-t", "30", "start"], asRoot);
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      dir,
      port,
      stop() {
        try {
          run(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"], asRoot);
        } catch {
          // Already gone: the folder goes anyway.
        }
        cleanup();
      },
    };
  } catch (error) {
    cleanup();
    if (error instanceof PgUnavailable) throw error;
    throw new PgUnavailable((error as Error).message.split("\n")[0]);
  }
}

/**
 * The PostgreSQL the tests use: the runner's (OUTREACH_TEST_PG_URL), else one started for this
 * file (stopped after the file's tests). `{ skip }` says in one line why there is none.
 */
export async function testPostgres(): Promise<{ url: string } | { skip: string }> {
  const given = process.env[TEST_PG_URL];
  if (given) return { url: given };
  try {
    const cluster = await startPgCluster();
    // Stopped when the file's tests are done (bun:test's exit does not run "exit" listeners).
    const { afterAll } = await import("bun:test");
    afterAll(() => cluster.stop());
    return { url: cluster.url };
  } catch (error) {
    return { skip: (error as Error).message };
  }
}

let counter = 0;

/** A new database on the cluster of `adminUrl`, empty or a copy of `template`; answers its URL. */
export async function freshDatabase(adminUrl: string, template?: string): Promise<string> {
  return await createDatabase(adminUrl, template ? `TEMPLATE ${template}` : "");
}

/**
 * A new, empty database with the collation and character classes of `locale`, as production
 * clusters often have, where the suite's cluster is initialised with C: a libc locale (`C.utf8`)
 * or `icu:<locale>` (`icu:en-US`: ICU's collation, with C.utf8 as the libc locale beside it).
 */
export async function freshDatabaseWithLocale(adminUrl: string, locale: string): Promise<string> {
  if (!/^[A-Za-z0-9_.@:-]+$/.test(locale)) throw new Error(`bad locale ${locale}`);
  const icu = locale.startsWith("icu:") ? locale.slice(4) : null;
  return await createDatabase(
    adminUrl,
    icu
      ? `TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C.utf8' LOCALE_PROVIDER icu ICU_LOCALE '${icu}'`
      : `TEMPLATE template0 ENCODING 'UTF8' LOCALE '${locale}'`,
  );
}

/** `CREATE DATABASE <a new name> <options>` on the cluster of `adminUrl`; answers its URL. */
async function createDatabase(adminUrl: string, options: string): Promise<string> {
  const { default: postgres } = await import("postgres");
  const name = `t_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name} ${options}`.trimEnd());
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops the database of `url` (made by freshDatabase) on the cluster of `adminUrl`, connections and all. */
export async function dropDatabase(adminUrl: string, url: string): Promise<void> {
  const { default: postgres } = await import("postgres");
  const name = new URL(url).pathname.slice(1);
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`not a database freshDatabase made: ${name}`);
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
