/**
 * The dashboard as the server serves it (API.md §6.7): the page shell at `/` and every page path
 * (history routing) with a strict Content-Security-Policy, hashed assets cached for good, the API's
 * own 404s kept, and the initial JavaScript within its budget.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { gzipSync } from "node:zlib";
import { startTestServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

describe("the dashboard", () => {
  it("answers / and page paths with the shell under a strict CSP, without an API key", async () => {
    for (const path of ["/", "/inbox", "/flows/some-id", "/settings", "/setup?token=x"]) {
      const res = await fetch(s.url + path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/html");
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      const html = await res.text();
      expect(html).toMatch(/<script type="module" src="\/assets\/app-[A-Z0-9]+\.js"><\/script>/);
      expect(html).not.toMatch(/<script>/);
    }
  });

  it("serves hashed assets cached immutable, and 404s for unknown ones", async () => {
    const html = await (await fetch(`${s.url}/`)).text();
    const script = html.match(/\/assets\/(app-[A-Z0-9]+\.js)/)?.[1];
    const css = html.match(/\/assets\/(app-[A-Z0-9]+\.css)/)?.[1];
    expect(script).toBeDefined();
    const js = await fetch(`${s.url}/assets/${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(js.headers.get("content-type")).toContain("javascript");
    const body = new Uint8Array(await js.arrayBuffer());
    // Initial JavaScript budget: ≤ 150 KB gzip (the flow editor is a separate chunk).
    expect(gzipSync(body).length).toBeLessThan(150 * 1024);
    expect((await fetch(`${s.url}/assets/${css}`)).headers.get("content-type")).toContain("text/css");
    expect((await fetch(`${s.url}/assets/nope.js`)).status).toBe(404);
  });

  it("keeps the API's own answers: unknown /v1 paths are 404 JSON, not the page", async () => {
    const res = await s.api("GET", "/v1/no-such-thing");
    expect(res.status).toBe(404);
    expect(res.body.ok).toBe(false);
    expect((await fetch(`${s.url}/healthz`)).headers.get("content-type")).toContain("json");
  });
});
