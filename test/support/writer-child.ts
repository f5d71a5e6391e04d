/**
 * Child process for test/concurrent-writers.test.ts: a second process writing to the server's
 * database, as a CLI command or another server would. Runs COUNT transactions that read, then
 * write (find-or-create a contact), and prints `done N` when every one committed. On the server's
 * PostgreSQL database when DATABASE_URL is set (the test server's `cliEnv`), else on the file DB.
 * Usage: bun writer-child.ts DB WORKSPACE_ID COUNT
 */
import { openDatabase } from "../../src/db/client";
import { openPgDatabase } from "../../src/db/pg-database";
import { ensureContact } from "../../src/domain/audience/contacts";

const [path, workspaceId, count] = process.argv.slice(2);
const url = process.env.DATABASE_URL;
const handle = url ? await openPgDatabase(url, { migrate: false }) : openDatabase(path);
let done = 0;
for (let i = 0; i < Number(count); i++) {
  await handle.db.transaction(async (tx) => {
    await ensureContact(tx, workspaceId, `+1415666${String(i).padStart(4, "0")}`, "api", Date.now());
  });
  done++;
  if (i % 10 === 0) await Bun.sleep(0);
}
await handle.close();
process.stdout.write(`done ${done}\n`);
