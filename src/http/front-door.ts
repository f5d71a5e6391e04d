import { sessionCookie, sessionTokenOf, wantsSecureCookie } from "../auth/cookies";
import { isCrossSite } from "../auth/cross-site";
import { createSessionAuthenticator } from "../auth/sessions";
import { type Db, isDatabaseUnavailable } from "../db/client";
import { createKeyAuthenticator } from "../domain/workspace/api-keys";
import { AppError } from "../lib/errors";
import { errorText, log } from "../lib/log";
import { textProblem } from "../lib/text";
import { accessError, needsKey } from "./access";
import { createBodyReader, jsonObjectBody } from "./body";
import { pathOf, type RequestAuth, type RequestState, setState } from "./context";
import { databaseUnavailable, errorResponse, UNAUTHORIZED_MESSAGE } from "./errors";
import { canonicalJson, createIdempotency } from "./idempotency";
import type { HttpMetrics } from "./metrics";
import { TokenBuckets } from "./rate-limit";
import type { RouteConventions } from "./route-conventions";

export interface FrontDoorDeps {
  db: Db;
  metrics: HttpMetrics;
  rateLimit: { rps: number; burst: number };
  /** What the app's route modules declared of their routes (streamed bodies, limits, read-only POSTs, secrets). */
  routes: RouteConventions;
  /** True for a write route that declares no body (API.md: such endpoints ignore one). */
  takesNoBody?: (method: string, path: string) => boolean;
  /** PUBLIC_URL: an `Origin` naming it is same-site; an https one makes session cookies `Secure`. */
  publicUrl?: string;
  /**
   * BODY_TIMEOUT_MS: how long a small body (the 64 KiB and 8 KiB routes, all unauthenticated) may
   * take to arrive; a client trickling it is answered 408 and let go instead of holding its
   * connection and buffer until the idle timeout. Default 10 s.
   */
  bodyTimeoutMs?: number;
}

/**
 * Matches requests against the write routes that declare no body, from the app's route table
 * (`:param` segments match any one segment).
 */
export function bodylessRoutes(routes: { method: string; path: string; hasBody: boolean }[]) {
  const patterns = routes
    .filter((route) => WRITE_METHODS.has(route.method) && !route.hasBody && route.path.startsWith("/v1/"))
    .map((route) => ({
      method: route.method,
      re: new RegExp(`^${route.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[^/]+/g, "[^/]+")}$`),
    }));
  return (method: string, path: string) => patterns.some((p) => p.method === method && p.re.test(path));
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
const UUID_SEGMENT_RE = /\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?=\/|$)/gi;

/** What Bun.serve passes as the fetch handler's second argument, as far as it is used here. */
interface AddressSource {
  requestIP(request: Request): { address: string } | null;
}

/** Where a link domain's check token is answered (src/domain/attribution/link-domains.ts). */
const WELL_KNOWN_CHECK_PREFIX = "/.well-known/outreach/";

/** Public paths that share the per-address bucket. */
const ADDRESS_LIMITED_PATHS = new Set(["/healthz", "/metrics", "/v1/openapi.json", "/docs", "/t.js"]);

/**
 * Tracked links (`/r/<code>`), tracking reports (`/t/...`), link domain checks
 * (`/.well-known/outreach/<token>`), the sign-in routes (`/auth/...`) and carrier callbacks
 * (`/carriers/...`, API.md §7.2): public, limited per address.
 */
function isAddressLimited(path: string): boolean {
  return (
    ADDRESS_LIMITED_PATHS.has(path) ||
    path.startsWith("/r/") ||
    path.startsWith("/t/") ||
    path.startsWith(WELL_KNOWN_CHECK_PREFIX) ||
    path.startsWith("/auth/") ||
    path.startsWith("/carriers/")
  );
}

/** Sign-in, setup, logout, session and password routes: not under /v1, but guarded like its writes. */
const isAccountPath = (path: string) => path.startsWith("/auth/");

/** Unauthenticated streaming routes: their (small) bodies are read whole, within the limit, here. */
const readsWholeHere = (path: string) => path.startsWith("/carriers/") || path.startsWith("/t/");

const CROSS_SITE_MESSAGE = "Cross-site request refused";

function addressOf(request: Request, server: AddressSource | undefined): string {
  try {
    return server?.requestIP(request)?.address ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** A request's id: the client's own X-Request-Id when it is a sane one, else a new one. */
function requestIdOf(request: Request): string {
  const incoming = request.headers.get("x-request-id");
  return incoming && REQUEST_ID_RE.test(incoming) ? incoming : crypto.randomUUID();
}

/**
 * The metrics label of an answer. `rejected`: answered by the front door before routing (no key,
 * rate limit, scope, bad body), so made-up paths add no metric series. Ids become `:id` (a label
 * per route, not per resource); a path with no "-" has no UUID in it. Tracked links are one
 * series, not one per code.
 */
function metricRouteOf(path: string, status: number, rejected: boolean): string {
  if (rejected) return "rejected";
  if (path.startsWith("/r/")) return "/r/:code";
  if (status === 404) return "unmatched";
  return path.includes("-") ? path.replace(UUID_SEGMENT_RE, "/:id") : path;
}

type Handle = (request: Request) => Promise<Response> | Response;

/**
 * A query parameter whose text no database can keep (a NUL character: see textProblem), named, or
 * null. Only asked when the URL holds `%00`; an id in the path with one is simply not found.
 */
function queryProblem(url: string): string | null {
  for (const [name, value] of new URL(url).searchParams) {
    const problem = textProblem(name) ?? textProblem(value);
    if (problem) return `${name.replaceAll("\0", "")} ${problem}`;
  }
  return null;
}

/**
 * The front door: every convention of API.md §1 that does not depend on the matched route, applied
 * before the router sees the request — request ids, API-key auth, rate limiting, write scope, body
 * size, JSON-body checks and Idempotency-Key replay — and, on the way out, the response headers and
 * metrics. Doing this outside Elysia's per-route hooks keeps read routes on Elysia's fast path.
 *
 * Each step hands the request to the next or answers it; a step that need not wait answers
 * synchronously (an async fetch handler costs Bun.serve a third of its rate).
 */
export function createFrontDoor(deps: FrontDoorDeps, handle: Handle) {
  const authenticateKey = createKeyAuthenticator(deps.db);
  const authenticateSession = createSessionAuthenticator(deps.db);
  const buckets = new TokenBuckets(deps.rateLimit.rps, deps.rateLimit.burst);
  const readBody = createBodyReader((path) => deps.routes.bodyLimitOf(path), deps.bodyTimeoutMs);
  const idempotency = createIdempotency(deps.db, deps.routes);

  return function frontDoor(request: Request, server?: AddressSource): Response | Promise<Response> {
    const state: RequestState = { id: requestIdOf(request), startedAt: performance.now() };
    const url = request.url;
    const path = pathOf(url);
    if (url.includes("%00")) state.nulInUrl = true;
    const limited = limitByAddress(request, server, state, path);
    if (limited) return limited;
    if (needsKey(path)) return authenticate(request, server, state, path);
    if (isAccountPath(path)) {
      // Sign-in and setup too: another site must not sign a browser in to an account of its choosing.
      const refused = refuseCrossSiteWrite(request, state, path);
      if (refused) return refused;
      state.address = addressOf(request, server);
    }
    return routed(request, state, path);
  };

  /**
   * Public endpoints (health, metrics, the API reference) are limited per client address. A link
   * domain check has a bucket of its own: it often comes from this very server (or the proxy in
   * front of it), whose address clicks and tracking reports may have spent.
   */
  function limitByAddress(
    request: Request,
    server: AddressSource | undefined,
    state: RequestState,
    path: string,
  ): Response | null {
    if (!isAddressLimited(path)) return null;
    const scope = path.startsWith(WELL_KNOWN_CHECK_PREFIX) ? "check" : "address";
    return limit(request, state, path, `${scope}:${addressOf(request, server)}`);
  }

  /**
   * 1. Authentication: a live key, read from the database (see createKeyAuthenticator); with no
   *    Authorization header at all, the dashboard's session cookie (see createSessionAuthenticator).
   */
  function authenticate(
    request: Request,
    server: AddressSource | undefined,
    state: RequestState,
    path: string,
  ): Response | Promise<Response> {
    const auth = credentialsOf(request, state);
    // A cached key answers at once (the request stays synchronous); a lookup answers later.
    if (auth instanceof Promise)
      return auth.then(
        (found) => authorize(request, server, state, path, found),
        (error) => finish(request, state, internalError(state, request, path, error), path),
      );
    return authorize(request, server, state, path, auth);
  }

  function credentialsOf(
    request: Request,
    state: RequestState,
  ): RequestAuth | null | Promise<RequestAuth | null> {
    const header = request.headers.get("authorization");
    if (header === null) return sessionAuth(request, state);
    const presented = header.startsWith("Bearer ") ? header.slice(7).trim() : null;
    return presented ? authenticateKey(presented) : null;
  }

  /**
   * The session of the request's `outreach_session` cookie, or null. When this use slid the
   * session's expiry forward, the answer carries the cookie again with a fresh Max-Age.
   */
  async function sessionAuth(request: Request, state: RequestState): Promise<RequestAuth | null> {
    const token = sessionTokenOf(request.headers.get("cookie"));
    if (!token) return null;
    const resolved = await authenticateSession(token);
    if (!resolved) return null;
    if (resolved.extended)
      state.setCookie = sessionCookie(token, wantsSecureCookie(request.url, deps.publicUrl));
    return resolved.session;
  }

  /** Steps 2–4 for a request with credentials (or none), then the body and the route. */
  function authorize(
    request: Request,
    server: AddressSource | undefined,
    state: RequestState,
    path: string,
    auth: RequestAuth | null,
  ): Response | Promise<Response> {
    const method = request.method;
    if (!auth) {
      // Without a live key the bucket is the client's address: guessing keys is rate limited too.
      const limited = limit(request, state, path, `address:${addressOf(request, server)}`);
      return limited ?? reject(request, state, path, new AppError("unauthorized", UNAUTHORIZED_MESSAGE));
    }
    state.auth = auth;

    // 2. Rate limit per workspace (API.md §7.2): every key and session of a workspace share one
    //    bucket, so minting more keys buys no more rate.
    const limited = limit(request, state, path, `workspace:${auth.workspaceId}`);
    if (limited) return limited;

    // 3. A write with the session cookie must come from this site (a bearer key cannot be sent by
    //    another site on a user's behalf; a cookie can).
    if (auth.kind === "session") {
      const refused = refuseCrossSiteWrite(request, state, path);
      if (refused) return refused;
    }

    // 4. Write scope, and the parts of the API an account's role or a key's scopes keep it from.
    const changes = WRITE_METHODS.has(method) && !(method === "POST" && deps.routes.isReadOnlyPost(path));
    const denied = accessError(auth, path, changes);
    if (denied) return reject(request, state, path, denied);
    return routed(request, state, path);
  }

  /** 403 for a write sent from another site (its `Origin` or `Referer` is not this server's). */
  function refuseCrossSiteWrite(request: Request, state: RequestState, path: string): Response | null {
    if (!WRITE_METHODS.has(request.method) || !isCrossSite(request.headers, request.url, deps.publicUrl))
      return null;
    return reject(request, state, path, new AppError("forbidden", CROSS_SITE_MESSAGE));
  }

  /** The query's text, then the body (for writes), then the route. */
  function routed(request: Request, state: RequestState, path: string): Response | Promise<Response> {
    const method = request.method;
    const badQuery = state.nulInUrl ? queryProblem(request.url) : null;
    if (badQuery) return reject(request, state, path, new AppError("validation", badQuery));
    if (WRITE_METHODS.has(method)) {
      if (!deps.routes.isStreamingRoute(method, path)) return withBody(request, state, path);
      // Carrier callbacks and tracking reports are small: read whole here, within their limit.
      if (readsWholeHere(path)) return withWholeUpload(request, state, path);
      // A streamed upload with Idempotency-Key is read whole first: the key is bound to its bytes.
      if (method === "POST" && state.auth && request.headers.get("idempotency-key") !== null)
        return withWholeUpload(request, state, path);
    }
    setState(request, state);
    return dispatch(request, request, state, path);
  }

  /** Body checks for writes: the only part that has to wait for the request. Then Idempotency-Key. */
  async function withBody(request: Request, state: RequestState, path: string): Promise<Response> {
    const method = request.method;
    if (deps.takesNoBody?.(method, path)) {
      // A route that declares no body ignores one, whatever it is (API.md §1).
      const headers = new Headers(request.headers);
      headers.delete("content-type");
      headers.delete("content-length");
      return withIdempotencyKey(
        request,
        new Request(request.url, { method, headers }),
        state,
        path,
        () => "",
      );
    }
    // Body: at most the route's limit (counted while it is read), JSON, an object (an empty body is {}).
    const bytes = await readBody(request, path);
    if (bytes instanceof AppError) return reject(request, state, path, bytes);
    const parsed = jsonObjectBody(new TextDecoder().decode(bytes), request.headers.get("content-type"));
    if (parsed instanceof AppError) return reject(request, state, path, parsed);
    const headers = new Headers(request.headers);
    headers.set("content-type", "application/json");
    headers.delete("content-length");
    const forwarded = new Request(request.url, { method, headers, body: parsed.body });
    // The key is bound to the JSON value, not its spelling: key order and spacing do not matter.
    return withIdempotencyKey(request, forwarded, state, path, () => canonicalJson(parsed.value));
  }

  /**
   * A streaming route's body, read whole within the route's limit (counted while it is read): so
   * Idempotency-Key can apply, and for the small unauthenticated routes before they run.
   */
  async function withWholeUpload(request: Request, state: RequestState, path: string): Promise<Response> {
    const bytes = await readBody(request, path);
    if (bytes instanceof AppError) return reject(request, state, path, bytes);
    const forwarded = new Request(request.url, {
      method: request.method,
      headers: request.headers,
      body: bytes as Uint8Array<ArrayBuffer>,
    });
    const text = new TextDecoder().decode(bytes);
    return withIdempotencyKey(request, forwarded, state, path, () => text);
  }

  /**
   * 5. Idempotency-Key on a POST: replay the first answer; refuse the key for a different request.
   *    Then the route. `fingerprintOf`: what the key is bound to.
   */
  function withIdempotencyKey(
    request: Request,
    forwarded: Request,
    state: RequestState,
    path: string,
    fingerprintOf: () => string,
  ): Response | Promise<Response> {
    const key = request.headers.get("idempotency-key");
    if (request.method !== "POST" || key === null || !state.auth) {
      setState(forwarded, state);
      return dispatch(request, forwarded, state, path);
    }
    return idempotency
      .claim(state.auth.workspaceId, key, request.method, path, fingerprintOf)
      .then((claim): Response | Promise<Response> => {
        switch (claim.kind) {
          case "replay":
            return finish(request, state, claim.response, path);
          case "refused":
            return reject(request, state, path, claim.error);
          case "claimed":
            state.idempotencyKey = key;
            setState(forwarded, state);
            return dispatch(request, forwarded, state, path);
        }
      });
  }

  /** Runs the router; a sync route stays sync. */
  function dispatch(
    request: Request,
    forwarded: Request,
    state: RequestState,
    path: string,
  ): Response | Promise<Response> {
    let result: Response | Promise<Response>;
    try {
      result = handle(forwarded);
    } catch (error) {
      result = internalError(state, request, path, error);
    }
    if (result instanceof Promise) {
      return result.then(
        (response) => settle(request, state, response, path),
        (error) => settle(request, state, internalError(state, request, path, error), path),
      );
    }
    return settle(request, state, result, path);
  }

  /** Keeps the answer for Idempotency-Key replay (when this request claimed a key), then finishes. */
  function settle(
    request: Request,
    state: RequestState,
    response: Response,
    path: string,
  ): Response | Promise<Response> {
    const key = state.idempotencyKey;
    if (!key || !state.auth) return finish(request, state, response, path);
    return idempotency
      .keep(state.auth.workspaceId, key, path, response)
      .then((kept) => finish(request, state, kept, path));
  }

  function internalError(state: RequestState, request: Request, path: string, error: unknown): Response {
    if (isDatabaseUnavailable(error)) return errorResponse(databaseUnavailable(request, state.id, error));
    log.error("unhandled error", {
      request_id: state.id,
      method: request.method,
      path,
      error: errorText(error),
    });
    return errorResponse(new AppError("internal", "Internal error"));
  }

  /** Takes a token from `bucket` (X-RateLimit headers on the answer); the 429 when it is empty. */
  function limit(request: Request, state: RequestState, path: string, bucket: string): Response | null {
    if (!buckets.enabled) return null;
    const decision = buckets.take(bucket);
    state.rate = {
      limit: String(decision.limit),
      remaining: String(decision.remaining),
      reset: String(decision.resetSec),
    };
    if (decision.allowed) return null;
    const retry_after = decision.retryAfterSec;
    return reject(request, state, path, new AppError("rate_limited", "Rate limit exceeded", { retry_after }));
  }

  /** An answer the front door gives itself, before routing. */
  function reject(request: Request, state: RequestState, path: string, error: AppError): Response {
    const response = finish(request, state, errorResponse(error), path, true);
    // The tracking script's reports are cross-origin: their refusals (a 429) are readable there too.
    if (path === "/t.js" || path.startsWith("/t/")) response.headers.set("access-control-allow-origin", "*");
    return response;
  }

  /** Headers and metrics on the way out. `rejected`: answered by the front door before routing. */
  function finish(
    request: Request,
    state: RequestState,
    response: Response,
    path: string,
    rejected = false,
  ): Response {
    const headers = response.headers;
    headers.set("x-request-id", state.id);
    if (state.setCookie) headers.append("set-cookie", state.setCookie);
    if (state.rate) {
      headers.set("x-ratelimit-limit", state.rate.limit);
      headers.set("x-ratelimit-remaining", state.rate.remaining);
      headers.set("x-ratelimit-reset", state.rate.reset);
    }
    const route = metricRouteOf(path, response.status, rejected);
    deps.metrics.record(request.method, route, response.status, (performance.now() - state.startedAt) / 1000);
    return response;
  }
}
