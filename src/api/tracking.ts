import { Elysia, type TSchema, t } from "elysia";
import type { AppDeps } from "../app";
import { TRACKING_SCRIPT, TRACKING_SCRIPT_GZIP } from "../domain/attribution/tracking-script";
import { collectVisit, identifyVisitor } from "../domain/attribution/visitors";
import type { RouteConventions } from "../http/route-conventions";
import { errorText, log } from "../lib/log";

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
      log.warn("tracking report failed", { error: errorText(error) });
    }
  }
  return noContent();
}

const Vid = t.String({
  format: "uuid",
  description: "The visitor id the script keeps (`window.outreach.vid`)",
  examples: ["0192f3a4-5b6c-7d8e-9f01-23456789abcd"],
});
const PublicId = t.String({
  description: "The workspace's public id (`settings.public_id`, from `/t.js?w=`)",
  examples: ["ws_k3j9x0q2m8v7c1b5n4z6"],
});

/** What `POST /t/collect` reads (the script sends it as text/plain JSON); other fields are ignored. */
export const CollectReport = t.Object(
  {
    vid: Vid,
    vcx: t.Optional(
      t.String({
        format: "uuid",
        description:
          "The click id from the landing URL's `vcx`: ties the visitor to the click's contact. A report without it records nothing",
        examples: ["0192f3a4-1111-7222-8333-444455556666"],
      }),
    ),
    w: t.Optional(PublicId),
    url: t.Optional(t.String({ maxLength: 2000, description: "The page's URL (not stored)" })),
    referrer: t.Optional(t.String({ maxLength: 2000, description: "The page's referrer (not stored)" })),
  },
  {
    description:
      "A page view, as JSON sent with `content-type: text/plain` (no CORS preflight) or `application/json`; at most 8 KiB. A report that is not JSON, or names no valid `vid` and `vcx`, is ignored (still 204).",
  },
);

/** What `POST /t/identify` reads; other fields are ignored. */
export const IdentifyReport = t.Object(
  {
    vid: Vid,
    w: PublicId,
    email: t.Optional(t.String({ description: "The visitor's e-mail", examples: ["ada@example.com"] })),
    phone: t.Optional(t.String({ description: "The visitor's phone number", examples: ["+14155550123"] })),
    external_id: t.Optional(t.String({ description: "Your id for the contact", examples: ["cus_42"] })),
  },
  {
    description:
      "Ties the visitor to a known contact: at least one of `email`, `phone`, `external_id`. JSON sent as text/plain or application/json; at most 8 KiB.",
  },
);

const reportDoc = (operationId: string, summary: string, description: string, body: TSchema) => ({
  tags: ["Tracking"],
  operationId,
  summary,
  description,
  requestBody: {
    required: true,
    content: { "text/plain": { schema: body }, "application/json": { schema: body } },
  },
  responses: {
    204: { description: "Whatever the report said (nothing is revealed)" },
    408: { description: "The report did not arrive within `BODY_TIMEOUT_MS` (10 s by default)" },
    413: { description: "The report is over 8 KiB (counted while it is read; the rest is not read)" },
    429: { description: "Rate limited (per address)" },
  },
});

// GET /t.js, POST /t/collect, POST /t/identify – the tracking script and its reports (public).
export function trackingRoutes(deps: AppDeps, conventions: RouteConventions) {
  // Reports arrive as text/plain (no CORS preflight): the handler reads them, not the front door.
  conventions.registerStreamingRoute("POST", "/t/collect");
  conventions.registerStreamingRoute("POST", "/t/identify");
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
          CollectReport,
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
          IdentifyReport,
        ),
      },
    )
    .options("/t/collect", () => noContent(), { detail: { hide: true } })
    .options("/t/identify", () => noContent(), { detail: { hide: true } });
}
