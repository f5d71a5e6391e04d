/**
 * Thread search, on each database of the run (test/support/postgres.ts: `testsRunOn`). The cases
 * about SQLite's FTS5 internals (packed search keys) run on SQLite only; every behavioural case
 * runs on both.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { type Db, openDatabase } from "../src/db/client";
import { migrate } from "../src/db/migrate";
import { openPgDatabase } from "../src/db/pg-database";
import { conversations } from "../src/db/schema";
import {
  drainSearchBacklog,
  searchConversations,
  startSearchIndexer,
  workspaceHoldsEveryThread,
} from "../src/db/search";
import { drainSearchBacklogPg } from "../src/db/search/postgres";
import { contactLabel, foldForSearch, searchTokens } from "../src/db/search/text";
import { createPgClient } from "../src/db/store/postgres";
import { ensureContact } from "../src/domain/audience/contacts";
import { threadForContact } from "../src/domain/messaging/conversations";
import { queueOutboundMessage } from "../src/domain/messaging/outbound";
import { createWorkspace } from "../src/domain/workspace/workspaces";
import { freshDatabase, testPostgres, testsRunOn } from "./support/postgres";

/** A migrated database of one dialect: its handle, raw statements on it, and how to close it. */
interface Handle {
  db: Db;
  close(): Promise<void> | void;
}
interface Target {
  name: "sqlite" | "postgres";
  open(): Promise<Handle>;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const targets: Target[] = [];
if (testsRunOn("sqlite"))
  targets.push({
    name: "sqlite",
    async open() {
      const dir = mkdtempSync(join(tmpdir(), "outreach-search-"));
      dirs.push(dir);
      const handle = openDatabase(join(dir, "search.db"));
      migrate(handle.sqlite);
      return handle;
    },
  });
const pg = testsRunOn("postgres") ? await testPostgres() : null;
if (pg && "skip" in pg) console.log(`search on PostgreSQL SKIPPED: ${pg.skip}`);
if (pg && "url" in pg) {
  const adminUrl = pg.url;
  targets.push({
    name: "postgres",
    async open() {
      const opened = await openPgDatabase(await freshDatabase(adminUrl), { max: 4 });
      return { db: opened.db, close: () => opened.close() };
    },
  });
}

/** One number a raw statement answers (count(*) & co.), on either database. */
async function scalar(db: Db, query: ReturnType<typeof sql>): Promise<number> {
  const rows = await db.values<[number | string]>(query);
  return Number(rows[0]?.[0]);
}

for (const target of targets) {
  const onSqlite = target.name === "sqlite";
  describe(`search on ${target.name}`, () => {
    let handle: Handle;
    let workspaceId: string;
    const expected: string[] = []; // conversation ids matching "refund", most recently active first

    async function seed(db: Db, ws: string, count: number, base: number, remember: boolean) {
      await db.transaction(async (tx) => {
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
            await tx
              .update(conversations)
              .set({ status: "closed" })
              .where(eq(conversations.id, thread.id))
              .run();
          if (remember && i % 3 === 0) expected.unshift(thread.id);
        }
      });
    }

    beforeAll(async () => {
      handle = await target.open();
      workspaceId = (await createWorkspace(handle.db, { name: "A" })).id;
      const other = (await createWorkspace(handle.db, { name: "B" })).id;
      await seed(handle.db, workspaceId, 40, 1_800_000_000_000, true);
      await seed(handle.db, other, 40, 1_800_000_000_000, false);
    });
    afterAll(async () => {
      await handle?.close();
    });

    describe("searchConversations", () => {
      // smallMatchSet 0 forces the inbox walk used for common words; 1e9 the sorted-matches path.
      for (const [path, smallMatchSet] of [
        ["sorted matches", 1e9],
        ["inbox walk", 0],
      ] as const) {
        it(`pages through the workspace's matches, newest first (${path})`, async () => {
          const search = async (limit: number, offset: number) =>
            await searchConversations(handle.db, {
              workspaceId,
              text: "refund",
              limit,
              offset,
              smallMatchSet,
            });
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
      let single: Handle;
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
        single = await target.open();
        only = (await createWorkspace(single.db, { name: "Only" })).id;
        await seed(single.db, only, 40, 1_800_000_000_000, false);
      });
      afterAll(async () => {
        await single?.close();
      });

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
      const indexRows = async () =>
        await scalar(handle.db, sql`SELECT count(*) AS n FROM conversation_search`);
      const backlog = async () => await scalar(handle.db, sql`SELECT count(*) AS n FROM search_backlog`);
      const find = async (text: string) =>
        await searchConversations(handle.db, { workspaceId, text, limit: 50, offset: 0 });
      /** Each of `texts` finds `threadId` and nothing else (the failing text is named). */
      async function expectEachFinds(texts: string[], threadId: string) {
        for (const text of texts)
          expect({ text, rows: (await find(text)).rows.map((r) => r.id) }).toEqual({
            text,
            rows: [threadId],
          });
      }

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
        const before = await indexRows();
        await send("+14155557001", "Parcel tracking quokka", 1_800_000_100_000);
        expect(await backlog()).toBe(2); // the new thread's contact label and its message
        expect(await indexRows()).toBe(before);
        expect(await drainSearchBacklog(handle.db, 1e9)).toBe(2);
        expect(await backlog()).toBe(0);
        expect(await indexRows()).toBe(before + 2);
        expect((await find("quokka")).total).toBe(1);
        expect((await find("5557001")).total).toBe(1);
      });

      it("a search sees messages written just before it (it drains first)", async () => {
        const { thread } = await send("+14155557002", "Wombat delivery window", 1_800_000_200_000);
        expect(await backlog()).toBeGreaterThan(0);
        expect((await find("wombat")).rows.map((r) => r.id)).toEqual([thread.id]);
        expect(await backlog()).toBe(0);
      });

      it("keeps one label per thread when the contact is renamed before the drain", async () => {
        const { contact } = await send("+14155557003", "Hello numbat", 1_800_000_300_000);
        await handle.db.run(sql`UPDATE contacts SET first_name = 'Zebedee' WHERE id = ${contact.id}`);
        await drainSearchBacklog(handle.db, 1e9);
        expect((await find("zebedee")).total).toBe(1);
        expect((await find("numbat")).total).toBe(1);
      });

      it("rewrites a thread's label when its contact is renamed after the drain", async () => {
        const { contact, thread } = await send("+14155557101", "Hello wallaroo", 1_800_000_800_000);
        await drainSearchBacklog(handle.db, 1e9);
        expect((await find("5557101")).rows.map((row) => row.id)).toEqual([thread.id]);
        await handle.db.run(
          sql`UPDATE contacts SET first_name = 'Ørjan', phone_number = '+14155557102' WHERE id = ${contact.id}`,
        );
        // An update that changes neither the name nor the number notes nothing.
        await handle.db.run(sql`UPDATE contacts SET first_name = 'Ørjan' WHERE id = ${contact.id}`);
        expect(await backlog()).toBe(1);
        await drainSearchBacklog(handle.db, 1e9);
        expect((await find("orjan")).rows.map((row) => row.id)).toEqual([thread.id]);
        expect((await find("5557102")).rows.map((row) => row.id)).toEqual([thread.id]);
        expect((await find("5557101")).total).toBe(0);
        expect((await find("wallaroo")).rows.map((row) => row.id)).toEqual([thread.id]);
      });

      it("drops backlog rows of messages deleted before the drain", async () => {
        const { message } = await send("+14155557004", "Platypus cancelled", 1_800_000_400_000);
        await handle.db.run(sql`DELETE FROM messages WHERE id = ${message.id}`);
        await drainSearchBacklog(handle.db, 1e9);
        expect(await backlog()).toBe(0);
        expect((await find("platypus")).total).toBe(0);
      });

      it("matches each word as a prefix, whatever its case or accents", async () => {
        const { thread } = await send("+14155557007", "Crème BRÛLÉE at Café Zoë's, ok?", 1_800_000_700_000);
        await expectEachFinds(
          ["creme", "brulee", "BRÛL", "café zoe", "cafe zoë", "CRÈME   brû", "zoe's"],
          thread.id,
        );
        expect((await find("crème croissant")).total).toBe(0);
        expect((await find("rème")).total).toBe(0); // prefixes, not infixes
      });

      it("splits words at punctuation as SQLite's tokenizer does", async () => {
        const { thread } = await send(
          "+14155557008",
          "Order#4471-XQ: see https://shop.wallaby.example/track?id=93 or mail ann.lee@wallaby.example (3.75 due)",
          1_800_000_800_000,
        );
        await expectEachFinds(
          ["order#4471", "4471 xq", "wallaby", "example track", "93", "ann", "lee", "75", "3.75"],
          thread.id,
        );
      });

      it("splits a contact's name at punctuation too", async () => {
        const { contact, thread } = await send("+14155557011", "Hello", 1_800_000_960_000);
        await handle.db.run(
          sql`UPDATE contacts SET first_name = 'Dingo.Works', last_name = 'ops@dingo-works.zoo' WHERE id = ${contact.id}`,
        );
        await expectEachFinds(["dingo", "works", "dingo.works", "ops", "dingo-works", "zoo"], thread.id);
      });

      it("finds a thread by its contact's number written any way, and its last digits", async () => {
        const { thread } = await send("+14155557009", "Hello", 1_800_000_900_000);
        await expectEachFinds(
          ["+14155557009", "14155557009", "4155557009", "5557009", "7009", "+1 415 555 7009"],
          thread.id,
        );
      });

      it("finds a contact named in another script by the name as written", async () => {
        const { contact, thread } = await send("+14155557010", "Hello", 1_800_000_950_000);
        await handle.db.run(
          sql`UPDATE contacts SET first_name = 'Жук', last_name = 'Παπαδόπουλος' WHERE id = ${contact.id}`,
        );
        await expectEachFinds(["Жук", "Παπαδόπουλος", "Жук Παπα"], thread.id);
      });

      it("folds letters as PostgreSQL's unaccent does, on both databases", async () => {
        const { contact, thread } = await send(
          "+14155557012",
          "Grüße aus der Straße: ﬁnal Ｏｆｆｅｒ for Ærø, Καλημέρα, Йога",
          1_800_000_970_000,
        );
        await handle.db.run(
          sql`UPDATE contacts SET first_name = 'Søren', last_name = 'Łukasz-Øberg' WHERE id = ${contact.id}`,
        );
        await expectEachFinds(
          [
            "soren",
            "SØREN",
            "Søren lukasz",
            "oberg",
            "strasse",
            "STRAẞE",
            "straß",
            "grusse",
            "final",
            "offer",
            "ＯＦＦ",
            "aero",
            "ærø",
            "καλημερα",
            "ΚΑΛΗΜΈΡΑ",
            "Йога",
          ],
          thread.id,
        );
        // Cyrillic keeps its marks on both (unaccent folds Ё alone): й is not и.
        expect((await find("иога")).total).toBe(0);
      });

      // The folding is the server's; PostgreSQL's unaccent also runs over its index (and folds the
      // labels it writes). Both must agree on every letter of the scripts the folding covers.
      it.if(!onSqlite)("folds each Latin and Greek letter as PostgreSQL's unaccent does", async () => {
        const ranges: [number, number][] = [
          [0xbc, 0xbe],
          [0xc0, 0x17f],
          [0x370, 0x3ff],
          [0x401, 0x401],
          [0x451, 0x451],
          [0x1e00, 0x1fff],
          [0x2100, 0x218f],
          [0xfb00, 0xfb06],
          [0xff01, 0xff5e],
        ];
        const letters: string[] = [];
        for (const [from, to] of ranges)
          for (let c = from; c <= to; c++) {
            const letter = String.fromCodePoint(c);
            if (/[\p{L}\p{N}]/u.test(letter)) letters.push(letter);
          }
        const unaccent = async (texts: string[]) =>
          (
            await handle.db.values<[string]>(
              sql`SELECT search_unaccent(l) FROM json_array_elements_text(${JSON.stringify(texts)}::json) WITH ORDINALITY AS t(l, n) ORDER BY n`,
            )
          ).map((row) => row[0]);
        const words = (text: string) => searchTokens(text.toLowerCase()).join(" ");
        const unaccented = await unaccent(letters);
        const differing = letters.filter(
          (letter, i) => words(foldForSearch(letter)) !== words(unaccented[i]),
        );
        // Letters unaccent's table lacks but whose canonical form (NFC) it has: the folding sees them
        // as that form (Greek with oxia, the ångström sign, the Greek numeral sign).
        const ofCanonical = await unaccent(differing.map((letter) => letter.normalize("NFC")));
        const unlike = differing.filter(
          (letter, i) => words(foldForSearch(letter)) !== words(ofCanonical[i]),
        );
        // ϓ ϔ: an accented upsilon-hook and ẛ a dotted long s, which the table lacks; ℌ: its rules
        // map it to "x".
        expect(unlike).toEqual(["ϓ", "ϔ", "ẛ", "ℌ"]);
        expect(differing.length).toBeLessThan(30);
      });

      it("never fails on query syntax in the user's text", async () => {
        for (const text of [
          "'",
          "''",
          "\\",
          '"',
          "a:*",
          "!(x | y) & z <-> w",
          "refund:* | hello",
          "'); DROP TABLE conversations; --",
          "NEAR(refund hello)",
          "AND OR NOT",
          "ŉ ʼ ⑴ ½",
          "*",
          "-",
        ]) {
          const found = await find(text);
          expect(typeof found.total).toBe("number");
          expect(found.rows.length).toBeLessThanOrEqual(found.total);
        }
        expect((await find("refund:*")).total).toBe(14);
        expect((await find("")).total).toBe(0);
        expect((await find("  ?! ")).total).toBe(0);
      });

      it("two drains at once index each backlog row once", async () => {
        await drainSearchBacklog(handle.db, 1e9);
        const before = await indexRows();
        for (let i = 0; i < 30; i++)
          await send(`+141555580${String(i).padStart(2, "0")}`, `Kookaburra ${i}`, 1_800_001_000_000 + i);
        expect(await backlog()).toBe(60); // a label and a message per thread
        const [a, b] = await Promise.all([
          drainSearchBacklog(handle.db, 1e9),
          drainSearchBacklog(handle.db, 1e9),
        ]);
        expect(a + b).toBe(60);
        expect(await indexRows()).toBe(before + 60);
        expect((await find("kookaburra")).total).toBe(30);
      });

      // PostgreSQL's drain claims rows per batch: small batches make two drains interleave, and a
      // search's drain (which waits for claimed rows) still sees every row drained.
      it.if(!onSqlite)("claimed batches: skipping and waiting drains share the backlog", async () => {
        await drainSearchBacklog(handle.db, 1e9);
        const before = await indexRows();
        for (let i = 0; i < 30; i++)
          await send(`+141555581${String(i).padStart(2, "0")}`, `Bandicoot ${i}`, 1_800_001_100_000 + i);
        const drains = await Promise.all([
          drainSearchBacklogPg(handle.db, 1e9, "skip", 3),
          drainSearchBacklogPg(handle.db, 1e9, "skip", 4),
          drainSearchBacklogPg(handle.db, 1e9, "wait", 5),
          drainSearchBacklogPg(handle.db, 1e9, "wait", 2),
        ]);
        expect(drains.reduce((x, y) => x + y, 0)).toBe(60);
        expect(await backlog()).toBe(0);
        expect(await indexRows()).toBe(before + 60);
        expect((await find("bandicoot")).total).toBe(30);
      });

      // The packed FTS5 rowids name a thread by its search key (SQLite only: PostgreSQL's index
      // names threads by id, and its keys come from an identity column).
      it.if(onSqlite)(
        "gives each new thread the next search key with its row, and one written without a key the next key too",
        async () => {
          const keys = async () =>
            (await handle.db.all<{ k: number | null }>(
              sql`SELECT search_key AS k FROM conversations ORDER BY search_key`,
            )) as { k: number | null }[];
          const largest = Math.max(...(await keys()).map((r) => r.k ?? 0));
          const { thread } = await send("+14155557006", "Bilby", 1_800_000_600_000);
          const keyOf = async (id: string) =>
            await scalar(handle.db, sql`SELECT search_key AS n FROM conversations WHERE id = ${id}`);
          expect(await keyOf(thread.id)).toBe(largest + 1);
          // A thread a script writes without a key (the trigger's path).
          const [contact] = await handle.db.all<{ id: string }>(
            sql`SELECT id FROM contacts WHERE workspace_id = ${workspaceId} LIMIT 1`,
          );
          await handle.db.run(
            sql`INSERT INTO conversations (id, workspace_id, contact_id, status, needs_attention, agent_paused, last_message_at, created_at, updated_at) VALUES ('script-thread', ${workspaceId}, ${contact?.id}, 'closed', 0, 0, 1, 1, 1)`,
          );
          expect(await keyOf("script-thread")).toBe(largest + 2);
          const all = (await keys()).map((r) => r.k);
          expect(all.every((k) => k !== null)).toBe(true);
          expect(new Set(all).size).toBe(all.length);
          await handle.db.run(sql`DELETE FROM conversations WHERE id = 'script-thread'`);
          expect((await find("bilby")).rows.map((r) => r.id)).toEqual([thread.id]);
        },
      );

      // PostgreSQL's keys come from an identity column: a thread a script writes without one and the
      // threads written next each get their own.
      it.if(!onSqlite)("gives threads written with and without a search key distinct keys", async () => {
        const [contact] = await handle.db.all<{ id: string }>(
          sql`SELECT id FROM contacts WHERE workspace_id = ${workspaceId} LIMIT 1`,
        );
        await handle.db.run(
          sql`INSERT INTO conversations (id, workspace_id, contact_id, status, needs_attention, agent_paused, last_message_at, created_at, updated_at) VALUES ('script-thread', ${workspaceId}, ${contact?.id}, 'closed', false, false, 1, 1, 1)`,
        );
        const { thread } = await send("+14155557011", "Quoll", 1_800_000_960_000);
        const keys = (await handle.db.values<[number | null]>(sql`SELECT search_key FROM conversations`)).map(
          ([k]) => k,
        );
        expect(keys.every((k) => k !== null)).toBe(true);
        expect(new Set(keys).size).toBe(keys.length);
        await handle.db.run(sql`DELETE FROM conversations WHERE id = 'script-thread'`);
        expect((await find("quoll")).rows.map((r) => r.id)).toEqual([thread.id]);
      });

      it("the indexer waits while jobs run, then drains once they stop or it has waited long enough", async () => {
        await send("+14155557006", "Numbat", 1_800_000_510_000);
        let running = true;
        const waiting = startSearchIndexer(handle.db, {
          intervalMs: 20,
          busy: () => running,
          maxDeferMs: 60_000,
        });
        const drained = async () => {
          const deadline = Date.now() + 10_000;
          while ((await backlog()) > 0 && Date.now() < deadline) await Bun.sleep(20);
          return (await backlog()) === 0;
        };
        try {
          await Bun.sleep(200); // ten rounds: each found jobs running
          expect(await backlog()).toBeGreaterThan(0);
          running = false;
          expect(await drained()).toBe(true);
        } finally {
          waiting.stop();
        }
        // Jobs that never stop: it drains anyway once maxDeferMs has passed since its start.
        await send("+14155557007", "Bilby", 1_800_000_520_000);
        const patient = startSearchIndexer(handle.db, { intervalMs: 20, busy: () => true, maxDeferMs: 300 });
        try {
          await Bun.sleep(100);
          expect(await backlog()).toBeGreaterThan(0);
          expect(await drained()).toBe(true);
        } finally {
          patient.stop();
        }
      });

      it("the server's indexer drains the backlog without a search", async () => {
        await send("+14155557005", "Echidna", 1_800_000_500_000);
        const indexer = startSearchIndexer(handle.db, { intervalMs: 50 });
        try {
          const deadline = Date.now() + 10_000;
          while ((await backlog()) > 0 && Date.now() < deadline) await Bun.sleep(20);
          expect(await backlog()).toBe(0);
        } finally {
          indexer.stop();
        }
      });
    });
  });
}

if (pg && "url" in pg) {
  const adminUrl = pg.url;
  describe("search on postgres: a drain and a rename at the same time", () => {
    it("leaves a thread whose contact is being renamed for the next drain, which writes the new name", async () => {
      const url = await freshDatabase(adminUrl);
      const opened = await openPgDatabase(url, { max: 2 });
      const raw = createPgClient(url, { max: 2 });
      const labels = async () =>
        (await raw<{ text: string }[]>`SELECT text FROM conversation_search WHERE message_id IS NULL`).map(
          (r) => r.text,
        );
      const backlog = async () =>
        (await raw<{ n: number }[]>`SELECT count(*)::int AS n FROM search_backlog`)[0].n;
      try {
        await raw`INSERT INTO contacts (id, workspace_id, phone_number, first_name, source, fields, created_at, updated_at)
          VALUES ('c1', 'w1', '+14155550123', 'Numbat', 'api', '{}', 0, 0)`;
        await raw`INSERT INTO conversations (id, workspace_id, contact_id, status, created_at, updated_at)
          VALUES ('t1', 'w1', 'c1', 'open', 0, 0)`;
        // A rename, not committed yet, while the drains index the new thread: neither waits for
        // it (a search's drain neither), and neither writes the name about to change.
        const renaming = await raw.reserve();
        try {
          await renaming`BEGIN`;
          await renaming`UPDATE contacts SET first_name = 'Quokka' WHERE id = 'c1'`;
          expect(await drainSearchBacklogPg(opened.db, 100, "skip")).toBe(1);
          expect(await drainSearchBacklogPg(opened.db, 100, "wait")).toBe(1);
          expect(await labels()).toEqual([]);
          expect(await backlog()).toBe(1); // put back
          await renaming`COMMIT`;
        } finally {
          await renaming`ROLLBACK`.catch(() => {});
          renaming.release();
        }
        expect(await backlog()).toBe(2); // and noted by the rename
        expect(await drainSearchBacklogPg(opened.db, 100)).toBe(2);
        expect(await labels()).toEqual([contactLabel("Quokka", null, "+14155550123")]);
        expect(await backlog()).toBe(0);
      } finally {
        await raw.end();
        await opened.close();
      }
    });

    it("drops the backlog rows of threads or contacts deleted before the drain", async () => {
      const url = await freshDatabase(adminUrl);
      const opened = await openPgDatabase(url, { max: 2 });
      const raw = createPgClient(url, { max: 1 });
      try {
        await raw`INSERT INTO contacts (id, workspace_id, phone_number, source, fields, created_at, updated_at)
          VALUES ('c1', 'w1', '+14155550123', 'api', '{}', 0, 0), ('c2', 'w1', '+14155550124', 'api', '{}', 0, 0)`;
        await raw`INSERT INTO conversations (id, workspace_id, contact_id, status, created_at, updated_at)
          VALUES ('t1', 'w1', 'c1', 'open', 0, 0), ('t2', 'w1', 'c2', 'open', 0, 0)`;
        await raw`DELETE FROM conversations WHERE id = 't1'`;
        await raw`DELETE FROM contacts WHERE id = 'c2'`;
        expect(await drainSearchBacklogPg(opened.db, 100, "wait")).toBe(2);
        const [{ n }] = await raw<{ n: number }[]>`SELECT count(*)::int AS n FROM search_backlog`;
        expect(n).toBe(0);
      } finally {
        await raw.end();
        await opened.close();
      }
    });
  });
}
