/**
 * Configuration: environment variables and command-line flags, validated once at start.
 * Every setting is listed in docs/configuration.md.
 */

export type CarrierName = "simulated" | "twilio";

export interface Config {
  /** TCP port the HTTP server listens on. */
  port: number;
  /** Interface to bind. */
  host: string;
  /** Path of the SQLite database file. */
  dbPath: string;
  /** A PostgreSQL database (`DATABASE_URL` / `--database-url`) instead of the SQLite file; null: the file. */
  databaseUrl: string | null;
  /** Connections in one process's PostgreSQL pool. */
  databasePoolMax: number;
  /** Which carrier adapter sends and receives. */
  carrier: CarrierName;
  /** Token-bucket refill rate per API key (requests/second); 0 disables rate limiting. */
  rateLimitRps: number;
  /** Token-bucket size per API key. */
  rateLimitBurst: number;
  /** Public base URL used in links the server hands out (tracking links, callbacks). */
  publicUrl: string;
  /** Log level: debug | info | warn | error. */
  logLevel: "debug" | "info" | "warn" | "error";
  /** Whether the in-process job worker runs in this process. */
  workerEnabled: boolean;
  /** Whether that background work runs in a thread of its own (default) or the server's thread. */
  workerThread: boolean;
  /** Seconds a graceful shutdown waits for running jobs before releasing their leases. */
  shutdownGraceSec: number;
  /** Every job kind's lease times this (JOB_LEASE_SCALE, 0.05–10, default 1). */
  jobLeaseScale: number;
  /** Whether webhooks may target loopback and private addresses (default no; link-local/metadata never). */
  webhookAllowPrivate: boolean;
  /** How long one webhook attempt may take before it counts as failed. */
  webhookTimeoutMs: number;
  /** How long a small body (64 KiB routes: carrier callbacks, /auth, /t) may take to arrive: 408 after. */
  bodyTimeoutMs: number;
  /**
   * LINK_DOMAIN_CHECK_BASE: where a link domain's check is sent instead of `https://<domain>`
   * (with the domain as the Host header), e.g. a test's own server; null: the domain itself.
   */
  linkDomainCheckBase: string | null;
  /** How long a link domain's check may take before it fails. */
  linkDomainCheckTimeoutMs: number;
  /** SQLite page cache of the server's connection, in MB (hot index pages stay in memory). */
  sqliteCacheMb: number;
  /** OpenAI-compatible chat-completions server for SMS agents; null: the built-in offline engine. */
  llm: LlmConfig | null;
  /** OAuth sign-in to the dashboard, per provider configured (OAUTH_GITHUB_*, OAUTH_GOOGLE_*). */
  oauth: OAuthConfig;
}

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
}

export interface OAuthConfig {
  github?: OAuthClient;
  google?: OAuthClient;
}

function oauthFrom(env: Record<string, string | undefined>): OAuthConfig {
  const config: OAuthConfig = {};
  for (const provider of ["github", "google"] as const) {
    const prefix = `OAUTH_${provider.toUpperCase()}_CLIENT_`;
    const clientId = env[`${prefix}ID`]?.trim();
    const clientSecret = env[`${prefix}SECRET`]?.trim();
    if (!clientId && !clientSecret) continue;
    if (!clientId || !clientSecret)
      throw new ConfigError(`${prefix}ID and ${prefix}SECRET must be set together`);
    config[provider] = { clientId, clientSecret };
  }
  return config;
}

export interface LlmConfig {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  /** Model names per agent `model_tier`; a tier without one uses `model`. */
  models: { fast?: string; balanced?: string; smart?: string };
  timeoutMs: number;
}

function llmFrom(env: Record<string, string | undefined>): LlmConfig | null {
  const baseUrl = env.LLM_BASE_URL?.trim();
  if (!baseUrl) return null;
  if (!/^https?:\/\//.test(baseUrl))
    throw new ConfigError(`LLM_BASE_URL must be an http(s) URL (got "${baseUrl}")`);
  const models: LlmConfig["models"] = {};
  if (env.LLM_MODEL_FAST) models.fast = env.LLM_MODEL_FAST;
  if (env.LLM_MODEL_BALANCED) models.balanced = env.LLM_MODEL_BALANCED;
  if (env.LLM_MODEL_SMART) models.smart = env.LLM_MODEL_SMART;
  return {
    baseUrl,
    apiKey: env.LLM_API_KEY || undefined,
    model: env.LLM_MODEL || "gpt-4o-mini",
    models,
    timeoutMs: intFrom("LLM_TIMEOUT_MS", env.LLM_TIMEOUT_MS, 20_000, 100, 300_000),
  };
}

export class ConfigError extends Error {}

/**
 * A DATABASE_URL that cannot be used (malformed, unreachable, or a database this version cannot
 * run on): a runtime problem like an unreadable `--db` file, so the commands exit 1 on it.
 */
export class DatabaseUrlError extends Error {}

/** The longest delay or timeout an adapter setting may name: a day, in milliseconds. */
export const MAX_MS = 86_400_000;

/** An integer setting between `min` and `max`, or `fallback` when unset (ConfigError naming it otherwise). */
export function intFrom(
  name: string,
  raw: string | undefined,
  fallback: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
) {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
  }
  return n;
}

function numberFrom(name: string, raw: string | undefined, fallback: number) {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0)
    throw new ConfigError(`${name} must be a non-negative number (got "${raw}")`);
  return n;
}

function leaseScaleFrom(raw: string | undefined) {
  const scale = numberFrom("JOB_LEASE_SCALE", raw, 1);
  if (scale < 0.05 || scale > 10)
    throw new ConfigError(`JOB_LEASE_SCALE must be between 0.05 and 10 (got "${raw}")`);
  return scale;
}

function booleanFrom(name: string, raw: string | undefined, fallback: boolean) {
  if (raw === undefined || raw === "") return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new ConfigError(`${name} must be true or false (got "${raw}")`);
}

/** Builds the configuration from the environment, with flags (already parsed) taking precedence. */
export function loadConfig(
  flags: Record<string, string | boolean | undefined> = {},
  env: Record<string, string | undefined> = process.env,
): Config {
  const port = intFrom("PORT", (flags.port as string) ?? env.PORT, 3000, 0, 65535);
  const carrier = ((flags.carrier as string) ?? env.CARRIER ?? "simulated") as CarrierName;
  if (carrier !== "simulated" && carrier !== "twilio") {
    throw new ConfigError(`CARRIER must be one of simulated, twilio (got "${carrier}")`);
  }
  const logLevel = (env.LOG_LEVEL ?? "info") as Config["logLevel"];
  if (!["debug", "info", "warn", "error"].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of debug, info, warn, error (got "${logLevel}")`);
  }
  const host = (flags.host as string) ?? env.HOST ?? "0.0.0.0";
  return {
    port,
    host,
    dbPath: dbPathFrom(flags, env),
    databaseUrl: databaseUrlFrom(flags, env),
    databasePoolMax: intFrom("DATABASE_POOL_MAX", env.DATABASE_POOL_MAX, 10, 1, 1000),
    carrier,
    rateLimitRps: numberFrom("RATE_LIMIT_RPS", env.RATE_LIMIT_RPS, 50),
    rateLimitBurst: intFrom("RATE_LIMIT_BURST", env.RATE_LIMIT_BURST, 100, 1),
    publicUrl: publicUrlFrom(port, env),
    logLevel,
    workerEnabled: env.WORKER !== "false" && flags["no-worker"] !== true,
    workerThread: booleanFrom("WORKER_THREAD", env.WORKER_THREAD, true),
    shutdownGraceSec: intFrom("SHUTDOWN_GRACE_SEC", env.SHUTDOWN_GRACE_SEC, 10, 0, 3600),
    jobLeaseScale: leaseScaleFrom(env.JOB_LEASE_SCALE),
    webhookAllowPrivate: booleanFrom("WEBHOOK_ALLOW_PRIVATE", env.WEBHOOK_ALLOW_PRIVATE, false),
    webhookTimeoutMs: intFrom("WEBHOOK_TIMEOUT_MS", env.WEBHOOK_TIMEOUT_MS, 15_000, 100, 60_000),
    bodyTimeoutMs: intFrom("BODY_TIMEOUT_MS", env.BODY_TIMEOUT_MS, 10_000, 100, 55_000),
    linkDomainCheckBase: checkBaseFrom(env.LINK_DOMAIN_CHECK_BASE),
    linkDomainCheckTimeoutMs: intFrom(
      "LINK_DOMAIN_CHECK_TIMEOUT_MS",
      env.LINK_DOMAIN_CHECK_TIMEOUT_MS,
      5_000,
      100,
      60_000,
    ),
    sqliteCacheMb: intFrom("SQLITE_CACHE_MB", env.SQLITE_CACHE_MB, 16, 1, 4096),
    llm: llmFrom(env),
    oauth: oauthFrom(env),
  };
}

/** LINK_DOMAIN_CHECK_BASE: an http(s) base URL without a trailing slash, or null when unset. */
function checkBaseFrom(raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === "") return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ConfigError(`LINK_DOMAIN_CHECK_BASE must be an http or https URL (got "${raw}")`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigError(`LINK_DOMAIN_CHECK_BASE must be an http or https URL (got "${raw}")`);
  return raw.trim().replace(/\/+$/, "");
}

/** PUBLIC_URL without a trailing slash, else `http://localhost:<port>`. */
export function publicUrlFrom(port: number, env: Record<string, string | undefined> = process.env): string {
  return (env.PUBLIC_URL ?? `http://localhost:${port}`).replace(/\/+$/, "");
}

/** The database path: `--db`, else `OUTREACH_DB`, else `./data/outreach.db`. */
export function dbPathFrom(
  flags: Record<string, string | boolean | undefined>,
  env: Record<string, string | undefined> = process.env,
) {
  const fromFlag = typeof flags.db === "string" ? flags.db : undefined;
  return fromFlag ?? env.OUTREACH_DB ?? "./data/outreach.db";
}

/** Where the database URL came from, as the operator spelt it (for messages). */
export function databaseUrlSource(flags: Record<string, string | boolean | undefined>): string {
  return typeof flags["database-url"] === "string" ? "--database-url" : "DATABASE_URL";
}

/**
 * The PostgreSQL database to use: `--database-url`, else `DATABASE_URL` (either wins over `--db` and
 * OUTREACH_DB); null (the SQLite file) when neither is set or it is empty. A malformed URL is a
 * DatabaseUrlError (postgresUrlFrom).
 */
export function databaseUrlFrom(
  flags: Record<string, string | boolean | undefined>,
  env: Record<string, string | undefined> = process.env,
): string | null {
  const raw = typeof flags["database-url"] === "string" ? flags["database-url"] : env.DATABASE_URL;
  if (raw === undefined || raw.trim() === "") return null;
  return postgresUrlFrom(raw, databaseUrlSource(flags));
}

/**
 * `raw` checked as a PostgreSQL URL: a URL that is not a `postgres://` or `postgresql://` URL with
 * a host (or a `?host=` socket folder) is a DatabaseUrlError naming `name` (the flag or variable
 * that gave it; `instead`, what else the operator may do). The messages never repeat the URL: it may
 * hold a password.
 */
export function postgresUrlFrom(
  raw: string,
  name: string,
  instead = "; unset it for the embedded SQLite",
): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new DatabaseUrlError(
      `${name} is not a valid URL (expected postgres://USER:PASSWORD@HOST:PORT/DATABASE)`,
    );
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new DatabaseUrlError(
      `${name} must be a postgres:// or postgresql:// URL (got ${url.protocol.replace(/:$/, "")}://…)${instead}`,
    );
  }
  if (url.hostname === "" && !url.searchParams.get("host")) {
    throw new DatabaseUrlError(
      `${name} names no host (expected postgres://USER:PASSWORD@HOST:PORT/DATABASE)`,
    );
  }
  return raw.trim();
}

/** `host:port/database` of a PostgreSQL URL, without its user and password (for messages). */
export function describeDatabaseUrl(raw: string): string {
  const url = new URL(raw);
  const host = url.hostname || url.searchParams.get("host") || "localhost";
  const database =
    decodeURIComponent(url.pathname.replace(/^\//, "")) || decodeURIComponent(url.username) || "postgres";
  return `${host}:${url.port || "5432"}/${database}`;
}
