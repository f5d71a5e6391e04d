import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { eq } from "drizzle-orm";
import { contacts } from "../src/db/schema";
import { eventLog } from "./support/event-log";
import { startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());
const log = eventLog(() => s);

const csv = async (text: string, key: string, query = "") =>
  await s.api("POST", `/v1/contacts/import${query}`, undefined, {
    key,
    raw: text,
    headers: { "content-type": "text/csv" },
  });

async function countContacts(workspaceId: string) {
  return (await s.server.handle.db.select().from(contacts).where(eq(contacts.workspaceId, workspaceId)).all())
    .length;
}

describe("POST /v1/contacts/import with Idempotency-Key", () => {
  it("replays the first answer for the same upload and refuses the key for another", async () => {
    const ws = await s.newWorkspace();
    const send = async (text: string) =>
      await s.api("POST", "/v1/contacts/import", undefined, {
        key: ws.key,
        raw: text,
        headers: { "content-type": "text/csv", "idempotency-key": "import-1" },
      });
    const text = "phone_number,first_name\n+12025550181,Ada\n+12025550182,Alan\n";
    const first = await send(text);
    expect(first.body).toEqual({
      ok: true,
      created: 2,
      updated: 0,
      skipped: 0,
      errors: [],
      consent_column: null,
    });
    const again = await send(text);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const other = await send("phone_number\n+12025550183\n");
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ ok: false, error: "Idempotency-Key was used with a different request" });
    expect(await countContacts(ws.workspaceId)).toBe(2);
  });
});

describe("POST /v1/contacts/import (CSV)", () => {
  it("imports rows, maps columns, puts unknown columns in fields and reports bad rows by line number", async () => {
    const ws = await s.newWorkspace();
    await log.watch(ws.key);
    const text = [
      "Phone,First Name,last_name,Email,Plan,Seats",
      "(202) 555-0101,Ada,Lovelace,ada@example.com,pro,3",
      '2025550102,"Hopper, Grace",,,"team ""A""",',
      "not a phone,Bad,,,,",
      "12025550103,Alan,,nope,,",
      "",
      '+12025550104,"Multi',
      'line",,,free,1',
      "+12025550105,Last",
    ].join("\r\n");
    const r = await csv(text, ws.key);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      created: 4,
      updated: 0,
      skipped: 0,
      errors: [
        { row: 4, error: "phone_number must be a valid phone number" },
        { row: 5, error: "email must be a valid email address" },
      ],
      consent_column: null,
    });
    const list = (await s.api("GET", "/v1/contacts?limit=10", undefined, { key: ws.key })).body.contacts;
    const byPhone = Object.fromEntries(list.map((c: { phone_number: string }) => [c.phone_number, c]));
    expect(byPhone["+12025550101"]).toMatchObject({
      first_name: "Ada",
      last_name: "Lovelace",
      email: "ada@example.com",
      source: "import",
      opted_in: true,
      timezone: "America/New_York",
      timezone_source: "area_code",
      fields: { Plan: "pro", Seats: "3" },
    });
    expect(byPhone["+12025550102"]).toMatchObject({
      first_name: "Hopper, Grace",
      fields: { Plan: 'team "A"' },
    });
    expect(byPhone["+12025550104"].first_name).toBe("Multi\r\nline");
    expect(byPhone["+12025550105"].first_name).toBe("Last");
    expect(await log.of("contact.created", ws.workspaceId)).toHaveLength(4);
  });

  it("upserts by phone: updates changed contacts, skips unchanged ones, collapses duplicates", async () => {
    const ws = await s.newWorkspace();
    await csv("phone_number,first_name\n2025550201,Ann\n2025550202,Ben\n", ws.key);
    const r = await csv(
      "phone_number,first_name,city\n+12025550201,Ann\n2025550202,Benjamin\n2025550203,Cat\n(202) 555-0203,Cat,Paris\n2025550203,Cat,Paris\n",
      ws.key,
    );
    expect(r.body).toEqual({
      ok: true,
      created: 1,
      updated: 2,
      skipped: 2,
      errors: [],
      consent_column: null,
    });
    expect(await countContacts(ws.workspaceId)).toBe(3);
    const cat = (await s.api("GET", "/v1/contacts?q=Cat", undefined, { key: ws.key })).body.contacts[0];
    expect(cat).toMatchObject({ phone_number: "+12025550203", first_name: "Cat", fields: { city: "Paris" } });
  });

  it("an import can opt a contact out but never back in", async () => {
    const ws = await s.newWorkspace();
    await csv("phone,opted_in\n2025550301,false\n", ws.key);
    const r = await csv("phone,opted_in\n2025550301,true\n2025550302,maybe\n", ws.key);
    expect(r.body).toEqual({
      ok: true,
      created: 0,
      updated: 0,
      skipped: 1,
      errors: [{ row: 3, error: "opted_in must be yes or no" }],
      consent_column: "opted_in",
    });
    const c = (await s.api("GET", "/v1/contacts", undefined, { key: ws.key })).body.contacts[0];
    expect(c.opted_in).toBe(false);
  });

  it("adds every imported contact to list_id", async () => {
    const ws = await s.newWorkspace();
    const list = (await s.api("POST", "/v1/lists", { name: "Imported" }, { key: ws.key })).body.list;
    await s.api("POST", "/v1/contacts", { phone_number: "2025550401" }, { key: ws.key });
    const r = await csv("phone\n2025550401\n2025550402\nbad\n", ws.key, `?list_id=${list.id}`);
    expect(r.body).toMatchObject({ created: 1, skipped: 1, errors: [{ row: 4 }] });
    expect((await s.api("GET", `/v1/lists/${list.id}`, undefined, { key: ws.key })).body.list.contacts).toBe(
      2,
    );
  });

  it("answers 422 'list_id does not exist' for another workspace's list and writes nothing", async () => {
    const ws = await s.newWorkspace();
    const foreign = (await s.api("POST", "/v1/lists", { name: "theirs" })).body.list;
    const r = await csv("phone\n2025550501\n", ws.key, `?list_id=${foreign.id}`);
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ ok: false, error: "list_id does not exist" });
    expect(await countContacts(ws.workspaceId)).toBe(0);
  });

  it("answers 422 before writing anything when the CSV has no phone column", async () => {
    const ws = await s.newWorkspace();
    const r = await csv("first_name,email\nAda,ada@example.com\n", ws.key);
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ ok: false, error: "phone_number column is required" });
    expect(await countContacts(ws.workspaceId)).toBe(0);
  });

  it("answers 422 for an empty CSV", async () => {
    const r = await csv("", s.key);
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("CSV is empty: a header row with a phone_number column is required");
  });

  it("reports a row with more cells than the header", async () => {
    const ws = await s.newWorkspace();
    const r = await csv("phone\n2025550601,extra\n2025550602\n", ws.key);
    expect(r.body).toMatchObject({
      created: 1,
      errors: [{ row: 2, error: "row has 2 columns, the header has 1" }],
    });
  });

  it("answers 413 for a body over 20 MiB", async () => {
    const big = `phone\n${"2025550701\n".repeat(2_000_000)}`;
    const ws = await s.newWorkspace();
    const r = await csv(big, ws.key);
    expect(r.status).toBe(413);
    expect(await countContacts(ws.workspaceId)).toBe(0);
  });

  it("answers 403 for a read-only key and 400 for another content type", async () => {
    const { key } = await s.newKey(["read"]);
    expect((await csv("phone\n2025550801\n", key)).status).toBe(403);
    const r = await s.api("POST", "/v1/contacts/import", undefined, {
      raw: "phone\n1",
      headers: { "content-type": "text/plain" },
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ ok: false, error: "Content-Type must be text/csv or application/json" });
  });
});

describe("POST /v1/contacts/import (JSON)", () => {
  it("imports {contacts:[...]} with fields and reports bad items by position", async () => {
    const ws = await s.newWorkspace();
    const r = await s.api(
      "POST",
      "/v1/contacts/import",
      {
        contacts: [
          { phone_number: "2025550901", first_name: "Ann", fields: { plan: "pro", seats: 2 } },
          { phone_number: "nope" },
          "x",
          { first_name: "no phone" },
          { phone_number: "2025550901", last_name: "Again" },
        ],
      },
      { key: ws.key },
    );
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      created: 1,
      updated: 1,
      skipped: 0,
      errors: [
        { row: 2, error: "phone_number must be a valid phone number" },
        { row: 3, error: "contact must be an object" },
        { row: 4, error: "phone_number is required" },
      ],
      consent_column: null,
    });
    const c = (await s.api("GET", "/v1/contacts", undefined, { key: ws.key })).body.contacts[0];
    expect(c).toMatchObject({ first_name: "Ann", last_name: "Again", fields: { plan: "pro", seats: 2 } });
  });

  it("answers 422 'contacts is required' and 'contacts must be an array'", async () => {
    expect((await s.api("POST", "/v1/contacts/import", {})).body).toEqual({
      ok: false,
      error: "contacts is required",
    });
    expect((await s.api("POST", "/v1/contacts/import", { contacts: 1 })).body).toEqual({
      ok: false,
      error: "contacts must be an array",
    });
  });

  it("answers 400 for malformed JSON", async () => {
    const r = await s.api("POST", "/v1/contacts/import", undefined, {
      raw: "{nope",
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ ok: false, error: "Invalid JSON body" });
  });
});
