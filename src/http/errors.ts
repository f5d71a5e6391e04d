import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { isDatabaseUnavailable } from "../db/client";
import type { ErrorCode } from "../lib/errors";
import { AppError } from "../lib/errors";
import { errorText, log } from "../lib/log";
import { pathOf, type RequestState, stateOf } from "./context";

/** The status of every error code, in one place (API.md §1). */
export const STATUS_OF: Record<ErrorCode, number> = {
  invalid_json: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  request_timeout: 408,
  payload_too_large: 413,
  validation: 422,
  rate_limited: 429,
  internal: 500,
  not_implemented: 501,
  unavailable: 503,
};

export const UNAUTHORIZED_MESSAGE = "Invalid or missing API key";

/** `{ok:false, error, ...extra}` with the code's status. */
export function errorBody(error: AppError): Record<string, unknown> {
  return { ok: false, error: error.message, ...(error.extra ?? {}) };
}

interface TypeboxIssue {
  path: string;
  value: unknown;
  message: string;
  schema: Record<string, unknown> & { anyOf?: Record<string, unknown>[] };
}

/** `/audience/list_ids/0` → `audience.list_ids[0]`. */
export function fieldName(path: string, root = "body"): string {
  const parts = path.split("/").filter(Boolean);
  if (parts.length === 0) return root;
  let name = "";
  for (const part of parts) {
    if (/^\d+$/.test(part)) name += `[${part}]`;
    else name += name ? `.${part}` : part;
  }
  return name;
}

function literalValues(schema: TypeboxIssue["schema"]): unknown[] | null {
  if (Array.isArray(schema.enum)) return schema.enum as unknown[];
  if (schema.anyOf?.length && schema.anyOf.every((s) => "const" in s))
    return schema.anyOf.map((s) => s.const);
  return null;
}

function typeOf(schema: TypeboxIssue["schema"]): string | undefined {
  if (typeof schema.type === "string") return schema.type;
  // t.Numeric()/t.Integer() in query strings are unions of a numeric string and a number.
  const branch = schema.anyOf?.find((s) => typeof s.type === "string" && s.type !== "string");
  return branch?.type as string | undefined;
}

/**
 * Turns a TypeBox validation issue into the contract's wording: `<field> is required`,
 * `<field> must be one of a, b`, `<field> is too long (max N)`, `<field> must be a string`, ...
 * A schema may carry its own `error` text, which wins.
 */
export function validationMessage(issue: TypeboxIssue, root = "body"): string {
  const field = fieldName(issue.path, root);
  const { value } = issue;
  let { schema } = issue;
  if (value === undefined) return `${field} is required`;
  if (typeof schema.error === "string") return `${field} ${schema.error}`;
  // A nullable field (`T | null`) that is not null fails on T: word the message after T.
  const notNull = schema.anyOf?.filter((s) => s.type !== "null");
  if (notNull?.length === 1 && notNull.length < (schema.anyOf?.length ?? 0)) {
    schema = notNull[0];
    // A nullable object or array fails as a whole: name what inside it fails (`message.body is too long`).
    const inner = innerIssue(schema, value);
    if (inner) return validationMessage({ ...inner, path: `${issue.path}${inner.path}` }, root);
  }
  const literals = literalValues(schema);
  if (literals) return `${field} must be one of ${literals.join(", ")}`;
  const type = typeOf(schema);
  switch (type) {
    case "string": {
      if (typeof value !== "string") return `${field} must be a string`;
      if (typeof schema.maxLength === "number" && value.length > schema.maxLength) {
        return `${field} is too long (max ${schema.maxLength})`;
      }
      if (typeof schema.minLength === "number" && value.length < schema.minLength) {
        return schema.minLength === 1
          ? `${field} is required`
          : `${field} is too short (min ${schema.minLength})`;
      }
      if (typeof schema.format === "string") return `${field} must be a valid ${schema.format}`;
      return `${field} is invalid`;
    }
    case "integer":
    case "number": {
      const noun = type === "integer" ? "an integer" : "a number";
      // A query string's number arrives as text; in a JSON body, text is not a number.
      const n = typeof value === "string" && value.trim() !== "" && root !== "body" ? Number(value) : value;
      if (typeof n !== "number" || Number.isNaN(n) || (type === "integer" && !Number.isInteger(n))) {
        return `${field} must be ${noun}`;
      }
      const min = (schema.minimum ?? schema.anyOf?.find((s) => s.minimum !== undefined)?.minimum) as
        | number
        | undefined;
      const max = (schema.maximum ?? schema.anyOf?.find((s) => s.maximum !== undefined)?.maximum) as
        | number
        | undefined;
      if (min !== undefined && max !== undefined) return `${field} must be between ${min} and ${max}`;
      if (min !== undefined) return `${field} must be at least ${min}`;
      if (max !== undefined) return `${field} must be at most ${max}`;
      return `${field} must be ${noun}`;
    }
    case "boolean":
      return `${field} must be a boolean`;
    case "array": {
      if (!Array.isArray(value)) return `${field} must be an array`;
      if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
        return `${field} has too many items (max ${schema.maxItems})`;
      }
      if (typeof schema.minItems === "number" && value.length < schema.minItems) {
        return `${field} must have at least ${schema.minItems} item${schema.minItems === 1 ? "" : "s"}`;
      }
      return `${field} is invalid`;
    }
    case "object":
      return `${field} must be an object`;
    default:
      return `${field} is invalid`;
  }
}

/** The first issue inside an object or array `value` that fails `schema` (the union's non-null branch). */
function innerIssue(schema: TypeboxIssue["schema"], value: unknown): TypeboxIssue | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  try {
    const first = Value.Errors(schema as unknown as TSchema, value).First();
    if (!first || first.path === "") return undefined;
    return {
      path: first.path,
      value: first.value,
      message: first.message,
      schema: first.schema as unknown as TypeboxIssue["schema"],
    };
  } catch {
    return undefined;
  }
}

/** Picks the issue to report: the first one, preferring a deeper, more specific one on the same field. */
export function firstIssue(all: TypeboxIssue[]): TypeboxIssue | undefined {
  return all[0];
}

/** A JSON error response in the contract's envelope. */
export function errorResponse(error: AppError): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (error.code === "rate_limited" && typeof error.extra?.retry_after === "number") {
    headers["retry-after"] = String(error.extra.retry_after);
  }
  return new Response(JSON.stringify(errorBody(error)), { status: STATUS_OF[error.code], headers });
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
export function databaseUnavailable(
  request: Request,
  requestId: string | undefined,
  error: unknown,
): AppError {
  log.warn("database unavailable", {
    request_id: requestId,
    method: request.method,
    path: pathOf(request.url),
    error: errorText(error),
  });
  return new AppError("unavailable", "Database unavailable");
}

export { AppError };
