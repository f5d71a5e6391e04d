/**
 * DATABASE_URL / --database-url: parsed once (src/config.ts); malformed or unreachable → one line,
 * exit 1, nothing written, never a silent fallback to the SQLite file. A reachable PostgreSQL is
 * the database of every command but backup and restore. The reachable cases run in the PostgreSQL
 * pass (or when this file runs alone) on a throwaway cluster.
 */
import { afterAll, describe, expect, it } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { DatabaseUrlError, databaseUrlFrom, describeDatabaseUrl, loadConfig } from "../src/config";
import { runCli as cli } from "./support/cli";
import { freshDatabase, testPostgres, testsRunOn } from "./support/postgres";

const dir = mkdtempSync(join(tmpdir(), "outreach-dburl-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

if (testsRunOn("sqlite")) {
  describe("DATABASE_URL: malformed", () => {
    const cases: [string, string, string][] = [
      [
        "not a URL",
        "not a url",
        "DATABASE_URL is not a valid URL (expected postgres://USER:PASSWORD@HOST:PORT/DATABASE)",
      ],
      [
        "another database's scheme",
        "mysql://user:secret@db.example/app",
        "DATABASE_URL must be a postgres:// or postgresql:// URL (got mysql://…); unset it for the embedded SQLite",
      ],
      [
        "no host",
        "postgres:///app",
        "DATABASE_URL names no host (expected postgres://USER:PASSWORD@HOST:PORT/DATABASE)",
      ],
      [
        "a port out of range",
        "postgres://user:secret@db.example:99999/app",
        "DATABASE_URL is not a valid URL (expected postgres://USER:PASSWORD@HOST:PORT/DATABASE)",
      ],
    ];
    for (const command of [["serve", "--port", "0"], ["workspaces", "list"], ["migrate"]]) {
      for (const [name, url, message] of cases) {
        it(`outreach ${command[0]}: ${name} → one line, exit 1, no file written`, async () => {
          const db = join(dir, `malformed-${command[0]}.db`);
          const result = await cli([...command, "--db", db], { DATABASE_URL: url });
          expect({ name, result, written: existsSync(db) }).toEqual({
            name,
            result: { code: 1, stdout: "", stderr: `outreach: ${message}\n` },
            written: false,
          });
        });
      }
    }

    it("names --database-url when the flag gave it", async () => {
      const result = await cli([
        "migrate",
        "--database-url",
        "http://db.example/app",
        "--db",
        join(dir, "f.db"),
      ]);
      expect(result).toEqual({
        code: 1,
        stdout: "",
        stderr:
          "outreach: --database-url must be a postgres:// or postgresql:// URL (got http://…); unset it for the embedded SQLite\n",
      });
    });
  });

  describe("DATABASE_URL: unreachable", () => {
    it("refused connection → one line naming host, port and database (never the password), exit 1, no file", async () => {
      const db = join(dir, "unreachable.db");
      const result = await cli(["serve", "--port", "0", "--db", db], {
        DATABASE_URL: "postgres://app:hunter2@127.0.0.1:1/outreach",
      });
      expect({ result, written: existsSync(db) }).toEqual({
        result: {
          code: 1,
          stdout: "",
          stderr:
            "outreach: DATABASE_URL: cannot connect to PostgreSQL at 127.0.0.1:1/outreach: connect ECONNREFUSED 127.0.0.1:1\n",
        },
        written: false,
      });
    });
  });

  describe("DATABASE_URL: unset or empty", () => {
    it("an empty DATABASE_URL is the SQLite file, as unset", async () => {
      const db = join(dir, "empty-url.db");
      const result = await cli(["workspaces", "create", "--name", "Acme", "--db", db, "--json"], {
        DATABASE_URL: "",
      });
      expect({ code: result.code, name: JSON.parse(result.stdout).name, written: existsSync(db) }).toEqual({
        code: 0,
        name: "Acme",
        written: true,
      });
    });
  });

  describe("databaseUrlFrom and loadConfig", () => {
    it("takes the flag over the variable, and either over --db", () => {
      const flag = "postgres://a@flag.example/app";
      const env = { DATABASE_URL: "postgres://a@env.example/app", OUTREACH_DB: "/tmp/x.db" };
      const cases: [string, Record<string, string>, Record<string, string>, string | null][] = [
        ["the flag wins", { "database-url": flag, db: "/tmp/y.db" }, env, flag],
        ["the variable", {}, env, env.DATABASE_URL],
        ["neither: the SQLite file", { db: "/tmp/y.db" }, {}, null],
        ["a blank variable is unset", {}, { DATABASE_URL: "  " }, null],
      ];
      for (const [name, flags, vars, expected] of cases) {
        expect({ name, url: loadConfig(flags, vars).databaseUrl }).toEqual({ name, url: expected });
      }
    });

    it("throws a DatabaseUrlError for a malformed URL", () => {
      expect(() => databaseUrlFrom({}, { DATABASE_URL: "postgres//x" })).toThrow(DatabaseUrlError);
    });

    it("reads the pool size, and refuses a bad one", () => {
      expect(loadConfig({}, { DATABASE_POOL_MAX: "25" }).databasePoolMax).toBe(25);
      expect(loadConfig({}, {}).databasePoolMax).toBe(10);
      expect(() => loadConfig({}, { DATABASE_POOL_MAX: "0" })).toThrow(
        'DATABASE_POOL_MAX must be an integer between 1 and 1000 (got "0")',
      );
    });

    it("describes a URL without its user and password", () => {
      const cases: [string, string][] = [
        ["postgres://app:hunter2@db.example:6543/outreach", "db.example:6543/outreach"],
        ["postgresql://app@db.example/outreach", "db.example:5432/outreach"],
        ["postgres://app@db.example", "db.example:5432/app"],
        ["postgres:///outreach?host=/var/run/postgresql", "/var/run/postgresql:5432/outreach"],
      ];
      for (const [url, expected] of cases)
        expect({ url, got: describeDatabaseUrl(url) }).toEqual({ url, got: expected });
    });
  });
}

if (testsRunOn("postgres")) {
  const pg = await testPostgres();
  if ("skip" in pg) console.log(`DATABASE_URL on a reachable PostgreSQL SKIPPED: ${pg.skip}`);
  else {
    const adminUrl = pg.url;
    describe("DATABASE_URL: a reachable PostgreSQL", () => {
      /** The public tables of a database, and its workspaces' names when it has that table. */
      async function contents(url: string) {
        const client = postgres(url, { max: 1, onnotice: () => {} });
        try {
          const [{ tables }] =
            await client`select count(*)::int as tables from pg_tables where schemaname = 'public'`;
          const names =
            tables > 0 ? (await client`select name from workspaces order by name`).map((r) => r.name) : [];
          return { tables, workspaces: names };
        } finally {
          await client.end();
        }
      }

      it("outreach migrate applies the PostgreSQL migrations once, and never writes the SQLite file", async () => {
        const url = await freshDatabase(adminUrl);
        const db = join(dir, "reachable-migrate.db");
        const first = await cli(["migrate", "--db", db], { DATABASE_URL: url });
        const again = await cli(["migrate", "--db", db], { DATABASE_URL: url });
        expect(first.code).toBe(0);
        expect(first.stdout).toMatch(/^applied 0000_baseline, /);
        expect(again).toEqual({ code: 0, stdout: "database is up to date\n", stderr: "" });
        expect(existsSync(db)).toBe(false);
        expect((await contents(url)).tables).toBeGreaterThan(40);
      });

      it("outreach workspaces create writes to PostgreSQL, through --database-url too", async () => {
        const url = await freshDatabase(adminUrl);
        const db = join(dir, "reachable-workspaces.db");
        const made = await cli(["workspaces", "create", "--name", "Acme", "--db", db, "--database-url", url]);
        expect(made.code).toBe(0);
        const listed = await cli(["workspaces", "list", "--db", db], { DATABASE_URL: url });
        expect(listed.stdout).toContain("Acme");
        expect({ sqliteWritten: existsSync(db), workspaces: (await contents(url)).workspaces }).toEqual({
          sqliteWritten: false,
          workspaces: ["Acme"],
        });
      });

      for (const command of ["backup", "restore"]) {
        it(`outreach ${command} names the PostgreSQL tool in one line, exit 1, nothing written`, async () => {
          const url = await freshDatabase(adminUrl);
          const file = join(dir, `${command}.db`);
          const args = command === "backup" ? ["backup", "--out", file] : ["restore", file];
          const result = await cli([...args, "--db", join(dir, `${command}-target.db`)], {
            DATABASE_URL: url,
          });
          const tool = command === "backup" ? "pg_dump -Fc" : "pg_restore into an empty database";
          expect(result).toEqual({
            code: 1,
            stdout: "",
            stderr: `outreach: ${command} works on the SQLite file; on PostgreSQL use ${tool} (docs/operations.md)\n`,
          });
          expect((await contents(url)).tables).toBe(0);
        });
      }

      it("a database the server does not have → cannot connect, naming it", async () => {
        const url = new URL(adminUrl);
        url.pathname = "/no_such_database";
        const result = await cli(["migrate", "--db", join(dir, "nodb.db")], { DATABASE_URL: url.toString() });
        expect(result).toEqual({
          code: 1,
          stdout: "",
          stderr: `outreach: DATABASE_URL: cannot connect to PostgreSQL at 127.0.0.1:${url.port}/no_such_database: database "no_such_database" does not exist\n`,
        });
      });
    });
  }
}
