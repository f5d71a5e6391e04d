// Fixes in installed dependencies that their releases do not have yet, applied after every
// install (`postinstall`, and scripts/ensure-install.mjs before start, test and build). Each fix
// names the file, the text it expects and the replacement; a file already fixed is left alone,
// and a file whose text differs (a newer release) is reported and left alone.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

const FIXES = [
  {
    // postgres.js 3.4.9 (porsager/postgres#1066, #1208): a write that waits for the next
    // immediate and finds its connection closed meanwhile (the server ended the session, a query
    // issued in a transaction whose connection had just closed, such as its ROLLBACK) calls
    // `socket.write` on null and throws outside any caller, ending the process. Fixed: the write
    // settles its queries with CONNECTION_CLOSED (and forgets them: nothing will answer them on
    // this connection, and `end` would wait for them), and a closed connection forgets its
    // pending write so that the next session on it starts clean.
    name: "postgres: a pending write on a closed connection",
    files: ["src", "cjs/src", "cf/src"].map((dir) => join("node_modules", "postgres", dir, "connection.js")),
    edits: [
      {
        find: "  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)",
        replace:
          "  function nextWrite(fn) {\n    if (!socket) { // patched: see scripts/patch-dependencies.mjs\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      query = null\n      return false\n    }\n    const x = socket.write(chunk, fn)",
      },
      {
        find: "    incomings = null\n    clearImmediate(nextWriteTimer)\n",
        replace:
          "    incomings = null\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null // patched: see scripts/patch-dependencies.mjs\n",
      },
    ],
  },
  {
    // postgres.js 3.4.9: a connection that closes with a query in flight (its session ended by the
    // server, its database dropped) rejects the query but keeps it as its current one. A pool's
    // `end` then waits for that query until its timeout: a server stopping after a database
    // outage took its whole 5 s end timeout to close. Fixed: the closed connection forgets it.
    name: "postgres: a closed connection's rejected query",
    files: ["src", "cjs/src", "cf/src"].map((dir) => join("node_modules", "postgres", dir, "connection.js")),
    edits: [
      {
        find: "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n",
        replace:
          "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n    query = null // patched: see scripts/patch-dependencies.mjs\n",
      },
    ],
  },
];

for (const fix of FIXES) {
  for (const relative of fix.files) {
    const file = join(root, relative);
    if (!existsSync(file)) continue;
    let text = readFileSync(file, "utf8");
    let changed = false;
    for (const edit of fix.edits) {
      if (text.includes(edit.replace)) continue;
      if (!text.includes(edit.find)) {
        console.warn(`patch-dependencies: ${fix.name}: ${relative} has changed; not patched`);
        continue;
      }
      text = text.replace(edit.find, edit.replace);
      changed = true;
    }
    if (changed) writeFileSync(file, text);
  }
}
