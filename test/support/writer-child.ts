/**
 * Child process for test/concurrent-writers.test.ts: a second process writing to the server's
 * database, as a CLI command or another server would. Runs COUNT transactions that read, then
 * write (find-or-create a contact), and prints `done N` when every one committed.
 * Usage: bun writer-child.ts DB WORKSPACE_ID COUNT
 */
import { openDatabase } from "../../src/db/client";
import { ensureContact } from "../../src/domain/audience/contacts";

const [path, workspaceId, count] = process.argv.slice(2);
const handle = openDatabase(path);
let done = 0;
for (let i = 0; i < Number(count); i++) {
  await handle.db.transaction(async (tx) => {
    await ensureContact(tx, workspaceId, `+1415666${String(i).padStart(4, "0")}`, "api", Date.now());
  });
  done++;
  if (i % 10 === 0) await Bun.sleep(0);
}
handle.close();
process.stdout.write(`done ${done}\n`);
