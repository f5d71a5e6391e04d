import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { checkLinkDomain } from "../src/domain/attribution/link-domains";
import { outsideConnection } from "./support/database";
import { eventually, handOffs, orderNumber } from "./support/messaging";
import { startTestServer, type TestServer } from "./support/server";
import { zoneAtLocalHour } from "./support/zones";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers
type Json = any;

/**
 * What the check meets, by the domain it is sent for (LINK_DOMAIN_CHECK_BASE points here, the
 * domain in `Host`): `*.proxied.test` is forwarded to the server under test, as a CNAME or a
 * reverse proxy would; the others answer what a domain that does not reach it would.
 */
let s: TestServer;
let stub: ReturnType<typeof Bun.serve>;
const CHECK_TIMEOUT_MS = 300;

beforeAll(async () => {
  stub = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const host = (request.headers.get("host") ?? "").toLowerCase();
      const path = new URL(request.url).pathname;
      if (host.endsWith(".proxied.test"))
        return fetch(`${s.url}${path}`, { headers: { host }, redirect: "manual" });
      if (host === "missing.example.net" || host.endsWith(".missing.test"))
        return new Response("nope", { status: 404 });
      if (host === "wrong.example.net") return new Response("0123456789abcdefghijABCDEFGHIJ01");
      if (host === "moved.example.net")
        return new Response(null, { status: 301, headers: { location: `https://elsewhere.example${path}` } });
      if (host === "huge.example.net") return new Response("x".repeat(1_000_000));
      if (host === "slow.example.net") {
        await Bun.sleep(CHECK_TIMEOUT_MS * 5);
        return new Response("late");
      }
      return new Response("unknown host", { status: 421 });
    },
  });
  s = await startTestServer(
    { publicUrl: "https://outreach.example.com" },
    {
      LINK_DOMAIN_CHECK_BASE: `http://127.0.0.1:${stub.port}`,
      LINK_DOMAIN_CHECK_TIMEOUT_MS: String(CHECK_TIMEOUT_MS),
      SIMULATED_DELIVERY_MS: "20",
    },
  );
  await s.api("PATCH", "/v1/settings", { quiet_hours: { enabled: false }, state_rules: false });
});
afterAll(async () => {
  await s.stop();
  stub.stop(true);
});

let domainCount = 0;
/** A new domain name under the proxy, so each test has its own. */
const proxied = (label = "go") => `${label}${++domainCount}.proxied.test`;

async function addDomain(domain: string, key?: string): Promise<Json> {
  const answer = await s.api("POST", "/v1/link-domains", { domain }, { key });
  if (answer.status !== 200) throw new Error(`could not add ${domain}: ${JSON.stringify(answer.body)}`);
  return answer.body.link_domain;
}

async function verifiedDomain(key?: string, label?: string): Promise<Json> {
  const added = await addDomain(proxied(label), key);
  const verified = await s.api("POST", `/v1/link-domains/${added.id}/verify`, undefined, { key });
  if (verified.body.link_domain?.status !== "verified")
    throw new Error(`could not verify: ${JSON.stringify(verified.body)}`);
  return verified.body.link_domain;
}

describe("POST /v1/link-domains", () => {
  it("adds a domain as pending, lower case without its trailing dot, with the check URL and token", async () => {
    const r = await s.api("POST", "/v1/link-domains", { domain: "  Go.AcmeBikes-1.proxied.TEST. " });
    expect(r.status).toBe(200);
    const domain = r.body.link_domain;
    expect({ ...domain }).toMatchObject({
      domain: "go.acmebikes-1.proxied.test",
      status: "pending",
      is_default: false,
      failure_reason: null,
      verified_at: null,
    });
    expect(domain.verification.method).toBe("http");
    expect(domain.verification.token).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(domain.verification.url).toBe(
      `https://go.acmebikes-1.proxied.test/.well-known/outreach/${domain.verification.token}`,
    );
    expect(domain.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("stores an internationalised name in its ASCII form", async () => {
    const r = await s.api("POST", "/v1/link-domains", { domain: "links.bücher.example" });
    expect(r.status).toBe(200);
    expect(r.body.link_domain.domain).toBe("links.xn--bcher-kva.example");
  });

  const BAD: [string, unknown, string][] = [
    ["an empty name", "  ", "domain is required"],
    ["a scheme", "https://go.example.org", "domain must be a host name, without a scheme (like https://)"],
    ["a path", "go.example.org/r", "domain must be a host name, without a path"],
    ["a query", "go.example.org?x=1", "domain must be a host name, without a path"],
    ["a port", "go.example.org:8443", "domain must be a host name, without a port"],
    ["spaces", "go example.org", "domain must be a host name, without spaces"],
    ["user information", "me@go.example.org", "domain must be a host name, without user information"],
    [
      "a single label",
      "localhost",
      "domain must be a fully qualified host name with at least two labels (like go.example.com)",
    ],
    [
      "more than 253 characters",
      `${`${"a".repeat(60)}.`.repeat(4)}example.org`,
      "domain is too long (max 253)",
    ],
    [
      "far more than 253 characters",
      `${`${"a".repeat(60)}.`.repeat(20)}example.org`,
      "domain is too long (max 253)",
    ],
    [
      "a label longer than 63",
      `${"a".repeat(64)}.example.org`,
      `domain has a label longer than 63 characters (${"a".repeat(20)}…)`,
    ],
    [
      "a label starting with a hyphen",
      "-go.example.org",
      'domain has an invalid label "-go" (letters, digits and inner hyphens only)',
    ],
    [
      "an underscore",
      "go_links.example.org",
      'domain has an invalid label "go_links" (letters, digits and inner hyphens only)',
    ],
    ["an empty label", "go..example.org", "domain must not have an empty label"],
    ["an IPv4 address", "203.0.113.7", "domain must be a host name, not an IP address"],
    ["an IPv4 address with a port", "203.0.113.7:80", "domain must be a host name, without a port"],
    ["an IPv6 address", "2001:db8::1", "domain must be a host name, not an IP address"],
    ["a bracketed IPv6 address", "[2001:db8::1]", "domain must be a host name, not an IP address"],
    ["an IPv4-mapped IPv6 address", "::ffff:10.0.0.1", "domain must be a host name, not an IP address"],
    ["a numeric top-level label", "10.0.0", "domain must be a host name, not an IP address"],
    ["bit.ly", "bit.ly", "domain is a public URL shortener (bit.ly): carriers filter its links"],
    [
      "a subdomain of bit.ly",
      "acme.bit.ly",
      "domain is a public URL shortener (bit.ly): carriers filter its links",
    ],
    [
      "tinyurl.com",
      "TinyURL.com",
      "domain is a public URL shortener (tinyurl.com): carriers filter its links",
    ],
    ["t.co", "t.co", "domain is a public URL shortener (t.co): carriers filter its links"],
    ["cutt.ly", "cutt.ly", "domain is a public URL shortener (cutt.ly): carriers filter its links"],
    ["bitly.com", "bitly.com", "domain is a public URL shortener (bitly.com): carriers filter its links"],
    ["j.mp", "j.mp", "domain is a public URL shortener (j.mp): carriers filter its links"],
    ["lnkd.in", "lnkd.in", "domain is a public URL shortener (lnkd.in): carriers filter its links"],
    ["tiny.cc", "tiny.cc", "domain is a public URL shortener (tiny.cc): carriers filter its links"],
    [
      "the server's own PUBLIC_URL host",
      "Outreach.Example.com.",
      "domain is this server's own PUBLIC_URL host: links use it without a link domain",
    ],
  ];
  for (const [name, domain, error] of BAD) {
    it(`answers 422 for ${name}`, async () => {
      const r = await s.api("POST", "/v1/link-domains", { domain });
      expect({ name, status: r.status, error: r.body.error }).toEqual({ name, status: 422, error });
    });
  }

  it("answers 422 without a domain, or with one that is not a string", async () => {
    const missing = await s.api("POST", "/v1/link-domains", {});
    expect([missing.status, missing.body.error]).toEqual([422, "domain is required"]);
    const number = await s.api("POST", "/v1/link-domains", { domain: 42 });
    expect(number.status).toBe(422);
    expect(number.body.error).toContain("domain");
  });

  it("answers 409 for a domain this workspace or another already has", async () => {
    const domain = proxied("dup");
    await addDomain(domain);
    const again = await s.api("POST", "/v1/link-domains", { domain: domain.toUpperCase() });
    expect([again.status, again.body.error]).toEqual([
      409,
      "domain is already a link domain of this workspace",
    ]);
    const other = await s.newWorkspace("Taker");
    const taken = await s.api("POST", "/v1/link-domains", { domain }, { key: other.key });
    expect([taken.status, taken.body.error]).toEqual([409, "domain is already used by another workspace"]);
  });

  it("needs the write scope", async () => {
    const reader = await s.newKey(["read"]);
    const r = await s.api("POST", "/v1/link-domains", { domain: proxied() }, { key: reader.key });
    expect(r.status).toBe(403);
  });
});

describe("GET /v1/link-domains", () => {
  it("lists newest first with total, limit and offset, filtered by status", async () => {
    const ws = await s.newWorkspace("Lister");
    const a = await addDomain(proxied("list"), ws.key);
    const b = await addDomain(proxied("list"), ws.key);
    const c = await verifiedDomain(ws.key, "list");
    const page = await s.api("GET", "/v1/link-domains?limit=2&offset=0", undefined, { key: ws.key });
    expect(page.body).toMatchObject({ ok: true, total: 3, limit: 2, offset: 0 });
    expect(page.body.link_domains.map((d: Json) => d.id)).toEqual([c.id, b.id]);
    const rest = await s.api("GET", "/v1/link-domains?limit=2&offset=2", undefined, { key: ws.key });
    expect(rest.body.link_domains.map((d: Json) => d.id)).toEqual([a.id]);
    const verified = await s.api("GET", "/v1/link-domains?status=verified", undefined, { key: ws.key });
    expect(verified.body.link_domains.map((d: Json) => d.id)).toEqual([c.id]);
    const one = await s.api("GET", `/v1/link-domains/${a.id}`, undefined, { key: ws.key });
    expect(one.body.link_domain).toEqual(a);
  });

  it("answers 422 for a bad status or page", async () => {
    const cases: [string, string][] = [
      ["status=gone", "status must be one of pending, verified, failed"],
      ["limit=-1", "limit"],
      ["offset=x", "offset"],
    ];
    for (const [query, error] of cases) {
      const r = await s.api("GET", `/v1/link-domains?${query}`);
      expect({ query, status: r.status, error: String(r.body.error).includes(error) }).toEqual({
        query,
        status: 422,
        error: true,
      });
    }
  });
});

describe("POST /v1/link-domains/{id}/verify", () => {
  it("verifies a domain that reaches this server; the first verified domain becomes the default", async () => {
    const ws = await s.newWorkspace("Verifier");
    const added = await addDomain(proxied(), ws.key);
    const r = await s.api("POST", `/v1/link-domains/${added.id}/verify`, undefined, { key: ws.key });
    expect(r.status).toBe(200);
    expect({ ...r.body.link_domain }).toMatchObject({
      id: added.id,
      status: "verified",
      is_default: true,
      failure_reason: null,
    });
    expect(r.body.link_domain.verified_at).not.toBeNull();
    // A second verified domain does not take the default away.
    const second = await verifiedDomain(ws.key);
    expect(second.is_default).toBe(false);
  });

  const FAILURES: [string, string][] = [
    ["missing.example.net", "the check URL answered 404"],
    ["wrong.example.net", "the check URL answered another token"],
    ["moved.example.net", "the check URL answered 301"],
    ["huge.example.net", "the check URL answered another token"],
    ["slow.example.net", `the check URL did not answer within ${CHECK_TIMEOUT_MS / 1000} s`],
  ];
  for (const [domain, reason] of FAILURES) {
    it(`answers failed with '${reason}' for ${domain}`, async () => {
      const ws = await s.newWorkspace(domain);
      const added = await addDomain(domain, ws.key);
      const r = await s.api("POST", `/v1/link-domains/${added.id}/verify`, undefined, { key: ws.key });
      expect({
        domain,
        status: r.status,
        record: r.body.link_domain?.status,
        reason: r.body.link_domain?.failure_reason,
      }).toEqual({
        domain,
        status: 200,
        record: "failed",
        reason,
      });
      expect(r.body.link_domain.is_default).toBe(false);
    });
  }

  it("answers failed with 'could not connect' when nothing listens at the domain", async () => {
    // PUBLIC_URL as the other server's: links written outside a request take it from the last boot.
    const lonely = await startTestServer(
      { publicUrl: "https://outreach.example.com" },
      { LINK_DOMAIN_CHECK_BASE: "http://127.0.0.1:1" },
    );
    try {
      const added = (await lonely.api("POST", "/v1/link-domains", { domain: "go.nowhere.example" })).body
        .link_domain;
      const r = await lonely.api("POST", `/v1/link-domains/${added.id}/verify`);
      expect([r.status, r.body.link_domain.status, r.body.link_domain.failure_reason]).toEqual([
        200,
        "failed",
        "could not connect",
      ]);
    } finally {
      await lonely.stop();
    }
  });

  it("without LINK_DOMAIN_CHECK_BASE, checks https://<domain> itself: a name that does not resolve could not connect", async () => {
    // .invalid never resolves (RFC 6761).
    expect(await checkLinkDomain("go.nothing.invalid", "x".repeat(32), { timeoutMs: 2000 })).toBe(
      "could not connect",
    );
  });

  it("verifies against the server itself when LINK_DOMAIN_CHECK_BASE is its own address", async () => {
    const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const port = probe.port;
    probe.stop(true);
    const self = await startTestServer(
      { publicUrl: "https://outreach.example.com", port },
      { LINK_DOMAIN_CHECK_BASE: `http://127.0.0.1:${port}` },
    );
    try {
      const added = (await self.api("POST", "/v1/link-domains", { domain: "go.selfcheck.example" })).body
        .link_domain;
      const r = await self.api("POST", `/v1/link-domains/${added.id}/verify`);
      expect([r.status, r.body.link_domain.status, r.body.link_domain.failure_reason]).toEqual([
        200,
        "verified",
        null,
      ]);
    } finally {
      await self.stop();
    }
  });

  it("verifies against the server itself even when its address has spent its bucket on clicks and reports", async () => {
    const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const port = probe.port;
    probe.stop(true);
    const self = await startTestServer(
      { publicUrl: "https://outreach.example.com", port, rateLimitRps: 0.001, rateLimitBurst: 3 },
      { LINK_DOMAIN_CHECK_BASE: `http://127.0.0.1:${port}` },
    );
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await fetch(`${self.url}/r/NoSuchCode1`, { redirect: "manual" })).status);
      expect(statuses).toEqual([404, 404, 404, 429]);
      const added = (await self.api("POST", "/v1/link-domains", { domain: "go.busy.example" })).body
        .link_domain;
      const r = await self.api("POST", `/v1/link-domains/${added.id}/verify`);
      expect([r.body.link_domain.status, r.body.link_domain.failure_reason]).toEqual(["verified", null]);
    } finally {
      await self.stop();
    }
  });

  it("turns a verified domain failed when a later check fails, and its links stop using it", async () => {
    const ws = await s.newWorkspace("Lapsed");
    const domain = await verifiedDomain(ws.key);
    const offer = (
      await s.api(
        "POST",
        "/v1/offers",
        { name: "O", destination_url: "https://shop.example.com/" },
        { key: ws.key },
      )
    ).body.offer;
    expect(offer.tracking_url.startsWith(`https://${domain.domain}/r/`)).toBe(true);
    // The domain now points elsewhere (the stub answers 404 for it).
    const db = outsideConnection(s);
    await db.run(
      "UPDATE link_domains SET domain = ? WHERE id = ?",
      `lapsed${++domainCount}.missing.test`,
      domain.id,
    );
    await db.close();
    const r = await s.api("POST", `/v1/link-domains/${domain.id}/verify`, undefined, { key: ws.key });
    expect([r.body.link_domain.status, r.body.link_domain.failure_reason]).toEqual([
      "failed",
      "the check URL answered 404",
    ]);
    const again = (await s.api("GET", `/v1/offers/${offer.id}`, undefined, { key: ws.key })).body.offer;
    expect(again.tracking_url.startsWith("https://outreach.example.com/r/")).toBe(true);
  });
});

describe("GET /.well-known/outreach/{token}", () => {
  it("answers a token of this server as text on any host, and 404 for any other", async () => {
    const added = await addDomain(proxied());
    const token = added.verification.token;
    const r = await fetch(`${s.url}/.well-known/outreach/${token}`, {
      headers: { host: "anything.example.org" },
    });
    expect([r.status, await r.text()]).toEqual([200, token]);
    const unknown = await fetch(`${s.url}/.well-known/outreach/${"Q".repeat(32)}`);
    expect(unknown.status).toBe(404);
    const malformed = await fetch(`${s.url}/.well-known/outreach/..%2f..%2fetc`);
    expect(malformed.status).toBe(404);
  });
});

describe("PATCH /v1/link-domains/{id}", () => {
  it("moves the default to another verified domain, or clears it", async () => {
    const ws = await s.newWorkspace("Defaults");
    const first = await verifiedDomain(ws.key);
    const second = await verifiedDomain(ws.key);
    const moved = await s.api(
      "PATCH",
      `/v1/link-domains/${second.id}`,
      { is_default: true },
      { key: ws.key },
    );
    expect(moved.body.link_domain.is_default).toBe(true);
    const list = (await s.api("GET", "/v1/link-domains", undefined, { key: ws.key })).body.link_domains;
    expect(list.filter((d: Json) => d.is_default).map((d: Json) => d.id)).toEqual([second.id]);
    const offer = (
      await s.api(
        "POST",
        "/v1/offers",
        { name: "O", destination_url: "https://shop.example.com/" },
        { key: ws.key },
      )
    ).body.offer;
    expect(offer.tracking_url.startsWith(`https://${second.domain}/r/`)).toBe(true);
    const cleared = await s.api(
      "PATCH",
      `/v1/link-domains/${second.id}`,
      { is_default: false },
      { key: ws.key },
    );
    expect(cleared.body.link_domain.is_default).toBe(false);
    const now = (await s.api("GET", `/v1/offers/${offer.id}`, undefined, { key: ws.key })).body.offer;
    expect(now.tracking_url.startsWith("https://outreach.example.com/r/")).toBe(true);
    expect(first.id).not.toBe(second.id);
  });

  it("answers 409 for a domain that is not verified, and 422 for a bad is_default", async () => {
    const pending = await addDomain(proxied());
    const r = await s.api("PATCH", `/v1/link-domains/${pending.id}`, { is_default: true });
    expect([r.status, r.body.error]).toEqual([
      409,
      "Link domain is not verified: verify it before making it the default",
    ]);
    const bad = await s.api("PATCH", `/v1/link-domains/${pending.id}`, { is_default: "yes" });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toContain("is_default");
  });
});

describe("DELETE /v1/link-domains/{id}", () => {
  it("deletes; what named the domain keeps its id and its links fall back to the default, else PUBLIC_URL", async () => {
    const ws = await s.newWorkspace("Deleter");
    const fallback = await verifiedDomain(ws.key);
    const named = await verifiedDomain(ws.key);
    const offer = (
      await s.api(
        "POST",
        "/v1/offers",
        { name: "O", destination_url: "https://shop.example.com/", link_domain_id: named.id },
        { key: ws.key },
      )
    ).body.offer;
    expect(offer.tracking_url.startsWith(`https://${named.domain}/r/`)).toBe(true);
    const r = await s.api("DELETE", `/v1/link-domains/${named.id}`, undefined, { key: ws.key });
    expect(r.body).toEqual({ ok: true, deleted: true });
    expect((await s.api("GET", `/v1/link-domains/${named.id}`, undefined, { key: ws.key })).status).toBe(404);
    const after = (await s.api("GET", `/v1/offers/${offer.id}`, undefined, { key: ws.key })).body.offer;
    expect(after.link_domain_id).toBe(named.id);
    expect(after.tracking_url).toBe(`https://${fallback.domain}/r/${offer.tracking_url.split("/r/")[1]}`);
    await s.api("DELETE", `/v1/link-domains/${fallback.id}`, undefined, { key: ws.key });
    const last = (await s.api("GET", `/v1/offers/${offer.id}`, undefined, { key: ws.key })).body.offer;
    expect(last.tracking_url.startsWith("https://outreach.example.com/r/")).toBe(true);
    // The domain is free again, for any workspace.
    expect((await s.api("POST", "/v1/link-domains", { domain: named.domain })).status).toBe(200);
  });
});

describe("link domains of another workspace", () => {
  it("are Not found by id, and not a verified link domain when named", async () => {
    const other = await s.newWorkspace("Foreign");
    const foreign = await verifiedDomain(other.key);
    for (const [method, path, body] of [
      ["GET", `/v1/link-domains/${foreign.id}`, undefined],
      ["PATCH", `/v1/link-domains/${foreign.id}`, { is_default: true }],
      ["POST", `/v1/link-domains/${foreign.id}/verify`, undefined],
      ["DELETE", `/v1/link-domains/${foreign.id}`, undefined],
    ] as const) {
      const r = await s.api(method, path, body);
      expect({ method, path, status: r.status, error: r.body.error }).toEqual({
        method,
        path,
        status: 404,
        error: "Not found",
      });
    }
    const list = (await s.api("GET", "/v1/link-domains?limit=200")).body.link_domains;
    expect(list.some((d: Json) => d.id === foreign.id)).toBe(false);
    const offer = await s.api("POST", "/v1/offers", {
      name: "O",
      destination_url: "https://shop.example.com/",
      link_domain_id: foreign.id,
    });
    expect([offer.status, offer.body.error]).toEqual([422, "link_domain_id is not a verified link domain"]);
  });
});

describe("link_domain_id where links are made", () => {
  const offerBody = { name: "O", destination_url: "https://shop.example.com/" };

  it("answers 422 for an unknown, malformed, pending or failed domain on offers, campaigns, agents and flows", async () => {
    const pending = await addDomain(proxied());
    const failed = await addDomain(`fail${++domainCount}.missing.test`);
    const check = await s.api("POST", `/v1/link-domains/${failed.id}/verify`);
    expect(check.body.link_domain.status).toBe("failed");
    const ids: [string, unknown][] = [
      ["unknown", "0190a0c0-0000-7000-8000-000000000000"],
      ["malformed", "nope"],
      ["pending", pending.id],
      ["failed", failed.id],
      ["a number", 7],
    ];
    for (const [name, id] of ids) {
      const offer = await s.api("POST", "/v1/offers", { ...offerBody, link_domain_id: id });
      const campaign = await s.api("POST", "/v1/campaigns", {
        name: "C",
        message: { body: "Hi" },
        audience: { contact_ids: [] },
        link_domain_id: id,
      });
      const agent = await s.api("POST", "/v1/agents", {
        name: "A",
        system_prompt: "Be kind.",
        sms: { link_domain_id: id },
      });
      const flow = await s.api("POST", "/v1/flows", {
        name: "F",
        definition: {
          nodes: [
            { id: "t", type: "trigger", position: { x: 0, y: 0 }, data: { event: "manual" } },
            {
              id: "s",
              type: "send_sms",
              position: { x: 0, y: 100 },
              data: { body: "Hi", link_domain_id: id },
            },
          ],
          edges: [{ id: "e", source: "t", target: "s" }],
        },
      });
      const answers = [offer, campaign, agent, flow].map((r) => [r.status, r.body.error]);
      if (typeof id === "number") {
        expect({ name, statuses: answers.map((a) => a[0]) }).toEqual({
          name,
          statuses: [422, 422, 422, 422],
        });
        continue;
      }
      expect({ name, answers }).toEqual({
        name,
        answers: [
          [422, "link_domain_id is not a verified link domain"],
          [422, "link_domain_id is not a verified link domain"],
          [422, "sms.link_domain_id is not a verified link domain"],
          [422, "definition.nodes[1].data.link_domain_id is not a verified link domain"],
        ],
      });
    }
  });

  it("accepts a verified domain on offers, campaigns (create and PATCH), agents and flows", async () => {
    const domain = await verifiedDomain();
    const offer = await s.api("POST", "/v1/offers", { ...offerBody, link_domain_id: domain.id });
    expect([offer.status, offer.body.offer.link_domain_id]).toEqual([200, domain.id]);
    expect(offer.body.offer.tracking_url).toMatch(new RegExp(`^https://${domain.domain}/r/[0-9A-Za-z]{8}$`));
    const patchedOffer = await s.api("PATCH", `/v1/offers/${offer.body.offer.id}`, { link_domain_id: null });
    expect(patchedOffer.body.offer.link_domain_id).toBeNull();
    const campaign = await s.api("POST", "/v1/campaigns", {
      name: "C",
      message: { body: "Hi" },
      audience: { contact_ids: [] },
      link_domain_id: domain.id,
    });
    expect([campaign.status, campaign.body.campaign.link_domain_id]).toEqual([200, domain.id]);
    const patched = await s.api("PATCH", `/v1/campaigns/${campaign.body.campaign.id}`, {
      link_domain_id: null,
    });
    expect(patched.body.campaign.link_domain_id).toBeNull();
    const agent = await s.api("POST", "/v1/agents", {
      name: "A",
      system_prompt: "Be kind.",
      sms: { link_domain_id: domain.id },
    });
    expect([agent.status, agent.body.agent?.sms.link_domain_id]).toEqual([200, domain.id]);
    const agentPatch = await s.api("PATCH", `/v1/agents/${agent.body.agent.id}`, {
      sms: { link_domain_id: null },
    });
    expect(agentPatch.body.agent.sms.link_domain_id).toBeNull();
    const flow = await s.api("POST", "/v1/flows", {
      name: "F",
      definition: {
        nodes: [
          { id: "t", type: "trigger", position: { x: 0, y: 0 }, data: { event: "manual" } },
          {
            id: "s",
            type: "send_sms",
            position: { x: 0, y: 100 },
            data: { body: "Hi", link_domain_id: domain.id },
          },
        ],
        edges: [{ id: "e", source: "t", target: "s" }],
      },
    });
    expect(flow.status).toBe(200);
  });
});

describe("tracked links on a branded domain", () => {
  it("a campaign previews and sends {{offer_url}} on its domain, and a click on that host is attributed as before", async () => {
    const ws = await s.newWorkspace("Sender");
    const call = async (method: string, path: string, body?: unknown) =>
      await s.api(method, path, body, { key: ws.key });
    await call("PATCH", "/v1/settings", { quiet_hours: { enabled: false }, state_rules: false });
    const available = await call("GET", "/v1/numbers/available?area_code=212&limit=1");
    await orderNumber(s, available.body.numbers[0].number, { key: ws.key });
    await verifiedDomain(ws.key); // the default
    const named = await verifiedDomain(ws.key, "brand");
    const contact = (
      await call("POST", "/v1/contacts", { phone_number: "+12125550411", timezone: zoneAtLocalHour(12) })
    ).body.contact;
    const offer = (
      await call("POST", "/v1/offers", { name: "Spring", destination_url: "https://shop.example.com/s?x=1" })
    ).body.offer;
    const campaign = (
      await call("POST", "/v1/campaigns", {
        name: "Spring",
        message: { body: "Spring sale: {{offer_url}}" },
        offer_id: offer.id,
        link_domain_id: named.id,
        audience: { contact_ids: [contact.id] },
      })
    ).body.campaign;
    const previewed = (await call("GET", `/v1/campaigns/${campaign.id}/preview`)).body.preview.contacts;
    expect(previewed.map((c: Json) => c.body)).toEqual([`Spring sale: https://${named.domain}/r/XXXXXXXXXX`]);
    expect((await call("POST", `/v1/campaigns/${campaign.id}/launch`)).status).toBe(200);
    const sends = await eventually(
      async () => handOffs((await call("GET", "/v1/sandbox/outbox")).body.sends as Json[]),
      (rows) => rows.length >= 1,
    );
    expect(sends).toHaveLength(1);
    expect(sends[0].body).toMatch(
      new RegExp(`^Spring sale: https://${named.domain.replace(/\./g, "\\.")}/r/[0-9A-Za-z]{10}$`),
    );
    expect(sends[0].body.length).toBe(previewed[0].body.length);

    const code = sends[0].body.split("/r/")[1];
    const r = await fetch(`${s.url}/r/${code}`, { redirect: "manual", headers: { host: named.domain } });
    expect(r.status).toBe(302);
    const vcx = new URL(r.headers.get("location") as string).searchParams.get("vcx") as string;
    expect(vcx).toBeTruthy();
    const conv = await call("POST", "/v1/conversion", { txn: "branded-1", value: 10, vcx });
    expect(conv.body.conversion.contact_id).toBe(contact.id);
    const row = (await call("GET", `/v1/conversions?campaign_id=${campaign.id}`)).body.conversions[0];
    expect(row).toMatchObject({
      campaign_id: campaign.id,
      offer_id: offer.id,
      message_id: sends[0].message_id,
      click_id: vcx,
    });
  });

  it("a campaign without a domain of its own uses the offer's, else the default, else PUBLIC_URL in its preview", async () => {
    const ws = await s.newWorkspace("Chooser");
    const call = async (method: string, path: string, body?: unknown) =>
      await s.api(method, path, body, { key: ws.key });
    const contact = (await call("POST", "/v1/contacts", { phone_number: "+12125550412" })).body.contact;
    const preview = async (offerDomain: string | null) => {
      const offer = (
        await call("POST", "/v1/offers", {
          name: "O",
          destination_url: "https://shop.example.com/",
          link_domain_id: offerDomain,
        })
      ).body.offer;
      const campaign = (
        await call("POST", "/v1/campaigns", {
          name: "C",
          message: { body: "{{offer_url}}" },
          offer_id: offer.id,
          audience: { contact_ids: [contact.id] },
        })
      ).body.campaign;
      return (await call("GET", `/v1/campaigns/${campaign.id}/preview`)).body.preview.contacts[0].body;
    };
    expect(await preview(null)).toBe("https://outreach.example.com/r/XXXXXXXXXX");
    const byDefault = await verifiedDomain(ws.key);
    expect(await preview(null)).toBe(`https://${byDefault.domain}/r/XXXXXXXXXX`);
    const offers = await verifiedDomain(ws.key);
    expect(await preview(offers.id)).toBe(`https://${offers.domain}/r/XXXXXXXXXX`);
  });

  it("an offer's link answers on any host, with HEAD and GET, and 404 for an unknown code", async () => {
    const offer = (
      await s.api("POST", "/v1/offers", { name: "Any", destination_url: "https://shop.example.com/a" })
    ).body.offer;
    const code = offer.tracking_url.split("/r/")[1];
    for (const host of ["go.example.com", "outreach.example.com", "links.someone-else.example"]) {
      const r = await fetch(`${s.url}/r/${code}`, { redirect: "manual", headers: { host } });
      expect({ host, status: r.status }).toEqual({ host, status: 302 });
      expect(new URL(r.headers.get("location") as string).searchParams.get("vcx")).toBeTruthy();
    }
    const head = await fetch(`${s.url}/r/${code}`, {
      method: "HEAD",
      redirect: "manual",
      headers: { host: "go.example.com" },
    });
    expect(head.status).toBe(302);
    const unknown = await fetch(`${s.url}/r/NoSuchCode1`, {
      redirect: "manual",
      headers: { host: "go.example.com" },
    });
    expect(unknown.status).toBe(404);
  });

  it("a flow's {{offer_url}} is a link of the contact's own on the node's domain; copied offer links move to it too", async () => {
    const ws = await s.newWorkspace("Flows");
    const call = async (method: string, path: string, body?: unknown) =>
      await s.api(method, path, body, { key: ws.key });
    await call("PATCH", "/v1/settings", { quiet_hours: { enabled: false }, state_rules: false });
    const available = await call("GET", "/v1/numbers/available?area_code=312&limit=1");
    await orderNumber(s, available.body.numbers[0].number, { key: ws.key });
    const domain = await verifiedDomain(ws.key, "flow");
    await call("PATCH", `/v1/link-domains/${domain.id}`, { is_default: false });
    const offer = (
      await call("POST", "/v1/offers", { name: "F", destination_url: "https://shop.example.com/f" })
    ).body.offer;
    const contact = (
      await call("POST", "/v1/contacts", { phone_number: "+13125550177", timezone: zoneAtLocalHour(12) })
    ).body.contact;
    const flow = await call("POST", "/v1/flows", {
      name: "Welcome",
      definition: {
        nodes: [
          { id: "t", type: "trigger", position: { x: 0, y: 0 }, data: { event: "manual" } },
          {
            id: "s",
            type: "send_sms",
            position: { x: 0, y: 100 },
            data: {
              body: `Yours: {{offer_url}} and ours: ${offer.tracking_url}`,
              offer_id: offer.id,
              link_domain_id: domain.id,
            },
          },
        ],
        edges: [{ id: "e", source: "t", target: "s" }],
      },
    });
    expect(flow.status).toBe(200);
    await call("PATCH", `/v1/flows/${flow.body.flow.id}`, { status: "active" });
    expect(
      (await call("POST", `/v1/flows/${flow.body.flow.id}/enroll`, { contact_ids: [contact.id] })).status,
    ).toBe(200);
    const sends = await eventually(
      async () => (await call("GET", "/v1/sandbox/outbox")).body.sends as Json[],
      (rows) => rows.length >= 1,
    );
    const base = `https://${domain.domain}/r/`;
    const ownCode = sends[0]?.body.match(/^Yours: (\S+) and ours/)?.[1]?.split("/r/")[1];
    expect(sends[0]?.body).toBe(
      `Yours: ${base}${ownCode} and ours: ${base}${offer.tracking_url.split("/r/")[1]}`,
    );
    expect(ownCode).toMatch(/^[0-9A-Za-z]{10}$/);
    const r = await fetch(`${s.url}/r/${ownCode}`, { redirect: "manual", headers: { host: domain.domain } });
    expect(r.status).toBe(302);
    const vcx = new URL(r.headers.get("location") as string).searchParams.get("vcx") as string;
    const conv = await call("POST", "/v1/conversion", { txn: "flow-1", value: 5, vcx });
    expect(conv.body.conversion.contact_id).toBe(contact.id);
    const row = (await call("GET", `/v1/conversions?contact_id=${contact.id}`)).body.conversions[0];
    expect(row).toMatchObject({ offer_id: offer.id, click_id: vcx, flow_id: flow.body.flow.id });
  });

  it("a flow's {{offer_url}} needs the node's offer_id, an offer of the workspace", async () => {
    const foreign = (
      await s.api(
        "POST",
        "/v1/offers",
        { name: "X", destination_url: "https://x.example.com/" },
        { key: (await s.newWorkspace("Offerer")).key },
      )
    ).body.offer;
    const flowWith = async (data: Record<string, unknown>) =>
      await s.api("POST", "/v1/flows", {
        name: "F",
        definition: {
          nodes: [
            { id: "t", type: "trigger", position: { x: 0, y: 0 }, data: { event: "manual" } },
            { id: "s", type: "send_sms", position: { x: 0, y: 100 }, data },
          ],
          edges: [{ id: "e", source: "t", target: "s" }],
        },
      });
    const without = await flowWith({ body: "Go {{offer_url}}" });
    expect([without.status, without.body.error]).toEqual([
      422,
      'nodes[1] ("s"): data.body uses {{offer_url}} but the node has no data.offer_id',
    ]);
    const other = await flowWith({ body: "Go {{offer_url}}", offer_id: foreign.id });
    expect([other.status, other.body.error]).toEqual([
      422,
      "definition.nodes[1].data.offer_id does not exist",
    ]);
  });

  it("an agent's reply puts the workspace's tracked links on the agent's domain", async () => {
    const ws = await s.newWorkspace("Agents");
    const call = async (method: string, path: string, body?: unknown) =>
      await s.api(method, path, body, { key: ws.key });
    await call("PATCH", "/v1/settings", { quiet_hours: { enabled: false }, state_rules: false });
    const available = await call("GET", "/v1/numbers/available?area_code=415&limit=1");
    const ours = available.body.numbers[0].number as string;
    const numberId = await orderNumber(s, ours, { key: ws.key });
    const domain = await verifiedDomain(ws.key, "agent");
    await call("PATCH", `/v1/link-domains/${domain.id}`, { is_default: false });
    const offer = (
      await call("POST", "/v1/offers", { name: "Book", destination_url: "https://dental.example.com/book" })
    ).body.offer;
    expect(offer.tracking_url.startsWith("https://outreach.example.com/r/")).toBe(true);
    const code = offer.tracking_url.split("/r/")[1];
    const agent = (
      await call("POST", "/v1/agents", {
        name: "Maya",
        system_prompt: "You are Maya, the front desk of Sunny Dental.",
        sms: {
          knowledge: `You can book a cleaning online at ${offer.tracking_url} any time.`,
          reply_delay_min_sec: 0,
          reply_delay_max_sec: 0,
          quiet_start_hour: 0,
          quiet_end_hour: 0,
          link_domain_id: domain.id,
        },
      })
    ).body.agent;
    await call("PATCH", `/v1/numbers/${numberId}`, { agent_id: agent.id });
    await call("POST", "/v1/sandbox/inbound", {
      from: "+14155550199",
      to: ours,
      body: "How do I book a cleaning online?",
    });
    const sends = await eventually(
      async () => (await call("GET", "/v1/sandbox/outbox")).body.sends as Json[],
      (rows) => rows.some((row) => row.body.includes("/r/")),
    );
    const reply = sends.find((row) => row.body.includes("/r/"));
    expect(reply?.body).toContain(`https://${domain.domain}/r/${code}`);
    expect(reply?.body).not.toContain("outreach.example.com");
  });
});
