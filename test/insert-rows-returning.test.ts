import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { type DbHandle, openDatabase } from "../src/db/client";
import { migrate } from "../src/db/migrate";
import { insertRowsReturning } from "../src/db/prepared";
import { contacts, workspaces } from "../src/db/schema";
import { newContactRow } from "../src/domain/audience/contacts";
import { openThreadsFor } from "../src/domain/messaging/conversations";
import { newId } from "../src/lib/ids";

/**
 * insertRowsReturning on SQLite, where an insert that leaves out rows meeting a key and answers
 * text columns the rows give (a contact's id) is answered from the rows it wrote instead of by
 * `RETURNING`. The contacts table has an insert trigger (the workspace's contact count), whose
 * rows must not count as the statement's.
 */
let dir: string;
let handle: DbHandle;
let workspaceId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "outreach-insert-rows-"));
  handle = openDatabase(join(dir, "t.db"));
  migrate(handle.sqlite);
  workspaceId = newId();
  await handle.db.insert(workspaces).values({
    id: workspaceId,
    name: "W",
    helpReply: "help",
    optOutReply: "bye",
    optInReply: "hi",
    createdAt: Date.now(),
    updatedAt: Date.now(),
  });
});
afterAll(() => {
  handle.close();
  rmSync(dir, { recursive: true, force: true });
});

const contactCount = () =>
  handle.sqlite.query("SELECT count(*) AS n FROM contacts WHERE workspace_id = ?").get(workspaceId) as {
    n: number;
  };

describe("insertRowsReturning on SQLite", () => {
  it("answers the rows written, in order, and leaves out those that meet the key", async () => {
    const now = Date.now();
    const [first] = await insertRowsReturning(
      handle.db,
      contacts,
      [newContactRow(workspaceId, "+14155550101", "api", now)],
      "test-ensure",
      { conflict: { target: [contacts.workspaceId, contacts.phoneNumber] }, returning: { id: contacts.id } },
    );
    expect(first?.id).toBeString();
    const rows = [
      newContactRow(workspaceId, "+14155550102", "api", now),
      newContactRow(workspaceId, "+14155550101", "api", now), // already there
      newContactRow(workspaceId, "+14155550103", "api", now),
      newContactRow(workspaceId, "+14155550102", "api", now), // the first row of this call
    ];
    const written = await insertRowsReturning(handle.db, contacts, rows, "test-ensure", {
      conflict: { target: [contacts.workspaceId, contacts.phoneNumber] },
      returning: { contactId: contacts.id },
    });
    expect(written).toEqual([{ contactId: rows[0].id }, { contactId: rows[2].id }]);
    const stored = handle.sqlite
      .query("SELECT id, phone_number FROM contacts WHERE workspace_id = ? ORDER BY phone_number")
      .all(workspaceId);
    expect(stored).toEqual([
      { id: first?.id, phone_number: "+14155550101" },
      { id: rows[0].id, phone_number: "+14155550102" },
      { id: rows[2].id, phone_number: "+14155550103" },
    ]);
    expect(contactCount().n).toBe(3);
  });

  it("answers by RETURNING what the rows do not give as text (a timestamp), the same rows", async () => {
    const now = Date.now();
    const rows = [
      newContactRow(workspaceId, "+14155550104", "api", now),
      newContactRow(workspaceId, "+14155550101", "api", now), // already there
    ];
    const written = await insertRowsReturning(handle.db, contacts, rows, "test-ensure-created", {
      conflict: { target: [contacts.workspaceId, contacts.phoneNumber] },
      returning: { id: contacts.id, createdAt: contacts.createdAt },
    });
    expect(written).toEqual([{ id: rows[0].id, createdAt: now }]);
  });

  it("answers nothing for a call whose every row meets the key, and writes nothing", async () => {
    const before = contactCount().n;
    const written = await insertRowsReturning(
      handle.db,
      contacts,
      [newContactRow(workspaceId, "+14155550103", "api", Date.now())],
      "test-ensure",
      { conflict: { target: [contacts.workspaceId, contacts.phoneNumber] }, returning: { id: contacts.id } },
    );
    expect(written).toEqual([]);
    expect(contactCount().n).toBe(before);
  });

  it("fails the statement on another key when the conflict names its own target", async () => {
    const taken = newContactRow(workspaceId, "+14155550105", "api", Date.now());
    await insertRowsReturning(handle.db, contacts, [taken], "test-ensure", {
      conflict: { target: [contacts.workspaceId, contacts.phoneNumber] },
      returning: { id: contacts.id },
    });
    // The same id, another phone: the primary key is not the conflict's target.
    const again = { ...newContactRow(workspaceId, "+14155550106", "api", Date.now()), id: taken.id };
    await expect(
      insertRowsReturning(handle.db, contacts, [again], "test-ensure", {
        conflict: { target: [contacts.workspaceId, contacts.phoneNumber] },
        returning: { id: contacts.id },
      }),
    ).rejects.toThrow(/UNIQUE constraint failed: contacts.id/);
  });

  it("writes the columns given by an expression (a new thread's search key) as RETURNING did", async () => {
    const now = Date.now();
    const made = await insertRowsReturning(
      handle.db,
      contacts,
      [
        newContactRow(workspaceId, "+14155550107", "api", now),
        newContactRow(workspaceId, "+14155550108", "api", now),
      ],
      "test-ensure",
      { conflict: { target: [contacts.workspaceId, contacts.phoneNumber] }, returning: { id: contacts.id } },
    );
    const [a, b] = made.map((row) => row.id);
    // The threads of a send batch: one a contact, the repeat of `a` asks for the same one.
    const open = new Map();
    await openThreadsFor(handle.db, open, workspaceId, [a, b, a] as string[], now);
    const threads = [open.get(a)?.id, open.get(b)?.id];
    const keys = handle.sqlite
      .query("SELECT id, search_key FROM conversations WHERE contact_id IN (?, ?) ORDER BY search_key")
      .all(a as string, b as string) as { id: string; search_key: number | null }[];
    expect(keys.map((row) => row.id)).toEqual(threads as string[]);
    expect(keys[0]?.search_key).toBeNumber();
    expect(keys[1]?.search_key).toBe((keys[0]?.search_key as number) + 1);
  });

  it("writes a column given by an expression instead of the rows' value", async () => {
    const row = newContactRow(workspaceId, "+14155550109", "api", Date.now());
    const written = await insertRowsReturning(
      handle.db,
      contacts,
      [row],
      "test-ensure-computed",
      { conflict: { target: [contacts.workspaceId, contacts.phoneNumber] }, returning: { id: contacts.id } },
      { source: sql`'computed'` },
    );
    expect(written).toEqual([{ id: row.id }]);
    expect(handle.sqlite.query("SELECT source FROM contacts WHERE id = ?").get(row.id)).toEqual({
      source: "computed",
    });
  });
});
