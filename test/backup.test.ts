import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Subprocess, spawn, spawnSync } from "bun";
import { openDatabase } from "../src/db/client";
import { runCli } from "./support/cli";

const main = join(import.meta.dir, "..", "src", "main.ts");
let dir: string;
/** Every server started here, so that none outlives a failed test. */
const servers: Subprocess[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "outreach-backup-"));
});
afterAll(async () => {
  for (const proc of servers) proc.kill("SIGKILL");
  await Promise.all(servers.map((proc) => proc.exited));
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI as a child process without blocking this one (servers keep being served). */
const cli = (args: string[]) => runCli(args);

interface ServerProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  /** The first key, when this server created the database. */
  key: string | undefined;
  api(
    method: string,
    path: string,
    key: string,
    body?: unknown,
  ): Promise<{
    status: number;
    // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
    body: any;
  }>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
}

/** `outreach serve` on a random port as a child process, as an operator runs it. */
async function serve(db: string): Promise<ServerProcess> {
  const proc = spawn([process.execPath, main, "serve", "--port", "0", "--host", "127.0.0.1", "--db", db], {
    env: { ...process.env, LOG_LEVEL: "error", RATE_LIMIT_RPS: "0", SHUTDOWN_GRACE_SEC: "1" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  servers.push(proc);
  const reader = proc.stdout.getReader();
  let out = "";
  while (!/listening on http:\/\/localhost:\d+/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve exited: ${out}${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const url = `http://127.0.0.1:${out.match(/listening on http:\/\/localhost:(\d+)/)![1]}`;
  return {
    proc,
    url,
    key: out.match(/opk_[0-9A-Za-z]{36}/)?.[0],
    async api(method, path, key, body) {
      const response = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() };
    },
    async stop() {
      proc.kill("SIGTERM");
      return proc.exited;
    },
  };
}

function phone(n: number) {
  return `+1415${String(5_000_000 + n).padStart(7, "0")}`;
}

async function createContacts(server: ServerProcess, key: string, from: number, count: number) {
  const ids: string[] = [];
  for (let n = from; n < from + count; n++) {
    const created = await server.api("POST", "/v1/contacts", key, { phone_number: phone(n) });
    expect(created.status).toBe(200);
    ids.push(created.body.contact.id);
  }
  return ids;
}

function sha256(path: string) {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

function contactIds(path: string): Set<string> {
  const sqlite = new Database(path, { readonly: true });
  try {
    return new Set(
      sqlite
        .query<{ id: string }, []>("SELECT id FROM contacts")
        .all()
        .map((r) => r.id),
    );
  } finally {
    sqlite.close();
  }
}

function integrity(path: string) {
  const sqlite = new Database(path, { readonly: true });
  try {
    return sqlite.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()?.integrity_check;
  } finally {
    sqlite.close();
  }
}

/** A migrated outreach database with no server. */
function freshDatabase(path: string) {
  const result = spawnSync([process.execPath, main, "migrate", "--db", path], {
    env: { ...process.env, LOG_LEVEL: "error" },
  });
  expect(result.exitCode).toBe(0);
}

describe("outreach backup", () => {
  it("copies a live database while a server is writing to it", async () => {
    const db = join(dir, "live.db");
    const server = await serve(db);
    const key = server.key!;
    try {
      // Enough rows for the copy to take a moment.
      const csv = ["phone_number,first_name,city"];
      for (let n = 0; n < 20_000; n++) csv.push(`${phone(100_000 + n)},Name${n},City${n % 300}`);
      const imported = await fetch(`${server.url}/v1/contacts/import`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "text/csv" },
        body: csv.join("\n"),
      }).then((r) => r.json());
      expect(imported).toMatchObject({ ok: true, created: 20_000 });

      // Four clients keep creating contacts before, during and after the backup.
      const acknowledged: { id: string; at: number }[] = [];
      const failures: number[] = [];
      let writing = true;
      let next = 0;
      const writers = Array.from({ length: 4 }, async () => {
        while (writing) {
          const created = await server.api("POST", "/v1/contacts", key, { phone_number: phone(next++) });
          if (created.status === 200) acknowledged.push({ id: created.body.contact.id, at: Date.now() });
          else failures.push(created.status);
        }
      });
      while (acknowledged.length < 50) await Bun.sleep(10);

      const started = Date.now();
      const before = acknowledged.filter((w) => w.at < started).map((w) => w.id);
      const out = join(dir, "live-backup.db");
      const result = await cli(["backup", "--out", out, "--db", db]);
      const ended = Date.now();
      writing = false;
      await Promise.all(writers);

      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(
        new RegExp(`^backed up ${db} to ${out} \\(\\d+(\\.\\d)? (kB|MB)\\) in \\d+\\.\\d s\\n$`),
      );
      // The server kept answering writes while the copy was made.
      expect(failures).toEqual([]);
      expect(acknowledged.filter((w) => w.at >= started && w.at <= ended).length).toBeGreaterThan(0);

      expect(integrity(out)).toBe("ok");
      const copied = contactIds(out);
      for (const id of before) expect(copied.has(id)).toBe(true);
      expect(copied.size).toBeGreaterThanOrEqual(20_000 + before.length);
      expect(copied.size).toBeLessThanOrEqual(20_000 + acknowledged.length);
      // One self-contained file, nothing left beside it.
      expect(readdirSync(dir).filter((f) => f.startsWith("live-backup.db"))).toEqual(["live-backup.db"]);

      const json = await cli(["backup", "--out", out, "--force", "--db", db, "--json"]);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({
        path: out,
        bytes: statSync(out).size,
        db,
        last_migration: expect.stringMatching(/^\d{4}_/),
        duration_ms: expect.any(Number),
      });
    } finally {
      await server.stop();
    }
  });

  it("refuses a target that exists unless --force", async () => {
    const db = join(dir, "force.db");
    freshDatabase(db);
    const out = join(dir, "force-backup.db");
    writeFileSync(out, "keep me");
    const refused = await cli(["backup", "--out", out, "--db", db]);
    expect(refused).toEqual({
      code: 1,
      stdout: "",
      stderr: `outreach: ${out} already exists: use --force to replace it\n`,
    });
    expect(readFileSync(out, "utf8")).toBe("keep me");

    const forced = await cli(["backup", "--out", out, "--force", "--db", db]);
    expect(forced.code).toBe(0);
    expect(integrity(out)).toBe("ok");
  });

  it("refuses a target folder that does not exist or is not writable, and writes nothing", async () => {
    const db = join(dir, "folders.db");
    freshDatabase(db);
    const missing = join(dir, "no-such-folder", "backup.db");
    expect(await cli(["backup", "--out", missing, "--db", db])).toEqual({
      code: 1,
      stdout: "",
      stderr: `outreach: cannot write ${missing}: folder ${join(dir, "no-such-folder")} does not exist\n`,
    });
    expect(existsSync(join(dir, "no-such-folder"))).toBe(false);

    const locked = join(dir, "locked");
    mkdirSync(locked);
    chmodSync(locked, 0o555);
    // Root ignores permission bits: make the folder immutable instead (where chattr works).
    const immutable = process.getuid?.() === 0 && spawnSync(["chattr", "+i", locked]).exitCode === 0;
    if (process.getuid?.() === 0 && !immutable) return;
    try {
      const out = join(locked, "backup.db");
      const result = await cli(["backup", "--out", out, "--db", db]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `outreach: cannot write ${out}: folder ${locked} is not writable (permission denied)\n`,
      );
      expect(readdirSync(locked)).toEqual([]);
    } finally {
      if (immutable) spawnSync(["chattr", "-i", locked]);
    }
  });

  it("answers a usage error without --out and a clear line for a database that is not there", async () => {
    const usage = await cli(["backup", "--db", join(dir, "x.db")]);
    expect(usage).toMatchObject({ code: 2, stderr: "outreach: --out is required\n" });
    const missing = join(dir, "missing.db");
    const result = await cli(["backup", "--out", join(dir, "y.db"), "--db", missing]);
    expect(result).toMatchObject({
      code: 1,
      stderr: `outreach: cannot read the database ${missing}: no such file or folder\n`,
    });
    expect(existsSync(missing)).toBe(false);
    expect(existsSync(join(dir, "y.db"))).toBe(false);
  });
});

describe("outreach restore", () => {
  it("refuses while a server holds the database, and changes nothing", async () => {
    const db = join(dir, "held.db");
    const server = await serve(db);
    try {
      const out = join(dir, "held-backup.db");
      expect((await cli(["backup", "--out", out, "--db", db])).code).toBe(0);
      const inode = statSync(db).ino;
      const result = await cli(["restore", out, "--db", db]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(
        new RegExp(
          `^outreach: ${db} is in use by pid ${server.proc.pid} \\([^\\n]*serve[^\\n]*\\): stop it, then restore\\n$`,
        ),
      );
      expect(statSync(db).ino).toBe(inode);
      expect(readdirSync(dir).filter((f) => f.startsWith("held.db."))).toEqual([]);
      expect((await server.api("GET", "/v1/me", server.key!)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it("restores once the server stopped, and a server started on it answers with the backed-up data", async () => {
    const db = join(dir, "cycle.db");
    const first = await serve(db);
    const key = first.key!;
    const kept = await createContacts(first, key, 1000, 5);
    const out = join(dir, "cycle-backup.db");
    expect((await cli(["backup", "--out", out, "--db", db])).code).toBe(0);
    const lost = await createContacts(first, key, 2000, 3);
    expect(await first.stop()).toBe(0);

    const result = await cli(["restore", out, "--db", db]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const replaced = readdirSync(dir).filter((f) => f.startsWith("cycle.db.before-restore-"));
    expect(replaced).toHaveLength(1);
    expect(result.stdout).toBe(
      `restored ${db} from ${out} (${result.stdout.match(/\(([^)]+)\)/)![1]})\n` +
        `the replaced database is kept as ${join(dir, replaced[0])} (delete it when no longer needed)\n`,
    );
    // The replaced database is whole: the contacts written after the backup are in it.
    for (const id of lost) expect(contactIds(join(dir, replaced[0])).has(id)).toBe(true);

    const second = await serve(db);
    try {
      expect(second.key).toBeUndefined(); // not a new database: no first key printed
      const listed = await second.api("GET", "/v1/contacts?limit=100", key);
      expect(listed.status).toBe(200);
      expect(listed.body.contacts.map((c: { id: string }) => c.id).sort()).toEqual([...kept].sort());
      const one = await second.api("GET", `/v1/contacts/${kept[0]}`, key);
      expect(one.body.contact.phone_number).toBe(phone(1000));
      expect((await second.api("GET", `/v1/contacts/${lost[0]}`, key)).status).toBe(404);
      // And it takes writes.
      expect((await second.api("POST", "/v1/contacts", key, { phone_number: phone(3000) })).status).toBe(200);
    } finally {
      await second.stop();
    }

    // Onto a machine with no database yet: the folder is made, nothing is kept.
    const fresh = join(dir, "new-machine", "outreach.db");
    const onto = await cli(["restore", out, "--db", fresh, "--json"]);
    expect(onto.code).toBe(0);
    expect(JSON.parse(onto.stdout)).toEqual({
      path: fresh,
      bytes: statSync(fresh).size,
      from: out,
      kept: null,
      last_migration: expect.stringMatching(/^\d{4}_/),
      pending_migrations: 0,
    });
    expect(contactIds(fresh)).toEqual(new Set(kept));
  });

  it("is not blocked by a server killed with kill -9", async () => {
    const db = join(dir, "killed.db");
    const server = await serve(db);
    const key = server.key!;
    const kept = await createContacts(server, key, 4000, 3);
    const out = join(dir, "killed-backup.db");
    expect((await cli(["backup", "--out", out, "--db", db])).code).toBe(0);
    const lost = await createContacts(server, key, 5000, 3);
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    // The dead server left its WAL and shared-memory files behind.
    expect(existsSync(`${db}-wal`)).toBe(true);
    expect(existsSync(`${db}-shm`)).toBe(true);

    const started = Date.now();
    const result = await cli(["restore", out, "--db", db]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    // The stale WAL was folded into the replaced file, not replayed into the restored one.
    expect(existsSync(`${db}-wal`)).toBe(false);
    expect(existsSync(`${db}-shm`)).toBe(false);
    const replaced = readdirSync(dir).filter((f) => f.startsWith("killed.db.before-restore-"));
    expect(replaced).toHaveLength(1);
    const inReplaced = contactIds(join(dir, replaced[0]));
    for (const id of [...kept, ...lost]) expect(inReplaced.has(id)).toBe(true);
    expect(integrity(db)).toBe("ok");
    expect(contactIds(db)).toEqual(new Set(kept));

    const again = await serve(db);
    try {
      const listed = await again.api("GET", "/v1/contacts", key);
      expect(listed.body.contacts.map((c: { id: string }) => c.id).sort()).toEqual([...kept].sort());
    } finally {
      await again.stop();
    }
  });

  describe("bad files: one line on stderr, exit 1, the database untouched", () => {
    let db: string;
    let backup: string;
    beforeAll(async () => {
      db = join(dir, "target.db");
      freshDatabase(db);
      backup = join(dir, "good-backup.db");
      expect((await cli(["backup", "--out", backup, "--db", db])).code).toBe(0);
    });

    async function refused(file: string, message: string) {
      const hash = sha256(db);
      const before = readdirSync(dir).sort();
      const result = await cli(["restore", file, "--db", db]);
      expect(result).toEqual({ code: 1, stdout: "", stderr: `outreach: ${message}\n` });
      expect(sha256(db)).toBe(hash);
      expect(readdirSync(dir).sort()).toEqual(before);
    }

    it("a file that is not SQLite", async () => {
      const file = join(dir, "notes.txt");
      writeFileSync(file, "these are not the rows you are looking for\n".repeat(50));
      await refused(file, `${file} is not an SQLite database`);
      const empty = join(dir, "empty.db");
      writeFileSync(empty, "");
      await refused(empty, `${empty} is not an SQLite database`);
    });

    it("an SQLite file that is not an outreach database", async () => {
      const file = join(dir, "other-app.db");
      const other = new Database(file, { create: true });
      other.exec(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('hi')",
      );
      other.close();
      await refused(file, `${file} is not an outreach database (no schema_migrations table)`);
    });

    it("a file from a newer binary", async () => {
      const file = join(dir, "newer.db");
      copyFileSync(backup, file);
      const newer = new Database(file);
      newer.exec(
        "INSERT INTO schema_migrations (tag, hash, applied_at) VALUES ('9999_from_the_future', 'x', 0)",
      );
      newer.close();
      await refused(
        file,
        `${file} comes from a newer version of outreach (migration 9999_from_the_future is unknown to this binary): upgrade outreach first`,
      );
    });

    it("a damaged file", async () => {
      const file = join(dir, "damaged.db");
      copyFileSync(backup, file);
      const pageSize = readFileSync(file).readUInt16BE(16);
      const fd = openSync(file, "r+");
      writeSync(fd, Buffer.alloc(64, 0xff), 0, 64, pageSize * 4);
      closeSync(fd);
      const hash = sha256(db);
      const result = await cli(["restore", file, "--db", db]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`^outreach: ${file} is damaged \\([^\\n]+\\)\\n$`));
      expect(sha256(db)).toBe(hash);
    });

    it("a file that is not there, and no file at all", async () => {
      const missing = join(dir, "nowhere.db");
      await refused(missing, `cannot read ${missing}: no such file`);
      const usage = await cli(["restore", "--db", db]);
      expect(usage).toMatchObject({
        code: 2,
        stderr: "outreach: usage: outreach restore FILE [--db PATH]\n",
      });
    });
  });

  it("a process that opens the database during the swap ends up on the restored file", async () => {
    const db = join(dir, "swap.db");
    freshDatabase(db);
    const replacement = join(dir, "swap-new.db");
    copyFileSync(db, replacement);
    const marker = new Database(replacement);
    marker.exec("CREATE TABLE restored_marker (x)");
    marker.close();
    // The child does what restore does: lock the database, rename the new file onto it, release.
    const child = spawn(
      [process.execPath, join(import.meta.dir, "support", "swap-child.ts"), db, replacement],
      {
        stdout: "pipe",
        stderr: "inherit",
      },
    );
    const reader = child.stdout.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toBe("locked\n");
    // Blocks on the child's lock, then finds the path names another file and opens again.
    const handle = openDatabase(db);
    try {
      expect(
        handle.sqlite.query("SELECT name FROM sqlite_master WHERE name = 'restored_marker'").get(),
      ).toEqual({ name: "restored_marker" });
    } finally {
      handle.close();
    }
    expect(await child.exited).toBe(0);
  });
});
