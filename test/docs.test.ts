import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHash } from "node:crypto";
import { startTestServer, type TestServer } from "./support/server";

// GET /docs: the interactive reference (Scalar), its script served by the server itself.

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

describe("GET /docs", () => {
  it("answers the reference page without a key, pointing Scalar at the document", async () => {
    const r = await fetch(`${s.url}/docs`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await r.text();
    expect(html).toContain('<script src="/docs/scalar.js"></script>');
    const boot = html.match(/<script>(Scalar\.createApiReference\("#app", (\{.*\})\);)<\/script>/);
    expect(boot).not.toBeNull();
    const configuration = JSON.parse(boot?.[2] ?? "{}");
    expect(configuration).toMatchObject({
      url: "/v1/openapi.json",
      withDefaultFonts: false,
      agent: { disabled: true },
      hideClientButton: true,
      authentication: { preferredSecurityScheme: "bearer" },
    });
    expect(configuration.proxyUrl).toBeUndefined();
    // Nothing but this server: no CDN, fonts or proxy in the page, and the browser held to it.
    expect(html).not.toMatch(/https?:\/\//);
    const csp = r.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("font-src 'self' data:");
    const hash = createHash("sha256")
      .update(boot?.[1] ?? "")
      .digest("base64");
    expect(csp).toContain(`script-src 'self' 'sha256-${hash}'`);
  });

  it("serves Scalar's script from the server, compressed and cacheable", async () => {
    const plain = await fetch(`${s.url}/docs/scalar.js`, { headers: { "accept-encoding": "identity" } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(plain.headers.get("content-encoding")).toBeNull();
    const script = await plain.text();
    expect(script).toContain("@scalar/api-reference");
    expect(script).toContain("createApiReference");

    const gzipped = await fetch(`${s.url}/docs/scalar.js`, {
      headers: { "accept-encoding": "gzip" },
      decompress: false,
    });
    expect(gzipped.headers.get("content-encoding")).toBe("gzip");
    const compressed = new Uint8Array(await gzipped.arrayBuffer());
    expect(compressed.byteLength).toBeLessThan(script.length / 2);
    expect(new TextDecoder().decode(Bun.gunzipSync(compressed))).toBe(script);

    const etag = plain.headers.get("etag") ?? "";
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(plain.headers.get("cache-control")).toContain("max-age=");
    const again = await fetch(`${s.url}/docs/scalar.js`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
  });

  it("keeps the page and its script out of the OpenAPI document", async () => {
    const doc = (await s.api("GET", "/v1/openapi.json", undefined, { key: null })).body;
    expect(Object.keys(doc.paths).filter((path) => path.startsWith("/docs"))).toEqual([]);
  });
});
