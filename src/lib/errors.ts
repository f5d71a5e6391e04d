/**
 * The one error type of the service. Domain code throws it; `src/http/errors.ts` maps each code to
 * its HTTP status in one table. `message` is public (it reaches the client as `error`); anything
 * internal goes to the log instead.
 */
export type ErrorCode =
  | "invalid_json"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "gone"
  | "request_timeout"
  | "payload_too_large"
  | "validation"
  | "rate_limited"
  | "internal"
  | "not_implemented"
  | "unavailable";

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra keys allowed by the contract: required_scope, retry_after, contact_id. */
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "AppError";
  }
}

export const notFound = () => new AppError("not_found", "Not found");
export const invalid = (message: string, extra?: Record<string, unknown>) =>
  new AppError("validation", message, extra);
export const conflict = (message: string, extra?: Record<string, unknown>) =>
  new AppError("conflict", message, extra);
