import { Elysia } from "elysia";
import { agentsRoutes } from "./api/agents";
import { analyticsRoutes } from "./api/analytics";
import { apiKeysRoutes } from "./api/api-keys";
import { authRoutes } from "./api/auth";
import { callsRoutes } from "./api/calls";
import { campaignsRoutes } from "./api/campaigns";
import { carrierCallbackRoutes } from "./api/carrier-callbacks";
import { contactRoutes } from "./api/contacts";
import { conversationsRoutes } from "./api/conversations";
import { conversionsRoutes } from "./api/conversions";
import { dashboardRoutes } from "./api/dashboard";
import { docsRoutes } from "./api/docs";
import { flowsRoutes } from "./api/flows";
import { listRoutes } from "./api/lists";
import { meRoutes } from "./api/me";
import { messagesRoutes } from "./api/messages";
import { numbersRoutes } from "./api/numbers";
import { oauthRoutes } from "./api/oauth";
import { offersRoutes } from "./api/offers";
import { openApiRoutes } from "./api/openapi";
import { plannedRoutes } from "./api/planned";
import { poolsRoutes } from "./api/pools";
import { registrationRoutes } from "./api/registration";
import { sandboxRoutes } from "./api/sandbox";
import { segmentRoutes } from "./api/segments";
import { settingsRoutes } from "./api/settings";
import { suppressionRoutes } from "./api/suppression";
import { systemRoutes } from "./api/system";
import { trackingRoutes } from "./api/tracking";
import { usersRoutes } from "./api/users";
import { webhooksRoutes } from "./api/webhooks";
import type { Carrier } from "./carriers/carrier";
import type { Config } from "./config";
import type { Db } from "./db/client";
import { httpErrors } from "./http/errors";
import { bodylessRoutes, createFrontDoor } from "./http/front-door";
import { HttpMetrics } from "./http/metrics";
import { RouteConventions } from "./http/route-conventions";
import { ErrorBody } from "./http/schemas";
import type { Clock } from "./lib/time";
import type { VoiceProvider } from "./voice/provider";
import { eventComponentSchemas } from "./webhooks/events";

export interface AppDeps {
  db: Db;
  config: Config;
  clock: Clock;
  metrics: HttpMetrics;
  /** The carrier adapter picked by CARRIER (src/carriers). */
  carrier: Carrier;
  /** The voice provider picked by VOICE (src/voice). */
  voice: VoiceProvider;
}

export const API_DESCRIPTION = `Self-hosted outreach platform API.

* Every request under /v1 sends \`Authorization: Bearer opk_...\`; keys carry the scopes \`read\` and \`write\`. The dashboard sends its session cookie instead (see Account).
* Success: \`{ok: true, <name>: ...}\` with status 200. Errors: \`{ok: false, error}\` with 400, 401, 403, 404, 408, 409, 413, 422, 429 or 500.
* Lists take \`limit\` (default 50, clamped to 200) and \`offset\`, and answer \`total\`, \`limit\`, \`offset\`.
* Bodies are limited while they are read, chunked or not: 1 MiB (the contacts import 20 MiB; \`/auth/*\` and carrier callbacks 64 KiB; \`/t/*\` 8 KiB); over the limit → 413 without reading the rest; a callback, sign-in or tracking body that has not arrived within 10 s (\`BODY_TIMEOUT_MS\`) → 408.
* Every POST accepts \`Idempotency-Key\` (24 h replay; reuse with another body is 409).
* Rate limit: one token bucket per workspace, shared by all its keys and sessions (per client address without a key); \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\`, \`X-RateLimit-Reset\` on every response.`;

/**
 * Builds the HTTP application on its dependencies; tests build it on a temp database. Its route
 * modules declare to `conventions` what the front door must know of their routes.
 */
export async function createApp(deps: AppDeps, conventions = new RouteConventions()) {
  // normalize: false: bodies and answers are validated as they are, never rewritten to fit their
  // schemas; answers are kept to their schemas by closed response schemas (src/http/schemas.ts).
  const app = new Elysia({ name: "outreach", normalize: false })
    .use(httpErrors())
    .use(systemRoutes(deps))
    .use(docsRoutes())
    .use(meRoutes())
    .use(authRoutes(deps))
    .use(oauthRoutes(deps))
    .use(apiKeysRoutes(deps, conventions))
    .use(usersRoutes(deps, conventions))
    .use(settingsRoutes(deps))
    .use(segmentRoutes(deps, conventions))
    .use(numbersRoutes(deps))
    .use(poolsRoutes(deps))
    .use(suppressionRoutes(deps))
    .use(listRoutes(deps))
    .use(contactRoutes(deps, conventions))
    .use(messagesRoutes(deps))
    .use(callsRoutes(deps))
    .use(conversationsRoutes(deps))
    .use(agentsRoutes(deps))
    .use(sandboxRoutes(deps))
    .use(carrierCallbackRoutes(deps, conventions))
    .use(await webhooksRoutes(deps))
    .use(campaignsRoutes(deps))
    .use(flowsRoutes(deps))
    .use(registrationRoutes(deps))
    .use(conversionsRoutes(deps))
    .use(offersRoutes(deps))
    .use(trackingRoutes(deps, conventions))
    .use(analyticsRoutes(deps))
    .use(plannedRoutes())
    // Last: its catch-all answers page paths with the dashboard (the API keeps its 404s).
    .use(dashboardRoutes());
  return app.use(
    openApiRoutes(() => app, {
      info: {
        title: "outreach API",
        version: "1.0.0",
        description: API_DESCRIPTION,
        // Self-hosted: whoever runs the server answers for it; there is no vendor address.
        contact: { name: "The operator of this outreach server" },
      },
      // Relative: the server the document was fetched from, whatever name it was reached by.
      servers: [{ url: "/", description: "This server" }],
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", description: "API key `opk_...`" },
          session: {
            type: "apiKey",
            in: "cookie",
            name: "outreach_session",
            description: "The dashboard's session cookie, set by `POST /auth/login` (see Account)",
          },
        },
        schemas: {
          ErrorBody: ErrorBody as unknown as Record<string, unknown>,
          ...eventComponentSchemas(),
        },
      },
      security: [{ bearer: [] }, { session: [] }],
    }),
  );
}

export type App = Awaited<ReturnType<typeof createApp>>;

/**
 * The server's fetch handler: the front door (auth, limits, idempotency, headers, metrics) in front
 * of the Elysia router.
 */
export async function createFetchHandler(deps: AppDeps) {
  const conventions = new RouteConventions();
  const app = await createApp(deps, conventions);
  app.compile();
  const fetch = createFrontDoor(
    {
      db: deps.db,
      metrics: deps.metrics,
      routes: conventions,
      rateLimit: { rps: deps.config.rateLimitRps, burst: deps.config.rateLimitBurst },
      publicUrl: deps.config.publicUrl,
      bodyTimeoutMs: deps.config.bodyTimeoutMs,
      takesNoBody: bodylessRoutes(
        app.routes.map((route) => ({
          method: route.method,
          path: route.path,
          hasBody: Boolean((route.hooks as { body?: unknown } | undefined)?.body),
        })),
      ),
    },
    // `fetch`, not `handle`: it answers a sync route synchronously.
    (request) => app.fetch(request),
  );
  return { app, fetch };
}
export { HttpMetrics };
