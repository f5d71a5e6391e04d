import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

describe("GET /v1/settings", () => {
  it("answers the workspace settings with their defaults", async () => {
    const r = await s.api("GET", "/v1/settings");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      settings: {
        name: "Default",
        timezone: "America/New_York",
        default_number_id: null,
        conversion_tracking_enabled: true,
        help_reply: expect.stringContaining("STOP"),
        opt_out_reply: expect.any(String),
        opt_in_reply: expect.any(String),
        quiet_hours: { enabled: true, start_hour: 21, end_hour: 8 },
        costs: { sms_segment: 0.0079, call_minute: 0.014, currency: "USD" },
        public_id: expect.stringMatching(/^ws_[0-9a-z]{20}$/),
        state_rules: true,
        frequency_cap: { enabled: true, max_messages: 3, window_hours: 24, apply_to_all: false },
        paused_states: [],
        require_registration: false,
        one_off_daily_limit: 5000,
        number_orders_daily_limit: 50,
      },
    });
  });
});

describe("PATCH /v1/settings", () => {
  it("changes only the given fields, nested ones included, and ignores unknown fields", async () => {
    const r = await s.api("PATCH", "/v1/settings", {
      timezone: "America/Chicago",
      help_reply: "Acme: reply STOP to opt out.",
      quiet_hours: { start_hour: 20 },
      favourite_colour: "blue",
    });
    expect(r.status).toBe(200);
    expect(r.body.settings).toMatchObject({
      name: "Default",
      timezone: "America/Chicago",
      help_reply: "Acme: reply STOP to opt out.",
      quiet_hours: { enabled: true, start_hour: 20, end_hour: 8 },
    });
    expect(r.body.settings.favourite_colour).toBeUndefined();
    const again = await s.api("GET", "/v1/settings");
    expect(again.body.settings).toEqual(r.body.settings);
  });

  it("renames the workspace, and /v1/me shows the new name at once", async () => {
    await s.api("PATCH", "/v1/settings", { name: "Acme" });
    const me = await s.api("GET", "/v1/me");
    expect(me.body.workspace.name).toBe("Acme");
  });

  it("answers 422 for a default_number_id that is not a number of the workspace", async () => {
    const r = await s.api("PATCH", "/v1/settings", {
      default_number_id: "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77",
    });
    expect(r.status).toBe(422);
    expect(r.body.ok).toBe(false);
    expect(r.body.error).toStartWith("default_number_id");
  });

  it("changes the sending rules: state_rules, frequency_cap (partially) and paused_states (upper-cased, once each)", async () => {
    const w = await s.newWorkspace("Rules");
    const r = await s.api(
      "PATCH",
      "/v1/settings",
      {
        state_rules: false,
        frequency_cap: { max_messages: 5, apply_to_all: true },
        paused_states: ["la", "LA", "ON"],
      },
      { key: w.key },
    );
    expect(r.status).toBe(200);
    expect(r.body.settings).toMatchObject({
      state_rules: false,
      frequency_cap: { enabled: true, max_messages: 5, window_hours: 24, apply_to_all: true },
      paused_states: ["LA", "ON"],
    });
    expect((await s.api("GET", "/v1/settings", undefined, { key: w.key })).body.settings).toEqual(
      r.body.settings,
    );
    const cleared = await s.api("PATCH", "/v1/settings", { paused_states: [] }, { key: w.key });
    expect(cleared.body.settings.paused_states).toEqual([]);
  });

  it("answers 422 naming the field for bad sending rules, and changes nothing", async () => {
    const w = await s.newWorkspace("Bad rules");
    const before = (await s.api("GET", "/v1/settings", undefined, { key: w.key })).body.settings;
    const cases: [Record<string, unknown>, string][] = [
      [{ state_rules: "yes" }, "state_rules"],
      [{ frequency_cap: { max_messages: 0 } }, "frequency_cap.max_messages"],
      [{ frequency_cap: { max_messages: 2.5 } }, "frequency_cap.max_messages"],
      [
        { frequency_cap: { max_messages: 2147483648 } },
        "frequency_cap.max_messages must be between 1 and 1000000000",
      ],
      [{ frequency_cap: { window_hours: 0 } }, "frequency_cap.window_hours"],
      [{ frequency_cap: { window_hours: 10_000 } }, "frequency_cap.window_hours"],
      [{ frequency_cap: { enabled: "no" } }, "frequency_cap.enabled"],
      [{ paused_states: "LA" }, "paused_states"],
      [
        { paused_states: ["LA", "ZZ"] },
        "paused_states[1] must be a US state or Canadian province code (e.g. LA)",
      ],
      [{ paused_states: ["Louisiana"] }, "paused_states[0]"],
    ];
    for (const [body, error] of cases) {
      const res = await s.api("PATCH", "/v1/settings", body, { key: w.key });
      expect({ body, status: res.status, error: res.body.error }).toEqual({
        body,
        status: 422,
        error: expect.stringContaining(error),
      });
    }
    expect((await s.api("GET", "/v1/settings", undefined, { key: w.key })).body.settings).toEqual(before);
  });

  it("keeps workspaces apart", async () => {
    const other = await s.newWorkspace("Other");
    await s.api("PATCH", "/v1/settings", { help_reply: "Other help" }, { key: other.key });
    const mine = await s.api("GET", "/v1/settings");
    expect(mine.body.settings.help_reply).not.toBe("Other help");
  });
});

describe("settings.costs and public_id", () => {
  it("changes costs field by field, upper-cases the currency, and keeps public_id read-only", async () => {
    const before = await s.api("GET", "/v1/settings");
    const r = await s.api("PATCH", "/v1/settings", {
      costs: { sms_segment: 0.01, currency: "eur" },
      public_id: "ws_mine",
    });
    expect(r.status).toBe(200);
    expect(r.body.settings.costs).toEqual({ sms_segment: 0.01, call_minute: 0.014, currency: "EUR" });
    expect(r.body.settings.public_id).toBe(before.body.settings.public_id);
    await s.api("PATCH", "/v1/settings", { costs: { sms_segment: 0.0079, currency: "USD" } });
  });

  it("answers 422 naming the cost field for bad costs, and changes nothing", async () => {
    for (const [costs, error] of [
      [{ sms_segment: -1 }, "costs.sms_segment must be between 0 and 100"],
      [{ call_minute: "x" }, "costs.call_minute must be a number"],
      [{ currency: "E1" }, "costs.currency must be a three-letter currency code (ISO 4217)"],
    ] as const) {
      const r = await s.api("PATCH", "/v1/settings", { costs });
      expect(r.status).toBe(422);
      expect(r.body.error).toBe(error);
    }
    expect((await s.api("GET", "/v1/settings")).body.settings.costs.sms_segment).toBe(0.0079);
  });

  it("gives each workspace its own public id", async () => {
    const other = await s.newWorkspace("Other");
    const mine = (await s.api("GET", "/v1/settings")).body.settings.public_id;
    const theirs = (await s.api("GET", "/v1/settings", undefined, { key: other.key })).body.settings
      .public_id;
    expect(theirs).not.toBe(mine);
  });
});

describe("rate limiting", () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ rateLimitRps: 1, rateLimitBurst: 3 });
  });
  afterAll(async () => await limited.stop());

  it("answers 429 with Retry-After once a key's bucket is empty, with the limit headers throughout", async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await limited.api("GET", "/v1/me"));
    expect(answers.slice(0, 3).map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers[0].headers.get("x-ratelimit-limit")).toBe("3");
    expect(answers[0].headers.get("x-ratelimit-remaining")).toBe("2");
    expect(Number(answers[0].headers.get("x-ratelimit-reset"))).toBeGreaterThanOrEqual(1);
    const refused = answers[3];
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ ok: false, error: "Rate limit exceeded", retry_after: 1 });
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
  });

  it("keeps one bucket per workspace: another key of the same workspace is refused, another workspace is not", async () => {
    const { key } = await limited.newKey(["read"]);
    expect((await limited.api("GET", "/v1/me", undefined, { key })).status).toBe(429);
    const other = await limited.newWorkspace("Other");
    expect((await limited.api("GET", "/v1/me", undefined, { key: other.key })).status).toBe(200);
  });

  it("limits requests without a live key per client address, with the headers on every answer", async () => {
    const answers = [];
    for (let i = 0; i < 4; i++)
      answers.push(await limited.api("GET", "/v1/me", undefined, { key: `opk_wrong${i}` }));
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 429]);
    expect(answers[0].headers.get("x-ratelimit-limit")).toBe("3");
    expect(answers[0].headers.get("x-ratelimit-remaining")).toBe("2");
    expect(answers[3].body).toEqual({ ok: false, error: "Rate limit exceeded", retry_after: 1 });
    // The same address's bucket covers the public endpoints; a live key's workspace still has its own.
    const health = await fetch(`${limited.url}/healthz`);
    expect(health.status).toBe(429);
    expect(health.headers.get("x-ratelimit-limit")).toBe("3");
    const { key } = await limited.newWorkspace("Third");
    expect((await limited.api("GET", "/v1/me", undefined, { key })).status).toBe(200);
  });
});

describe("rate limiting per workspace (API.md §7.2)", () => {
  let limited: TestServer;
  beforeAll(async () => {
    // A bucket that refills too slowly to matter during the test: only the burst counts.
    limited = await startTestServer({ rateLimitRps: 0.001, rateLimitBurst: 8 });
  });
  afterAll(async () => await limited.stop());

  it("gives four keys of one workspace together the budget of one key", async () => {
    const keys = [limited.key];
    for (let i = 0; i < 3; i++) keys.push((await limited.newKey(["read", "write"])).key);
    const statuses: number[] = [];
    for (let i = 0; i < 16; i++)
      statuses.push((await limited.api("GET", "/v1/me", undefined, { key: keys[i % 4] })).status);
    const allowed = statuses.filter((status) => status === 200).length;
    expect({ allowed, refused: statuses.length - allowed }).toEqual({ allowed: 8, refused: 8 });
  });

  it("counts a dashboard session of the workspace against the same bucket", async () => {
    // The workspace's bucket is empty after the case above; signing in is not a /v1 request.
    const url = limited.announcement.match(/\/setup\?token=([A-Za-z0-9_-]{43})/)?.[1] as string;
    const setup = await limited.api(
      "POST",
      "/auth/setup",
      { token: url, name: "Root", email: "root@example.com", password: "correct horse battery" },
      { key: null },
    );
    const cookie = setup.headers.get("set-cookie")?.match(/^outreach_session=([A-Za-z0-9_-]{43});/)?.[1];
    expect(cookie).toBeDefined();
    const me = await limited.api("GET", "/v1/me", undefined, {
      key: null,
      headers: { cookie: `outreach_session=${cookie}` },
    });
    expect({ status: me.status, error: me.body.error }).toEqual({
      status: 429,
      error: "Rate limit exceeded",
    });
  });
});
