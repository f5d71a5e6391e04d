import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

describe("GET /v1/me", () => {
  it("resolves the key to its workspace, scopes and key", async () => {
    const r = await s.api("GET", "/v1/me");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      workspace: { id: s.workspaceId, name: "Default" },
      scopes: ["read", "write"],
      key: { id: expect.any(String), name: "Default key", prefix: s.key.slice(4, 12) },
    });
  });

  it("answers 401 'Invalid or missing API key' without a key", async () => {
    const r = await s.api("GET", "/v1/me", undefined, { key: null });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ ok: false, error: "Invalid or missing API key" });
  });

  it("answers 401 for a garbled key, a key with a bad checksum and a non-bearer header", async () => {
    const badChecksum = `${s.key.slice(0, -1)}${s.key.endsWith("A") ? "B" : "A"}`;
    for (const key of ["nope", "opk_short", badChecksum]) {
      const r = await s.api("GET", "/v1/me", undefined, { key });
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ ok: false, error: "Invalid or missing API key" });
    }
    const basic = await s.api("GET", "/v1/me", undefined, {
      key: null,
      headers: { authorization: `Basic ${s.key}` },
    });
    expect(basic.status).toBe(401);
  });

  it("shows a read-only key its scopes", async () => {
    const { key } = await s.newKey(["read"]);
    const r = await s.api("GET", "/v1/me", undefined, { key });
    expect(r.body.scopes).toEqual(["read"]);
  });
});

describe("GET /api/public/me", () => {
  it("answers the workspace for a valid key", async () => {
    const r = await s.api("GET", "/api/public/me");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, workspace: { id: s.workspaceId, name: "Default" } });
  });

  it("answers 401 with the error envelope for a missing key", async () => {
    const r = await s.api("GET", "/api/public/me", undefined, { key: null });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ ok: false, error: "Invalid or missing API key" });
  });
});
