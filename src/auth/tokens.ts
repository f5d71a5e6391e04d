import { createHash, randomBytes } from "node:crypto";

/** Session and setup tokens: 32 random bytes, base64url (43 characters). */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** True when `value` has the shape of a token (checked before hashing or querying anything). */
export function isWellFormedToken(value: string): boolean {
  return TOKEN_RE.test(value);
}

/** Hex SHA-256 of a token: the only form a token is stored in. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
