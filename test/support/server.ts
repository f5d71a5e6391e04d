import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Config, loadConfig } from "../../src/config";
import { createApiKey, type Scope } from "../../src/domain/workspace/api-keys";
import { createWorkspace } from "../../src/domain/workspace/workspaces";
import { type RunningServer, startServer } from "../../src/server";
import { freshDatabase, TEST_DIALECT, TEST_PG_TEMPLATE, TEST_PG_URL } from "./postgres";

export interface TestServer {
  url: string;
  server: RunningServer;
  dir: string;
  /** The SQLite file (on the PostgreSQL pass: unused, the server runs on `databaseUrl`). */
  dbPath: string;
  /** The server's PostgreSQL database on the PostgreSQL pass; null on SQLite. */
  databaseUrl: string | null;
  /** Environment for a CLI command that must reach the server's database (`--db` too for SQLite). */
  cliEnv: Record<string, string>;
  /** The bootstrap workspace's read/write key. */
  key: string;
  /** What `serve` printed on the empty database (the first key, the first admin's setup link). */
  announcement: string;
  workspaceId: string;
  /** Makes another workspace with a key of the given scopes. */
  newWorkspace(name?: string, scopes?: Scope[]): Promise<{ workspaceId: string; key: string; keyId: string }>;
  /** Makes another key in the default workspace. */
  newKey(scopes: Scope[]): Promise<{ key: string; keyId: string }>;
  /** fetch with the default key (override with `key`), JSON bodies and parsed JSON answers. */
  api(method: string, path: string, body?: unknown, options?: ApiOptions): Promise<ApiResult>;
  stop(): Promise<void>;
}

export interface ApiOptions {
  key?: string | null;
  headers?: Record<string, string>;
  raw?: string;
}

export interface ApiResult {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
  body: any;
  headers: Headers;
}

/**
 * The PostgreSQL cluster of this pass: the runner's. A cluster of the file's own (testPostgres)
 * would be started inside a hook, whose stop bun:test does not keep for the end of the file: it
 * stopped the cluster under the file's tests. So a file run alone on PostgreSQL is told what to do.
 */
async function testPgUrl(): Promise<string> {
  const url = process.env[TEST_PG_URL];
  if (!url)
    throw new Error(
      `${TEST_DIALECT}=postgres needs a running cluster in ${TEST_PG_URL}: start one with ` +
        "`bun scripts/pg-cluster.ts` (npm test starts its own)",
    );
  return url;
}

/**
 * Starts the real server on a random port over a fresh temp SQLite file. The bootstrap key that
 * `serve` prints is captured from its announcement.
 */
export async function startTestServer(
  overrides: Partial<Config> = {},
  env: Record<string, string> = {},
): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), "outreach-test-"));
  const dbPath = join(dir, "test.db");
  // On the PostgreSQL pass (and only there: a file run alone is on SQLite) every server gets a
  // database of its own on the pass's cluster, unless the test names one (null: the SQLite file).
  const databaseUrl =
    overrides.databaseUrl !== undefined
      ? overrides.databaseUrl
      : process.env[TEST_DIALECT] === "postgres"
        ? await freshDatabase(await testPgUrl(), process.env[TEST_PG_TEMPLATE])
        : null;
  const config: Config = {
    // Test receivers listen on loopback: private targets are allowed unless a test says otherwise.
    ...loadConfig({}, { RATE_LIMIT_RPS: "0", LOG_LEVEL: "error", WEBHOOK_ALLOW_PRIVATE: "true", ...env }),
    port: 0,
    host: "127.0.0.1",
    dbPath,
    ...overrides,
    databaseUrl,
  };
  let announced = "";
  const server = await startServer(config, {
    announce: (text) => (announced += text),
    env: { ...process.env, ...env },
  });
  const url = `http://127.0.0.1:${server.port}`;
  const { db } = server.handle;
  const bootstrapKey = announced.match(/opk_[0-9A-Za-z]{36}/)?.[0];
  const bootstrapWorkspace = announced.match(/\(([0-9a-f-]{36})\)/)?.[1];
  if (!bootstrapKey || !bootstrapWorkspace)
    throw new Error(`serve did not announce its first key: ${announced}`);

  const api = apiOf(url, bootstrapKey);

  return {
    url,
    server,
    dir,
    dbPath,
    databaseUrl,
    cliEnv: databaseUrl ? { DATABASE_URL: databaseUrl } : { DATABASE_URL: "" },
    key: bootstrapKey,
    announcement: announced,
    workspaceId: bootstrapWorkspace,
    async newWorkspace(name = "Other", scopes: Scope[] = ["read", "write"]) {
      const workspace = await createWorkspace(db, { name });
      const key = await createApiKey(db, { workspaceId: workspace.id, scopes });
      return { workspaceId: workspace.id, key: key.key, keyId: key.id };
    },
    async newKey(scopes) {
      const key = await createApiKey(db, { workspaceId: bootstrapWorkspace, scopes });
      return { key: key.key, keyId: key.id };
    },
    api,
    async stop() {
      await server.shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `TestServer.api` for the server at `url`, with `defaultKey` unless a call names another. */
function apiOf(url: string, defaultKey: string): TestServer["api"] {
  return async (method, path, body, options = {}) => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    const key = options.key === undefined ? defaultKey : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let payload: string | undefined = options.raw;
    if (body !== undefined) {
      payload = JSON.stringify(body);
      headers["content-type"] ??= "application/json";
    }
    const response = await fetch(url + path, { method, headers, body: payload });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
}

/** Another server on a test server's database (its SQLite file, or its PostgreSQL database). */
export interface SecondNode {
  url: string;
  server: RunningServer;
  /** As `TestServer.api`, with the first server's bootstrap key by default. */
  api: TestServer["api"];
  stop(): Promise<void>;
}

/**
 * Starts a second `serve` on the database of `first`, as a second node behind a load balancer:
 * same configuration, its own port, worker and caches. Stop it before `first`.
 */
export async function startSecondNode(
  first: TestServer,
  overrides: Partial<Config> = {},
): Promise<SecondNode> {
  const config: Config = {
    ...loadConfig({}, { RATE_LIMIT_RPS: "0", LOG_LEVEL: "error", WEBHOOK_ALLOW_PRIVATE: "true" }),
    port: 0,
    host: "127.0.0.1",
    dbPath: first.dbPath,
    ...overrides,
    databaseUrl: first.databaseUrl,
  };
  const server = await startServer(config, { announce: () => {}, env: { ...process.env } });
  const url = `http://127.0.0.1:${server.port}`;
  return { url, server, api: apiOf(url, first.key), stop: () => server.shutdown() };
}
