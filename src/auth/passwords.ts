import { invalid } from "../lib/errors";

/** Shortest password accepted (API.md §6.7). */
export const MIN_PASSWORD_LENGTH = 10;
/** Longest password accepted: argon2 hashes any length, but a body field stays bounded. */
export const MAX_PASSWORD_LENGTH = 1000;

/** 422 `<field> must be at least 10 characters` (or too long) unless `password` is acceptable. */
export function checkNewPassword(password: string, field = "password") {
  if (password.length < MIN_PASSWORD_LENGTH)
    throw invalid(`${field} must be at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > MAX_PASSWORD_LENGTH)
    throw invalid(`${field} is too long (max ${MAX_PASSWORD_LENGTH})`);
}

/** An argon2id PHC string of `password` (Bun's defaults: 64 MiB, 2 passes). */
export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

/** A hash of nothing anyone knows, verified against when there is no user, so timing tells nothing. */
let dummyHash: Promise<string> | null = null;

/**
 * True when `password` matches `hash`. With no hash (an unknown e-mail, a user who never set a
 * password) it still runs one verification, against a dummy hash, and answers false: a wrong
 * e-mail costs the same time as a wrong password.
 */
export async function verifyPassword(password: string, hash: string | null | undefined): Promise<boolean> {
  if (!hash) {
    dummyHash ??= hashPassword(crypto.randomUUID());
    await Bun.password.verify(password, await dummyHash);
    return false;
  }
  try {
    return await Bun.password.verify(password, hash);
  } catch {
    // A malformed stored hash is a failed sign-in, not a 500.
    return false;
  }
}
