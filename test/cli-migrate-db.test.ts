/**
 * `outreach migrate-db --to postgres://… [--db FILE]`: a SQLite database filled through the API is
 * copied into an empty PostgreSQL database, and a server started on the copy answers as the SQLite
 * one did. A target that holds rows, a malformed URL or a missing file: one line, exit 1, nothing
 * written. The copying cases need PostgreSQL (the PostgreSQL pass, or a cluster this file starts).
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { loadConfig } from "../src/config";
import { type RunningServer, startServer } from "../src/server";
import { runCli as cli } from "./support/cli";
import { eventually, orderNumber } from "./support/messaging";
import { dropDatabase, freshDatabase, testPostgres, testsRunOn } from "./support/postgres";
import { startTestServer, type TestServer } from "./support/server";
import { zoneAtLocalHour } from "./support/zones";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers
type Json = any;

const dir = mkdtempSync(join(tmpdir(), "outreach-migrate-db-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

if (testsRunOn("sqlite")) {
  describe("outreach migrate-db: bad input", () => {
    const cases: [string, string[], number, string][] = [
      [
        "a source file that does not exist",
        ["--db", join(dir, "missing.db"), "--to", "postgres://app@127.0.0.1:1/outreach"],
        1,
        `cannot read the database ${join(dir, "missing.db")}: no such file or folder`,
      ],
      [
        "a --to that is not a URL",
        ["--db", join(dir, "missing.db"), "--to", "not a url"],
        1,
        "--to is not a valid URL (expected postgres://USER:PASSWORD@HOST:PORT/DATABASE)",
      ],
      [
        "a --to of another database",
        ["--db", join(dir, "missing.db"), "--to", "mysql://app:secret@db.example/outreach"],
        1,
        "--to must be a postgres:// or postgresql:// URL (got mysql://…)",
      ],
      ["no --to", ["--db", join(dir, "missing.db")], 2, "--to is required"],
      ["an option it does not take", ["--to", "postgres://a@b/c", "--force"], 2, "unknown option --force"],
    ];
    for (const [name, args, code, message] of cases) {
      it(`${name} → one line, exit ${code}`, async () => {
        const result = await cli(["migrate-db", ...args]);
        expect({
          name,
          code: result.code,
          stdout: result.stdout,
          line: result.stderr.split("\n")[0],
        }).toEqual({
          name,
          code,
          stdout: "",
          line: expect.stringContaining(`outreach: ${message}`),
        });
        expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
      });
    }

    it("an unreachable --to → one line naming host, port and database, never the password", async () => {
      const source = await startTestServer({ databaseUrl: null });
      await source.server.shutdown();
      const result = await cli([
        "migrate-db",
        "--db",
        source.dbPath,
        "--to",
        "postgres://app:hunter2@127.0.0.1:1/outreach",
      ]);
      rmSync(source.dir, { recursive: true, force: true });
      expect(result).toEqual({
        code: 1,
        stdout: "",
        stderr:
          "outreach: --to: cannot connect to PostgreSQL at 127.0.0.1:1/outreach: connect ECONNREFUSED 127.0.0.1:1\n",
      });
    });
  });
}

if (testsRunOn("postgres")) {
  // Registered before testPostgres() registers its cluster's stop, so that it runs first: the
  // server on the copy and the databases go while the cluster is still there.
  let cleanUp = async () => {};
  afterAll(async () => await cleanUp());
  const pg = await testPostgres();
  if ("skip" in pg) console.log(`migrate-db into PostgreSQL SKIPPED: ${pg.skip}`);
  else {
    const adminUrl = pg.url;
    const role = `migrator_${process.pid}`;
    const made: string[] = [];

    /** A new empty database owned by a role that is not a superuser; answers that role's URL. */
    async function ownedDatabase(): Promise<string> {
      const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        const [exists] = await admin`select 1 from pg_roles where rolname = ${role}`;
        if (!exists) await admin.unsafe(`CREATE ROLE ${role} LOGIN NOSUPERUSER`);
        const url = new URL(await freshDatabase(adminUrl));
        made.push(url.toString());
        await admin.unsafe(`ALTER DATABASE ${url.pathname.slice(1)} OWNER TO ${role}`);
        url.username = role;
        return url.toString();
      } finally {
        await admin.end();
      }
    }

    /** Rows of every table of a PostgreSQL database (schema_migrations' tags too). */
    async function tableCounts(url: string): Promise<Record<string, number | string[]>> {
      const client = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const counts: Record<string, number | string[]> = {};
        const tables = await client`select tablename from pg_tables where schemaname = 'public' order by 1`;
        for (const { tablename } of tables) {
          const [row] = await client.unsafe(`select count(*)::int as n from "${tablename}"`);
          counts[tablename] = row.n;
        }
        if (counts.schema_migrations !== undefined)
          counts.schema_migrations = (await client`select tag from schema_migrations order by tag`).map(
            (r) => r.tag,
          );
        return counts;
      } finally {
        await client.end();
      }
    }

    let source: TestServer;
    let target: RunningServer | null = null;
    let targetUrl: string;
    let copy: { code: number; stdout: string; stderr: string };
    /** What the SQLite server answered before the copy, path by path. */
    const before = new Map<string, Json>();
    const from = new Date(Date.now() - 7 * 86_400_000).toISOString();
    const to = new Date(Date.now() + 86_400_000).toISOString();
    let campaignId = "";
    let conversationId = "";

    /** The reads compared before and after: lists, a campaign's counters, messages, analytics. */
    const reads = () => [
      "/v1/contacts?limit=100",
      "/v1/lists",
      "/v1/offers",
      `/v1/campaigns/${campaignId}`,
      `/v1/campaigns/${campaignId}/recipients?limit=100`,
      "/v1/messages?limit=100",
      "/v1/conversations",
      `/v1/conversations/${conversationId}`,
      "/v1/conversions",
      "/v1/webhooks",
      `/v1/analytics/overview?from=${from}&to=${to}`,
      `/v1/analytics/campaigns?from=${from}&to=${to}`,
    ];

    async function get(url: string, key: string, path: string) {
      const response = await fetch(url + path, { headers: { authorization: `Bearer ${key}` } });
      return { status: response.status, body: await response.json() };
    }

    beforeAll(async () => {
      // 1. A SQLite database with real data, made through the API.
      source = await startTestServer(
        { databaseUrl: null, publicUrl: "https://go.example.com" },
        { SIMULATED_DELIVERY_MS: "20" },
      );
      const api = source.api;
      const available = (await api("GET", "/v1/numbers/available?area_code=212&limit=1")).body.numbers[0]
        .number;
      await orderNumber(source, available);
      const people: Json[] = [];
      for (const [phone, name] of [
        ["+12125550401", "Ada"],
        ["+12125550402", "Grace"],
        ["+12125550403", "Linus"],
      ])
        people.push(
          (
            await api("POST", "/v1/contacts", {
              phone_number: phone,
              first_name: name,
              timezone: zoneAtLocalHour(12),
              fields: { zeta: "last", alpha: 1.5, vip: true },
            })
          ).body.contact,
        );
      const list = (await api("POST", "/v1/lists", { name: "Spring buyers" })).body.list;
      await api("POST", `/v1/lists/${list.id}/contacts`, { contact_ids: people.map((p) => p.id) });
      await api("POST", "/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["conversion.recorded"] });
      const offer = (
        await api("POST", "/v1/offers", {
          name: "Spring",
          destination_url: "https://shop.example.com/spring",
        })
      ).body.offer;
      const campaign = (
        await api("POST", "/v1/campaigns", {
          name: "Spring",
          message: { body: "Spring sale: {{offer_url}}" },
          offer_id: offer.id,
          audience: { contact_ids: people.slice(0, 2).map((p) => p.id) },
        })
      ).body.campaign;
      campaignId = campaign.id;
      await api("POST", `/v1/campaigns/${campaign.id}/launch`);
      const sends = await eventually(
        async () => (await api("GET", "/v1/sandbox/outbox?limit=50")).body.sends as Json[],
        (rows) => rows.length >= 2,
      );
      const code = sends[0].body.match(/\/r\/([0-9A-Za-z]+)/)[1];
      const click = await fetch(`${source.url}/r/${code}`, { redirect: "manual" });
      const vcx = new URL(click.headers.get("location") as string).searchParams.get("vcx");
      await api("POST", "/v1/conversion", { txn: "spring-1", value: 42.5, vcx });
      await api("POST", "/v1/messages", { to: people[2].phone_number, body: "A one-off, sent alone" });
      await api("POST", "/v1/sandbox/inbound", {
        from: people[0].phone_number,
        to: available,
        body: "thanks, sourdough please",
      });
      // Settled: every message delivered or received, the campaign done.
      await eventually(
        async () => (await api("GET", "/v1/messages?limit=100")).body.messages as Json[],
        (rows) => rows.length === 4 && rows.every((m) => ["DELIVERED", "RECEIVED"].includes(m.status)),
      );
      await eventually(
        async () => (await api("GET", `/v1/campaigns/${campaignId}`)).body.campaign.status,
        (status) => status === "completed",
      );
      conversationId = (await api("GET", "/v1/conversations")).body.conversations[0].id;
      for (const path of reads()) before.set(path, await get(source.url, source.key, path));
      await source.server.shutdown();

      // 2. The copy, into a database its non-superuser role owns.
      targetUrl = await ownedDatabase();
      copy = await cli(["migrate-db", "--db", source.dbPath, "--to", targetUrl, "--json"]);

      // 3. A server on the copy.
      target = await startServer({
        ...loadConfig({}, { RATE_LIMIT_RPS: "0", LOG_LEVEL: "error", WEBHOOK_ALLOW_PRIVATE: "true" }),
        port: 0,
        host: "127.0.0.1",
        dbPath: join(dir, "unused.db"),
        publicUrl: "https://go.example.com",
        databaseUrl: targetUrl,
      });
    });

    cleanUp = async () => {
      await target?.shutdown();
      rmSync(source.dir, { recursive: true, force: true });
      for (const url of made) await dropDatabase(adminUrl, url);
      const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await admin.unsafe(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    };

    describe("outreach migrate-db: a SQLite database into an empty PostgreSQL", () => {
      it("copies every table, as a role that is not a superuser, and reports each table's counts", () => {
        expect({ code: copy.code, stderr: copy.stderr.includes("outreach:") ? copy.stderr : "" }).toEqual({
          code: 0,
          stderr: "",
        });
        const report = JSON.parse(copy.stdout);
        expect(report.ok).toBe(true);
        expect(report.mismatches).toEqual([]);
        const byTable = Object.fromEntries(report.tables.map((t: Json) => [t.table, t]));
        for (const table of [
          "contacts",
          "list_members",
          "messages",
          "campaigns",
          "clicks",
          "conversions",
          "webhooks",
        ])
          expect({
            table,
            copied: byTable[table].source > 0 && byTable[table].source === byTable[table].target,
          }).toEqual({
            table,
            copied: true,
          });
        expect(report.tables.every((t: Json) => t.source === t.target)).toBe(true);
        expect(report.rows).toBe(report.tables.reduce((sum: number, t: Json) => sum + t.source, 0));
        // Not a terminal: plain lines, one per table with rows.
        expect(copy.stderr).toContain(`copied contacts: ${byTable.contacts.source} rows (`);
      });

      it("a server on the copy answers every read as the SQLite server did", async () => {
        for (const path of reads())
          expect({ path, answer: await get(target?.url as string, source.key, path) }).toEqual({
            path,
            answer: before.get(path),
          });
      });

      it("keeps JSON text, booleans and epoch-ms timestamps exact", async () => {
        const sqlite = new Database(source.dbPath, { readonly: true });
        const client = postgres(targetUrl, { max: 1, onnotice: () => {} });
        try {
          const cases: [string, string][] = [
            ["campaigns", "select id, message, audience, created_at from campaigns order by id"],
            ["events", "select id, type, data, created_at from events order by id"],
            ["contacts", "select id, opted_in, created_at from contacts order by id"],
            ["messages", "select id, created_at, updated_at from messages order by id"],
          ];
          for (const [table, query] of cases) {
            const text = (rows: Record<string, unknown>[]) =>
              rows.map((row) =>
                Object.values(row).map((v) =>
                  v === null ? null : String(typeof v === "boolean" ? Number(v) : v),
                ),
              );
            const pgQuery = query.replace(/, (message|audience|data)/g, ", $1::text");
            expect({ table, rows: text(await client.unsafe(pgQuery)) }).toEqual({
              table,
              rows: text(sqlite.query(query).all() as Record<string, unknown>[]),
            });
          }
        } finally {
          sqlite.close();
          await client.end();
        }
      });

      it("leaves the server able to write: a new thread's search key, counters and search", async () => {
        const url = target?.url as string;
        const call = async (method: string, path: string, body?: unknown) => {
          const response = await fetch(url + path, {
            method,
            headers: { authorization: `Bearer ${source.key}`, "content-type": "application/json" },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          return (await response.json()) as Json;
        };
        const numbers = (await call("GET", "/v1/numbers")).numbers;
        const contact = (
          await call("POST", "/v1/contacts", { phone_number: "+12125550404", first_name: "Edsger" })
        ).contact;
        await call("POST", "/v1/sandbox/inbound", {
          from: "+12125550404",
          to: numbers[0].number,
          body: "hello there",
        });
        const threadsBefore = before.get("/v1/conversations").body.conversations as Json[];
        const threads = await eventually(
          async () => (await call("GET", "/v1/conversations")).conversations as Json[],
          (rows) => rows.length === threadsBefore.length + 1,
        );
        expect(threads.map((t) => t.contact_id).sort()).toEqual(
          [...threadsBefore.map((t) => t.contact_id), contact.id].sort(),
        );
        const found = (await call("GET", "/v1/conversations?q=sourdough")).conversations;
        expect(found.map((t: Json) => t.id)).toEqual([conversationId]);
        const overview = (await call("GET", `/v1/analytics/overview?from=${from}&to=${to}`)).overview;
        expect(overview.messages).toEqual({
          ...before.get(`/v1/analytics/overview?from=${from}&to=${to}`).body.overview.messages,
          inbound: 2,
        });
      });

      it("a target that holds rows → one line, exit 1, the target unchanged", async () => {
        const counts = await tableCounts(targetUrl);
        const again = await cli(["migrate-db", "--db", source.dbPath, "--to", targetUrl]);
        expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 1, stdout: "" });
        expect(again.stderr).toMatch(
          /^outreach: the target database is not empty \(.+ hold rows\): migrate-db copies into an empty database only; nothing was written\n$/,
        );
        expect(await tableCounts(targetUrl)).toEqual(counts);
      });

      it("a row PostgreSQL refuses (a list member without its contact) → one line, exit 1, the whole copy rolled back", async () => {
        const orphaned = join(dir, "orphaned.db");
        const file = new Database(source.dbPath, { readonly: true });
        file.exec(`VACUUM INTO '${orphaned}'`);
        file.close();
        const edit = new Database(orphaned);
        edit.run(
          "INSERT INTO list_members (list_id, contact_id, workspace_id, created_at) SELECT list_id, 'gone', workspace_id, created_at FROM list_members LIMIT 1",
        );
        edit.close();
        const url = await ownedDatabase();
        const result = await cli(["migrate-db", "--db", orphaned, "--to", url]);
        expect({ code: result.code, line: result.stderr.trimEnd().split("\n").at(-1) }).toEqual({
          code: 1,
          line: 'outreach: the copy failed in list_members: insert or update on table "list_members" violates foreign key constraint "list_members_contact_id_contacts_id_fk"; nothing was copied (the target is migrated and empty)',
        });
        const counts = await tableCounts(url);
        expect(
          Object.entries(counts).filter(([table, n]) => table !== "schema_migrations" && n !== 0),
        ).toEqual([]);
      });

      it("a target with rows in a table of its own → refused before any migration is applied", async () => {
        const url = await ownedDatabase();
        const client = postgres(url, { max: 1, onnotice: () => {} });
        await client`create table notes (body text)`;
        await client`insert into notes values ('keep me')`;
        await client.end();
        const result = await cli(["migrate-db", "--db", source.dbPath, "--to", url]);
        expect({ code: result.code, stderr: result.stderr }).toEqual({
          code: 1,
          stderr:
            "outreach: the target database is not empty (notes hold rows): migrate-db copies into an empty database only; nothing was written\n",
        });
        expect(await tableCounts(url)).toEqual({ notes: 1 });
      });
    });
  }
}
