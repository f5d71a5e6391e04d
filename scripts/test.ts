/**
 * `npm test`: lint, type-check, then the bun:test suite twice: on SQLite (every test), then on
 * PostgreSQL (every black-box test and the PostgreSQL-ready ones, on a throwaway cluster this
 * script starts and stops). Fails
 * on the first failing step and ends with one plain summary line for both passes
 * (`tests: N passed, M failed`). Without a PostgreSQL to start, the second pass is skipped and
 * says why in one line.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { migratePg } from "../src/db/migrate-pg";
import { createPgClient } from "../src/db/store/postgres";
import {
  type PgCluster,
  PgUnavailable,
  startPgCluster,
  TEST_DIALECT,
  TEST_PG_TEMPLATE,
  TEST_PG_URL,
} from "../test/support/postgres";

const root = join(import.meta.dir, "..");
const bin = (name: string) => join(root, "node_modules", ".bin", name);

/**
 * Tests written for PostgreSQL (or for both databases) that start no test server; every black-box
 * file joins them (postgresFiles).
 */
const POSTGRES_READY = [
  "test/store.test.ts",
  "test/cli-database-url.test.ts",
  "test/cli-migrate-db.test.ts",
  "test/pg-migrations.test.ts",
  "test/dialect.test.ts",
  "test/cluster.test.ts",
  "test/search.test.ts",
];

/**
 * Black-box files about SQLite's own mechanics (its single writer's group commit, its busy lock),
 * which have no PostgreSQL meaning; they run on the SQLite pass.
 */
const SQLITE_ONLY: string[] = [];

function step(name: string, command: string, args: string[]) {
  console.log(`\n▶ ${name}: ${[command.replace(`${root}/`, ""), ...args].join(" ")}`);
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`\n✖ ${name} failed`);
    process.exit(result.status ?? 1);
  }
}

interface Pass {
  passed: number;
  failed: number;
  code: number;
}

/** Runs `bun test` with `args`, passing its output through as it comes and reading its totals. */
function suite(label: string, args: string[], env: Record<string, string>): Promise<Pass> {
  console.log(`\n▶ ${label}: bun test ${args.join(" ")}`.trimEnd());
  const child = spawn(bin("bun"), ["test", "--timeout", "60000", ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["inherit", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk;
    process.stdout.write(chunk);
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk;
    process.stderr.write(chunk);
  });
  return new Promise((resolve) =>
    child.on("close", (code) =>
      resolve({
        passed: Number(output.match(/^\s*(\d+) pass$/m)?.[1] ?? 0),
        failed: Number(output.match(/^\s*(\d+) fail$/m)?.[1] ?? 0),
        code: code ?? 1,
      }),
    ),
  );
}

/**
 * The files of the PostgreSQL pass: every black-box file (a test server over HTTP), and the
 * PostgreSQL-ready ones; those a run's path arguments select (all without any). The pass takes
 * those files alone, not the other arguments (`-t` and its pattern name SQLite-pass tests).
 */
function postgresFiles(args: string[]): string[] {
  const blackBox = testFiles().filter(
    (file) =>
      readFileSync(join(root, file), "utf8").includes("startTestServer(") && !SQLITE_ONLY.includes(file),
  );
  const all = [...new Set([...POSTGRES_READY, ...blackBox])].sort();
  const filters = args.filter((arg) => !arg.startsWith("-"));
  if (filters.length === 0) return all;
  return all.filter((file) => filters.some((filter) => file.includes(filter.replace(/^\.\//, ""))));
}

/** Every test file, as a path from the root. */
function testFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".test.ts")) found.push(path);
    }
  };
  walk("test");
  return found;
}

/**
 * A database for each test server to copy: migrated once, so a server's database is a CREATE
 * DATABASE … TEMPLATE away instead of a run of every migration.
 */
async function migratedTemplate(adminUrl: string): Promise<string> {
  const name = "outreach_template";
  const admin = createPgClient(adminUrl, { max: 1 });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end({ timeout: 1 });
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const client = createPgClient(url.toString(), { max: 1 });
  try {
    await migratePg(client);
  } finally {
    await client.end({ timeout: 1 });
  }
  return name;
}

step("lint", bin("biome"), ["check", "."]);
step("typecheck", bin("tsc"), ["--noEmit", "-p", "."]);

// Browser tests (test/browser) need a Chromium; without one they skip, and say so in one line.
const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!existsSync(chromium)) console.log("browser tests SKIPPED: no chromium (apt-get install chromium)");

const args = process.argv.slice(2);
const passes: Pass[] = [await suite("tests on SQLite", args, { [TEST_DIALECT]: "sqlite" })];

const files = postgresFiles(args);
if (files.length > 0) {
  let cluster: PgCluster | undefined;
  try {
    cluster = await startPgCluster();
  } catch (error) {
    if (!(error instanceof PgUnavailable)) throw error;
    console.log(`\nPostgreSQL pass SKIPPED: ${error.message}`);
  }
  if (cluster) {
    const running = cluster;
    const stop = () => running.stop();
    for (const [signal, code] of [
      ["SIGINT", 130],
      ["SIGTERM", 143],
    ] as const)
      process.once(signal, () => {
        stop();
        process.exit(code);
      });
    try {
      passes.push(
        await suite("tests on PostgreSQL", files, {
          [TEST_DIALECT]: "postgres",
          [TEST_PG_URL]: running.url,
          [TEST_PG_TEMPLATE]: await migratedTemplate(running.url),
        }),
      );
    } finally {
      stop();
    }
  }
}

const passed = passes.reduce((sum, pass) => sum + pass.passed, 0);
const failed = passes.reduce((sum, pass) => sum + pass.failed, 0);
console.log(`\ntests: ${passed} passed, ${failed} failed`);
process.exit(passes.find((pass) => pass.code !== 0)?.code ?? 0);
