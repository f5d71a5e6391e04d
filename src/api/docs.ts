import { createHash } from "node:crypto";
// Scalar's standalone API reference (one self-contained script), embedded in the compiled binary.
import scalarScript from "@scalar/api-reference/browser/standalone.js" with { type: "file" };
import { Elysia } from "elysia";

export const DOCS_SCRIPT_PATH = "/docs/scalar.js";

/**
 * Scalar's settings for a server that may have no internet: nothing is fetched from anywhere but
 * this server. Its default fonts come from fonts.scalar.com and its AI agent talks to
 * api.scalar.com, so both are off; there is no request proxy (try-it calls this server directly,
 * same origin), and no "Open API Client" button (it links to client.scalar.com with this
 * document's address; each operation's "Test Request" opens the same client inside the page). The
 * try-it sends the key as `Authorization: Bearer opk_...` (the document's `bearer` scheme). The
 * page's Content-Security-Policy holds the browser to the same.
 */
const CONFIGURATION = {
  url: "/v1/openapi.json",
  metaData: { title: "outreach API reference" },
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  hideClientButton: true,
  showDeveloperTools: "never",
  documentDownloadType: "json",
  authentication: { preferredSecurityScheme: "bearer" },
  persistAuth: false,
  showOperationId: true,
  orderSchemaPropertiesBy: "preserve",
  defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
};

const BOOT = `Scalar.createApiReference("#app", ${JSON.stringify(CONFIGURATION)});`;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>outreach API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"></head>
<body>
<noscript>This reference needs JavaScript. The document it renders: <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript>
<div id="app"></div>
<script src="${DOCS_SCRIPT_PATH}"></script>
<script>${BOOT}</script>
</body></html>`;

/** Only this server: scripts (the embedded one and the boot line), requests, fonts and images. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  `script-src 'self' 'sha256-${createHash("sha256").update(BOOT).digest("base64")}'`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
].join("; ");

/** The script, gzipped once on first demand (3.5 MB → about 1 MB), and its validator. */
let compressed: { gzip: Uint8Array<ArrayBuffer>; etag: string } | null = null;
async function compressedScript() {
  if (!compressed) {
    const bytes = await Bun.file(scalarScript).bytes();
    compressed = {
      gzip: Bun.gzipSync(bytes) as Uint8Array<ArrayBuffer>,
      etag: `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 22)}"`,
    };
  }
  return compressed;
}

// GET /docs – the interactive API reference (Scalar), rendered in the browser from /v1/openapi.json.
// GET /docs/scalar.js – its script, served from the binary (no CDN: works on an air-gapped box).
export function docsRoutes() {
  return new Elysia({ name: "docs" })
    .get(
      "/docs",
      () =>
        new Response(PAGE, {
          headers: {
            "content-type": "text/html; charset=utf-8",
            "content-security-policy": CONTENT_SECURITY_POLICY,
            "cache-control": "no-cache",
          },
        }),
      { detail: { hide: true } },
    )
    .get(
      DOCS_SCRIPT_PATH,
      async ({ request }) => {
        const { gzip, etag } = await compressedScript();
        const headers: Record<string, string> = {
          "content-type": "text/javascript; charset=utf-8",
          // Revalidated daily; an upgraded binary with another Scalar has another ETag.
          "cache-control": "public, max-age=86400",
          etag,
          vary: "accept-encoding",
        };
        if (request.headers.get("if-none-match") === etag)
          return new Response(null, { status: 304, headers });
        if (/\bgzip\b/.test(request.headers.get("accept-encoding") ?? "")) {
          return new Response(gzip, { headers: { ...headers, "content-encoding": "gzip" } });
        }
        return new Response(Bun.file(scalarScript), { headers });
      },
      { detail: { hide: true } },
    );
}
