import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { type DbHandle, openDatabase } from "../src/db/client";
import {
  drainSearchBacklog,
  searchConversations,
  startSearchIndexer,
  workspaceHoldsEveryThread,
} from "../src/db/message-search";
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

async function seed(ws: string, count: number, base: number, remember: boolean) {
  await handle.db.transaction(async (tx) => {
    for (let i = 0; i < count; i++) {
      const now = base + i * 1000;
      const { contact } = await ensureContact(tx, ws, `+1415555${String(1000 + i)}`, "api", now);
      const thread = await threadForContact(tx, ws, contact.id, { reopen: true, now });
      const body = i % 3 === 0 ? `Refund request ${i}` : `Hello there ${i}`;
      await queueOutboundMessage(tx, {
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
        await tx.update(conversations).set({ status: "closed" }).where(eq(conversations.id, thread.id)).run();
      if (remember && i % 3 === 0) expected.unshift(thread.id);
    }
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "outreach-search-"));
  handle = openDatabase(join(dir, "search.db"));
  migrate(handle.sqlite);
  workspaceId = (await createWorkspace(handle.db, { name: "A" })).id;
  const other = (await createWorkspace(handle.db, { name: "B" })).id;
  await seed(workspaceId, 40, 1_800_000_000_000, true);
  await seed(other, 40, 1_800_000_000_000, false);
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
    it(`pages through the workspace's matches, newest first (${path})`, async () => {
      const search = async (limit: number, offset: number) =>
        await searchConversations(handle.db, { workspaceId, text: "refund", limit, offset, smallMatchSet });
      const all = await search(50, 0);
      expect(all.total).toBe(14);
      expect(all.rows.map((r) => r.id)).toEqual(expected);
      expect((await search(5, 0)).rows.map((r) => r.id)).toEqual(expected.slice(0, 5));
      expect((await search(5, 10)).rows.map((r) => r.id)).toEqual(expected.slice(10, 14));
      expect(await search(5, 14)).toEqual({ rows: [], total: 14 });
    });

    it(`applies the inbox filter and finds nothing for unknown words (${path})`, async () => {
      const closed = await searchConversations(handle.db, {
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
        await searchConversations(handle.db, {
          workspaceId,
          text: "zzz",
          limit: 50,
          offset: 0,
          smallMatchSet,
        }),
      ).toEqual({ rows: [], total: 0 });
    });
  }
});

describe("searchConversations on a database with one workspace", () => {
  // When every thread is the workspace's, the index's distinct thread keys are the total and the page.
  let single: DbHandle;
  let only: string;
  const refundTotal = async (workspaceId: string, smallMatchSet = 0) =>
    (
      await searchConversations(single.db, {
        workspaceId,
        text: "refund",
        limit: 5,
        offset: 0,
        smallMatchSet,
      })
    ).total;
  beforeAll(async () => {
    single = openDatabase(join(dir, "single.db"));
    migrate(single.sqlite);
    only = (await createWorkspace(single.db, { name: "Only" })).id;
    const saved = handle;
    handle = single;
    try {
      await seed(only, 40, 1_800_000_000_000, false);
    } finally {
      handle = saved;
    }
  });
  afterAll(() => single.close());

  it("counts the same total on both paths, with and without an inbox filter", async () => {
    expect(await workspaceHoldsEveryThread(single.db, only)).toBe(true);
    expect(await workspaceHoldsEveryThread(single.db, "ws_other")).toBe(false);
    for (const smallMatchSet of [0, 1e9]) {
      const all = await searchConversations(single.db, {
        workspaceId: only,
        text: "refund",
        limit: 5,
        offset: 0,
        smallMatchSet,
      });
      expect(all.total).toBe(14);
      expect(all.rows).toHaveLength(5);
      // With an inbox filter the threads are walked: the same figures.
      const closed = await searchConversations(single.db, {
        workspaceId: only,
        text: "refund",
        where: eq(conversations.status, "closed"),
        limit: 50,
        offset: 0,
        smallMatchSet,
      });
      expect(closed.total).toBe(7);
    }
  });

  it("counts each thread once however many of its messages match", async () => {
    await single.db.transaction(async (tx) => {
      const { contact } = await ensureContact(tx, only, "+14155551000", "api", 1_800_000_500_000);
      for (let i = 0; i < 3; i++)
        await queueOutboundMessage(tx, {
          workspaceId: only,
          contact,
          conversationId: (
            await threadForContact(tx, only, contact.id, { reopen: true, now: 1_800_000_500_000 })
          ).id,
          numberId: null,
          from: "+14155550100",
          body: `Refund again ${i}`,
          sender: "human",
          now: 1_800_000_500_000 + i,
        });
    });
    // +14155551000 is the first seeded contact, whose thread already matched: still 14 threads.
    expect(await refundTotal(only)).toBe(14);
  });

  it("is not taken once another workspace has a thread", async () => {
    const other = (await createWorkspace(single.db, { name: "Second" })).id;
    await single.db.transaction(async (tx) => {
      const now = 1_800_000_600_000;
      const { contact } = await ensureContact(tx, other, "+14155559999", "api", now);
      const thread = await threadForContact(tx, other, contact.id, { reopen: true, now });
      await queueOutboundMessage(tx, {
        workspaceId: other,
        contact,
        conversationId: thread.id,
        numberId: null,
        from: "+14155550100",
        body: "Refund elsewhere",
        sender: "human",
        now,
      });
    });
    expect(await workspaceHoldsEveryThread(single.db, only)).toBe(false);
    expect(await refundTotal(only)).toBe(14);
    expect(await refundTotal(other)).toBe(1);
  });
});

describe("search indexing off the sending transaction", () => {
  const indexRows = () =>
    handle.sqlite.query("SELECT count(*) AS n FROM conversation_search").get() as { n: number };
  const backlog = () =>
    (handle.sqlite.query("SELECT count(*) AS n FROM search_backlog").get() as { n: number }).n;
  const find = async (text: string) =>
    await searchConversations(handle.db, { workspaceId, text, limit: 50, offset: 0 });

  async function send(phone: string, body: string, now: number) {
    return await handle.db.transaction(async (tx) => {
      const { contact } = await ensureContact(tx, workspaceId, phone, "api", now);
      const thread = await threadForContact(tx, workspaceId, contact.id, { reopen: true, now });
      const message = await queueOutboundMessage(tx, {
        workspaceId,
        contact,
        conversationId: thread.id,
        numberId: null,
        from: "+14155550100",
        body,
        sender: "human",
        now,
      });
      return { contact, thread, message };
    });
  }

  it("writes only the backlog while sending; the index gets the rows when drained", async () => {
    await drainSearchBacklog(handle.db, 1e9);
    const before = indexRows().n;
    await send("+14155557001", "Parcel tracking quokka", 1_800_000_100_000);
    expect(backlog()).toBe(2); // the new thread's contact label and its message
    expect(indexRows().n).toBe(before);
    expect(await drainSearchBacklog(handle.db, 1e9)).toBe(2);
    expect(backlog()).toBe(0);
    expect(indexRows().n).toBe(before + 2);
    expect((await find("quokka")).total).toBe(1);
    expect((await find("5557001")).total).toBe(1);
  });

  it("a search sees messages written just before it (it drains first)", async () => {
    const { thread } = await send("+14155557002", "Wombat delivery window", 1_800_000_200_000);
    expect(backlog()).toBeGreaterThan(0);
    expect((await find("wombat")).rows.map((r) => r.id)).toEqual([thread.id]);
    expect(backlog()).toBe(0);
  });

  it("keeps one label per thread when the contact is renamed before the drain", async () => {
    const { contact } = await send("+14155557003", "Hello numbat", 1_800_000_300_000);
    handle.sqlite.run("UPDATE contacts SET first_name = 'Zebedee' WHERE id = ?", [contact.id]);
    await drainSearchBacklog(handle.db, 1e9);
    expect((await find("zebedee")).total).toBe(1);
    expect((await find("numbat")).total).toBe(1);
  });

  it("drops backlog rows of messages deleted before the drain", async () => {
    const { message } = await send("+14155557004", "Platypus cancelled", 1_800_000_400_000);
    handle.sqlite.run("DELETE FROM messages WHERE id = ?", [message.id]);
    await drainSearchBacklog(handle.db, 1e9);
    expect(backlog()).toBe(0);
    expect((await find("platypus")).total).toBe(0);
  });

  it("gives each new thread the next search key with its row, and one written without a key the next key too", async () => {
    const keys = () =>
      handle.sqlite.query("SELECT search_key AS k FROM conversations ORDER BY search_key").all() as {
        k: number | null;
      }[];
    const largest = Math.max(...keys().map((r) => r.k ?? 0));
    const { thread } = await send("+14155557006", "Bilby", 1_800_000_600_000);
    const keyOf = (id: string) =>
      (handle.sqlite.query("SELECT search_key AS k FROM conversations WHERE id = ?").get(id) as { k: number })
        .k;
    expect(keyOf(thread.id)).toBe(largest + 1);
    // A thread a script writes without a key (the trigger's path).
    const contact = handle.sqlite
      .query("SELECT id FROM contacts WHERE workspace_id = ? LIMIT 1")
      .get(workspaceId) as {
      id: string;
    };
    handle.sqlite.run(
      "INSERT INTO conversations (id, workspace_id, contact_id, status, needs_attention, agent_paused, last_message_at, created_at, updated_at) VALUES ('script-thread', ?, ?, 'closed', 0, 0, 1, 1, 1)",
      [workspaceId, contact.id],
    );
    expect(keyOf("script-thread")).toBe(largest + 2);
    const all = keys().map((r) => r.k);
    expect(all.every((k) => k !== null)).toBe(true);
    expect(new Set(all).size).toBe(all.length);
    handle.sqlite.run("DELETE FROM conversations WHERE id = 'script-thread'");
    expect((await find("bilby")).rows.map((r) => r.id)).toEqual([thread.id]);
  });

  it("the server's indexer drains the backlog without a search", async () => {
    await send("+14155557005", "Echidna", 1_800_000_500_000);
    const indexer = startSearchIndexer(handle.db, 50);
    try {
      const deadline = Date.now() + 10_000;
      while (backlog() > 0 && Date.now() < deadline) await Bun.sleep(20);
      expect(backlog()).toBe(0);
    } finally {
      indexer.stop();
    }
  });
});
