import type { AuthenticatedSession } from "../auth/sessions";
import type { AuthenticatedKey } from "../domain/workspace/api-keys";
import { AppError } from "../lib/errors";

/**
 * Who an authenticated request acts as: an API key, or a signed-in user's session (the dashboard).
 * Both carry the workspace and the scopes; `kind` tells them apart.
 */
export type RequestAuth = AuthenticatedKey | AuthenticatedSession;

/** What the HTTP layer learns about a request as it passes through the hooks. */
export interface RequestState {
  id: string;
  startedAt: number;
  /** The X-RateLimit-* headers for this request's bucket, when rate limiting is on. */
  rate?: { limit: string; remaining: string; reset: string };
  auth?: RequestAuth;
  /** The client's address, kept for the routes that count by it (sign-in's rate limit). */
  address?: string;
  /** A `Set-Cookie` value to send with the answer (a session whose expiry just slid forward). */
  setCookie?: string;
  /** Idempotency record this request owns (inserted pending, completed with the response). */
  idempotencyKey?: string;
  /** The URL holds `%00`: its query is checked once the request is authenticated. */
  nulInUrl?: true;
}

/** The path of a request URL, without parsing the whole URL. */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const end = url.indexOf("?", start);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}

const states = new WeakMap<Request, RequestState>();

export function setState(request: Request, state: RequestState) {
  states.set(request, state);
}

export function stateOf(request: Request): RequestState | undefined {
  return states.get(request);
}

/** The key or session of an authenticated request. Routes under /v1 always have one. */
export function authOf(request: Request): RequestAuth {
  const auth = states.get(request)?.auth;
  if (!auth) throw new AppError("unauthorized", "Invalid or missing API key");
  return auth;
}

/** The workspace an authenticated request acts in. */
export function workspaceOf(request: Request): string {
  return authOf(request).workspaceId;
}
