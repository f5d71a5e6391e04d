// migrations/NNNN_search_folded.sql on a SQLite database written before it: the thread search index,
// written unfolded by the server before, is rebuilt folded (src/db/search/text.ts), and a contact's
// rename notes its threads for the drain instead of writing their labels itself.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { openDatabase } from "../src/db/client";
import { migrate } from "../src/db/migrate";
import { embeddedMigrations } from "../src/db/migrations.generated";
import { drainSearchBacklog, searchConversations } from "../src/db/search";

const TAG = embeddedMigrations.find((m) => m.tag.endsWith("_search_folded"))?.tag;
const dir = mkdtempSync(join(tmpdir(), "outreach-search-folded-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("migration search_folded", () => {
  it("rebuilds the index folded, and a rename notes the contact's threads only when it changes them", async () => {
    const path = join(dir, "before.db");
    const before = new Database(path);
    const index = embeddedMigrations.findIndex((m) => m.tag === TAG);
    expect(index).toBeGreaterThan(0);
    migrate(before, embeddedMigrations.slice(0, index));
    before.run(
      "INSERT INTO contacts (id, workspace_id, phone_number, first_name, last_name, source, opted_in, fields, created_at, updated_at) VALUES ('c1', 'w', '+14155550123', 'Søren', 'Ærø', 'api', 1, '{}', 0, 0)",
    );
    before.run(
      "INSERT INTO conversations (id, workspace_id, contact_id, status, created_at, updated_at) VALUES ('t1', 'w', 'c1', 'open', 0, 0)",
    );
    before.run(
      "INSERT INTO messages (id, workspace_id, direction, sender, from_number, to_number, body, status, segments, encoding, contact_id, conversation_id, created_at, updated_at) VALUES ('m1', 'w', 'outbound', 'human', '+1', '+14155550123', 'Grüße aus der Straße', 'QUEUED', 1, 'GSM-7', 'c1', 't1', 0, 0)",
    );
    // The index as the server wrote it before: the texts as written.
    before.run("DELETE FROM search_backlog");
    const key = before.query<{ k: number }, []>("SELECT search_key AS k FROM conversations").get()?.k ?? 0;
    before.run(
      "INSERT INTO conversation_search (rowid, text, message_id) VALUES (?, ?, NULL), (?, ?, 'm1')",
      [key * 1_048_576, "Søren Ærø 14155550123", key * 1_048_576 + 1, "Grüße aus der Straße"],
    );
    const unfolded = (text: string) =>
      before.query("SELECT rowid FROM conversation_search WHERE conversation_search MATCH ?").all(text)
        .length;
    expect([unfolded('"soren"*'), unfolded('"strasse"*'), unfolded('"straße"*')]).toEqual([0, 0, 1]);
    before.close();

    const handle = openDatabase(path);
    try {
      expect(migrate(handle.sqlite).applied).toContain(TAG as string);
      const backlog = async () =>
        Number((await handle.db.values(sql`SELECT count(*) FROM search_backlog`))[0][0]);
      expect(await backlog()).toBe(2); // the thread's label and its message, noted again
      const find = async (text: string) =>
        (await searchConversations(handle.db, { workspaceId: "w", text, limit: 10, offset: 0 })).rows.map(
          (row) => row.id,
        );
      for (const text of ["soren", "aero", "strasse", "grusse", "Søren", "5550123"])
        expect({ text, found: await find(text) }).toEqual({ text, found: ["t1"] });
      expect(await backlog()).toBe(0);

      await handle.db.run(sql`UPDATE contacts SET first_name = 'Søren', phone_number = '+14155550123'`);
      expect(await backlog()).toBe(0); // written again as it was: nothing to index
      await handle.db.run(sql`UPDATE contacts SET first_name = 'Bjørn'`);
      expect(await backlog()).toBe(1);
      await drainSearchBacklog(handle.db, 1e9);
      expect(await find("bjorn")).toEqual(["t1"]);
      expect(await find("soren")).toEqual([]);
    } finally {
      handle.close();
    }
  });
});
