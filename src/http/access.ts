import { AppError } from "../lib/errors";
import type { RequestAuth } from "./context";

/** Paths under /v1 that need no API key. */
const PUBLIC_PATHS = new Set(["/v1/openapi.json"]);

/**
 * Paths answered only with an API key or a session cookie (everything under /v1 but the OpenAPI
 * document, and /api/public/me).
 */
export function needsKey(path: string): boolean {
  return (path.startsWith("/v1/") || path === "/api/public/me") && !PUBLIC_PATHS.has(path);
}

/**
 * What an authenticated request may do, by path (API.md §2 and §6.7), checked by the front door
 * before routing:
 *
 * - keys: writes need the `write` scope; listing API keys and users too (a read-only key is for
 *   reading data, not for seeing who else holds access);
 * - admin sessions: everything;
 * - agent sessions: reads of everything but settings, API keys and users; writes to conversations
 *   (`/v1/conversations` and below) only.
 *
 * `changes`: the request is a write (a POST registered as read-only, like a preview, is not).
 */
export function accessError(auth: RequestAuth, path: string, changes: boolean): AppError | null {
  const canWrite = auth.scopes.includes("write");
  const who = auth.kind === "key" ? "This API key" : "This account";
  if (changes && !canWrite && !(auth.kind === "session" && under(path, "/v1/conversations"))) {
    return new AppError("forbidden", `${who} cannot create and edit.`, { required_scope: "write" });
  }
  const area = ADMIN_AREAS.find((a) => under(path, a.path) && (auth.kind === "session" || a.keysNeedWrite));
  if (area && !canWrite) {
    return new AppError("forbidden", `${who} cannot see ${area.noun}.`, { required_scope: "write" });
  }
  return null;
}

/** Parts of the API only admins (and keys with `write`, where said) may see. */
const ADMIN_AREAS = [
  { path: "/v1/settings", noun: "settings", keysNeedWrite: false },
  { path: "/v1/api-keys", noun: "API keys", keysNeedWrite: true },
  { path: "/v1/users", noun: "users", keysNeedWrite: true },
];

function under(path: string, prefix: string): boolean {
  return path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === 47) /* / */;
}
