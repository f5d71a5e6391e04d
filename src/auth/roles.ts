import type { Scope } from "../domain/workspace/api-keys";

/** What a member may do in a workspace (API.md §6.7). */
export const ROLES = ["admin", "agent"] as const;
export type Role = (typeof ROLES)[number];

/**
 * The scopes a role acts with: an admin reads and writes everything; an agent reads (all but
 * settings, API keys and users) and writes conversations only — see src/http/access.ts.
 */
export function scopesOf(role: Role): Scope[] {
  return role === "admin" ? ["read", "write"] : ["read"];
}
