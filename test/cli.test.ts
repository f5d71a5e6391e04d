import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "bun";
import { openDatabase } from "../src/db/client";
import { migrate } from "../src/db/migrate";
import { startTestServer, type TestServer } from "./support/server";

const main = join(import.meta.dir, "..", "src", "main.ts");
let dir: string;

function cli(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync([process.execPath, main, ...args], {
    env: { ...process.env, LOG_LEVEL: "error", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "outreach-cli-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("outreach workspaces / keys", () => {
  it("creates a workspace and keys, lists them without secrets, and revokes", () => {
    const db = join(dir, "cli.db");
    const ws = cli(["workspaces", "create", "--name", "Acme", "--db", db, "--json"]);
    expect(ws.code).toBe(0);
    const workspace = JSON.parse(ws.stdout);
    expect(workspace).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: "Acme" });

    const created = cli([
      "keys",
      "create",
      "--workspace",
      workspace.id,
      "--name",
      "CI",
      "--scopes",
      "read",
      "--db",
      db,
      "--json",
    ]);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key).toEqual({
      id: expect.any(String),
      key: expect.stringMatching(/^opk_[0-9A-Za-z]{36}$/),
      prefix: expect.any(String),
      scopes: ["read"],
    });
    expect(key.key.slice(4, 12)).toBe(key.prefix);

    const listed = cli(["keys", "list", "--workspace", workspace.id, "--db", db, "--json"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(key.key);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({
        id: key.id,
        name: "CI",
        prefix: key.prefix,
        scopes: ["read"],
        revoked_at: null,
      }),
    ]);

    const revoked = cli(["keys", "revoke", key.id, "--db", db, "--json"]);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ id: key.id, revoked: true });
    const after = JSON.parse(cli(["keys", "list", "--workspace", workspace.id, "--db", db, "--json"]).stdout);
    expect(after[0].revoked_at).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it("refuses bad input with a clear message and a non-zero exit", () => {
    const db = join(dir, "bad.db");
    expect(cli(["workspaces", "create", "--db", db])).toMatchObject({
      code: 2,
      stderr: "outreach: --name is required\n",
    });
    const ws = JSON.parse(cli(["workspaces", "create", "--name", "W", "--db", db, "--json"]).stdout);
    const badScope = cli(["keys", "create", "--workspace", ws.id, "--scopes", "admin", "--db", db]);
    expect(badScope.code).toBe(2);
    expect(badScope.stderr).toContain("--scopes must be a comma-separated list of read, write");
    expect(cli(["keys", "create", "--workspace", "nope", "--db", db]).stderr).toContain("not found");
    expect(cli(["keys", "revoke", "nope", "--db", db]).code).toBe(1);
    const unknown = cli(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  });
});

describe("outreach usage", () => {
  it("--version prints the version of package.json and exits 0", async () => {
    const { version } = await Bun.file(join(import.meta.dir, "..", "package.json")).json();
    const cases = [["--version"], ["-v"], ["version"], ["serve", "--version"]];
    for (const args of cases)
      expect({ args, ...cli(args) }).toEqual({ args, code: 0, stdout: `outreach ${version}\n`, stderr: "" });
  });

  it("a bare outreach prints the usage on stderr and exits 2; --help prints it and exits 0", () => {
    const bare = cli([]);
    expect({ code: bare.code, stdout: bare.stdout }).toEqual({ code: 2, stdout: "" });
    expect(bare.stderr).toContain("Usage:\n  outreach serve");
    const help = cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage:\n  outreach serve");
  });

  it("serve --help lists serve's own flags and environment variables", () => {
    for (const args of [
      ["serve", "--help"],
      ["serve", "-h"],
      ["help", "serve"],
    ]) {
      const result = cli(args);
      const missing = [
        "--port",
        "--host",
        "--db",
        "--carrier",
        "--no-worker",
        "PORT",
        "HOST",
        "OUTREACH_DB",
        "CARRIER",
        "PUBLIC_URL",
        "RATE_LIMIT_RPS",
        "LOG_LEVEL",
        "WORKER_THREAD",
        "WEBHOOK_ALLOW_PRIVATE",
        "LLM_BASE_URL",
      ].filter((word) => !result.stdout.includes(word));
      expect({ args, code: result.code, missing }).toEqual({ args, code: 0, missing: [] });
      expect(result.stdout).not.toContain("outreach keys create");
    }
  });

  it("serve --help names every environment variable of the configuration table (docs/configuration.md)", () => {
    const reference = readFileSync(join(import.meta.dir, "..", "docs", "configuration.md"), "utf8");
    const table = reference.slice(reference.indexOf("\n## Configuration"));
    const names = new Set<string>();
    for (const row of table.split("\n").filter((line) => line.startsWith("| `"))) {
      const first = row.split("|")[1] ?? "";
      for (const m of first.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(m[1]);
    }
    expect(names.size).toBeGreaterThan(20);
    const help = cli(["serve", "--help"]).stdout;
    expect([...names].filter((name) => !help.includes(name))).toEqual([]);
  });

  it("refuses an unknown option with exit 2 naming it, before doing anything", () => {
    const db = join(dir, "flags.db");
    const cases: [string[], string][] = [
      [["serve", "--prot", "9000", "--db", db], "unknown option --prot for serve"],
      [["serve", "--prot=9000", "--db", db], "unknown option --prot for serve"],
      [["serve", "--db", db, "--prot"], "unknown option --prot for serve"],
      [["serve", "-p", "9000", "--db", db], "unknown option -p"],
      [["migrate", "--db", db, "--force"], "unknown option --force for migrate"],
      [["keys", "list", "--wrkspace", "x", "--db", db], "unknown option --wrkspace for keys"],
      [["workspaces", "create", "--name", "A", "--jsn", "--db", db], "unknown option --jsn for workspaces"],
      [["--prot", "9000"], "unknown option --prot"],
    ];
    for (const [args, error] of cases) {
      const result = cli(args);
      expect({
        args,
        code: result.code,
        stdout: result.stdout,
        error: result.stderr.startsWith(`outreach: ${error}`),
      }).toEqual({ args, code: 2, stdout: "", error: true });
    }
    // Nothing was made: the refused commands never opened the database.
    expect(existsSync(db)).toBe(false);
    expect(cli(["serve", "--port"]).stderr).toBe("outreach: --port needs a value\n");
  });
});

describe("revocation from another process", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => await s.stop());

  it("takes effect on the very next request while the server runs", async () => {
    const { key, keyId } = await s.newKey(["read", "write"]);
    expect((await s.api("GET", "/v1/me", undefined, { key })).status).toBe(200);
    const revoked = cli(["keys", "revoke", keyId, "--db", s.dbPath], s.cliEnv);
    expect(revoked.code).toBe(0);
    const next = await s.api("GET", "/v1/me", undefined, { key });
    expect(next.status).toBe(401);
    expect(next.body).toEqual({ ok: false, error: "Invalid or missing API key" });
    // Other keys are unaffected.
    expect((await s.api("GET", "/v1/me")).status).toBe(200);
  });
});

describe("outreach serve refuses to start, clearly", () => {
  it("on a file that is not SQLite", () => {
    const path = join(dir, "not-a.db");
    writeFileSync(path, "this is not a database, just text that is long enough to have a header.".repeat(20));
    const result = cli(["serve", "--port", "0", "--db", path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`outreach: ${path} is not an SQLite database\n`);
  });

  it("on a database migrated by a newer binary", () => {
    const path = join(dir, "newer.db");
    const handle = openDatabase(path);
    migrate(handle.sqlite);
    handle.sqlite.exec(
      "INSERT INTO schema_migrations (tag, hash, applied_at) VALUES ('9999_from_the_future', 'x', 0)",
    );
    handle.close();
    const result = cli(["serve", "--port", "0", "--db", path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "migrated by a newer version of outreach (migration 9999_from_the_future",
    );
  });

  it("on a read-only database file", () => {
    const path = join(dir, "readonly.db");
    const handle = openDatabase(path);
    migrate(handle.sqlite);
    handle.close();
    // Root ignores permission bits, so make the file immutable instead (needs chattr and a
    // file system that supports it; where it doesn't, there is nothing to test).
    if (spawnSync(["chattr", "+i", path]).exitCode !== 0) return;
    try {
      const result = cli(["serve", "--port", "0", "--db", path]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `outreach: ${path} is read-only: the server needs to write to it (check permissions)\n`,
      );
    } finally {
      spawnSync(["chattr", "-i", path]);
    }
  });

  it("on a port in use", () => {
    const taken = Bun.serve({ port: 0, fetch: () => new Response("") });
    try {
      const result = cli(["serve", "--port", String(taken.port), "--db", join(dir, "port.db")]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `outreach: port ${taken.port} is already in use: stop the other process or set PORT / --port\n`,
      );
    } finally {
      taken.stop(true);
    }
  });

  it("on a bad setting", () => {
    const result = cli(["serve", "--db", join(dir, "cfg.db")], { PORT: "http" });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('outreach: PORT must be an integer between 0 and 65535 (got "http")\n');
    const cache = cli(["serve", "--db", join(dir, "cfg.db")], { SQLITE_CACHE_MB: "0" });
    expect(cache.code).toBe(2);
    expect(cache.stderr).toBe('outreach: SQLITE_CACHE_MB must be an integer between 1 and 4096 (got "0")\n');
    const thread = cli(["serve", "--db", join(dir, "cfg.db")], { WORKER_THREAD: "maybe" });
    expect(thread.code).toBe(2);
    expect(thread.stderr).toBe('outreach: WORKER_THREAD must be true or false (got "maybe")\n');
  });
});

describe("outreach serve", () => {
  it("serves, then on SIGTERM drains and exits 0", async () => {
    const { spawn } = await import("bun");
    const port = (() => {
      const probe = Bun.serve({ port: 0, fetch: () => new Response("") });
      const p = probe.port;
      probe.stop(true);
      return p;
    })();
    const db = join(dir, "serve.db");
    const proc = spawn([process.execPath, main, "serve", "--port", String(port), "--db", db], {
      env: { ...process.env, LOG_LEVEL: "error" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const deadline = Date.now() + 10_000;
    let healthy = false;
    while (Date.now() < deadline && !healthy) {
      healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (!healthy) await Bun.sleep(50);
    }
    expect(healthy).toBe(true);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const out = await new Response(proc.stdout).text();
    expect(out).toContain('Created workspace "Default"');
    expect(out).toMatch(/opk_[0-9A-Za-z]{36}/);
    expect(out).toContain(`outreach listening on http://localhost:${port}`);
  });
});
