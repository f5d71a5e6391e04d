import { createHash } from "node:crypto";
import { Elysia } from "elysia";
import { sessionCookie, sessionTokenOf, wantsSecureCookie } from "../auth/cookies";
import { isCrossSite } from "../auth/cross-site";
import { createSessionAuthenticator } from "../auth/sessions";
import { type Db, isDatabaseUnavailable } from "../db/client";
import { createKeyAuthenticator } from "../domain/workspace/api-keys";
import {
  claimIdempotencyKey,
  releaseIdempotencyKey,
  storeIdempotentResponse,
} from "../domain/workspace/idempotency";
import { AppError } from "../lib/errors";
import { log } from "../lib/log";
import { accessError } from "./access";
import { type RequestAuth, type RequestState, setState, stateOf } from "./context";
import { errorBody, fieldName, STATUS_OF, UNAUTHORIZED_MESSAGE, validationMessage } from "./errors";
import type { HttpMetrics } from "./metrics";
import { TokenBuckets } from "./rate-limit";

export const JSON_BODY_LIMIT = 1024 * 1024;
export const IMPORT_BODY_LIMIT = 20 * 1024 * 1024;
/** Carrier callbacks and the sign-in routes (unauthenticated, API.md §7.2). */
export const CALLBACK_BODY_LIMIT = 64 * 1024;
/** Tracking reports (unauthenticated, API.md §7.2). */
export const TRACKING_BODY_LIMIT = 8 * 1024;

/** Paths under /v1 that need no API key. */
const PUBLIC_PATHS = new Set(["/v1/openapi.json"]);

/** Routes whose body is read as a stream by the handler instead of being checked here. */
const streamingRoutes = new Set<string>();
export function registerStreamingRoute(method: string, path: string) {
  streamingRoutes.add(`${method} ${path}`);
}
/** Routes a read-only key may POST to (they change nothing). */
const readOnlyPosts = new Set<string>();
export function registerReadOnlyPost(path: string) {
  readOnlyPosts.add(path);
}
/**
 * POST routes whose answer holds a secret shown once (a new API key, a setup link): the answer is
 * never stored for Idempotency-Key replay. A repeat of the key gets 409 instead of the secret.
 */
const secretAnswers = new Set<string>();
export function registerSecretAnswer(path: string) {
  secretAnswers.add(path);
}
export const SECRET_REPLAY_MESSAGE =
  "Idempotency-Key was already used: its answer held a secret, which is shown only once";
/** Body size limits above the default, by path. */
const bodyLimits = new Map<string, number>();
export function registerBodyLimit(path: string, bytes: number) {
  bodyLimits.set(path, bytes);
}

/**
 * The most a request to `path` may send (API.md §7.2): small for the unauthenticated routes —
 * carrier callbacks and `/auth/*` 64 KiB, tracking reports 8 KiB — a registered limit (the import
 * upload), else 1 MiB.
 */
export function bodyLimitOf(path: string): number {
  if (path.startsWith("/carriers/") || path.startsWith("/auth/")) return CALLBACK_BODY_LIMIT;
  if (path.startsWith("/t/")) return TRACKING_BODY_LIMIT;
  return bodyLimits.get(path) ?? JSON_BODY_LIMIT;
}

/** Unauthenticated streaming routes: their (small) bodies are read whole, within the limit, here. */
const readsWholeHere = (path: string) => path.startsWith("/carriers/") || path.startsWith("/t/");

/**
 * Reads a body, counting while it arrives: null as soon as it passes `limit`, and the rest is never
 * read (the stream is cancelled), chunked or not. A declared Content-Length over the limit is refused
 * before anything is read; one within it is read natively (its length frames it) unless a deadline
 * applies. With `deadlineMs`, a body still incomplete then is given up (the stream
 * is cancelled): "timeout".
 */
export async function readBounded(
  request: Request,
  limit: number,
  deadlineMs?: number,
): Promise<Uint8Array | null | "timeout"> {
  const declared = request.headers.get("content-length");
  if (declared !== null && !(Number(declared) <= limit)) return null;
  if (declared !== null && deadlineMs === undefined) {
    // A declared length frames the body: the server reads exactly that many bytes, no more, so the
    // native read is as bounded as the counted one below and much cheaper on the hot routes.
    return new Uint8Array(await request.arrayBuffer());
  }
  const body = request.body;
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  let timedOut = false;
  const timer =
    deadlineMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          reader.cancel().catch(() => {});
        }, deadlineMs);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (timedOut) return "timeout";
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        return null;
      }
      chunks.push(value);
    }
  } catch (error) {
    if (timedOut) return "timeout";
    throw error;
  } finally {
    clearTimeout(timer);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

export interface ConventionDeps {
  db: Db;
  metrics: HttpMetrics;
  rateLimit: { rps: number; burst: number };
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

function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const end = url.indexOf("?", start);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}

/**
 * Paths answered only with an API key or a session cookie (everything under /v1 but the OpenAPI
 * document, and /api/public/me).
 */
export function needsKey(path: string): boolean {
  return (path.startsWith("/v1/") || path === "/api/public/me") && !PUBLIC_PATHS.has(path);
}

const tooLarge = (limit: number) =>
  new AppError("payload_too_large", `Request body is too large (max ${limit} bytes)`);

/** No request body of the API nests anywhere near this; validating thousands of levels overflows the stack. */
const MAX_BODY_DEPTH = 100;

/** True when objects/arrays in `value` nest more than `max` levels (iterative: no recursion to overflow). */
function nestedDeeperThan(value: object, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (node === null || typeof node !== "object") continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** JSON with object keys sorted at every level: one spelling per value. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

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

const CROSS_SITE_MESSAGE = "Cross-site request refused";

function addressOf(request: Request, server: AddressSource | undefined): string {
  try {
    return server?.requestIP(request)?.address ?? "unknown";
  } catch {
    return "unknown";
  }
}

function isJsonContentType(contentType: string | null): boolean {
  if (!contentType) return false;
  const type = contentType.split(";")[0].trim().toLowerCase();
  return type === "application/json" || type.endsWith("+json");
}

/** A JSON error response in the contract's envelope. */
export function errorResponse(error: AppError): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (error.code === "rate_limited" && typeof error.extra?.retry_after === "number") {
    headers["retry-after"] = String(error.extra.retry_after);
  }
  return new Response(JSON.stringify(errorBody(error)), { status: STATUS_OF[error.code], headers });
}

type Handle = (request: Request) => Promise<Response> | Response;

/**
 * The front door: every convention of API.md §1 that does not depend on the matched route, applied
 * before the router sees the request — request ids, API-key auth, rate limiting, write scope, body
 * size, JSON-body checks and Idempotency-Key replay — and, on the way out, the response headers and
 * metrics. Doing this outside Elysia's per-route hooks keeps read routes on Elysia's fast path.
 */
export function createFrontDoor(deps: ConventionDeps, handle: Handle) {
  const authenticate = createKeyAuthenticator(deps.db);
  const authenticateSession = createSessionAuthenticator(deps.db);
  const buckets = new TokenBuckets(deps.rateLimit.rps, deps.rateLimit.burst);

  /**
   * Headers and metrics on the way out. `rejected`: answered by the front door before routing (no
   * key, rate limit, scope, bad body) — labelled as such, so made-up paths add no metric series.
   */
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
    // Ids become `:id` (a label per route, not per resource); a path with no "-" has no UUID in it.
    // Tracked links are one series, not one per code.
    const route = rejected
      ? "rejected"
      : path.startsWith("/r/")
        ? "/r/:code"
        : response.status === 404
          ? "unmatched"
          : path.includes("-")
            ? path.replace(UUID_SEGMENT_RE, "/:id")
            : path;
    deps.metrics.record(request.method, route, response.status, (performance.now() - state.startedAt) / 1000);
    return response;
  }

  /** Runs the router; a sync route stays sync (an async fetch handler costs Bun.serve a third of its rate). */
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

  function internalError(state: RequestState, request: Request, path: string, error: unknown): Response {
    if (isDatabaseUnavailable(error)) return errorResponse(databaseUnavailable(request, state.id, error));
    log.error("unhandled error", {
      request_id: state.id,
      method: request.method,
      path,
      error: String(error),
    });
    return errorResponse(new AppError("internal", "Internal error"));
  }

  /** Stores the answer for Idempotency-Key replay (when this request claimed a key), then finishes. */
  function settle(
    request: Request,
    state: RequestState,
    response: Response,
    path: string,
  ): Response | Promise<Response> {
    const key = state.idempotencyKey;
    if (!key || !state.auth) return finish(request, state, response, path);
    const workspaceId = state.auth.workspaceId;
    // A failure of the server, or a refusal that passes with time (429: a daily budget), is not
    // kept: the same key may be tried again and gets a fresh answer.
    if (response.status >= 500 || response.status === 429) {
      return releaseIdempotencyKey(deps.db, workspaceId, key).then(() =>
        finish(request, state, response, path),
      );
    }
    return response.text().then(async (text) => {
      if (response.status === 200 && secretAnswers.has(path)) {
        const replay = errorBody(new AppError("conflict", SECRET_REPLAY_MESSAGE));
        await storeIdempotentResponse(deps.db, workspaceId, key, 409, JSON.stringify(replay));
      } else {
        await storeIdempotentResponse(deps.db, workspaceId, key, response.status, text);
      }
      return finish(
        request,
        state,
        new Response(text, { status: response.status, headers: response.headers }),
        path,
      );
    });
  }

  /** The deadline of a body of at most `limit` bytes: the small, unauthenticated ones only. */
  const bodyTimeoutMs = deps.bodyTimeoutMs ?? 10_000;
  const deadlineFor = (limit: number) => (limit <= CALLBACK_BODY_LIMIT ? bodyTimeoutMs : undefined);
  const tooSlow = () =>
    new AppError(
      "request_timeout",
      `Request body was not received within ${bodyTimeoutMs / 1000} s: send it at once`,
    );

  /** Body checks and Idempotency-Key for writes: the only part that has to wait for the request. */
  async function withBody(request: Request, state: RequestState, path: string): Promise<Response> {
    const method = request.method;
    const fail = (error: AppError) => reject(request, state, path, error);
    if (deps.takesNoBody?.(method, path)) {
      // A route that declares no body ignores one, whatever it is (API.md §1).
      const headers = new Headers(request.headers);
      headers.delete("content-type");
      headers.delete("content-length");
      return withParsedBody(request, new Request(request.url, { method, headers }), "", state, path);
    }
    // 4. Body: at most the route's limit (counted while it is read), JSON, an object (an empty body is {}).
    const limit = bodyLimitOf(path);
    const bytes = await readBounded(request, limit, deadlineFor(limit));
    if (bytes === "timeout") return fail(tooSlow());
    if (!bytes) return fail(tooLarge(limit));
    const text = new TextDecoder().decode(bytes);
    let body = text;
    let value: unknown = {};
    if (text.trim() === "") {
      body = "{}";
    } else {
      if (!isJsonContentType(request.headers.get("content-type"))) {
        return fail(new AppError("invalid_json", "Invalid JSON body"));
      }
      try {
        value = JSON.parse(text);
      } catch {
        return fail(new AppError("invalid_json", "Invalid JSON body"));
      }
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        return fail(new AppError("validation", "body must be a JSON object"));
      }
      if (nestedDeeperThan(value, MAX_BODY_DEPTH)) {
        return fail(new AppError("validation", `body is nested too deeply (max ${MAX_BODY_DEPTH} levels)`));
      }
    }
    const headers = new Headers(request.headers);
    headers.set("content-type", "application/json");
    headers.delete("content-length");
    // The key is bound to the JSON value, not its spelling: key order and spacing do not matter.
    const fingerprintOf = () => canonicalJson(value);
    return withParsedBody(
      request,
      new Request(request.url, { method, headers, body }),
      text,
      state,
      path,
      fingerprintOf,
    );
  }

  /**
   * A streaming route's body, read whole within the route's limit (counted while it is read): so
   * Idempotency-Key can apply, and for the small unauthenticated routes before they run.
   */
  async function withWholeUpload(request: Request, state: RequestState, path: string): Promise<Response> {
    const limit = bodyLimitOf(path);
    const bytes = await readBounded(request, limit, deadlineFor(limit));
    if (bytes === "timeout") return reject(request, state, path, tooSlow());
    if (!bytes) return reject(request, state, path, tooLarge(limit));
    const forwarded = new Request(request.url, {
      method: request.method,
      headers: request.headers,
      body: bytes as Uint8Array<ArrayBuffer>,
    });
    return withParsedBody(request, forwarded, new TextDecoder().decode(bytes), state, path);
  }

  /** Idempotency-Key for writes (on the raw body text), then the route. */
  function withParsedBody(
    request: Request,
    forwarded: Request,
    text: string,
    state: RequestState,
    path: string,
    /** What the Idempotency-Key is bound to; the raw text unless given. */
    fingerprintOf: () => string = () => text,
  ): Response | Promise<Response> {
    const method = request.method;
    const fail = (error: AppError) => reject(request, state, path, error);

    // 5. Idempotency-Key: replay the first answer; refuse the key for a different request.
    const key = request.headers.get("idempotency-key");
    if (method === "POST" && key !== null && state.auth) {
      if (key.length === 0 || key.length > 255) {
        return fail(new AppError("validation", "Idempotency-Key must be 1 to 255 characters"));
      }
      const fingerprint = createHash("sha256").update(`${method}\n${path}\n${fingerprintOf()}`).digest("hex");
      return claimIdempotencyKey(deps.db, state.auth.workspaceId, key, fingerprint).then((claim) => {
        if (claim.kind === "replay") {
          const replay = new Response(claim.body, {
            status: claim.status,
            headers: { "content-type": "application/json", "idempotent-replayed": "true" },
          });
          return finish(request, state, replay, path);
        }
        if (claim.kind === "mismatch")
          return fail(new AppError("conflict", "Idempotency-Key was used with a different request"));
        if (claim.kind === "in_flight") {
          return fail(new AppError("conflict", "A request with this Idempotency-Key is still in progress"));
        }
        state.idempotencyKey = key;
        setState(forwarded, state);
        return dispatch(request, forwarded, state, path);
      });
    }
    setState(forwarded, state);
    return dispatch(request, forwarded, state, path);
  }

  /** An answer the front door gives itself, before routing. */
  function reject(request: Request, state: RequestState, path: string, error: AppError): Response {
    const response = finish(request, state, errorResponse(error), path, true);
    // The tracking script's reports are cross-origin: their refusals (a 429) are readable there too.
    if (path === "/t.js" || path.startsWith("/t/")) response.headers.set("access-control-allow-origin", "*");
    return response;
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

  return function frontDoor(request: Request, server?: AddressSource): Response | Promise<Response> {
    const incoming = request.headers.get("x-request-id");
    const id = incoming && REQUEST_ID_RE.test(incoming) ? incoming : crypto.randomUUID();
    const state: RequestState = { id, startedAt: performance.now() };
    const path = pathOf(request.url);
    const method = request.method;

    // Public endpoints (health, metrics, the API reference) are limited per client address. A link
    // domain check has a bucket of its own: it often comes from this very server (or the proxy in
    // front of it), whose address clicks and tracking reports may have spent.
    if (isAddressLimited(path)) {
      const scope = path.startsWith(WELL_KNOWN_CHECK_PREFIX) ? "check" : "address";
      const limited = limit(request, state, path, `${scope}:${addressOf(request, server)}`);
      if (limited) return limited;
    }

    if (needsKey(path)) {
      // 1. Authentication: a live key, read from the database (see createKeyAuthenticator); with no
      //    Authorization header at all, the dashboard's session cookie (see createSessionAuthenticator).
      const header = request.headers.get("authorization");
      let auth: RequestAuth | null | Promise<RequestAuth | null> = null;
      if (header !== null) {
        const presented = header.startsWith("Bearer ") ? header.slice(7).trim() : null;
        auth = presented ? authenticate(presented) : null;
      } else {
        auth = sessionAuth(request, state);
      }
      // A cached key answers at once (the request stays synchronous); a lookup answers later.
      if (auth instanceof Promise)
        return auth.then(
          (found) => authenticated(request, server, state, path, found),
          (error) => finish(request, state, internalError(state, request, path, error), path),
        );
      return authenticated(request, server, state, path, auth);
    }
    if (isAccountPath(path)) {
      // Sign-in and setup too: another site must not sign a browser in to an account of its choosing.
      if (WRITE_METHODS.has(method) && isCrossSite(request.headers, request.url, deps.publicUrl)) {
        return reject(request, state, path, new AppError("forbidden", CROSS_SITE_MESSAGE));
      }
      state.address = addressOf(request, server);
    }
    return routed(request, state, path);
  };

  /** Steps 1–4 for a request with credentials (or none), then the body and the route. */
  function authenticated(
    request: Request,
    server: AddressSource | undefined,
    state: RequestState,
    path: string,
    auth: RequestAuth | null,
  ): Response | Promise<Response> {
    const method = request.method;
    {
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
      const changes = WRITE_METHODS.has(method) && !(method === "POST" && readOnlyPosts.has(path));
      if (
        auth.kind === "session" &&
        WRITE_METHODS.has(method) &&
        isCrossSite(request.headers, request.url, deps.publicUrl)
      ) {
        return reject(request, state, path, new AppError("forbidden", CROSS_SITE_MESSAGE));
      }

      // 4. Write scope, and the parts of the API an account's role or a key's scopes keep it from.
      const denied = accessError(auth, path, changes);
      if (denied) return reject(request, state, path, denied);
    }
    return routed(request, state, path);
  }

  /** The body (for writes), then the route. */
  function routed(request: Request, state: RequestState, path: string): Response | Promise<Response> {
    const method = request.method;
    if (WRITE_METHODS.has(method)) {
      if (!streamingRoutes.has(`${method} ${path}`)) return withBody(request, state, path);
      // Carrier callbacks and tracking reports are small: read whole here, within their limit.
      if (readsWholeHere(path)) return withWholeUpload(request, state, path);
      // A streamed upload with Idempotency-Key is read whole first: the key is bound to its bytes.
      if (method === "POST" && state.auth && request.headers.get("idempotency-key") !== null)
        return withWholeUpload(request, state, path);
    }
    setState(request, state);
    return dispatch(request, request, state, path);
  }
}

/**
 * The error half of the conventions, as an Elysia hook: one envelope, one status table, the
 * contract's validation wording, and nothing internal in the answer.
 */
export function httpErrors() {
  return new Elysia({ name: "http-errors" }).onError({ as: "global" }, ({ request, code, error }) => {
    const state = stateOf(request);
    let appError: AppError;
    if (error instanceof AppError) {
      appError = error;
    } else if (code === "VALIDATION") {
      appError = translateValidation(error as unknown as ValidationLike, state);
    } else if (code === "PARSE") {
      appError = new AppError("invalid_json", "Invalid JSON body");
    } else if (code === "NOT_FOUND") {
      appError = new AppError("not_found", "Not found");
    } else if (isDatabaseUnavailable(error)) {
      appError = databaseUnavailable(request, state?.id, error);
    } else {
      log.error("unhandled error", {
        request_id: state?.id,
        method: request.method,
        path: pathOf(request.url),
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
      appError = new AppError("internal", "Internal error");
    }
    return errorResponse(appError);
  });
}

interface ValidationLike {
  type: "body" | "query" | "params" | "headers" | "response" | string;
  all: Parameters<typeof validationMessage>[0][];
}

function translateValidation(error: ValidationLike, state: RequestState | undefined): AppError {
  if (error.type === "params") return new AppError("not_found", "Not found");
  if (error.type === "response") {
    log.error("response did not match its schema", {
      request_id: state?.id,
      issues: JSON.stringify(error.all?.slice(0, 3)),
    });
    return new AppError("internal", "Internal error");
  }
  const issue = error.all?.[0];
  if (!issue) return new AppError("validation", `${fieldName("", error.type)} is invalid`);
  return new AppError("validation", validationMessage(issue, error.type));
}

/**
 * A request the database could not serve because it is unreachable (PostgreSQL restarting, the
 * network cut): 503, logged once per request without a stack. The pool reconnects by itself.
 */
function databaseUnavailable(request: Request, requestId: string | undefined, error: unknown): AppError {
  log.warn("database unavailable", {
    request_id: requestId,
    method: request.method,
    path: pathOf(request.url),
    error: String((error as { cause?: unknown }).cause ?? error).split("\n")[0],
  });
  return new AppError("unavailable", "Database unavailable");
}
