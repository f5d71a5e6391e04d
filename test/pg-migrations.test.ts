/**
 * The PostgreSQL migrations (migrations/pg/, applied by migratePg) on a fresh database: the same
 * tables, columns, indexes and triggers as SQLite after migrate(), the trigger-kept counters (views
 * over delta rows answering as SQLite's tables, without hot rows), and the runner's contract (once,
 * under a lock, refusing a newer binary's database). Runs on a throwaway cluster
 * (test/support/postgres.ts); skipped, with one line saying why, without one.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, it } from "bun:test";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import type postgres from "postgres";
import { DatabaseOpenError } from "../src/db/client";
import { migrate, newerBinaryMessage } from "../src/db/migrate";
import { migratePg } from "../src/db/migrate-pg";
import { embeddedPgMigrations } from "../src/db/migrations.generated";
import { openPgDatabase } from "../src/db/pg-database";
import * as pgSchema from "../src/db/schema/pg";
import { drainSearchBacklog } from "../src/db/search";
import { contactLabel } from "../src/db/search/text";
import { createPgClient } from "../src/db/store/postgres";
import { freshDatabase, testPostgres, testsRunOn } from "./support/postgres";

const pg = testsRunOn("postgres") ? await testPostgres() : null;
if (pg && "skip" in pg) console.log(`PostgreSQL migrations SKIPPED: ${pg.skip}`);
const adminUrl = pg && "url" in pg ? pg.url : undefined;

const clients: postgres.Sql[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.end()));
});

/** A client on a new empty database of the cluster. */
async function freshClient(url?: string): Promise<postgres.Sql> {
  const client = createPgClient(url ?? (await freshDatabase(adminUrl as string)), { max: 4 });
  clients.push(client);
  return client;
}

/** The SQLite schema the PostgreSQL one must match: a fresh database after migrate(). */
function sqliteSchema() {
  const sqlite = new Database(":memory:");
  migrate(sqlite);
  const objects = sqlite
    .query<{ type: string; name: string; tbl_name: string }, []>(
      "SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'",
    )
    .all();
  // FTS5's own tables (conversation_search_data, _idx, …) have no twin: the search table's does.
  const isFts = (table: string) => table.startsWith("conversation_search");
  const tables = new Map<string, string[]>();
  /** `table.column` → whether it is NOT NULL, and its default as written. */
  const details = new Map<string, { notNull: boolean; default: string | null }>();
  for (const { name } of objects.filter((o) => o.type === "table" && !isFts(o.name))) {
    const columns = sqlite
      .query<{ name: string; notnull: number; dflt_value: string | null; pk: number }, []>(
        `PRAGMA table_info(${name})`,
      )
      .all();
    tables.set(name, columns.map((c) => c.name).sort());
    for (const c of columns) {
      details.set(`${name}.${c.name}`, { notNull: c.notnull === 1 || c.pk > 0, default: c.dflt_value });
    }
  }
  const indexes = new Map<string, { table: string; unique: boolean; partial: boolean }>();
  for (const table of tables.keys()) {
    const list = sqlite
      .query<{ name: string; unique: number; partial: number; origin: string }, []>(
        `PRAGMA index_list(${table})`,
      )
      .all();
    for (const index of list.filter((i) => i.origin === "c")) {
      indexes.set(index.name, { table, unique: index.unique === 1, partial: index.partial === 1 });
    }
  }
  const triggers = objects
    .filter((o) => o.type === "trigger")
    .map((o) => o.name)
    .sort();
  const ftsTables = objects.filter((o) => o.type === "table" && o.name === "conversation_search");
  sqlite.close();
  return { tables, details, indexes, triggers, hasFts: ftsTables.length === 1 };
}

describe.skipIf(!adminUrl)("PostgreSQL migrations", () => {
  it("apply to a fresh database, once; a second run is a no-op", async () => {
    const client = await freshClient();
    const tags = embeddedPgMigrations.map((m) => m.tag);
    expect((await migratePg(client)).applied).toEqual(tags);
    expect((await migratePg(client)).applied).toEqual([]);
    const rows = await client<{ tag: string; hash: string; applied_at: number }[]>`
      SELECT tag, hash, applied_at FROM schema_migrations ORDER BY tag`;
    expect(rows.map((r) => r.tag)).toEqual(tags);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.hash) && typeof r.applied_at === "number")).toBe(true);
  });

  it("give every table, column, index and trigger of the SQLite schema", async () => {
    const client = await freshClient();
    await migratePg(client);
    const want = sqliteSchema();
    expect(want.tables.size).toBeGreaterThan(40);
    expect(want.indexes.size).toBeGreaterThan(80);
    expect(want.triggers.length).toBeGreaterThan(15);

    const columns = await client<
      { table_name: string; column_name: string; is_nullable: string; column_default: string | null }[]
    >`
      SELECT table_name, column_name, is_nullable, column_default
      FROM information_schema.columns WHERE table_schema = 'public'`;
    const tables = new Map<string, string[]>();
    for (const row of columns)
      tables.set(row.table_name, [...(tables.get(row.table_name) ?? []), row.column_name]);
    for (const list of tables.values()) list.sort();

    // The search table is FTS5's twin, not its copy: its own columns, checked below.
    const pgSearch = tables.get("conversation_search");
    tables.delete("conversation_search");
    // The counters have no hot rows on PostgreSQL (migration 0003): their SQLite names are views
    // (same columns, checked with the tables; a view's columns have no NOT NULL or default) over
    // append-only delta tables, which SQLite does not have (checked here), and link_versions reads
    // a sequence.
    const views = await client<{ name: string }[]>`
      SELECT table_name AS name FROM information_schema.views WHERE table_schema = 'public' ORDER BY 1`;
    const counterViews = ["audience_versions", "link_versions", "message_daily_counts"];
    expect(views.map((v) => v.name)).toEqual(counterViews);
    const deltaTables = {
      audience_version_deltas: ["contacts", "id", "workspace_id", "writes"],
      message_daily_count_deltas: ["day", "id", "n", "status", "workspace_id"],
    };
    for (const [table, names] of Object.entries(deltaTables)) {
      expect({ table, columns: tables.get(table) }).toEqual({ table, columns: names });
      tables.delete(table);
    }
    expect([...tables.keys()].sort()).toEqual([...want.tables.keys()].sort());
    for (const [table, names] of want.tables)
      expect({ table, columns: tables.get(table) }).toEqual({ table, columns: names });
    expect(want.hasFts).toBe(true);

    // The same NOT NULL and defaults (PostgreSQL writes a literal's type after it: 'USD'::text).
    // search_key is an identity column, never null, on PostgreSQL.
    const identity = new Set(["conversations.search_key"]);
    for (const row of columns) {
      const key = `${row.table_name}.${row.column_name}`;
      const lite = want.details.get(key);
      if (!lite || identity.has(key) || counterViews.includes(row.table_name)) continue;
      const given = row.column_default?.replace(/::[a-z ]+$/, "") ?? null;
      expect({ key, notNull: row.is_nullable === "NO", default: given }).toEqual({ key, ...lite });
    }
    expect(pgSearch).toEqual(["conversation_id", "id", "message_id", "text", "tsv"]);

    const indexes = await client<
      { name: string; table: string; unique: boolean; partial: boolean; primary: boolean }[]
    >`
      SELECT c.relname AS name, t.relname AS table, i.indisunique AS unique, i.indpred IS NOT NULL AS partial,
             i.indisprimary AS primary
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = 'public' AND t.relname <> 'conversation_search'`;
    // The delta tables' indexes serve the views' reads (by workspace; analytics' status and days).
    const deltaIndexes = indexes.filter((i) => i.table in deltaTables && !i.primary).map((i) => i.name);
    expect(deltaIndexes.sort()).toEqual([
      "audience_version_deltas_workspace_idx",
      "message_daily_count_deltas_read_idx",
    ]);
    const got = new Map(
      indexes
        .filter((i) => !i.primary && !(i.table in deltaTables))
        .map((i) => [i.name, { table: i.table, unique: i.unique, partial: i.partial }]),
    );
    expect([...got.keys()].sort()).toEqual([...want.indexes.keys()].sort());
    for (const [name, index] of want.indexes) expect({ name, ...got.get(name) }).toEqual({ name, ...index });

    const searchIndexes = await client<{ indexname: string; indexdef: string }[]>`
      SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'conversation_search'`;
    expect(searchIndexes.some((i) => /USING gin \(tsv\)/.test(i.indexdef))).toBe(true);

    const triggers = await client<{ name: string }[]>`
      SELECT DISTINCT trigger_name AS name FROM information_schema.triggers WHERE trigger_schema = 'public'`;
    // conversations_search_key has no twin: search_key is an identity column on PostgreSQL. The
    // *_changes triggers are PostgreSQL's own: they notify the other processes' caches (those of
    // offers and tracked links: the writes that bump link_versions, a view without triggers).
    const changeTriggers = [
      "api_keys_changes",
      "offers_changes",
      "tracked_links_changes",
      "webhooks_changes",
      "workspaces_changes",
    ];
    expect(triggers.map((t) => t.name).sort()).toEqual(
      [...want.triggers.filter((t) => t !== "conversations_search_key"), ...changeTriggers].sort(),
    );
  });

  it("keep the counters as SQLite's triggers do, and give threads their search key", async () => {
    const client = await freshClient();
    await migratePg(client);
    const db = drizzle({ client });
    const s = pgSchema;
    const at = Date.UTC(2026, 0, 2, 12);
    const day = Math.floor(at / 86_400_000);
    const audience = async () =>
      (await db.select().from(s.audienceVersions).where(eq(s.audienceVersions.workspaceId, "w1")))[0];

    const contact = (id: string, phone: string) => ({
      id,
      workspaceId: "w1",
      phoneNumber: phone,
      source: "api",
      fields: { zeta: 1, alpha: "x" },
      createdAt: at,
      updatedAt: at,
    });
    await db.insert(s.contacts).values(contact("c1", "+14155550101"));
    expect(await audience()).toEqual({ workspaceId: "w1", version: 1, contactCount: 1 });
    await db.insert(s.contacts).values([contact("c2", "+14155550102"), contact("c3", "+14155550103")]);
    expect(await audience()).toEqual({ workspaceId: "w1", version: 3, contactCount: 3 });
    await db.update(s.contacts).set({ firstName: "José" }).where(eq(s.contacts.id, "c1"));
    expect(await audience()).toEqual({ workspaceId: "w1", version: 4, contactCount: 3 });
    await db.delete(s.contacts).where(eq(s.contacts.id, "c3"));
    expect(await audience()).toEqual({ workspaceId: "w1", version: 5, contactCount: 2 });
    await db.insert(s.lists).values({ id: "l1", workspaceId: "w1", name: "L", createdAt: at, updatedAt: at });
    await db
      .insert(s.listMembers)
      .values({ listId: "l1", contactId: "c1", workspaceId: "w1", createdAt: at });
    expect(await audience()).toEqual({ workspaceId: "w1", version: 6, contactCount: 2 });
    // Deleting a contact cascades to its memberships: both bump.
    await db.delete(s.contacts).where(eq(s.contacts.id, "c1"));
    expect(await audience()).toEqual({ workspaceId: "w1", version: 8, contactCount: 1 });

    // Values come back as the SQLite tables give them (booleans, numbers, JSON objects).
    const [c2] = await db.select().from(s.contacts).where(eq(s.contacts.id, "c2"));
    expect(c2.optedIn).toBe(true);
    expect(c2.createdAt).toBe(at);
    expect(c2.fields).toEqual({ zeta: 1, alpha: "x" });
    await db
      .insert(s.events)
      .values({ id: "e1", workspaceId: "w1", type: "t", data: { zeta: 1, alpha: 2 }, createdAt: at });
    const [event] = await db.select().from(s.events);
    expect(Object.keys(event.data as object)).toEqual(["zeta", "alpha"]); // json keeps the key order

    const message = (id: string, status: string, createdAt = at, conversationId: string | null = null) => ({
      id,
      workspaceId: "w1",
      direction: "outbound",
      sender: "api",
      fromNumber: "+14155550000",
      toNumber: "+14155550102",
      body: "Hello",
      status,
      segments: 1,
      encoding: "GSM-7",
      conversationId,
      createdAt,
      updatedAt: createdAt,
    });
    const counts = async () =>
      (
        await client<{ day: number; status: string; n: number }[]>`
          SELECT day, status, n FROM message_daily_counts WHERE workspace_id = 'w1' ORDER BY day, status`
      ).map((r) => `${r.day - day}:${r.status}=${r.n}`);
    await db
      .insert(s.messages)
      .values([message("m1", "queued"), message("m2", "queued"), message("m3", "sent")]);
    await db.insert(s.messages).values(message("m4", "queued", at + 86_400_000));
    expect(await counts()).toEqual(["0:queued=2", "0:sent=1", "1:queued=1"]);
    await db.update(s.messages).set({ status: "sent" }).where(eq(s.messages.id, "m1"));
    await db.update(s.messages).set({ body: "unchanged status" }).where(eq(s.messages.id, "m2"));
    expect(await counts()).toEqual(["0:queued=1", "0:sent=2", "1:queued=1"]);
    await db.delete(s.messages).where(eq(s.messages.id, "m3"));
    expect(await counts()).toEqual(["0:queued=1", "0:sent=1", "1:queued=1"]);

    // link_versions: changes and removals of offers and tracked links, not their creation.
    const linkVersion = async () => (await db.select().from(s.linkVersions))[0]?.version ?? 0;
    const offer = {
      id: "o1",
      workspaceId: "w1",
      name: "O",
      destinationUrl: "https://example.com",
      currency: "USD",
      status: "active",
      code: "abc",
      createdAt: at,
      updatedAt: at,
    };
    await db.insert(s.offers).values(offer);
    await db.insert(s.trackedLinks).values({ code: "k1", workspaceId: "w1", offerId: "o1", createdAt: at });
    expect(await linkVersion()).toBe(0);
    await db.update(s.offers).set({ status: "paused" }).where(eq(s.offers.id, "o1"));
    await db.update(s.trackedLinks).set({ contactId: "c2" }).where(eq(s.trackedLinks.code, "k1"));
    await db.delete(s.trackedLinks).where(eq(s.trackedLinks.code, "k1"));
    expect(await linkVersion()).toBe(3);

    // Threads get the next search key without one; they and their messages wait in the backlog.
    // One open thread per contact (conversations_open_contact_idx): the second one is closed.
    const thread = (id: string, status = "open") => ({
      id,
      workspaceId: "w1",
      contactId: "c2",
      status,
      createdAt: at,
      updatedAt: at,
    });
    const [t1] = await db.insert(s.conversations).values(thread("t1")).returning();
    const [t2] = await db.insert(s.conversations).values(thread("t2", "closed")).returning();
    expect(t1.searchKey).toBeGreaterThan(0);
    expect(t2.searchKey).toBeGreaterThan(t1.searchKey);
    expect(t1.needsAttention).toBe(false);
    await db.insert(s.messages).values(message("m5", "received", at, "t1"));
    const backlog = await client<
      { kind: number; ref: string }[]
    >`SELECT kind, ref FROM search_backlog ORDER BY seq`;
    expect(backlog.map((b) => `${b.kind}:${b.ref}`)).toEqual(["0:t1", "0:t2", "1:m5"]);
  });

  it("answer the counters' reads as SQLite's tables do, before and after the roll-up", async () => {
    const client = await freshClient();
    await migratePg(client);
    const sqlite = new Database(":memory:");
    sqlite.exec("PRAGMA foreign_keys = ON");
    migrate(sqlite);
    const at = Date.UTC(2026, 0, 2, 12);
    const later = at + 86_400_000;
    const contact = (id: string, ws: string) =>
      `INSERT INTO contacts (id, workspace_id, phone_number, source, fields, created_at, updated_at)
       VALUES ('${id}', '${ws}', '+1415555${id.padStart(4, "0")}', 'api', '{}', ${at}, ${at})`;
    const message = (id: string, ws: string, status: string, createdAt = at) =>
      `INSERT INTO messages (id, workspace_id, direction, sender, from_number, to_number, body, status, segments,
         encoding, created_at, updated_at)
       VALUES ('${id}', '${ws}', 'outbound', 'api', '+1', '+2', 'Hi', '${status}', 1, 'GSM-7', ${createdAt}, ${createdAt})`;
    const status = (id: string, to: string) => `UPDATE messages SET status = '${to}' WHERE id = '${id}'`;
    const writes = [
      contact("c1", "w1"),
      contact("c2", "w1"),
      contact("c3", "w2"),
      "UPDATE contacts SET first_name = 'Ada' WHERE id = 'c2'",
      `INSERT INTO lists (id, workspace_id, name, created_at, updated_at) VALUES ('l1', 'w1', 'L', ${at}, ${at})`,
      `INSERT INTO list_members (list_id, contact_id, workspace_id, created_at) VALUES ('l1', 'c1', 'w1', ${at}), ('l1', 'c2', 'w1', ${at})`,
      "DELETE FROM contacts WHERE id = 'c1'", // and its membership, by cascade: two writes
      "DELETE FROM list_members WHERE contact_id = 'c2'",
      message("m1", "w1", "queued"),
      message("m2", "w1", "queued"),
      message("m3", "w1", "sent"),
      message("m4", "w2", "queued", later),
      status("m1", "sent"),
      status("m2", "sent"),
      status("m1", "delivered"),
      "UPDATE messages SET body = 'same status' WHERE id = 'm3'",
      status("m4", "failed"),
      `UPDATE messages SET created_at = ${later} WHERE id = 'm3'`,
      "DELETE FROM messages WHERE id = 'm2'",
      `INSERT INTO offers (id, workspace_id, name, destination_url, currency, status, code, created_at, updated_at)
       VALUES ('o1', 'w1', 'O', 'https://example.com', 'USD', 'active', 'abc', ${at}, ${at})`,
      `INSERT INTO tracked_links (code, workspace_id, offer_id, created_at) VALUES ('k1', 'w1', 'o1', ${at}), ('k2', 'w1', 'o1', ${at})`,
      "UPDATE offers SET status = 'paused' WHERE id = 'o1'",
      "UPDATE tracked_links SET contact_id = 'c2' WHERE offer_id = 'o1'",
      "DELETE FROM tracked_links WHERE code = 'k1'",
      contact("c4", "w2"),
      status("m1", "failed"),
    ];
    // What the domain reads: whole tables, and analytics' sum over a workspace, status and days.
    const reads = [
      "SELECT workspace_id, day, status, n FROM message_daily_counts ORDER BY workspace_id, day, status",
      "SELECT workspace_id, version, contact_count FROM audience_versions ORDER BY workspace_id",
      "SELECT id, version FROM link_versions",
      "SELECT version FROM audience_versions WHERE workspace_id = 'w3'",
      ...["queued", "sent", "delivered", "failed"].map(
        (st) =>
          `SELECT coalesce(sum(n), 0) AS n FROM message_daily_counts
           WHERE workspace_id = 'w1' AND status = '${st}' AND day >= ${Math.floor(at / 86_400_000)} AND day < ${Math.floor(later / 86_400_000) + 1}`,
      ),
    ];
    const answers = async (): Promise<{ sqlite: unknown[][]; postgres: unknown[][] }> => ({
      sqlite: reads.map((q) => sqlite.query(q).all()),
      postgres: await Promise.all(reads.map(async (q) => [...(await client.unsafe(q))])),
    });
    const rollUp = () => client`SELECT outreach_roll_up_counters()`;
    const deltaRows = async () => {
      const [row] = await client<{ n: number }[]>`
        SELECT (SELECT count(*) FROM message_daily_count_deltas) + (SELECT count(*) FROM audience_version_deltas) AS n`;
      return row.n;
    };
    for (const [i, write] of writes.entries()) {
      sqlite.exec(write);
      await client.unsafe(write);
      const { sqlite: want, postgres: got } = await answers();
      expect({ i, write, got }).toEqual({ i, write, got: want });
      if (i === 12) {
        // Halfway, and again at the end: the roll-up folds the deltas and changes no answer.
        const before = await deltaRows();
        await rollUp();
        expect(await deltaRows()).toBeLessThan(before);
        expect((await answers()).postgres).toEqual(want);
      }
    }
    const { sqlite: want } = await answers();
    expect(want[1]).toEqual([
      { workspace_id: "w1", version: 8, contact_count: 1 },
      { workspace_id: "w2", version: 2, contact_count: 2 },
    ]);
    expect(want[2]).toEqual([{ id: 1, version: 4 }]);
    await rollUp();
    expect((await answers()).postgres).toEqual(want);
    // One row per key is left (a key whose sum is 0 keeps its row, as on SQLite).
    const [{ n: keys }] = await client<{ n: number }[]>`
      SELECT (SELECT count(*) FROM message_daily_counts) + (SELECT count(*) FROM audience_versions) AS n`;
    expect(await deltaRows()).toBe(keys);
    await rollUp();
    expect((await answers()).postgres).toEqual(want);
    sqlite.close();
  });

  it("carry the counters' rows over to the views", async () => {
    const client = await freshClient();
    await migratePg(client, embeddedPgMigrations.slice(0, 3));
    const at = Date.UTC(2026, 0, 2, 12);
    for (const [id, ws] of [
      ["c1", "w1"],
      ["c2", "w1"],
      ["c3", "w2"],
    ])
      await client`INSERT INTO contacts (id, workspace_id, phone_number, source, fields, created_at, updated_at)
        VALUES (${id}, ${ws}, ${`+1${id}`}, 'api', '{}', ${at}, ${at})`;
    await client`DELETE FROM contacts WHERE id = 'c2'`;
    for (const [id, status] of [
      ["m1", "queued"],
      ["m2", "queued"],
      ["m3", "sent"],
    ])
      await client`INSERT INTO messages (id, workspace_id, direction, sender, from_number, to_number, body, status,
        segments, encoding, created_at, updated_at)
        VALUES (${id}, 'w1', 'outbound', 'api', '+1', '+2', 'Hi', ${status}, 1, 'GSM-7', ${at}, ${at})`;
    await client`UPDATE messages SET status = 'sent' WHERE id = 'm1'`;
    await client`INSERT INTO offers (id, workspace_id, name, destination_url, currency, status, code, created_at, updated_at)
      VALUES ('o1', 'w1', 'O', 'https://example.com', 'USD', 'active', 'abc', ${at}, ${at})`;
    await client`UPDATE offers SET status = 'paused' WHERE id = 'o1'`;
    await client`UPDATE offers SET status = 'active' WHERE id = 'o1'`;
    const reads = [
      "SELECT workspace_id, day, status, n FROM message_daily_counts ORDER BY workspace_id, day, status",
      "SELECT workspace_id, version, contact_count FROM audience_versions ORDER BY workspace_id",
      "SELECT id, version FROM link_versions",
    ];
    const answers = async (): Promise<unknown[][]> =>
      Promise.all(reads.map(async (q) => [...(await client.unsafe(q))]));
    const before = await answers();
    expect(before[2]).toEqual([{ id: 1, version: 2 }]);
    expect((await migratePg(client)).applied).toEqual(embeddedPgMigrations.slice(3).map((m) => m.tag));
    expect(await answers()).toEqual(before);
    // And the next writes count on from there.
    await client`UPDATE offers SET status = 'paused' WHERE id = 'o1'`;
    await client`INSERT INTO contacts (id, workspace_id, phone_number, source, fields, created_at, updated_at)
      VALUES ('c4', 'w1', '+1c4', 'api', '{}', ${at}, ${at})`;
    const after = await answers();
    expect(after[2]).toEqual([{ id: 1, version: 3 }]);
    expect(after[1]).toEqual([
      { workspace_id: "w1", version: 4, contact_count: 2 },
      { workspace_id: "w2", version: 1, contact_count: 1 },
    ]);
  });

  it("fold duplicate ledger rows into the first and leave one open thread per contact (unique backstops)", async () => {
    const client = await freshClient();
    const index = embeddedPgMigrations.findIndex((m) =>
      m.tag.endsWith("_campaign_sends_open_threads_unique"),
    );
    expect(index).toBeGreaterThan(0);
    await migratePg(client, embeddedPgMigrations.slice(0, index));
    for (const [id, message, carrierId, at] of [
      ["s2", "m1", "SM-second", 20],
      ["s1", "m1", "SM-first", 10],
      ["s3", "m1", "SM-third", 30],
      ["s4", "m2", "SM-alone", 10],
    ] as const)
      await client`INSERT INTO sandbox_sends (id, workspace_id, message_id, from_number, to_number, body,
        carrier_message_id, accepted_at, deliver_at, outcome)
        VALUES (${id}, 'w', ${message}, '+1', '+2', 'x', ${carrierId}, ${at}, 0, 'DELIVERED')`;
    for (const [id, contact, status, at] of [
      ["t-old", "c1", "open", 1],
      ["t-new", "c1", "open", 2],
      ["t-closed", "c1", "closed", 3],
      ["t-other", "c2", "open", 1],
    ] as const)
      await client`INSERT INTO conversations (id, workspace_id, contact_id, status, created_at, updated_at)
        VALUES (${id}, 'w', ${contact}, ${status}, ${at}, 0)`;
    expect((await migratePg(client, embeddedPgMigrations.slice(0, index + 1))).applied).toEqual([
      embeddedPgMigrations[index].tag,
    ]);
    expect([
      ...(await client`SELECT message_id, carrier_message_id, handoffs FROM sandbox_sends ORDER BY message_id`),
    ]).toEqual([
      { message_id: "m1", carrier_message_id: "SM-first", handoffs: 3 },
      { message_id: "m2", carrier_message_id: "SM-alone", handoffs: 1 },
    ]);
    expect([...(await client`SELECT id, status FROM conversations ORDER BY id`)]).toEqual([
      { id: "t-closed", status: "closed" },
      { id: "t-new", status: "open" },
      { id: "t-old", status: "closed" },
      { id: "t-other", status: "open" },
    ]);
  });

  it("note every thread for the server to write its label again (migration 0009)", async () => {
    const url = await freshDatabase(adminUrl as string);
    const client = await freshClient(url);
    const index = embeddedPgMigrations.findIndex((m) => m.tag.endsWith("_search_labels_from_server"));
    expect(index).toBeGreaterThan(0);
    await migratePg(client, embeddedPgMigrations.slice(0, index));
    // Before: the database wrote the label, names as written, and a rename rewrote it at once.
    await client`INSERT INTO contacts (id, workspace_id, phone_number, first_name, last_name, source, fields, created_at, updated_at)
      VALUES ('c1', 'w1', '+14155550123', 'Søren', 'ÆRØ-Hansen', 'api', '{}', 0, 0)`;
    await client`INSERT INTO conversations (id, workspace_id, contact_id, status, created_at, updated_at)
      VALUES ('t1', 'w1', 'c1', 'open', 0, 0)`;
    await client`INSERT INTO conversation_search (conversation_id, message_id, text)
      SELECT cv.id, NULL, conversation_search_label(c.first_name, c.last_name, c.phone_number)
      FROM conversations cv JOIN contacts c ON c.id = cv.contact_id`;
    await client`DELETE FROM search_backlog`;
    const label = async () =>
      (await client<{ text: string }[]>`SELECT text FROM conversation_search WHERE message_id IS NULL`).map(
        (r) => r.text,
      );
    expect(await label()).toEqual([
      "Søren ÆRØ Hansen 14155550123 4155550123 155550123 55550123 5550123 550123 50123 0123 123 23 3",
    ]);

    expect((await migratePg(client)).applied).toEqual(embeddedPgMigrations.slice(index).map((m) => m.tag));
    const [{ n }] = await client<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'conversation_search_label'`;
    expect(n).toBe(0);
    expect([...(await client`SELECT kind, ref FROM search_backlog`)]).toEqual([{ kind: 0, ref: "t1" }]);
    const handle = await openPgDatabase(url, { max: 1, migrate: false });
    try {
      expect(await drainSearchBacklog(handle.db, 100)).toBe(1);
    } finally {
      await handle.close();
    }
    expect(await label()).toEqual([contactLabel("Søren", "ÆRØ-Hansen", "+14155550123")]);
    expect(await label()).toEqual([
      "soren aero hansen 14155550123 4155550123 155550123 55550123 5550123 550123 50123 0123 123 23 3",
    ]);
  });

  it("notify the caches of changes and removals of offers and tracked links", async () => {
    const client = await freshClient();
    await migratePg(client);
    const at = Date.UTC(2026, 0, 2, 12);
    await client`INSERT INTO offers (id, workspace_id, name, destination_url, currency, status, code, created_at, updated_at)
      VALUES ('o1', 'w1', 'O', 'https://example.com', 'USD', 'active', 'abc', ${at}, ${at})`;
    await client`INSERT INTO tracked_links (code, workspace_id, offer_id, created_at) VALUES ('k1', 'w1', 'o1', ${at})`;
    const heard: string[] = [];
    const listener = await client.listen("outreach_changes", (payload) => heard.push(payload));
    const settle = async (n: number) => {
      for (let i = 0; i < 100 && heard.length < n; i++) await Bun.sleep(10);
    };
    await client`UPDATE offers SET status = 'paused' WHERE id = 'o1'`;
    await settle(1);
    await client`DELETE FROM tracked_links WHERE code = 'k1'`;
    await settle(2);
    await listener.unlisten();
    expect(heard).toEqual(["offers", "tracked_links"]);
  });

  it("let concurrent status moves of one workspace and day commit in opposite orders, rolled up meanwhile", async () => {
    const client = await freshClient();
    await migratePg(client);
    const at = Date.UTC(2026, 0, 2, 12);
    for (const [id, status] of [
      ["m1", "queued"],
      ["m2", "sent"],
      ["m3", "queued"],
      ["m4", "sent"],
    ])
      await client`INSERT INTO messages (id, workspace_id, direction, sender, from_number, to_number, body, status,
        segments, encoding, created_at, updated_at)
        VALUES (${id}, 'w1', 'outbound', 'api', '+1', '+2', 'Hi', ${status}, 1, 'GSM-7', ${at}, ${at})`;
    await client`INSERT INTO contacts (id, workspace_id, phone_number, source, fields, created_at, updated_at)
      VALUES ('c1', 'w1', '+14155550101', 'api', '{}', ${at}, ${at})`;
    await client`INSERT INTO offers (id, workspace_id, name, destination_url, currency, status, code, created_at, updated_at)
      VALUES ('o1', 'w1', 'O', 'https://example.com', 'USD', 'active', 'abc', ${at}, ${at}),
             ('o2', 'w1', 'O', 'https://example.com', 'USD', 'active', 'def', ${at}, ${at})`;
    const [a, b] = [await client.reserve(), await client.reserve()];
    let committed = false;
    try {
      // Any wait for the other's row lock fails at once instead of waiting for its commit.
      for (const c of [a, b]) await c`BEGIN; SET LOCAL lock_timeout = '500ms'`.simple();
      // A moves queued→sent then sent→delivered; B the other way round, interleaved: with the
      // counters as rows, B's first move would wait for A's locks (and each for the other's).
      await a`UPDATE messages SET status = 'sent' WHERE id = 'm1'`;
      await b`UPDATE messages SET status = 'delivered' WHERE id = 'm2'`;
      await a`UPDATE messages SET status = 'delivered' WHERE id = 'm4'`;
      await b`UPDATE messages SET status = 'sent' WHERE id = 'm3'`;
      // The audience and the links: the same workspace's version, the one link version.
      await a`UPDATE contacts SET first_name = 'A' WHERE id = 'c1'`;
      await b`INSERT INTO contacts (id, workspace_id, phone_number, source, fields, created_at, updated_at)
        VALUES ('c2', 'w1', '+14155550102', 'api', '{}', ${at}, ${at})`;
      await a`UPDATE offers SET status = 'paused' WHERE id = 'o1'`;
      await b`UPDATE offers SET status = 'paused' WHERE id = 'o2'`;
      // A roll-up meanwhile folds the committed deltas without waiting for either, and leaves theirs.
      await client.begin(async (t) => {
        await t`SET LOCAL lock_timeout = '500ms'`;
        await t`SELECT outreach_roll_up_counters()`;
      });
      await a`COMMIT`;
      await b`COMMIT`;
      committed = true;
    } finally {
      if (!committed) for (const c of [a, b]) await c`ROLLBACK`.catch(() => {});
      a.release();
      b.release();
    }
    const counts = await client<{ status: string; n: number }[]>`
      SELECT status, n FROM message_daily_counts WHERE workspace_id = 'w1' ORDER BY status`;
    expect(counts.map((r) => `${r.status}=${r.n}`)).toEqual(["delivered=2", "queued=0", "sent=2"]);
    const [audience] =
      await client`SELECT version, contact_count FROM audience_versions WHERE workspace_id = 'w1'`;
    expect(audience).toEqual({ version: 3, contact_count: 2 });
    const [link] = await client`SELECT version FROM link_versions WHERE id = 1`;
    expect(link.version).toBe(2);
  });

  it("index thread search without accents (the table the search module fills)", async () => {
    const client = await freshClient();
    await migratePg(client);
    await client`INSERT INTO conversation_search (conversation_id, message_id, text)
      VALUES ('t1', NULL, ${contactLabel("José", "Müller", "+14155550123")}), ('t1', 'm1', 'Crème brûlée tonight?')`;
    const match = async (query: string) =>
      (
        await client<{ message_id: string | null }[]>`
          SELECT message_id FROM conversation_search WHERE tsv @@ to_tsquery('simple', ${query}) ORDER BY id`
      ).map((r) => r.message_id ?? "label");
    expect(await match("jose:* & muller:*")).toEqual(["label"]);
    expect(await match("5550123:*")).toEqual(["label"]);
    expect(await match("creme:* & brul:*")).toEqual(["m1"]);

    // A new thread, and its contact's new name or number, note the thread for the drain (which
    // writes its label); an update that changes neither notes nothing. Deleting a message or a
    // thread drops its rows.
    await client`INSERT INTO contacts (id, workspace_id, phone_number, source, fields, created_at, updated_at)
      VALUES ('c1', 'w1', '+14155550123', 'api', '{}', 0, 0)`;
    await client`INSERT INTO conversations (id, workspace_id, contact_id, status, created_at, updated_at)
      VALUES ('t2', 'w1', 'c1', 'open', 0, 0)`;
    const backlog = async () =>
      (await client<{ kind: number; ref: string }[]>`SELECT kind, ref FROM search_backlog ORDER BY seq`).map(
        (r) => `${r.kind}:${r.ref}`,
      );
    expect(await backlog()).toEqual(["0:t2"]);
    await client`UPDATE contacts SET first_name = 'Zoë' WHERE id = 'c1'`;
    await client`UPDATE contacts SET first_name = 'Zoë', last_name = NULL, opted_in = true WHERE id = 'c1'`;
    await client`UPDATE contacts SET phone_number = '+14155550124' WHERE id = 'c1'`;
    expect(await backlog()).toEqual(["0:t2", "0:t2", "0:t2"]);
    await client`INSERT INTO conversation_search (conversation_id, message_id, text)
      VALUES ('t2', NULL, ${contactLabel("Zoë", null, "+14155550124")})`;
    expect(await match("zoe:*")).toEqual(["label"]);
    await client`INSERT INTO conversation_search (conversation_id, message_id, text) VALUES ('t2', 'm2', 'see you')`;
    await client`INSERT INTO messages (id, workspace_id, direction, sender, from_number, to_number, body, status,
      segments, encoding, conversation_id, created_at, updated_at)
      VALUES ('m2', 'w1', 'inbound', 'contact', '+1', '+2', 'see you', 'received', 1, 'GSM-7', 't2', 0, 0)`;
    expect(await match("see:*")).toEqual(["m2"]);
    await client`DELETE FROM messages WHERE id = 'm2'`;
    expect(await match("see:*")).toEqual([]);
    await client`DELETE FROM conversations WHERE id = 't2'`;
    expect(await match("zoe:*")).toEqual([]);
  });

  it("two processes starting together migrate once", async () => {
    const url = await freshDatabase(adminUrl as string);
    const [a, b] = [await freshClient(url), await freshClient(url)];
    const results = await Promise.all([migratePg(a), migratePg(b)]);
    const applied = results.map((r) => r.applied.length).sort();
    expect(applied).toEqual([0, embeddedPgMigrations.length]);
    const [{ n }] = await a<{ n: number }[]>`SELECT count(*) AS n FROM schema_migrations`;
    expect(n).toBe(embeddedPgMigrations.length);
  });

  it("refuse a database migrated by a newer binary, and write nothing", async () => {
    const client = await freshClient();
    const future = { tag: "9999_from_the_future", sql: "CREATE TABLE later_table (id text PRIMARY KEY)" };
    await migratePg(client, [...embeddedPgMigrations, future]);
    const error = await migratePg(client).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseOpenError);
    expect((error as Error).message).toBe(newerBinaryMessage(future.tag));
    expect((error as Error).message).toContain("upgrade the binary");
    const [{ n }] = await client<{ n: number }[]>`SELECT count(*) AS n FROM schema_migrations`;
    expect(n).toBe(embeddedPgMigrations.length + 1);
  });

  it("leave the database as it was when a migration fails", async () => {
    const client = await freshClient();
    const broken = [
      ...embeddedPgMigrations,
      {
        tag: "9999_broken",
        sql: "CREATE TABLE half_done (id text);\n--> statement-breakpoint\nSELECT no_such_function()",
      },
    ];
    await expect(migratePg(client, broken)).rejects.toThrow(/no_such_function/);
    const [{ n }] = await client<{ n: number }[]>`
      SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'`;
    expect(n).toBe(0);
    expect((await migratePg(client)).applied).toEqual(embeddedPgMigrations.map((m) => m.tag));
  });
});
