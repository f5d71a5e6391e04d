import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { type DbHandle, openDatabase } from "../src/db/client";
import { searchConversations } from "../src/db/message-search";
import { migrate } from "../src/db/migrate";
import { conversations } from "../src/db/schema";
import { ensureContact } from "../src/domain/audience/contacts";
import { threadForContact } from "../src/domain/messaging/conversations";
import { queueOutboundMessage } from "../src/domain/messaging/messages";
import { createWorkspace } from "../src/domain/workspace/workspaces";

let dir: string;
let handle: DbHandle;
let workspaceId: string;
const expected: string[] = []; // conversation ids matching "refund", most recently active first

function seed(ws: string, count: number, base: number, remember: boolean) {
  handle.db.transaction((tx) => {
    for (let i = 0; i < count; i++) {
      const now = base + i * 1000;
      const { contact } = ensureContact(tx, ws, `+1415555${String(1000 + i)}`, "api", now);
      const thread = threadForContact(tx, ws, contact.id, { reopen: true, now });
      const body = i % 3 === 0 ? `Refund request ${i}` : `Hello there ${i}`;
      queueOutboundMessage(tx, {
        workspaceId: ws,
        contact,
        conversationId: thread.id,
        numberId: null,
        from: "+14155550100",
        body,
        sender: "human",
        now,
      });
      if (i % 6 === 0)
        tx.update(conversations).set({ status: "closed" }).where(eq(conversations.id, thread.id)).run();
      if (remember && i % 3 === 0) expected.unshift(thread.id);
    }
  });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "outreach-search-"));
  handle = openDatabase(join(dir, "search.db"));
  migrate(handle.sqlite);
  workspaceId = createWorkspace(handle.db, { name: "A" }).id;
  const other = createWorkspace(handle.db, { name: "B" }).id;
  seed(workspaceId, 40, 1_800_000_000_000, true);
  seed(other, 40, 1_800_000_000_000, false);
});
afterAll(() => {
  handle.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("searchConversations", () => {
  // smallMatchSet 0 forces the inbox walk used for common words; 1e9 the sorted-matches path.
  for (const [path, smallMatchSet] of [
    ["sorted matches", 1e9],
    ["inbox walk", 0],
  ] as const) {
    it(`pages through the workspace's matches, newest first (${path})`, () => {
      const search = (limit: number, offset: number) =>
        searchConversations(handle.db, { workspaceId, text: "refund", limit, offset, smallMatchSet });
      const all = search(50, 0);
      expect(all.total).toBe(14);
      expect(all.rows.map((r) => r.id)).toEqual(expected);
      expect(search(5, 0).rows.map((r) => r.id)).toEqual(expected.slice(0, 5));
      expect(search(5, 10).rows.map((r) => r.id)).toEqual(expected.slice(10, 14));
      expect(search(5, 14)).toEqual({ rows: [], total: 14 });
    });

    it(`applies the inbox filter and finds nothing for unknown words (${path})`, () => {
      const closed = searchConversations(handle.db, {
        workspaceId,
        text: "refund",
        where: eq(conversations.status, "closed"),
        limit: 50,
        offset: 0,
        smallMatchSet,
      });
      expect(closed.total).toBe(7);
      expect(closed.rows.every((r) => r.status === "closed")).toBe(true);
      expect(
        searchConversations(handle.db, { workspaceId, text: "zzz", limit: 50, offset: 0, smallMatchSet }),
      ).toEqual({ rows: [], total: 0 });
    });
  }
});
