import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { canSendTo } from "../src/domain/audience/suppression";
import { startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

let seq = 0;
const phone = () => `+1646555${String(1000 + ++seq).slice(-4)}`;

describe("POST /v1/suppression", () => {
  it("suppresses a number (normalised) and canSendTo refuses it", async () => {
    const p = phone();
    const r = await s.api("POST", "/v1/suppression", { phone_number: p.slice(2), reason: "complaint" });
    expect(r.status).toBe(200);
    expect(r.body.suppression).toMatchObject({ phone_number: p, reason: "complaint", source: "api" });
    expect(await canSendTo(s.server.handle.db, s.workspaceId, p)).toEqual({
      allowed: false,
      reason: "suppressed",
      message: "Recipient is suppressed",
    });
  });

  it("defaults reason to manual", async () => {
    const r = await s.api("POST", "/v1/suppression", { phone_number: phone() });
    expect(r.body.suppression.reason).toBe("manual");
  });

  it("reports an opt_out entry as opted out", async () => {
    const p = phone();
    await s.api("POST", "/v1/suppression", { phone_number: p, reason: "opt_out" });
    expect(await canSendTo(s.server.handle.db, s.workspaceId, p)).toMatchObject({
      allowed: false,
      reason: "opted_out",
    });
  });

  it("answers 409 for a number already suppressed", async () => {
    const p = phone();
    await s.api("POST", "/v1/suppression", { phone_number: p });
    const r = await s.api("POST", "/v1/suppression", { phone_number: p });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ ok: false, error: "phone_number is already suppressed" });
  });

  it("answers 422 for a missing or invalid phone and a bad reason", async () => {
    expect((await s.api("POST", "/v1/suppression", {})).body).toEqual({
      ok: false,
      error: "phone_number is required",
    });
    const bad = await s.api("POST", "/v1/suppression", { phone_number: "nope" });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe("phone_number must be a valid phone number");
    const reason = await s.api("POST", "/v1/suppression", { phone_number: phone(), reason: "angry" });
    expect(reason.status).toBe(422);
    expect(reason.body.error).toBe("reason must be one of manual, opt_out, carrier, complaint");
  });
});

describe("canSendTo", () => {
  it("allows an unknown or opted-in number and refuses an opted-out contact", async () => {
    const p = phone();
    expect(await canSendTo(s.server.handle.db, s.workspaceId, p)).toEqual({ allowed: true });
    const c = (await s.api("POST", "/v1/contacts", { phone_number: p })).body.contact;
    expect(await canSendTo(s.server.handle.db, s.workspaceId, p)).toEqual({ allowed: true });
    await s.api("PATCH", `/v1/contacts/${c.id}`, { opted_in: false });
    expect(await canSendTo(s.server.handle.db, s.workspaceId, p)).toEqual({
      allowed: false,
      reason: "opted_out",
      message: "Recipient has opted out",
    });
  });

  it("keeps the suppression when the contact is deleted", async () => {
    const p = phone();
    const c = (await s.api("POST", "/v1/contacts", { phone_number: p })).body.contact;
    await s.api("POST", "/v1/suppression", { phone_number: p });
    await s.api("DELETE", `/v1/contacts/${c.id}`);
    expect((await canSendTo(s.server.handle.db, s.workspaceId, p)).allowed).toBe(false);
    const list = await s.api("GET", `/v1/suppression?q=${p.slice(2)}`);
    expect(list.body.total).toBe(1);
  });

  it("is per workspace", async () => {
    const p = phone();
    await s.api("POST", "/v1/suppression", { phone_number: p });
    const other = await s.newWorkspace();
    expect(await canSendTo(s.server.handle.db, other.workspaceId, p)).toEqual({ allowed: true });
  });
});

describe("GET/DELETE /v1/suppression", () => {
  it("lists newest first, gets and deletes by id", async () => {
    const ws = await s.newWorkspace();
    const a = (await s.api("POST", "/v1/suppression", { phone_number: phone() }, { key: ws.key })).body
      .suppression;
    const b = (
      await s.api("POST", "/v1/suppression", { phone_number: phone(), reason: "carrier" }, { key: ws.key })
    ).body.suppression;
    const list = await s.api("GET", "/v1/suppression", undefined, { key: ws.key });
    expect(list.body).toMatchObject({ ok: true, total: 2, limit: 50, offset: 0 });
    expect(list.body.suppressions.map((x: { id: string }) => x.id)).toEqual([b.id, a.id]);
    const carrier = await s.api("GET", "/v1/suppression?reason=carrier", undefined, { key: ws.key });
    expect(carrier.body.total).toBe(1);
    expect(
      (await s.api("GET", `/v1/suppression/${a.id}`, undefined, { key: ws.key })).body.suppression,
    ).toEqual(a);
    expect((await s.api("DELETE", `/v1/suppression/${a.id}`, undefined, { key: ws.key })).body).toEqual({
      ok: true,
      deleted: true,
    });
    expect(await canSendTo(s.server.handle.db, ws.workspaceId, a.phone_number)).toEqual({ allowed: true });
    expect((await s.api("GET", `/v1/suppression/${a.id}`, undefined, { key: ws.key })).status).toBe(404);
  });

  it("answers 404 for another workspace's entry and 422 for a bad reason filter", async () => {
    const a = (await s.api("POST", "/v1/suppression", { phone_number: phone() })).body.suppression;
    const other = await s.newWorkspace();
    expect((await s.api("GET", `/v1/suppression/${a.id}`, undefined, { key: other.key })).status).toBe(404);
    expect((await s.api("DELETE", `/v1/suppression/${a.id}`, undefined, { key: other.key })).status).toBe(
      404,
    );
    expect((await s.api("GET", "/v1/suppression?reason=x")).status).toBe(422);
  });
});
