import { AppError } from "../lib/errors";
import { textProblem } from "../lib/text";

export const JSON_BODY_LIMIT = 1024 * 1024;
export const IMPORT_BODY_LIMIT = 20 * 1024 * 1024;
/** Carrier callbacks and the sign-in routes (unauthenticated, API.md §7.2). */
export const CALLBACK_BODY_LIMIT = 64 * 1024;
/** Tracking reports (unauthenticated, API.md §7.2). */
export const TRACKING_BODY_LIMIT = 8 * 1024;

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

/**
 * Reads a write's body within its route's limit (`limitOf`): 413 past it. The small bodies (at most
 * 64 KiB, all unauthenticated) also have `bodyTimeoutMs` to arrive: a client trickling one is
 * answered 408 and let go instead of holding its connection and buffer until the idle timeout.
 */
export function createBodyReader(limitOf: (path: string) => number, bodyTimeoutMs = 10_000) {
  const deadlineFor = (limit: number) => (limit <= CALLBACK_BODY_LIMIT ? bodyTimeoutMs : undefined);
  return async function readBody(request: Request, path: string): Promise<Uint8Array | AppError> {
    const limit = limitOf(path);
    const bytes = await readBounded(request, limit, deadlineFor(limit));
    if (bytes === "timeout") {
      return new AppError(
        "request_timeout",
        `Request body was not received within ${bodyTimeoutMs / 1000} s: send it at once`,
      );
    }
    if (!bytes) return new AppError("payload_too_large", `Request body is too large (max ${limit} bytes)`);
    return bytes;
  };
}

/** No request body of the API nests anywhere near this; validating thousands of levels overflows the stack. */
const MAX_BODY_DEPTH = 100;

/**
 * What is wrong with a parsed body's shape or text, or null: objects/arrays nested more than
 * MAX_BODY_DEPTH levels, or a string (value or key) that no database can keep as it came: a NUL
 * character (PostgreSQL's text and jsonb refuse it; SQLite would keep it) or a lone UTF-16
 * surrogate (not Unicode text: PostgreSQL's jsonb refuses it, its text gets U+FFFD). Iterative:
 * no recursion to overflow. The answer names the field (`fields.note`, `contacts[2].first_name`).
 */
function bodyProblem(value: object): string | null {
  const stack: [object, number, string][] = [[value, 1, ""]];
  while (stack.length > 0) {
    const [node, depth, path] = stack.pop() as [object, number, string];
    if (depth > MAX_BODY_DEPTH) return `body is nested too deeply (max ${MAX_BODY_DEPTH} levels)`;
    const array = Array.isArray(node);
    for (const key of Object.keys(node)) {
      if (!array) {
        const keyProblem = textProblem(key);
        if (keyProblem) return `${path || "body"} has a key that ${keyProblem}`;
      }
      const at = array ? `${path || "body"}[${key}]` : path === "" ? key : `${path}.${key}`;
      const child = (node as Record<string, unknown>)[key];
      if (typeof child === "string") {
        const problem = textProblem(child);
        if (problem) return `${at} ${problem}`;
      } else if (child !== null && typeof child === "object") stack.push([child, depth + 1, at]);
    }
  }
  return null;
}

function isJsonContentType(contentType: string | null): boolean {
  if (!contentType) return false;
  const type = contentType.split(";")[0].trim().toLowerCase();
  return type === "application/json" || type.endsWith("+json");
}

/**
 * A write's body as the routes get it (API.md §1): JSON by its content type, an object, nested at
 * most MAX_BODY_DEPTH levels; an empty body is `{}`. `body` is the text to route, `value` the
 * parsed object.
 */
export function jsonObjectBody(
  text: string,
  contentType: string | null,
): { body: string; value: object } | AppError {
  if (text.trim() === "") return { body: "{}", value: {} };
  if (!isJsonContentType(contentType)) return new AppError("invalid_json", "Invalid JSON body");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return new AppError("invalid_json", "Invalid JSON body");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return new AppError("validation", "body must be a JSON object");
  }
  const problem = bodyProblem(value);
  if (problem) return new AppError("validation", problem);
  return { body: text, value };
}
