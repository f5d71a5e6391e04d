import { CALLBACK_BODY_LIMIT, JSON_BODY_LIMIT, TRACKING_BODY_LIMIT } from "./body";

/** Routes whose body is read as a stream by the handler instead of being checked by the front door. */
const streamingRoutes = new Set<string>();
export function registerStreamingRoute(method: string, path: string) {
  streamingRoutes.add(`${method} ${path}`);
}
export const isStreamingRoute = (method: string, path: string) => streamingRoutes.has(`${method} ${path}`);

/** Routes a read-only key may POST to (they change nothing). */
const readOnlyPosts = new Set<string>();
export function registerReadOnlyPost(path: string) {
  readOnlyPosts.add(path);
}
export const isReadOnlyPost = (path: string) => readOnlyPosts.has(path);

/**
 * POST routes whose answer holds a secret shown once (a new API key, a setup link): the answer is
 * never stored for Idempotency-Key replay. A repeat of the key gets 409 instead of the secret.
 */
const secretAnswers = new Set<string>();
export function registerSecretAnswer(path: string) {
  secretAnswers.add(path);
}
export const hasSecretAnswer = (path: string) => secretAnswers.has(path);

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
