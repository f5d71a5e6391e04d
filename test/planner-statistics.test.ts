import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { sql } from "drizzle-orm";
import { analyzeBehindTables } from "../src/db/planner-statistics";
import { contacts } from "../src/db/schema";
import { newId } from "../src/lib/ids";
import { testsRunOn } from "./support/postgres";
import { startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

/** Writes `n` contacts of a new workspace straight into the database, in one transaction. */
async function writeContacts(n: number, server: TestServer = s) {
  const ws = await server.newWorkspace("Grows fast");
  const now = Date.now();
  const rows = Array.from({ length: n }, (_, i) => ({
    id: newId(),
    workspaceId: ws.workspaceId,
    phoneNumber: `+1415${String(3_000_000 + i).padStart(7, "0")}`,
    source: "import",
    optedIn: true,
    fields: {},
    createdAt: now,
    updatedAt: now,
  }));
  const { db } = server.server.handle;
  await db.transaction(async (tx) => {
    for (let i = 0; i < rows.length; i += 500)
      await tx
        .insert(contacts)
        .values(rows.slice(i, i + 500))
        .run();
  });
}

/** The rows PostgreSQL's statistics count in `table` (reported by each backend within seconds). */
async function liveRows(table: string): Promise<number> {
  const [row] = await s.server.handle.db.all<{ n: number }>(
    sql`SELECT n_live_tup AS n FROM pg_stat_user_tables WHERE relname = ${table} AND schemaname = current_schema()`,
  );
  return Number(row?.n ?? 0);
}

describe("planner statistics", () => {
  it.skipIf(!testsRunOn("postgres"))(
    "analyzes a table that grew past its statistics, once, and leaves it until it grows again",
    async () => {
      const { db } = s.server.handle;
      // Autovacuum's own analysis (within its minute, any time) would count the rows too, and the
      // table would then not have grown past it: only the servers' analyses here.
      await db.run(sql`ALTER TABLE contacts SET (autovacuum_enabled = false)`);
      await writeContacts(3000);
      // The loops below wait up to 25 s: a backend that goes idle reports its row counts to
      // pg_stat_user_tables within a second, or up to 10 s later when it reported just before.
      // The writer's counts reach pg_stat_user_tables within a second or so; the server's own
      // keeper (every few seconds) may be the one that analyzes it.
      const lastAnalyzed = async () =>
        (
          await db.all<{ at: string | null }>(
            sql`SELECT last_analyze AS at FROM pg_stat_user_tables WHERE relname = 'contacts' AND schemaname = current_schema()`,
          )
        )[0]?.at ?? null;
      let analyzed = false;
      for (let i = 0; i < 250 && !analyzed; i++) {
        analyzed = (await analyzeBehindTables(db)).includes("contacts") || (await lastAnalyzed()) !== null;
        if (!analyzed) await Bun.sleep(100);
      }
      expect(analyzed).toBe(true);
      expect(await analyzeBehindTables(db)).not.toContain("contacts");
      // A coarse analysis: 3,000 distinct numbers get a histogram of 11 bounds, not 101.
      const [bounds] = await db.all<{ n: number }>(sql`
        SELECT array_length(histogram_bounds::text::text[], 1) AS n FROM pg_stats
        WHERE tablename = 'contacts' AND attname = 'phone_number' AND schemaname = current_schema()`);
      expect(Number(bounds?.n)).toBeLessThanOrEqual(11);
      expect(Number(bounds?.n)).toBeGreaterThan(1);
      const first = await lastAnalyzed();
      // Every row changed, none added: the table did not grow, so not again.
      await db.run(sql`UPDATE contacts SET first_name = 'Changed'`);
      // 1,000 more rows are under half of the 3,000 analyzed: not yet (nor by the server's keeper).
      await writeContacts(1000);
      for (let i = 0; i < 250 && (await liveRows("contacts")) < 4000; i++) await Bun.sleep(100);
      expect(await liveRows("contacts")).toBeGreaterThanOrEqual(4000);
      await Bun.sleep(1500); // a round of the server's keeper
      expect(await analyzeBehindTables(db)).not.toContain("contacts");
      expect(await lastAnalyzed()).toEqual(first);
      // 1,600 more than the 3,000 analyzed: again (by this call or by the server's keeper).
      await writeContacts(600);
      let again = false;
      for (let i = 0; i < 250 && !again; i++) {
        again = (await analyzeBehindTables(db)).includes("contacts") || (await lastAnalyzed()) !== first;
        if (!again) await Bun.sleep(100);
      }
      expect(again).toBe(true);
    },
    90_000,
  );

  it.skipIf(!testsRunOn("postgres"))(
    "leaves the thread search's table to autovacuum however it grows",
    async () => {
      const { db } = s.server.handle;
      await db.run(sql`
      INSERT INTO conversation_search (conversation_id, message_id, text)
      SELECT 'c' || i, 'm' || i, 'words ' || i FROM generate_series(1, 3000) AS i`);
      for (let i = 0; i < 250 && (await liveRows("conversation_search")) < 3000; i++) await Bun.sleep(100);
      expect(await liveRows("conversation_search")).toBeGreaterThanOrEqual(3000);
      expect(await analyzeBehindTables(db)).not.toContain("conversation_search");
    },
    60_000,
  );

  it.skipIf(!testsRunOn("postgres"))(
    "are kept by a server without a worker (WORKER=false) too: its reads are planned from them",
    async () => {
      const alone = await startTestServer({}, { WORKER: "false" });
      try {
        const { db } = alone.server.handle;
        await writeContacts(3000, alone);
        // Nobody else analyzes (last_analyze is set by ANALYZE, not by autovacuum): the server's
        // own keeper, once the writer's counts are reported (up to ~10 s).
        let at: string | null = null;
        for (let i = 0; i < 250 && at === null; i++) {
          [{ at }] = await db.all<{ at: string | null }>(
            sql`SELECT last_analyze AS at FROM pg_stat_user_tables WHERE relname = 'contacts' AND schemaname = current_schema()`,
          );
          if (at === null) await Bun.sleep(100);
        }
        expect(at).not.toBeNull();
      } finally {
        await alone.stop();
      }
    },
    60_000,
  );
});
