import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "bun";
import { type DbHandle, openDatabase } from "../src/db/client";
import { migrate } from "../src/db/migrate";
import { createApiKey, createKeyAuthenticator } from "../src/domain/workspace/api-keys";
import { createWorkspace } from "../src/domain/workspace/workspaces";

// A key's `last_used_at` while another connection writes (the background thread sending a
// campaign): its first use is recorded before it is answered; a later refresh never waits.
describe("a key's last use under another writer", () => {
  let dir: string;
  let path: string;
  let handle: DbHandle;
  let workspaceId: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "outreach-last-use-"));
    path = join(dir, "k.db");
    handle = openDatabase(path);
    migrate(handle.sqlite);
    workspaceId = (await createWorkspace(handle.db, { name: "Keys" })).id;
  });
  afterAll(() => {
    handle.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const lastUsed = (id: string) =>
    (
      handle.sqlite.query("SELECT last_used_at AS at FROM api_keys WHERE id = ?").get(id) as {
        at: number | null;
      }
    ).at;

  it("records the first use even while another process holds the write lock", async () => {
    const key = await createApiKey(handle.db, { workspaceId });
    // Another process takes the write lock and keeps it for 300 ms.
    const holder = spawn(
      [
        process.execPath,
        "-e",
        `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(path)});
         db.exec("BEGIN IMMEDIATE"); console.log("locked"); await Bun.sleep(300); db.exec("COMMIT"); db.close();`,
      ],
      { stdout: "pipe" },
    );
    const reader = holder.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("locked");
    const authenticate = createKeyAuthenticator(handle.db);
    const at = Date.now();
    expect((await authenticate(key.key, at))?.keyId).toBe(key.id);
    expect(lastUsed(key.id)).toBe(at);
    await holder.exited;
  });

  it("skips a refresh while another connection writes, and records it once the lock is free", async () => {
    const key = await createApiKey(handle.db, { workspaceId });
    const authenticate = createKeyAuthenticator(handle.db);
    const first = Date.now();
    await authenticate(key.key, first);
    expect(lastUsed(key.id)).toBe(first);
    const other = new Database(path);
    try {
      other.exec("BEGIN IMMEDIATE");
      expect((await authenticate(key.key, first + 61_000))?.keyId).toBe(key.id);
      other.exec("COMMIT");
    } finally {
      other.close();
    }
    expect(lastUsed(key.id)).toBe(first);
    // Skipped, not failed after waiting (a failure would count as written for a minute): the next
    // request records it.
    await authenticate(key.key, first + 62_000);
    expect(lastUsed(key.id)).toBe(first + 62_000);
  });
});
