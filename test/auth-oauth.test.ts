import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { users } from "../src/db/schema";
import { startTestServer, type TestServer } from "./support/server";

// OAuth sign-in (API.md §6.7): GitHub and Google through arctic, with the providers' endpoints
// answered in-process (arctic and the server call the global fetch, replaced here for their hosts
// only). It signs in existing users by a verified e-mail and never creates one.

const PASSWORD = "correct horse battery";
let s: TestServer;
const realFetch = globalThis.fetch;

/** What the fake providers answer next. */
const fake = {
  githubEmails: [] as { email: string; verified: boolean; primary: boolean }[],
  googleClaims: {} as Record<string, unknown>,
  tokenStatus: 200,
  calls: [] as string[],
};

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

function fakeProvider(url: string): Response | null {
  const json = (body: unknown, status = 200) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  if (url === "https://github.com/login/oauth/access_token") {
    fake.calls.push("github token");
    if (fake.tokenStatus !== 200) return json({ error: "bad_verification_code" }, fake.tokenStatus);
    return json({ access_token: "gho_fake", token_type: "bearer", scope: "user:email" });
  }
  if (url === "https://api.github.com/user/emails") {
    fake.calls.push("github emails");
    return json(fake.githubEmails);
  }
  if (url === "https://oauth2.googleapis.com/token") {
    fake.calls.push("google token");
    const idToken = `${base64url({ alg: "RS256", typ: "JWT" })}.${base64url(fake.googleClaims)}.c2ln`;
    return json({ access_token: "ya29.fake", token_type: "Bearer", expires_in: 3600, id_token: idToken });
  }
  return null;
}

beforeAll(async () => {
  globalThis.fetch = Object.assign(
    async (input: string | URL | Request, init?: RequestInit) => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      return Promise.resolve(fakeProvider(url) ?? (await realFetch(input, init)));
    },
    { preconnect: realFetch.preconnect },
  ) as typeof fetch;
  s = await startTestServer(
    {},
    {
      OAUTH_GITHUB_CLIENT_ID: "gh-client",
      OAUTH_GITHUB_CLIENT_SECRET: "gh-secret",
      OAUTH_GOOGLE_CLIENT_ID: "google-client",
      OAUTH_GOOGLE_CLIENT_SECRET: "google-secret",
    },
  );
  // The existing user OAuth may sign in: the first admin, made with serve's setup link.
  const url = s.announcement.match(/\/setup\?token=([A-Za-z0-9_-]{43})/)?.[1] as string;
  const setup = await s.api(
    "POST",
    "/auth/setup",
    { token: url, name: "Ada", email: "ada@example.com", password: PASSWORD },
    { key: null },
  );
  expect(setup.status).toBe(200);
});
afterAll(async () => {
  globalThis.fetch = realFetch;
  await s.stop();
});

/** GET without following redirects. */
const get = async (path: string, cookie?: string) =>
  await realFetch(s.url + path, { redirect: "manual", headers: cookie ? { cookie } : {} });

/** Starts a sign-in; answers the provider's URL and the state cookie to send back. */
async function start(provider: string) {
  const r = await get(`/auth/oauth/${provider}`);
  expect(r.status).toBe(302);
  const location = new URL(r.headers.get("location") as string);
  const cookie = (r.headers.get("set-cookie") ?? "").split(";")[0];
  expect(cookie).toMatch(/^outreach_oauth=[^.;]+\.[^.;]+$/);
  return { location, cookie, state: location.searchParams.get("state") as string };
}

const sessionOf = (r: Response) =>
  r.headers
    .getSetCookie()
    .find((c) => c.startsWith("outreach_session="))
    ?.match(/^outreach_session=([^;]*)/)?.[1];

describe("GET /auth/providers", () => {
  it("lists the configured providers", async () => {
    const r = await s.api("GET", "/auth/providers", undefined, { key: null });
    expect([r.status, r.body]).toEqual([200, { ok: true, providers: ["github", "google"] }]);
  });
});

describe("GitHub", () => {
  it("redirects to GitHub with a state bound to a short-lived cookie", async () => {
    const r = await get("/auth/oauth/github");
    const location = new URL(r.headers.get("location") as string);
    expect(location.origin + location.pathname).toBe("https://github.com/login/oauth/authorize");
    expect(location.searchParams.get("client_id")).toBe("gh-client");
    expect(location.searchParams.get("scope")).toBe("user:email");
    expect(location.searchParams.get("redirect_uri")).toMatch(/\/auth\/oauth\/github\/callback$/);
    expect(r.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Lax; Path=\/auth\/oauth; Max-Age=600/);
  });

  it("signs in the existing user by a verified e-mail and redirects to /", async () => {
    fake.githubEmails = [
      { email: "ada@personal.example", verified: true, primary: true },
      { email: "ADA@example.com", verified: true, primary: false },
    ];
    const { cookie, state } = await start("github");
    const r = await get(`/auth/oauth/github/callback?code=abc&state=${state}`, cookie);
    expect([r.status, r.headers.get("location")]).toEqual([302, "/"]);
    const token = sessionOf(r) as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const me = await s.api("GET", "/v1/me", undefined, {
      key: null,
      headers: { cookie: `outreach_session=${token}` },
    });
    expect(me.body.user).toMatchObject({ email: "ada@example.com", role: "admin" });
  });

  it("never signs in by an unverified e-mail, and never creates a user", async () => {
    const before = (await s.server.handle.db.select().from(users).all()).length;
    for (const emails of [
      [{ email: "ada@example.com", verified: false, primary: true }],
      [{ email: "stranger@example.com", verified: true, primary: true }],
    ]) {
      fake.githubEmails = emails;
      const { cookie, state } = await start("github");
      const r = await get(`/auth/oauth/github/callback?code=abc&state=${state}`, cookie);
      expect([r.status, r.headers.get("location"), sessionOf(r)]).toEqual([
        302,
        "/?oauth_error=no_account",
        undefined,
      ]);
    }
    expect((await s.server.handle.db.select().from(users).all()).length).toBe(before);
  });

  it("refuses a callback whose state is missing or another browser's, before calling GitHub", async () => {
    fake.githubEmails = [{ email: "ada@example.com", verified: true, primary: true }];
    const { cookie, state } = await start("github");
    fake.calls = [];
    const other = await start("github");
    for (const [path, sentCookie] of [
      [`/auth/oauth/github/callback?code=abc&state=${state}`, undefined],
      [`/auth/oauth/github/callback?code=abc&state=${state}`, other.cookie],
      [`/auth/oauth/github/callback?code=abc`, cookie],
    ] as [string, string | undefined][]) {
      const r = await get(path, sentCookie);
      expect([r.status, r.headers.get("location"), sessionOf(r)]).toEqual([
        302,
        "/?oauth_error=state",
        undefined,
      ]);
    }
    expect(fake.calls).toEqual([]);
  });

  it("redirects with provider when GitHub refuses the code, and denied without a code", async () => {
    fake.tokenStatus = 400;
    const first = await start("github");
    const r = await get(`/auth/oauth/github/callback?code=bad&state=${first.state}`, first.cookie);
    expect(r.headers.get("location")).toBe("/?oauth_error=provider");
    fake.tokenStatus = 200;
    const second = await start("github");
    const declined = await get(
      `/auth/oauth/github/callback?error=access_denied&state=${second.state}`,
      second.cookie,
    );
    expect(declined.headers.get("location")).toBe("/?oauth_error=denied");
  });
});

describe("Google", () => {
  it("signs in by the ID token's verified e-mail, with PKCE", async () => {
    const { location, cookie, state } = await start("google");
    expect(location.searchParams.get("code_challenge_method")).toBe("S256");
    expect(location.searchParams.get("scope")).toBe("openid email");
    fake.googleClaims = { sub: "1", email: "Ada@Example.com", email_verified: true };
    const r = await get(`/auth/oauth/google/callback?code=abc&state=${state}`, cookie);
    expect([r.status, r.headers.get("location")]).toEqual([302, "/"]);
    expect(sessionOf(r)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("refuses an unverified e-mail", async () => {
    const { cookie, state } = await start("google");
    fake.googleClaims = { sub: "1", email: "ada@example.com", email_verified: false };
    const r = await get(`/auth/oauth/google/callback?code=abc&state=${state}`, cookie);
    expect(r.headers.get("location")).toBe("/?oauth_error=no_account");
  });
});

describe("an unconfigured provider", () => {
  it("answers 404", async () => {
    for (const path of ["/auth/oauth/facebook", "/auth/oauth/facebook/callback?code=x&state=y"]) {
      const r = await get(path);
      expect([path, r.status, await r.json()]).toEqual([path, 404, { ok: false, error: "Not found" }]);
    }
  });
});
