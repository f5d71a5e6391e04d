/**
 * Shared pieces of the benchmark scripts: build the binary, start it on a temp database, run wrk.
 */

import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Subprocess, spawn, spawnSync } from "bun";

export const root = join(import.meta.dir, "..", "..");
export const binary = join(root, "dist", "outreach");

/** Builds dist/outreach unless SKIP_BUILD=1 and it exists. */
export function ensureBinary() {
  if (process.env.SKIP_BUILD === "1" && existsSync(binary)) return;
  const result = spawnSync([process.execPath, "scripts/build.ts"], {
    cwd: root,
    stdout: "ignore",
    stderr: "inherit",
  });
  if (result.exitCode !== 0) throw new Error("build failed");
}

export async function freePort(): Promise<number> {
  const server = Bun.serve({ port: 0, fetch: () => new Response("") });
  const port = server.port as number;
  server.stop(true);
  return port;
}

export interface StartedServer {
  proc: Subprocess;
  port: number;
  url: string;
  key: string;
  workspaceId: string;
  dbPath: string;
  stop(): Promise<void>;
}

/**
 * Starts `dist/outreach serve` (or `options.binary`, or with `fromSource`, `bun run src/main.ts serve`)
 * on a temp database (or `dbPath`) and waits for /healthz.
 */
export async function startBinary(
  options: { dbPath?: string; env?: Record<string, string>; fromSource?: boolean; binary?: string } = {},
): Promise<StartedServer> {
  const port = await freePort();
  const dbPath = options.dbPath ?? join(mkdtempSync(join(tmpdir(), "outreach-bench-")), "bench.db");
  const logPath = `${dbPath}.log`;
  // BENCH_CPU_PROF=<dir> (from source only): a markdown CPU profile of the server, written on exit.
  const profile = process.env.BENCH_CPU_PROF
    ? ["--cpu-prof-md", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  const program = options.fromSource
    ? [process.execPath, ...profile, "run", join(root, "src/main.ts")]
    : [options.binary ?? binary];
  const proc = spawn([...program, "serve", "--port", String(port), "--db", dbPath], {
    env: { ...process.env, RATE_LIMIT_RPS: "0", LOG_LEVEL: "warn", ...options.env },
    stdout: Bun.file(logPath),
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, 20_000);
  const announced = readFileSync(logPath, "utf8");
  return {
    proc,
    port,
    url,
    key: announced.match(/opk_[0-9A-Za-z]{36}/)?.[0] ?? "",
    workspaceId: announced.match(/\(([0-9a-f-]{36})\)/)?.[1] ?? "",
    dbPath,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** A `serve` process on a shared database (DATABASE_URL), its log beside the others of its run. */
export interface ServeNode {
  name: string;
  proc: Subprocess;
  url: string;
  /** Its stdout (the first node of an empty database announces the first key there). */
  logPath: string;
}

/**
 * Starts `program serve` (the built binary, or `bun run src/main.ts`) as node `name` on
 * `databaseUrl`, stdout and stderr to `<dir>/<name>.log` and `.err`, and waits for /healthz; a
 * node that does not come up is killed, and the error carries the end of its stderr.
 */
export async function startServeNode(
  program: string[],
  name: string,
  databaseUrl: string,
  dir: string,
  env: Record<string, string>,
): Promise<ServeNode> {
  const port = await freePort();
  const logPath = join(dir, `${name}.log`);
  const errPath = join(dir, `${name}.err`);
  const proc = spawn([...program, "serve", "--port", String(port), "--host", "127.0.0.1"], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl, ...env },
    stdout: Bun.file(logPath),
    stderr: Bun.file(errPath),
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(url, 60_000);
  } catch (error) {
    proc.kill("SIGKILL");
    throw new Error(
      `node ${name}: ${(error as Error).message}: ${readFileSync(errPath, "utf8").slice(-2000)}`,
    );
  }
  return { name, proc, url, logPath };
}

export async function waitForHealth(url: string, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.status === 200) return;
    } catch {
      // not up yet
    }
    await Bun.sleep(2);
  }
  throw new Error(`server at ${url} did not become healthy`);
}

/** Runs wrk and returns requests/second. */
export function wrk(
  url: string,
  options: {
    seconds?: number;
    connections?: number;
    threads?: number;
    headers?: string[];
    script?: string;
  } = {},
) {
  const args = [
    "wrk",
    `-t${options.threads ?? 1}`,
    `-c${options.connections ?? 64}`,
    `-d${options.seconds ?? 10}s`,
    ...(options.headers ?? []).flatMap((h) => ["-H", h]),
    ...(options.script ? ["-s", options.script] : []),
    url,
  ];
  const result = spawnSync(args, { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0)
    throw new Error(`wrk failed (is it installed? apt-get install wrk): ${result.stderr.toString()}`);
  const out = result.stdout.toString();
  const rps = Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? 0);
  const non2xx = Number(out.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0);
  return { rps, non2xx, raw: out };
}

/** Resident set size of a process in MB (Linux). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
  return kb / 1024;
}

/** A raw Bun.serve hello server in its own process: the baseline every HTTP figure compares to. */
export async function startHelloServer() {
  const port = await freePort();
  const proc = spawn([process.execPath, join(import.meta.dir, "hello-server.ts"), String(port)], {
    stdout: "ignore",
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + 5000;
  while (performance.now() < deadline) {
    try {
      if ((await fetch(url)).ok) break;
    } catch {
      await Bun.sleep(5);
    }
  }
  return {
    url,
    proc,
    async stop() {
      proc.kill();
      await proc.exited;
    },
  };
}

/** A list as a Lua table literal (wrk scripts). */
export const lua = (values: string[]) => `{${values.map((v) => JSON.stringify(v)).join(",")}}`;

/** A wrk script that GETs `/r/{code}`, rotating over `codes`; answers its path (in `dir`). */
export function redirectScript(dir: string, codes: string[]): string {
  const file = join(dir, "redirect.lua");
  writeFileSync(
    file,
    [
      `local codes = ${lua(codes)}`,
      "local n = 0",
      "request = function()",
      "  n = n + 1",
      '  return wrk.format("GET", "/r/" .. codes[(n % #codes) + 1])',
      "end",
    ].join("\n"),
  );
  return file;
}

/**
 * A wrk script that POSTs `/v1/conversion`: a distinct txn per request (`prefix`, then a counter),
 * identifiers rotating over phone, email, external_id (of `contacts` seeded contacts), vcx and vid.
 */
export function conversionScript(
  dir: string,
  prefix: string,
  seeded: { contacts: number; clickIds: string[]; vids: string[] },
): string {
  const file = join(dir, `conversion-${prefix}.lua`);
  writeFileSync(
    file,
    [
      'wrk.method = "POST"',
      'wrk.headers["Content-Type"] = "application/json"',
      `local clicks = ${lua(seeded.clickIds.slice(0, 2000))}`,
      `local vids = ${lua(seeded.vids.slice(0, 2000))}`,
      "local n = 0",
      "request = function()",
      "  n = n + 1",
      `  local i = (n * 7919) % ${seeded.contacts}`,
      "  local kind = n % 5",
      "  local id",
      '  if kind == 0 then id = string.format(\'"phone":"+1415%07d"\', 2000000 + i)',
      '  elseif kind == 1 then id = string.format(\'"email":"USER%d@Example.com"\', i)',
      '  elseif kind == 2 then id = string.format(\'"external_id":"crm-%d"\', i)',
      "  elseif kind == 3 then id = '\"vcx\":\"' .. clicks[(n % #clicks) + 1] .. '\"'",
      "  else id = '\"vid\":\"' .. vids[(n % #vids) + 1] .. '\"' end",
      `  local body = string.format('{"txn":"${prefix}-%d","value":%d.50,"currency":"usd",%s}', n, n % 200, id)`,
      "  return wrk.format(nil, nil, nil, body)",
      "end",
    ].join("\n"),
  );
  return file;
}
