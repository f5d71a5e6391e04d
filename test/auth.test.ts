import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { spawnSync } from "bun";
import { eq } from "drizzle-orm";
import { loginRetryAfter, loginSubjects, recordLoginFailure } from "../src/auth/login-limit";
import { issueSetupToken } from "../src/auth/setup-tokens";
import { hashToken } from "../src/auth/tokens";
import { sessions } from "../src/db/schema";
import { outsideConnection } from "./support/database";
import { orderNumber } from "./support/messaging";
import { type ApiResult, startTestServer, type TestServer } from "./support/server";

// The dashboard's accounts (API.md §6.7): setup links, sign-in, sessions on /v1, roles, the
// cross-site check, and key and user management — over HTTP, as a browser would use them.

const OURS = "+14155550100";
const PASSWORD = "correct horse battery";
const main = join(import.meta.dir, "..", "src", "main.ts");

let s: TestServer;
let admin: string; // the first admin's session cookie value
let adminId: string;

beforeAll(async () => {
  s = await startTestServer();
  await orderNumber(s, OURS);
});
afterAll(async () => await s.stop());

interface CallOptions {
  cookie?: string | null;
  headers?: Record<string, string>;
  key?: string | null;
}

/** A request as the dashboard makes it: the session cookie, no bearer key (unless `key`). */
async function call(
  method: string,
  path: string,
  body?: unknown,
  options: CallOptions = {},
): Promise<ApiResult> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.cookie) headers.cookie = `outreach_session=${options.cookie}`;
  return await s.api(method, path, body, { key: options.key ?? null, headers });
}

/** The session token a `Set-Cookie` answer stores. */
function cookieOf(r: ApiResult): string {
  const header = r.headers.get("set-cookie") ?? "";
  const token = header.match(/^outreach_session=([A-Za-z0-9_-]{43});/)?.[1];
  if (!token)
    throw new Error(`no session cookie in ${JSON.stringify(header)} (${r.status} ${JSON.stringify(r.body)})`);
  return token;
}

const tokenOf = (url: string) => new URL(url, "http://x").searchParams.get("token") as string;

function firstAdminToken(): string {
  const url = s.announcement.match(/(\S+\/setup\?token=[A-Za-z0-9_-]{43})/)?.[1];
  if (!url) throw new Error(`no setup link in ${s.announcement}`);
  return tokenOf(url);
}

async function login(email: string, password: string) {
  const r = await call("POST", "/auth/login", { email, password });
  expect([r.status, r.body.error]).toEqual([200, undefined]);
  return cookieOf(r);
}

/** Invites `email` with `role` as the admin and follows the link; answers the new user's cookie and id. */
async function member(email: string, role: "admin" | "agent") {
  const invited = await call(
    "POST",
    "/v1/users",
    { email, name: email.split("@")[0], role },
    { cookie: admin },
  );
  expect(invited.status).toBe(200);
  const done = await call("POST", "/auth/setup", {
    token: tokenOf(invited.body.setup_url),
    password: PASSWORD,
  });
  expect(done.status).toBe(200);
  return { cookie: cookieOf(done), id: invited.body.user.id as string };
}

describe("the first admin", () => {
  it("serve prints a one-time setup link beside the first key", () => {
    expect(s.announcement).toContain(s.key);
    expect(s.announcement).toMatch(/\/setup\?token=[A-Za-z0-9_-]{43}/);
  });

  it("answers 422 for a short password before spending the link", async () => {
    const r = await call("POST", "/auth/setup", {
      token: firstAdminToken(),
      name: "Ada",
      email: "ada@example.com",
      password: "short",
    });
    expect([r.status, r.body]).toEqual([
      422,
      { ok: false, error: "password must be at least 10 characters" },
    ]);
  });

  it("setup creates the admin of Default and signs in with the session cookie", async () => {
    const r = await call("POST", "/auth/setup", {
      token: firstAdminToken(),
      name: "Ada Lovelace",
      email: " Ada@Example.com ",
      password: PASSWORD,
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      user: { id: expect.any(String), email: "ada@example.com", name: "Ada Lovelace", role: "admin" },
      workspace: { id: s.workspaceId, name: "Default" },
      role: "admin",
    });
    const setCookie = r.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(
      /^outreach_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Lax; Path=\/; Max-Age=2592000$/,
    );
    admin = cookieOf(r);
    adminId = r.body.user.id;
    // Only the SHA-256 of the token is stored.
    const rows = await s.server.handle.db.select().from(sessions).all();
    expect(rows.map((row) => row.id)).toContain(hashToken(admin));
    expect(JSON.stringify(rows)).not.toContain(admin);
  });

  it("answers 410 for the link once used, an unknown link and an expired one", async () => {
    const gone = { ok: false, error: "This setup link has expired or was already used" };
    const reused = await call("POST", "/auth/setup", {
      token: firstAdminToken(),
      name: "Mallory",
      email: "mallory@example.com",
      password: PASSWORD,
    });
    expect([reused.status, reused.body]).toEqual([410, gone]);
    const unknown = await call("POST", "/auth/setup", {
      token: "x".repeat(43),
      name: "M",
      password: PASSWORD,
    });
    expect([unknown.status, unknown.body]).toEqual([410, gone]);
    const expired = await issueSetupToken(s.server.handle.db, {
      workspaceId: s.workspaceId,
      role: "admin",
      now: Date.now() - 25 * 60 * 60 * 1000,
    });
    const late = await call("POST", "/auth/setup", {
      token: expired,
      name: "Late",
      email: "late@example.com",
      password: PASSWORD,
    });
    expect([late.status, late.body]).toEqual([410, gone]);
  });
});

describe("a session on /v1", () => {
  it("GET /v1/me names the user and no key", async () => {
    const r = await call("GET", "/v1/me", undefined, { cookie: admin });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      workspace: { id: s.workspaceId, name: "Default" },
      scopes: ["read", "write"],
      key: null,
      user: { id: adminId, email: "ada@example.com", name: "Ada Lovelace", role: "admin" },
    });
  });

  it("a bearer key's /v1/me has no user", async () => {
    const r = await s.api("GET", "/v1/me");
    expect(r.body.key).toMatchObject({ name: "Default key" });
    expect("user" in r.body).toBe(false);
  });

  it("GET /auth/session answers the user, workspace and role", async () => {
    const r = await call("GET", "/auth/session", undefined, { cookie: admin });
    expect([r.status, r.body.role, r.body.user.email, r.body.workspace.id]).toEqual([
      200,
      "admin",
      "ada@example.com",
      s.workspaceId,
    ]);
  });

  it("answers 401, never 500, for a tampered, unknown or garbled cookie", async () => {
    const tampered = `${admin.slice(0, -1)}${admin.endsWith("A") ? "B" : "A"}`;
    for (const cookie of [tampered, "x".repeat(43), "garbage", "%00%ff;;=", "a".repeat(5000)]) {
      const session = await call("GET", "/auth/session", undefined, { cookie });
      expect([cookie, session.status, session.body]).toEqual([
        cookie,
        401,
        { ok: false, error: "Not signed in" },
      ]);
      const me = await call("GET", "/v1/me", undefined, { cookie });
      expect([cookie, me.status, me.body]).toEqual([
        cookie,
        401,
        { ok: false, error: "Invalid or missing API key" },
      ]);
    }
    const none = await call("GET", "/auth/session");
    expect(none.status).toBe(401);
  });

  it("a bad Authorization header is not rescued by a good cookie", async () => {
    const r = await call("GET", "/v1/me", undefined, {
      cookie: admin,
      headers: { authorization: "Bearer nope" },
    });
    expect(r.status).toBe(401);
  });

  it("an expired session answers 401; a session used after a minute slides 30 days ahead and resends the cookie", async () => {
    const db = s.server.handle.db;
    const token = await login("ada@example.com", PASSWORD);
    const id = hashToken(token);
    const hourAgo = Date.now() - 60 * 60 * 1000;
    await db
      .update(sessions)
      .set({ lastSeenAt: hourAgo, expiresAt: Date.now() + 60_000 })
      .where(eq(sessions.id, id))
      .run();
    const used = await call("GET", "/v1/contacts", undefined, { cookie: token });
    expect(used.status).toBe(200);
    expect(cookieOf(used)).toBe(token);
    const row = await db.select().from(sessions).where(eq(sessions.id, id)).get();
    expect(row?.expiresAt).toBeGreaterThan(Date.now() + 29 * 24 * 60 * 60 * 1000);
    // Used again within the minute: nothing written, no cookie sent.
    const again = await call("GET", "/v1/contacts", undefined, { cookie: token });
    expect(again.headers.get("set-cookie")).toBeNull();

    await db
      .update(sessions)
      .set({ expiresAt: Date.now() - 1 })
      .where(eq(sessions.id, id))
      .run();
    expect((await call("GET", "/v1/me", undefined, { cookie: token })).status).toBe(401);
    expect((await call("GET", "/auth/session", undefined, { cookie: token })).status).toBe(401);
  });

  it("logout deletes the session and clears the cookie; the cookie then answers 401", async () => {
    const token = await login("ada@example.com", PASSWORD);
    expect((await call("GET", "/v1/me", undefined, { cookie: token })).status).toBe(200);
    const out = await call("POST", "/auth/logout", undefined, { cookie: token });
    expect([out.status, out.body]).toEqual([200, { ok: true }]);
    expect(out.headers.get("set-cookie")).toMatch(/^outreach_session=; .*Max-Age=0/);
    expect((await call("GET", "/v1/me", undefined, { cookie: token })).status).toBe(401);
    expect((await call("GET", "/auth/session", undefined, { cookie: token })).status).toBe(401);
    const db = s.server.handle.db;
    expect(
      await db
        .select()
        .from(sessions)
        .where(eq(sessions.id, hashToken(token)))
        .get(),
    ).toBeUndefined();
    // Without a session it still answers ok.
    expect((await call("POST", "/auth/logout")).status).toBe(200);
  });
});

describe("POST /auth/login", () => {
  it("signs in with the e-mail in any case", async () => {
    const r = await call("POST", "/auth/login", { email: "ADA@example.com", password: PASSWORD });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      ok: true,
      user: { id: adminId, role: "admin" },
      workspace: { id: s.workspaceId },
    });
    cookieOf(r);
  });

  it("answers a wrong password and an unknown e-mail the same way", async () => {
    const wrong = await call("POST", "/auth/login", {
      email: "ada@example.com",
      password: "not the password",
    });
    const unknown = await call("POST", "/auth/login", { email: "nobody@example.com", password: PASSWORD });
    const invalid = { ok: false, error: "Invalid email or password" };
    expect([wrong.status, wrong.body]).toEqual([401, invalid]);
    expect([unknown.status, unknown.body]).toEqual([401, invalid]);
    expect(wrong.headers.get("set-cookie")).toBeNull();
  });

  it("answers 422 without an e-mail or password", async () => {
    const r = await call("POST", "/auth/login", { email: "ada@example.com" });
    expect([r.status, r.body]).toEqual([422, { ok: false, error: "password is required" }]);
  });
});

describe("the cross-site check", () => {
  const crossSite = { ok: false, error: "Cross-site request refused" };
  const contact = (n: number) => ({ phone_number: `+1202555${String(1000 + n)}` });

  it("refuses a cookie write whose Origin is another site, or whose Sec-Fetch-Site is cross-site or same-site", async () => {
    for (const headers of <Record<string, string>[]>[
      { origin: "https://evil.example" },
      { origin: "null" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      // Sec-Fetch-Site wins over an Origin that would pass.
      { "sec-fetch-site": "cross-site", origin: s.url },
    ]) {
      const r = await call("POST", "/v1/contacts", contact(1), { cookie: admin, headers });
      expect([headers, r.status, r.body]).toEqual([headers, 403, crossSite]);
    }
    const del = await call("DELETE", `/v1/users/${adminId}`, undefined, {
      cookie: admin,
      headers: { origin: "https://evil.example" },
    });
    expect(del.status).toBe(403);
  });

  it("allows same-origin, none, a matching Origin, and a request with neither header", async () => {
    let n = 10;
    for (const headers of <Record<string, string>[]>[
      { "sec-fetch-site": "same-origin" },
      { "sec-fetch-site": "none" },
      { origin: s.url },
      {},
    ]) {
      const r = await call("POST", "/v1/contacts", contact(n++), { cookie: admin, headers });
      expect([headers, r.status]).toEqual([headers, 200]);
    }
  });

  it("leaves reads with the cookie and writes with a bearer key alone", async () => {
    const read = await call("GET", "/v1/contacts", undefined, {
      cookie: admin,
      headers: { "sec-fetch-site": "cross-site" },
    });
    expect(read.status).toBe(200);
    const bearer = await s.api("POST", "/v1/contacts", contact(20), {
      headers: { origin: "https://evil.example" },
    });
    expect(bearer.status).toBe(200);
  });

  it("guards sign-in and setup too", async () => {
    const signIn = await call(
      "POST",
      "/auth/login",
      { email: "ada@example.com", password: PASSWORD },
      { headers: { "sec-fetch-site": "cross-site" } },
    );
    expect([signIn.status, signIn.body]).toEqual([403, crossSite]);
    const setup = await call(
      "POST",
      "/auth/setup",
      { token: "x".repeat(43), password: PASSWORD },
      { headers: { origin: "https://evil.example" } },
    );
    expect([setup.status, setup.body]).toEqual([403, crossSite]);
    const ok = await call(
      "POST",
      "/auth/login",
      { email: "ada@example.com", password: PASSWORD },
      { headers: { "sec-fetch-site": "same-origin" } },
    );
    expect(ok.status).toBe(200);
  });
});

describe("roles", () => {
  let agent: string;
  let agentId: string;

  beforeAll(async () => {
    ({ cookie: agent, id: agentId } = await member("grace@example.com", "agent"));
  });

  it("an agent's /v1/me has the read scope and the agent role", async () => {
    const r = await call("GET", "/v1/me", undefined, { cookie: agent });
    expect(r.body).toMatchObject({ scopes: ["read"], key: null, user: { id: agentId, role: "agent" } });
  });

  it("an agent reads contacts but cannot create one: 403 with required_scope", async () => {
    expect((await call("GET", "/v1/contacts", undefined, { cookie: agent })).status).toBe(200);
    const r = await call("POST", "/v1/contacts", { phone_number: "+12025559999" }, { cookie: agent });
    expect([r.status, r.body]).toEqual([
      403,
      { ok: false, error: "This account cannot create and edit.", required_scope: "write" },
    ]);
    const patch = await call("PATCH", "/v1/settings", { name: "Mine" }, { cookie: agent });
    expect(patch.status).toBe(403);
  });

  it("an agent triages and replies to conversations", async () => {
    const inbound = await s.api("POST", "/v1/sandbox/inbound", {
      from: "+14155550300",
      to: OURS,
      body: "hi",
    });
    const id = inbound.body.message.conversation_id as string;
    const patch = await call("PATCH", `/v1/conversations/${id}`, { status: "closed" }, { cookie: agent });
    expect([patch.status, patch.body]).toEqual([200, { ok: true, updated: true }]);
    const reply = await call("POST", `/v1/conversations/${id}`, { body: "On it" }, { cookie: agent });
    expect([reply.status, reply.body]).toEqual([200, { ok: true, sent: true }]);
  });

  it("an agent cannot see settings, API keys or users", async () => {
    for (const [path, error] of [
      ["/v1/settings", "This account cannot see settings."],
      ["/v1/api-keys", "This account cannot see API keys."],
      ["/v1/users", "This account cannot see users."],
      [`/v1/users/${agentId}`, "This account cannot see users."],
    ]) {
      const r = await call("GET", path, undefined, { cookie: agent });
      expect([path, r.status, r.body]).toEqual([path, 403, { ok: false, error, required_scope: "write" }]);
    }
    expect((await call("GET", "/v1/settings", undefined, { cookie: admin })).status).toBe(200);
  });

  it("a role change counts on the member's next request", async () => {
    const promoted = await call("PATCH", `/v1/users/${agentId}`, { role: "admin" }, { cookie: admin });
    expect([promoted.status, promoted.body.user.role]).toEqual([200, "admin"]);
    expect((await call("GET", "/v1/settings", undefined, { cookie: agent })).status).toBe(200);
    const demoted = await call("PATCH", `/v1/users/${agentId}`, { role: "agent" }, { cookie: admin });
    expect(demoted.body.user.role).toBe("agent");
    expect((await call("GET", "/v1/settings", undefined, { cookie: agent })).status).toBe(403);
    // PATCH is partial: a body without a role changes nothing (an unknown field is ignored).
    const unchanged = await call(
      "PATCH",
      `/v1/users/${agentId}`,
      { name: "Someone else" },
      { cookie: admin },
    );
    expect([unchanged.status, unchanged.body.user.role]).toEqual([200, "agent"]);
    expect(unchanged.body.user.name).not.toBe("Someone else");
  });
});

describe("/v1/api-keys", () => {
  it("creates a key shown once, lists it by prefix and scopes, and revokes it for the very next request", async () => {
    const created = await call(
      "POST",
      "/v1/api-keys",
      { name: "Zapier", scopes: ["read"] },
      { cookie: admin },
    );
    expect(created.status).toBe(200);
    const apiKey = created.body.api_key;
    expect(apiKey).toEqual({
      id: expect.any(String),
      name: "Zapier",
      prefix: apiKey.key.slice(4, 12),
      scopes: ["read"],
      last_used_at: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      revoked_at: null,
      key: expect.stringMatching(/^opk_[0-9A-Za-z]{36}$/),
    });

    const me = await s.api("GET", "/v1/me", undefined, { key: apiKey.key });
    expect([me.status, me.body.key.id, me.body.scopes]).toEqual([200, apiKey.id, ["read"]]);

    const list = await call("GET", "/v1/api-keys", undefined, { cookie: admin });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ ok: true, limit: 50, offset: 0 });
    expect(list.body.total).toBeGreaterThanOrEqual(2);
    const listed = list.body.api_keys.find((k: { id: string }) => k.id === apiKey.id);
    expect(listed).toMatchObject({
      name: "Zapier",
      prefix: apiKey.prefix,
      scopes: ["read"],
      revoked_at: null,
    });
    expect(listed.last_used_at).not.toBeNull();
    expect(JSON.stringify(list.body)).not.toContain(apiKey.key);
    expect(list.body.api_keys.some((k: { name: string }) => k.name === "Default key")).toBe(true);

    const revoked = await call("DELETE", `/v1/api-keys/${apiKey.id}`, undefined, { cookie: admin });
    expect(revoked.status).toBe(200);
    expect(revoked.body.api_key).toMatchObject({ id: apiKey.id, revoked_at: expect.any(String) });
    expect("key" in revoked.body.api_key).toBe(false);
    const after = await s.api("GET", "/v1/me", undefined, { key: apiKey.key });
    expect([after.status, after.body]).toEqual([401, { ok: false, error: "Invalid or missing API key" }]);
  });

  it("works with a bearer key with write; a read-only key can neither list nor create", async () => {
    expect((await s.api("GET", "/v1/api-keys")).status).toBe(200);
    const { key } = await s.newKey(["read"]);
    const list = await s.api("GET", "/v1/api-keys", undefined, { key });
    expect([list.status, list.body]).toEqual([
      403,
      { ok: false, error: "This API key cannot see API keys.", required_scope: "write" },
    ]);
    const create = await s.api("POST", "/v1/api-keys", { name: "x" }, { key });
    expect([create.status, create.body.error]).toEqual([403, "This API key cannot create and edit."]);
  });

  it("answers 422 for a bad body and 404 for a key of another workspace", async () => {
    const bad = await call("POST", "/v1/api-keys", { name: "x", scopes: ["admin"] }, { cookie: admin });
    expect([bad.status, bad.body.error]).toEqual([422, "scopes[0] must be one of read, write"]);
    const other = await s.newWorkspace("Other");
    const foreign = await call("DELETE", `/v1/api-keys/${other.keyId}`, undefined, { cookie: admin });
    expect([foreign.status, foreign.body]).toEqual([404, { ok: false, error: "Not found" }]);
    expect((await s.api("GET", "/v1/me", undefined, { key: other.key })).status).toBe(200);
  });
});

describe("/v1/users", () => {
  it("invites a user with a one-time setup link that creates their password and signs them in", async () => {
    const invited = await call(
      "POST",
      "/v1/users",
      { email: "Linus@Example.com", name: "Linus", role: "agent" },
      { cookie: admin },
    );
    expect(invited.status).toBe(200);
    expect(invited.body).toEqual({
      ok: true,
      user: {
        id: expect.any(String),
        email: "linus@example.com",
        name: "Linus",
        role: "agent",
        setup_pending: true,
        created_at: expect.any(String),
      },
      setup_url: expect.stringMatching(/^http:\/\/localhost:\d+\/setup\?token=[A-Za-z0-9_-]{43}$/),
    });
    // Before setup there is no password to sign in with.
    const early = await call("POST", "/auth/login", { email: "linus@example.com", password: PASSWORD });
    expect(early.status).toBe(401);

    const token = tokenOf(invited.body.setup_url);
    const done = await call("POST", "/auth/setup", { token, password: PASSWORD });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      user: { id: invited.body.user.id, email: "linus@example.com", name: "Linus", role: "agent" },
      workspace: { id: s.workspaceId },
    });
    const me = await call("GET", "/v1/me", undefined, { cookie: cookieOf(done) });
    expect(me.body.user.email).toBe("linus@example.com");
    expect((await call("POST", "/auth/setup", { token, password: PASSWORD })).status).toBe(410);
    await login("linus@example.com", PASSWORD);

    const list = await call("GET", "/v1/users", undefined, { cookie: admin });
    expect(list.status).toBe(200);
    const linus = list.body.users.find((u: { email: string }) => u.email === "linus@example.com");
    expect(linus).toMatchObject({ role: "agent", setup_pending: false });
    expect(list.body.users.map((u: { email: string }) => u.email)).toContain("ada@example.com");
  });

  it("answers 409 for a member invited twice and 422 for a bad e-mail or role", async () => {
    const again = await call(
      "POST",
      "/v1/users",
      { email: "ada@example.com", name: "A", role: "admin" },
      { cookie: admin },
    );
    expect([again.status, again.body]).toEqual([
      409,
      { ok: false, error: "This user is already a member of this workspace" },
    ]);
    const email = await call(
      "POST",
      "/v1/users",
      { email: "nope", name: "A", role: "admin" },
      { cookie: admin },
    );
    expect([email.status, email.body.error]).toEqual([422, "email must be a valid email address"]);
    const role = await call(
      "POST",
      "/v1/users",
      { email: "x@example.com", name: "A", role: "owner" },
      { cookie: admin },
    );
    expect([role.status, role.body.error]).toEqual([422, "role must be one of admin, agent"]);
  });

  it("adds an existing user to another workspace without a setup link", async () => {
    const other = await s.newWorkspace("Second");
    const r = await s.api(
      "POST",
      "/v1/users",
      { email: "ada@example.com", name: "ignored", role: "agent" },
      { key: other.key },
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      user: { id: adminId, name: "Ada Lovelace", role: "agent" },
      setup_url: null,
    });
    // Sign-in picks a workspace when asked; the first membership otherwise.
    const there = await call("POST", "/auth/login", {
      email: "ada@example.com",
      password: PASSWORD,
      workspace_id: other.workspaceId,
    });
    expect(there.body).toMatchObject({ workspace: { id: other.workspaceId, name: "Second" }, role: "agent" });
    const here = await call("POST", "/auth/login", { email: "ada@example.com", password: PASSWORD });
    expect(here.body.workspace.id).toBe(s.workspaceId);
    // Another workspace's user is not found here.
    const users = await s.api("GET", "/v1/users", undefined, { key: other.key });
    expect(users.body.users.map((u: { id: string }) => u.id)).toEqual([adminId]);
    const foreign = await s.api("GET", "/v1/users/00000000-0000-7000-8000-000000000000", undefined, {
      key: other.key,
    });
    expect(foreign.status).toBe(404);
  });

  it("refuses to remove or demote the last admin (409), and removing a member ends their sessions", async () => {
    const lastAdmin = { ok: false, error: "The last admin of a workspace cannot be removed or demoted" };
    const remove = await call("DELETE", `/v1/users/${adminId}`, undefined, { cookie: admin });
    expect([remove.status, remove.body]).toEqual([409, lastAdmin]);
    const demote = await call("PATCH", `/v1/users/${adminId}`, { role: "agent" }, { cookie: admin });
    expect([demote.status, demote.body]).toEqual([409, lastAdmin]);

    const second = await member("barbara@example.com", "admin");
    const demoted = await call("PATCH", `/v1/users/${adminId}`, { role: "agent" }, { cookie: second.cookie });
    expect(demoted.status).toBe(200);
    const back = await call("PATCH", `/v1/users/${adminId}`, { role: "admin" }, { cookie: second.cookie });
    expect(back.status).toBe(200);

    const removed = await call("DELETE", `/v1/users/${second.id}`, undefined, { cookie: admin });
    expect([removed.status, removed.body]).toEqual([200, { ok: true, deleted: true }]);
    expect((await call("GET", "/v1/me", undefined, { cookie: second.cookie })).status).toBe(401);
    const gone = await call("GET", `/v1/users/${second.id}`, undefined, { cookie: admin });
    expect(gone.status).toBe(404);
    // Not a member of any workspace any more: the password is right, but there is nowhere to go.
    const signIn = await call("POST", "/auth/login", { email: "barbara@example.com", password: PASSWORD });
    expect([signIn.status, signIn.body.error]).toEqual([
      403,
      "This account is not a member of any workspace",
    ]);
  });
});

describe("POST /auth/password", () => {
  it("changes the password and ends every other session of the user", async () => {
    const { cookie: first } = await member("edsger@example.com", "agent");
    const second = await login("edsger@example.com", PASSWORD);

    const short = await call(
      "POST",
      "/auth/password",
      { current_password: PASSWORD, new_password: "short" },
      { cookie: first },
    );
    expect([short.status, short.body.error]).toEqual([422, "new_password must be at least 10 characters"]);
    const wrong = await call(
      "POST",
      "/auth/password",
      { current_password: "not it at all", new_password: "a brand new password" },
      { cookie: first },
    );
    expect([wrong.status, wrong.body.error]).toEqual([422, "current_password is incorrect"]);

    const changed = await call(
      "POST",
      "/auth/password",
      { current_password: PASSWORD, new_password: "a brand new password" },
      { cookie: first },
    );
    expect([changed.status, changed.body]).toEqual([200, { ok: true }]);
    expect((await call("GET", "/auth/session", undefined, { cookie: first })).status).toBe(200);
    expect((await call("GET", "/auth/session", undefined, { cookie: second })).status).toBe(401);
    expect((await call("GET", "/v1/me", undefined, { cookie: second })).status).toBe(401);
    const old = await call("POST", "/auth/login", { email: "edsger@example.com", password: PASSWORD });
    expect(old.status).toBe(401);
    await login("edsger@example.com", "a brand new password");
  });

  it("answers 401 without a session", async () => {
    const r = await call("POST", "/auth/password", {
      current_password: PASSWORD,
      new_password: "whatever long",
    });
    expect([r.status, r.body]).toEqual([401, { ok: false, error: "Not signed in" }]);
  });
});

describe("outreach users create", () => {
  function cli(args: string[], stdin?: string) {
    const result = spawnSync([process.execPath, main, ...args, "--db", s.dbPath], {
      env: { ...process.env, LOG_LEVEL: "error", ...s.cliEnv },
      stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
      stdout: "pipe",
      stderr: "pipe",
    });
    return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
  }

  it("--password-stdin sets the password read from stdin; the user signs in on the running server", async () => {
    const r = cli(
      [
        "users",
        "create",
        "--email",
        "Alan@Example.com",
        "--name",
        "Alan",
        "--workspace",
        s.workspaceId,
        "--role",
        "agent",
        "--password-stdin",
        "--json",
      ],
      "a password from stdin\nignored second line\n",
    );
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(JSON.parse(r.stdout)).toMatchObject({
      email: "alan@example.com",
      name: "Alan",
      role: "agent",
      setup_pending: false,
      workspace_id: s.workspaceId,
      setup_url: null,
    });
    const signIn = await call("POST", "/auth/login", {
      email: "alan@example.com",
      password: "a password from stdin",
    });
    expect([signIn.status, signIn.body.role]).toEqual([200, "agent"]);
  });

  it("without --password-stdin prints a one-time setup link for the user (admin by default)", async () => {
    const r = cli(["users", "create", "--email", "kathleen@example.com", "--workspace", s.workspaceId]);
    expect(r.code).toBe(0);
    const url = r.stdout.match(/(\S+\/setup\?token=[A-Za-z0-9_-]{43})/)?.[1] as string;
    expect(url).toBeDefined();
    const done = await call("POST", "/auth/setup", { token: tokenOf(url), password: PASSWORD });
    expect(done.body).toMatchObject({
      user: { email: "kathleen@example.com", name: "kathleen", role: "admin" },
    });
  });

  it("refuses a short password, a bad role and an unknown workspace with a non-zero exit", () => {
    const short = cli(
      ["users", "create", "--email", "z@example.com", "--workspace", s.workspaceId, "--password-stdin"],
      "short\n",
    );
    expect(short.code).not.toBe(0);
    expect(short.stderr).toContain("password must be at least 10 characters");
    const role = cli([
      "users",
      "create",
      "--email",
      "z@example.com",
      "--workspace",
      s.workspaceId,
      "--role",
      "boss",
    ]);
    expect([role.code, role.stderr.trim()]).toEqual([2, "outreach: --role must be one of admin, agent"]);
    const workspace = cli(["users", "create", "--email", "z@example.com", "--workspace", "nope"]);
    expect(workspace.code).not.toBe(0);
    expect(workspace.stderr).toContain("workspace nope does not exist");
  });
});

describe("sign-in rate limit", () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer();
  });
  afterAll(async () => await limited.stop());

  const attempt = async (email: string, password: string) =>
    await limited.api("POST", "/auth/login", { email, password }, { key: null });

  it("refuses every attempt after 10 failures in 15 minutes, the right password too, with retry_after", async () => {
    const url = limited.announcement.match(/(\S+\/setup\?token=[A-Za-z0-9_-]{43})/)?.[1] as string;
    const setup = await limited.api(
      "POST",
      "/auth/setup",
      { token: tokenOf(url), name: "Root", email: "root@example.com", password: PASSWORD },
      { key: null },
    );
    expect(setup.status).toBe(200);
    for (let i = 0; i < 10; i++) {
      const r = await attempt(`guess${i}@example.com`, "wrong password");
      expect([i, r.status]).toEqual([i, 401]);
    }
    const refused = await attempt("root@example.com", PASSWORD);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      ok: false,
      error: "Too many sign-in attempts: try again later",
      retry_after: expect.any(Number),
    });
    expect(refused.body.retry_after).toBeGreaterThan(800);
    expect(refused.body.retry_after).toBeLessThanOrEqual(900);
    expect(refused.headers.get("retry-after")).toBe(String(refused.body.retry_after));
  });

  it("counts per e-mail across addresses, in the database", async () => {
    const db = limited.server.handle.db;
    const now = Date.now();
    const email = "target@example.com";
    for (let i = 0; i < 10; i++) {
      const subjects = loginSubjects(`10.0.0.${i}`, email);
      expect(await loginRetryAfter(db, [subjects.address, subjects.email], now)).toBeNull();
      await recordLoginFailure(db, [subjects.address, subjects.email], now);
    }
    const fresh = loginSubjects("10.0.1.1", "TARGET@example.com");
    expect(await loginRetryAfter(db, [fresh.address, fresh.email], now)).toBe(900);
    expect(await loginRetryAfter(db, [fresh.address], now)).toBeNull();
    // Failures leave the window after 15 minutes.
    expect(await loginRetryAfter(db, [fresh.email], now + 15 * 60 * 1000 + 1)).toBeNull();
  });
});

describe("sign-in rate limit under concurrent guesses (API.md §7.2)", () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer();
    const url = limited.announcement.match(/(\S+\/setup\?token=[A-Za-z0-9_-]{43})/)?.[1] as string;
    const setup = await limited.api(
      "POST",
      "/auth/setup",
      { token: tokenOf(url), name: "Root", email: "root@example.com", password: PASSWORD },
      { key: null },
    );
    if (setup.status !== 200) throw new Error(`setup failed: ${JSON.stringify(setup.body)}`);
  });
  afterAll(async () => await limited.stop());

  const attempt = async (email: string, password: string) =>
    await limited.api("POST", "/auth/login", { email, password }, { key: null });

  it("gives back the place of a right password: 9 failures and a sign-in leave one more guess", async () => {
    for (let i = 0; i < 9; i++)
      expect([i, (await attempt("root@example.com", "wrong password")).status]).toEqual([i, 401]);
    expect((await attempt("root@example.com", PASSWORD)).status).toBe(200);
    // The address still has its 9 failures: the 10th is checked, the 11th is refused unchecked.
    expect((await attempt("nobody@example.com", "wrong password")).status).toBe(401);
    expect((await attempt("root@example.com", PASSWORD)).status).toBe(429);
    // The next case starts from a clean count.
    const db = outsideConnection(limited);
    await db.run("DELETE FROM login_failures");
    await db.close();
  });

  it("checks at most 10 passwords when 60 sign-ins for one e-mail arrive at once (59 wrong, 1 right)", async () => {
    const passwords = Array.from({ length: 60 }, (_, i) => (i === 30 ? PASSWORD : `wrong password ${i}`));
    const answers = await Promise.all(
      passwords.map(async (password) => await attempt("root@example.com", password)),
    );
    const checked = answers.filter((a) => a.status !== 429).length;
    const statuses = new Set(answers.map((a) => a.status));
    expect({
      checked: checked <= 10,
      refusedOnly429: [...statuses].every((s) => [200, 401, 429].includes(s)),
    }).toEqual({
      checked: true,
      refusedOnly429: true,
    });
    expect(answers.filter((a) => a.status === 429).length).toBeGreaterThanOrEqual(50);
  });
});

describe("Idempotency-Key on answers with a secret", () => {
  it("never stores a new key or a setup link: a repeated key answers 409 without them", async () => {
    const headers = { "idempotency-key": "create-key-1" };
    const first = await s.api("POST", "/v1/api-keys", { name: "Once" }, { headers });
    expect(first.status).toBe(200);
    const again = await s.api("POST", "/v1/api-keys", { name: "Once" }, { headers });
    expect([again.status, again.body]).toEqual([
      409,
      {
        ok: false,
        error: "Idempotency-Key was already used: its answer held a secret, which is shown only once",
      },
    ]);
    const invite = { email: "ida@example.com", name: "Ida", role: "agent" };
    const invited = await s.api("POST", "/v1/users", invite, { headers: { "idempotency-key": "invite-1" } });
    expect(invited.status).toBe(200);
    const db = outsideConnection(s);
    const stored = await db.all("SELECT response_body FROM idempotency_keys");
    await db.close();
    const everything = JSON.stringify(stored);
    expect(everything).not.toContain(first.body.api_key.key);
    expect(everything).not.toContain(tokenOf(invited.body.setup_url));
  });
});
