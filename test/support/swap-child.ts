/**
 * Child process for test/backup.test.ts: does to a database what `outreach restore` does at its
 * swap, slowly. Takes SQLite's exclusive lock on `db`, says "locked", waits, renames `replacement`
 * onto `db`, then releases the lock. Usage: bun swap-child.ts DB REPLACEMENT
 */
import { Database } from "bun:sqlite";
import { renameSync } from "node:fs";

const [db, replacement] = process.argv.slice(2);
const sqlite = new Database(db, { readwrite: true, create: false });
sqlite.exec("PRAGMA locking_mode = EXCLUSIVE");
sqlite.exec("BEGIN EXCLUSIVE");
sqlite.exec("COMMIT");
sqlite.query("PRAGMA journal_mode = MEMORY").get();
process.stdout.write("locked\n");
await Bun.sleep(500);
renameSync(replacement, db);
sqlite.close();
