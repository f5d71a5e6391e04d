import { createHash } from "node:crypto";
import { Elysia } from "elysia";
import type { Db } from "../db/client";
import { createKeyAuthenticator } from "../domain/api-keys";
import { claimIdempotencyKey, releaseIdempotencyKey, storeIdempotentResponse } from "../domain/idempotency";
import { AppError } from "../lib/errors";
import { log } from "../lib/log";
import { type RequestState, setState, stateOf } from "./context";
import { errorBody, fieldName, STATUS_OF, UNAUTHORIZED_MESSAGE, validationMessage } from "./errors";
import type { HttpMetrics } from "./metrics";
import { TokenBuckets } from "./rate-limit";

export const JSON_BODY_LIMIT = 1024 * 1024;
export const IMPORT_BODY_LIMIT = 20 * 1024 * 1024;

/**
 * Paths that need no API key. Everything else under /v1 (and the legacy /api/public/me) does.
 */
const PUBLIC_PATHS = new Set(["/v1/openapi.json"]);

/** Routes whose body is read as a stream by the handler instead of being parsed here. */
const streamingRoutes = new Set<string>();
export function registerStreamingRoute(method: string, path: string) {
  streamingRoutes.add(`${method} ${path}`);
}
/** Routes a read-only key may POST to (they change nothing). */
const readOnlyPosts = new Set<string>();
export function registerReadOnlyPost(path: string) {
  readOnlyPosts.add(path);
}
/** Body size limits above the default, by path. */
const bodyLimits = new Map<string, number>();
export function registerBodyLimit(path: string, bytes: number) {
  bodyLimits.set(path, bytes);
}

export interface ConventionDeps {
  db: Db;
  metrics: HttpMetrics;
  rateLimit: { rps: number; burst: number };
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const end = url.indexOf("?", start);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}

function needsKey(path: string): boolean {
  return (path.startsWith("/v1/") || path === "/v1" || path === "/api/public/me") && !PUBLIC_PATHS.has(path);
}

/** A JSON error response that carries the request's headers. */
export function errorResponse(state: RequestState | undefined, error: AppError): Response {
  const status = STATUS_OF[error.code];
  if (state) state.status = status;
  const headers: Record<string, string> = { "content-type": "application/json", ...(state?.headers ?? {}) };
  if (error.code === "rate_limited" && typeof error.extra?.retry_after === "number") {
    headers["retry-after"] = String(error.extra.retry_after);
  }
  return new Response(JSON.stringify(errorBody(error)), { status, headers });
}

function isJsonContentType(contentType: string | null): boolean {
  if (!contentType) return false;
  const type = contentType.split(";")[0].trim().toLowerCase();
  return type === "application/json" || type.endsWith("+json");
}

/**
 * Every convention of API.md §1 as Elysia hooks: request ids, API-key auth, write scope,
 * rate limiting, body size, JSON parsing, idempotency, the error envelope and metrics.
 */
export function httpConventions(deps: ConventionDeps) {
  const authenticate = createKeyAuthenticator(deps.db);
  const buckets = new TokenBuckets(deps.rateLimit.rps, deps.rateLimit.burst);

  return (
    new Elysia({ name: "http-conventions" })
      // 1. Request id, auth, rate limit, scope and size: before anything reads the body.
      .onRequest(({ request, set }) => {
        const incoming = request.headers.get("x-request-id");
        const id = incoming && REQUEST_ID_RE.test(incoming) ? incoming : crypto.randomUUID();
        const state: RequestState = { id, startedAt: performance.now(), headers: { "x-request-id": id } };
        setState(request, state);
        set.headers["x-request-id"] = id;
        const path = pathOf(request.url);
        if (!needsKey(path)) return;

        const header = request.headers.get("authorization");
        const presented = header?.startsWith("Bearer ") ? header.slice(7).trim() : null;
        const auth = presented ? authenticate(presented) : null;
        if (!auth) return errorResponse(state, new AppError("unauthorized", UNAUTHORIZED_MESSAGE));
        state.auth = auth;

        if (buckets.enabled) {
          const decision = buckets.take(auth.keyId);
          state.headers["x-ratelimit-limit"] = String(decision.limit);
          state.headers["x-ratelimit-remaining"] = String(decision.remaining);
          state.headers["x-ratelimit-reset"] = String(decision.resetSec);
          set.headers["x-ratelimit-limit"] = state.headers["x-ratelimit-limit"];
          set.headers["x-ratelimit-remaining"] = state.headers["x-ratelimit-remaining"];
          set.headers["x-ratelimit-reset"] = state.headers["x-ratelimit-reset"];
          if (!decision.allowed) {
            return errorResponse(
              state,
              new AppError("rate_limited", "Rate limit exceeded", { retry_after: decision.retryAfterSec }),
            );
          }
        }

        const method = request.method;
        if (
          WRITE_METHODS.has(method) &&
          !auth.scopes.includes("write") &&
          !(method === "POST" && readOnlyPosts.has(path))
        ) {
          return errorResponse(
            state,
            new AppError("forbidden", "This API key cannot create and edit.", { required_scope: "write" }),
          );
        }

        const length = Number(request.headers.get("content-length") ?? 0);
        const limit = bodyLimits.get(path) ?? JSON_BODY_LIMIT;
        if (length > limit) {
          return errorResponse(
            state,
            new AppError("payload_too_large", `Request body is too large (max ${limit} bytes)`),
          );
        }
      })
      // 2. Bodies: JSON objects only (an empty body is {}), except routes that stream their own.
      .onParse({ as: "global" }, async ({ request, path }) => {
        const state = stateOf(request);
        if (streamingRoutes.has(`${request.method} ${path}`)) return {};
        const fail = (error: AppError): never => {
          if (state) state.parseFailure = error;
          throw error;
        };
        const text = await request.text();
        const limit = bodyLimits.get(path) ?? JSON_BODY_LIMIT;
        if (text.length > limit)
          fail(new AppError("payload_too_large", `Request body is too large (max ${limit} bytes)`));
        if (state) state.rawBody = text;
        if (text.trim() === "") return {};
        if (!isJsonContentType(request.headers.get("content-type")))
          fail(new AppError("invalid_json", "Invalid JSON body"));
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          fail(new AppError("invalid_json", "Invalid JSON body"));
        }
        if (value === null || typeof value !== "object" || Array.isArray(value)) {
          fail(new AppError("validation", "body must be a JSON object"));
        }
        return value;
      })
      // 3. Idempotency-Key on POST: replay the first response, refuse a different request.
      .onBeforeHandle({ as: "global" }, ({ request }) => {
        if (request.method !== "POST") return;
        const key = request.headers.get("idempotency-key");
        const state = stateOf(request);
        if (key === null || !state?.auth) return;
        if (key.length === 0 || key.length > 255) {
          return errorResponse(
            state,
            new AppError("validation", "Idempotency-Key must be 1 to 255 characters"),
          );
        }
        const fingerprint = createHash("sha256")
          .update(`${request.method}\n${pathOf(request.url)}\n${state.rawBody ?? ""}`)
          .digest("hex");
        const claim = claimIdempotencyKey(deps.db, state.auth.workspaceId, key, fingerprint);
        switch (claim.kind) {
          case "new":
            state.idempotencyKey = key;
            return;
          case "replay":
            state.status = claim.status;
            return new Response(claim.body, {
              status: claim.status,
              headers: {
                "content-type": "application/json",
                "idempotent-replayed": "true",
                ...state.headers,
              },
            });
          case "mismatch":
            return errorResponse(
              state,
              new AppError("conflict", "Idempotency-Key was used with a different request"),
            );
          case "in_flight":
            return errorResponse(
              state,
              new AppError("conflict", "A request with this Idempotency-Key is still in progress"),
            );
        }
      })
      .onAfterHandle({ as: "global" }, ({ request, responseValue, set }) => {
        const state = stateOf(request);
        if (!state?.idempotencyKey || !state.auth) return;
        const status = typeof set.status === "number" ? set.status : 200;
        const body = responseValue instanceof Response ? null : JSON.stringify(responseValue);
        if (body === null) releaseIdempotencyKey(deps.db, state.auth.workspaceId, state.idempotencyKey);
        else storeIdempotentResponse(deps.db, state.auth.workspaceId, state.idempotencyKey, status, body);
        state.idempotencyKey = undefined;
      })
      // 4. Errors: one envelope, one status table; nothing internal leaks.
      .onError({ as: "global" }, ({ request, code, error }) => {
        const state = stateOf(request);
        let appError: AppError;
        if (state?.parseFailure) {
          appError = state.parseFailure;
        } else if (error instanceof AppError) {
          appError = error;
        } else if (code === "VALIDATION") {
          appError = translateValidation(error as unknown as ValidationLike, state);
        } else if (code === "PARSE") {
          appError = new AppError("invalid_json", "Invalid JSON body");
        } else if (code === "NOT_FOUND") {
          appError = new AppError("not_found", "Not found");
        } else {
          log.error("unhandled error", {
            request_id: state?.id,
            method: request.method,
            path: pathOf(request.url),
            error: error instanceof Error ? (error.stack ?? error.message) : String(error),
          });
          appError = new AppError("internal", "Internal error");
        }
        if (state?.idempotencyKey && state.auth) {
          const status = STATUS_OF[appError.code];
          if (status >= 500) releaseIdempotencyKey(deps.db, state.auth.workspaceId, state.idempotencyKey);
          else
            storeIdempotentResponse(
              deps.db,
              state.auth.workspaceId,
              state.idempotencyKey,
              status,
              JSON.stringify(errorBody(appError)),
            );
          state.idempotencyKey = undefined;
        }
        return errorResponse(state, appError);
      })
      // 5. Metrics, once the response is out.
      .onAfterResponse({ as: "global" }, ({ request, route, set }) => {
        const state = stateOf(request);
        if (!state) return;
        const status = state.status ?? (typeof set.status === "number" ? set.status : 200);
        deps.metrics.record(
          request.method,
          route || "unmatched",
          status,
          (performance.now() - state.startedAt) / 1000,
        );
      })
  );
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
