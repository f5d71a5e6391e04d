import { createHash } from "node:crypto";
import type { Db } from "../db/client";
import { withCommitWitness } from "../db/group-commit";
import {
  claimIdempotencyKey,
  releaseIdempotencyKey,
  storeIdempotentResponse,
} from "../domain/workspace/idempotency";
import { AppError } from "../lib/errors";
import { stateOf } from "./context";
import { errorBody } from "./errors";
import type { RouteConventions } from "./route-conventions";

export const SECRET_REPLAY_MESSAGE =
  "Idempotency-Key was already used: its answer held a secret, which is shown only once";

/** JSON with object keys sorted at every level: one spelling per value. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** What a POST with Idempotency-Key meets before it runs. */
export type KeyClaim =
  /** The key's first answer, to send again instead of running the route. */
  | { kind: "replay"; response: Response }
  /** The key is malformed, bound to another request, or that request is still running. */
  | { kind: "refused"; error: AppError }
  /** The key is this request's now: run the route, then `keep` its answer. */
  | { kind: "claimed" };

/**
 * Idempotency-Key on the HTTP side (API.md §1): a POST's key is claimed before the route runs and
 * the route's answer is kept for the key's replays, unless the route's answer is a secret shown once.
 */
export function createIdempotency(db: Db, routes: Pick<RouteConventions, "hasSecretAnswer">) {
  return {
    /**
     * Claims `key` for a request to `path`, bound to what `fingerprintOf` returns (the body, in
     * whatever form makes two equal requests equal) so that reusing it for another request is refused.
     */
    async claim(
      workspaceId: string,
      key: string,
      method: string,
      path: string,
      fingerprintOf: () => string,
    ): Promise<KeyClaim> {
      if (key.length === 0 || key.length > 255) {
        return {
          kind: "refused",
          error: new AppError("validation", "Idempotency-Key must be 1 to 255 characters"),
        };
      }
      const fingerprint = createHash("sha256").update(`${method}\n${path}\n${fingerprintOf()}`).digest("hex");
      const claim = await claimIdempotencyKey(db, workspaceId, key, fingerprint);
      switch (claim.kind) {
        case "replay":
          return {
            kind: "replay",
            response: new Response(claim.body, {
              status: claim.status,
              headers: { "content-type": "application/json", "idempotent-replayed": "true" },
            }),
          };
        case "mismatch":
          return {
            kind: "refused",
            error: new AppError("conflict", "Idempotency-Key was used with a different request"),
          };
        case "in_flight":
          return {
            kind: "refused",
            error: new AppError("conflict", "A request with this Idempotency-Key is still in progress"),
          };
        case "new":
          return { kind: "claimed" };
      }
    },

    /** Keeps the answer to a request that claimed `key` for its replays; resolves to the answer to send. */
    async keep(workspaceId: string, key: string, path: string, response: Response): Promise<Response> {
      // A failure of the server, or a refusal that passes with time (429: a daily budget), is not
      // kept: the same key may be tried again and gets a fresh answer.
      if (response.status >= 500 || response.status === 429) {
        await releaseIdempotencyKey(db, workspaceId, key);
        return response;
      }
      const text = await response.text();
      if (response.status === 200 && routes.hasSecretAnswer(path)) {
        const replay = errorBody(new AppError("conflict", SECRET_REPLAY_MESSAGE));
        await storeIdempotentResponse(db, workspaceId, key, 409, JSON.stringify(replay));
      } else {
        await storeIdempotentResponse(db, workspaceId, key, response.status, text);
      }
      return new Response(text, { status: response.status, headers: response.headers });
    },
  };
}

/**
 * Runs a route's write (`write`: group-committed, or one transaction that ends with `witnessed`)
 * so that, when the request claimed an Idempotency-Key, the route's 200 answer (`answerOf` the
 * write's value) is stored for the key in the transaction that commits the write. A process killed between that commit and `keep` then
 * leaves the key answered: a retry replays it instead of running the request a second time, as it
 * would once the claim went stale.
 */
export function keptWithEffect<T>(
  request: Request,
  answerOf: (value: T) => unknown,
  write: () => Promise<T>,
): Promise<T> {
  const state = stateOf(request);
  const key = state?.idempotencyKey;
  if (!key || !state.auth) return write();
  const workspaceId = state.auth.workspaceId;
  return withCommitWitness(
    {
      record: (tx, value) =>
        storeIdempotentResponse(tx, workspaceId, key, 200, JSON.stringify(answerOf(value as T))),
    },
    write,
  );
}
