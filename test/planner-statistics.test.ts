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
async function writeContacts(n: number) {
  const ws = await s.newWorkspace("Grows fast");
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
  const { db } = s.server.handle;
  await db.transaction(async (tx) => {
    for (let i = 0; i < rows.length; i += 500)
      await tx
        .insert(contacts)
        .values(rows.slice(i, i + 500))
        .run();
  });
}

describe("planner statistics", () => {
  it.skipIf(!testsRunOn("postgres"))(
    "analyzes a table that grew past its statistics, once, and leaves it until it grows again",
    async () => {
      const { db } = s.server.handle;
      await writeContacts(3000);
      // The writer's counts reach pg_stat_user_tables within a second or so; the server's own
      // keeper (every few seconds) may be the one that analyzes it.
      const lastAnalyzed = async () =>
        (
          await db.all<{ at: string | null }>(
            sql`SELECT last_analyze AS at FROM pg_stat_user_tables WHERE relname = 'contacts' AND schemaname = current_schema()`,
          )
        )[0]?.at ?? null;
      let analyzed = false;
      for (let i = 0; i < 100 && !analyzed; i++) {
        analyzed = (await analyzeBehindTables(db)).includes("contacts") || (await lastAnalyzed()) !== null;
        if (!analyzed) await Bun.sleep(100);
      }
      expect(analyzed).toBe(true);
      expect(await analyzeBehindTables(db)).not.toContain("contacts");
      // 1,000 more rows are under half of the 3,000 analyzed: not yet.
      await writeContacts(1000);
      await Bun.sleep(1500);
      expect(await analyzeBehindTables(db)).not.toContain("contacts");
    },
  );
});
