import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { TRACKING_SCRIPT, TRACKING_SCRIPT_GZIP } from "../domain/attribution/tracking-script";
import { collectVisit, identifyVisitor } from "../domain/attribution/visitors";
import { registerStreamingRoute } from "../http/conventions";
import { log } from "../lib/log";

/** The most a report may carry; the front door answers 413 to longer ones before they reach here. */
const MAX_REPORT_BYTES = 8 * 1024;

const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "POST, OPTIONS",
  "access-control-allow-headers": "content-type",
  "access-control-max-age": "86400",
};

const ETAG = `"${Bun.hash(TRACKING_SCRIPT).toString(16)}"`;

/** 204 with CORS: the answer to every report, whatever it carried. */
const noContent = () => new Response(null, { status: 204, headers: CORS });

/** The report's JSON object (sent as text/plain or JSON), or null. Never throws. */
async function readReport(request: Request): Promise<Record<string, unknown> | null> {
  try {
    if (Number(request.headers.get("content-length") ?? 0) > MAX_REPORT_BYTES) return null;
    const text = await request.text();
    if (text.length > MAX_REPORT_BYTES) return null;
    const value = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/** Runs a report's domain call; a failure is logged, never shown (the answer is 204 either way). */
async function report(request: Request, run: (body: Record<string, unknown>) => Promise<void>) {
  const body = await readReport(request);
  if (body) {
    try {
      await run(body);
    } catch (error) {
      log.warn("tracking report failed", { error: String(error) });
    }
  }
  return noContent();
}

const reportDoc = (operationId: string, summary: string, description: string) => ({
  tags: ["Tracking"],
  operationId,
  summary,
  description,
  responses: {
    204: { description: "Whatever the report said (nothing is revealed)" },
    413: { description: "The report is over 8 KiB (counted while it is read; the rest is not read)" },
    429: { description: "Rate limited (per address)" },
  },
});

// GET /t.js, POST /t/collect, POST /t/identify – the tracking script and its reports (public).
export function trackingRoutes(deps: AppDeps) {
  // Reports arrive as text/plain (no CORS preflight): the handler reads them, not the front door.
  registerStreamingRoute("POST", "/t/collect");
  registerStreamingRoute("POST", "/t/identify");
  return new Elysia({ name: "tracking" })
    .get(
      "/t.js",
      ({ request }) => {
        const headers: Record<string, string> = {
          "content-type": "application/javascript; charset=utf-8",
          "cache-control": "public, max-age=3600",
          etag: ETAG,
          vary: "accept-encoding",
          "access-control-allow-origin": "*",
        };
        if (request.headers.get("if-none-match") === ETAG)
          return new Response(null, { status: 304, headers });
        if (/\bgzip\b/.test(request.headers.get("accept-encoding") ?? "")) {
          return new Response(TRACKING_SCRIPT_GZIP, { headers: { ...headers, "content-encoding": "gzip" } });
        }
        return new Response(TRACKING_SCRIPT, { headers });
      },
      {
        query: t.Object(
          { w: t.Optional(t.String({ description: "The workspace's public id (`settings.public_id`)" })) },
          { additionalProperties: true },
        ),
        detail: {
          tags: ["Tracking"],
          operationId: "getTrackingScript",
          summary: "The tracking script",
          description:
            'Public. Embed as `<script src="<server>/t.js?w=<settings.public_id>"></script>`. Keeps a visitor id (`window.outreach.vid`; localStorage and a first-party cookie, in memory when storage is blocked), reports the landing `vcx` to `POST /t/collect`, and offers `window.outreach.identify({email|phone|external_id})`. Under 3 KB gzipped; never throws on the host page.',
          responses: {
            200: {
              description:
                "The script (gzipped when the client accepts it; 304 for a matching If-None-Match)",
              content: {
                "application/javascript": { schema: { type: "string", description: "The tracking script" } },
              },
            },
          },
        },
      },
    )
    .post(
      "/t/collect",
      ({ request }) => report(request, (body) => collectVisit(deps.db, body, deps.clock.now())),
      {
        detail: reportDoc(
          "collectVisit",
          "Report a page view",
          "Public, CORS, rate limited per address. `{vid, vcx?, url, referrer, w?}` (JSON, sent as text/plain by the script): a `vcx` ties the visitor to the click's contact. Always 204.",
        ),
      },
    )
    .post(
      "/t/identify",
      ({ request }) => report(request, (body) => identifyVisitor(deps.db, body, deps.clock.now())),
      {
        detail: reportDoc(
          "identifyVisitor",
          "Identify a visitor",
          "Public, CORS, rate limited per address. `{vid, w, email | phone | external_id}`: ties the visitor to a known contact of the workspace `w` names. Never creates a contact; always 204.",
        ),
      },
    )
    .options("/t/collect", () => noContent(), { detail: { hide: true } })
    .options("/t/identify", () => noContent(), { detail: { hide: true } });
}
