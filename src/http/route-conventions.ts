import { CALLBACK_BODY_LIMIT, JSON_BODY_LIMIT, TRACKING_BODY_LIMIT } from "./body";

/**
 * What the front door must know of particular routes before routing, declared by the route modules
 * that own them. One per app: created with it (src/app.ts), written while its routes are built and
 * read by its front door (src/http/front-door.ts).
 */
export class RouteConventions {
  /** Routes whose body is read as a stream by the handler instead of being checked by the front door. */
  private readonly streamingRoutes = new Set<string>();
  /** Routes a read-only key may POST to (they change nothing). */
  private readonly readOnlyPosts = new Set<string>();
  /**
   * POST routes whose answer holds a secret shown once (a new API key, a setup link): the answer is
   * never stored for Idempotency-Key replay. A repeat of the key gets 409 instead of the secret.
   */
  private readonly secretAnswers = new Set<string>();
  /** Body size limits above the default, by path. */
  private readonly bodyLimits = new Map<string, number>();

  registerStreamingRoute(method: string, path: string) {
    this.streamingRoutes.add(`${method} ${path}`);
  }

  isStreamingRoute(method: string, path: string): boolean {
    return this.streamingRoutes.has(`${method} ${path}`);
  }

  registerReadOnlyPost(path: string) {
    this.readOnlyPosts.add(path);
  }

  isReadOnlyPost(path: string): boolean {
    return this.readOnlyPosts.has(path);
  }

  registerSecretAnswer(path: string) {
    this.secretAnswers.add(path);
  }

  hasSecretAnswer(path: string): boolean {
    return this.secretAnswers.has(path);
  }

  registerBodyLimit(path: string, bytes: number) {
    this.bodyLimits.set(path, bytes);
  }

  /**
   * The most a request to `path` may send (API.md §7.2): small for the unauthenticated routes —
   * carrier callbacks and `/auth/*` 64 KiB, tracking reports 8 KiB — a registered limit (the import
   * upload), else 1 MiB.
   */
  bodyLimitOf(path: string): number {
    if (path.startsWith("/carriers/") || path.startsWith("/auth/")) return CALLBACK_BODY_LIMIT;
    if (path.startsWith("/t/")) return TRACKING_BODY_LIMIT;
    return this.bodyLimits.get(path) ?? JSON_BODY_LIMIT;
  }
}
