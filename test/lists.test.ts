import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

let seq = 0;
const phone = () => `+1312555${String(1000 + ++seq).slice(-4)}`;
async function contact(key = s.key) {
  return (await s.api("POST", "/v1/contacts", { phone_number: phone() }, { key })).body.contact;
}
async function list(name = "VIPs", key = s.key) {
  return (await s.api("POST", "/v1/lists", { name }, { key })).body.list;
}

describe("POST /v1/lists", () => {
  it("creates a list with a zero count", async () => {
    const r = await s.api("POST", "/v1/lists", { name: "Leads", description: "From the fair" });
    expect(r.status).toBe(200);
    expect(r.body.list).toMatchObject({ name: "Leads", description: "From the fair", contacts: 0 });
    expect(r.body.list.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers 422 'name is required' without name", async () => {
    const r = await s.api("POST", "/v1/lists", { description: "x" });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ ok: false, error: "name is required" });
  });

  it("answers 422 for a name over 200 characters", async () => {
    const r = await s.api("POST", "/v1/lists", { name: "x".repeat(201) });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("name is too long (max 200)");
  });
});

describe("PATCH /v1/lists/{id}", () => {
  it("renames and re-describes a list without touching its membership (seed rule 4)", async () => {
    const l = await list();
    const [a, b] = [await contact(), await contact()];
    await s.api("POST", `/v1/lists/${l.id}/contacts`, { contact_ids: [a.id, b.id] });
    const r = await s.api("PATCH", `/v1/lists/${l.id}`, { name: "Renamed", description: "New words" });
    expect(r.status).toBe(200);
    expect(r.body.list).toMatchObject({ id: l.id, name: "Renamed", description: "New words", contacts: 2 });
    const members = await s.api("GET", `/v1/lists/${l.id}/contacts`);
    expect(members.body.contacts.map((c: { id: string }) => c.id).sort()).toEqual([a.id, b.id].sort());
  });

  it("accepts an empty body and changes nothing", async () => {
    const l = await list("Same");
    const r = await s.api("PATCH", `/v1/lists/${l.id}`, {});
    expect(r.body.list).toMatchObject({ name: "Same", contacts: 0 });
  });

  it("answers 404 for another workspace's list and for unknown ids", async () => {
    const other = await s.newWorkspace();
    const l = await list();
    const r = await s.api("PATCH", `/v1/lists/${l.id}`, { name: "x" }, { key: other.key });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ ok: false, error: "Not found" });
    expect((await s.api("PATCH", "/v1/lists/nope", { name: "x" })).status).toBe(404);
  });

  it("answers 422 for an empty name", async () => {
    const l = await list();
    const r = await s.api("PATCH", `/v1/lists/${l.id}`, { name: "" });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("name is required");
  });
});

describe("list membership", () => {
  it("adds by ids and phone numbers; unknown, foreign and repeated ids are skipped", async () => {
    const other = await s.newWorkspace();
    const foreign = await contact(other.key);
    const l = await list();
    const a = await contact();
    const p = phone();
    const r = await s.api("POST", `/v1/lists/${l.id}/contacts`, {
      contact_ids: [a.id, foreign.id, "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77", "junk"],
      phone_numbers: [p],
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, added: 2, skipped: 3 });
    const again = await s.api("POST", `/v1/lists/${l.id}/contacts`, { contact_ids: [a.id] });
    expect(again.body).toEqual({ ok: true, added: 0, skipped: 1 });
    expect((await s.api("GET", `/v1/lists/${l.id}`)).body.list.contacts).toBe(2);
    // the phone number made a contact
    const found = await s.api("GET", `/v1/contacts?q=${encodeURIComponent(p)}`);
    expect(found.body.total).toBe(1);
  });

  it("answers 422 naming the bad phone number and adds nothing", async () => {
    const l = await list();
    const a = await contact();
    const r = await s.api("POST", `/v1/lists/${l.id}/contacts`, {
      contact_ids: [a.id],
      phone_numbers: ["nope"],
    });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("phone_numbers[0] must be a valid phone number");
    expect((await s.api("GET", `/v1/lists/${l.id}`)).body.list.contacts).toBe(0);
  });

  it("answers 422 when contact_ids is not an array", async () => {
    const l = await list();
    const r = await s.api("POST", `/v1/lists/${l.id}/contacts`, { contact_ids: "x" });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("contact_ids must be an array");
  });

  it("removes by ids and phone numbers and pages members", async () => {
    const l = await list();
    const cs = [await contact(), await contact(), await contact()];
    await s.api("POST", `/v1/lists/${l.id}/contacts`, { contact_ids: cs.map((c) => c.id) });
    const page = await s.api("GET", `/v1/lists/${l.id}/contacts?limit=2`);
    expect(page.body).toMatchObject({ ok: true, total: 3, limit: 2, offset: 0 });
    expect(page.body.contacts.map((c: { id: string }) => c.id)).toEqual([cs[2].id, cs[1].id]);
    const r = await s.api("DELETE", `/v1/lists/${l.id}/contacts`, {
      contact_ids: [cs[0].id],
      phone_numbers: [cs[1].phone_number],
    });
    expect(r.body).toEqual({ ok: true, removed: 2 });
    expect((await s.api("GET", `/v1/lists/${l.id}`)).body.list.contacts).toBe(1);
  });

  it("answers 404 for membership changes on another workspace's list", async () => {
    const other = await s.newWorkspace();
    const l = await list();
    const a = await contact(other.key);
    const r = await s.api("POST", `/v1/lists/${l.id}/contacts`, { contact_ids: [a.id] }, { key: other.key });
    expect(r.status).toBe(404);
    expect((await s.api("GET", `/v1/lists/${l.id}/contacts`, undefined, { key: other.key })).status).toBe(
      404,
    );
  });
});

describe("GET /v1/lists and DELETE /v1/lists/{id}", () => {
  it("lists newest first with counts, and deleting a list keeps its contacts", async () => {
    const ws = await s.newWorkspace();
    const l1 = await list("one", ws.key);
    const l2 = await list("two", ws.key);
    const c = await contact(ws.key);
    await s.api("POST", `/v1/lists/${l1.id}/contacts`, { contact_ids: [c.id] }, { key: ws.key });
    const all = await s.api("GET", "/v1/lists", undefined, { key: ws.key });
    expect(all.body.total).toBe(2);
    expect(all.body.lists.map((l: { name: string; contacts: number }) => [l.name, l.contacts])).toEqual([
      ["two", 0],
      ["one", 1],
    ]);
    expect(l2.contacts).toBe(0);
    const del = await s.api("DELETE", `/v1/lists/${l1.id}`, undefined, { key: ws.key });
    expect(del.body).toEqual({ ok: true, deleted: true });
    expect((await s.api("GET", `/v1/lists/${l1.id}`, undefined, { key: ws.key })).status).toBe(404);
    expect((await s.api("GET", `/v1/contacts/${c.id}`, undefined, { key: ws.key })).status).toBe(200);
  });

  it("deleting a contact removes it from its lists", async () => {
    const l = await list();
    const c = await contact();
    await s.api("POST", `/v1/lists/${l.id}/contacts`, { contact_ids: [c.id] });
    await s.api("DELETE", `/v1/contacts/${c.id}`);
    expect((await s.api("GET", `/v1/lists/${l.id}`)).body.list.contacts).toBe(0);
  });
});
