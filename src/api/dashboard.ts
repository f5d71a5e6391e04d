import { Elysia } from "elysia";
import { ASSET_FILES, ENTRY_CSS, ENTRY_SCRIPT } from "../dashboard/assets.generated";
import { notFound } from "../lib/errors";

/**
 * A strict Content-Security-Policy: the page runs only its own scripts and styles, talks only to
 * this server, and cannot be framed. Contact names and message bodies are rendered by React as text.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const CONTENT_TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  woff2: "font/woff2",
};

const SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>outreach</title>
${ENTRY_CSS ? `<link rel="stylesheet" href="/assets/${ENTRY_CSS}">` : ""}
</head>
<body>
<div id="root"></div>
<script type="module" src="/assets/${ENTRY_SCRIPT}"></script>
</body>
</html>
`;

/** Paths the dashboard never answers: the API and the server's own endpoints keep their 404s. */
const NOT_THE_DASHBOARD = /^\/(v1|api|auth|carriers|r|t|t\.js|docs|healthz|metrics|assets)(\/|$)/;

function shell(): Response {
  return new Response(SHELL, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-cache",
      "content-security-policy": DASHBOARD_CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "same-origin",
    },
  });
}

// GET / and every page path (history routing), and GET /assets/<hashed name> (cached for good).
export function dashboardRoutes() {
  return new Elysia({ name: "dashboard" })
    .get(
      "/assets/:name",
      ({ params }) => {
        const path = Object.hasOwn(ASSET_FILES, params.name) ? ASSET_FILES[params.name] : undefined;
        if (!path) throw notFound();
        const ext = params.name.slice(params.name.lastIndexOf(".") + 1);
        return new Response(Bun.file(path), {
          headers: {
            "content-type": CONTENT_TYPES[ext] ?? "application/octet-stream",
            "cache-control": "public, max-age=31536000, immutable",
            "x-content-type-options": "nosniff",
          },
        });
      },
      { detail: { hide: true } },
    )
    .get("/", () => shell(), { detail: { hide: true } })
    .get(
      "/*",
      ({ request }) => {
        const path = new URL(request.url).pathname;
        if (NOT_THE_DASHBOARD.test(path)) throw notFound();
        return shell();
      },
      { detail: { hide: true } },
    );
}
