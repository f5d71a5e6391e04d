import { createHash } from "node:crypto";
import { and, asc, eq, gt, inArray, lt } from "drizzle-orm";
import type { Db, DbOrTx } from "../db/client";
import { transactionKeyLocks } from "../db/dialect";
import { loginFailures } from "../db/schema";
import { newId } from "../lib/ids";
import { normalizeEmail } from "./users";

/** Failures are counted over this window… */
export const LOGIN_WINDOW_MS = 15 * 60 * 1000;
/** …and once a client address or an e-mail has this many, further attempts are refused (429). */
export const MAX_LOGIN_FAILURES = 10;
/** The scope of the locks a reservation takes on its subjects (PostgreSQL advisory locks). */
const LOGIN_LOCK_SCOPE = 7_201;

/** What a sign-in is counted against: the client's address and the e-mail tried, as stored (hashed). */
export function loginSubjects(address: string, email: string): { address: string; email: string } {
  const hash = (text: string) => createHash("sha256").update(text).digest("hex");
  return { address: hash(`address:${address}`), email: hash(`email:${normalizeEmail(email)}`) };
}

/**
 * Seconds until an attempt would be allowed again, or null when it is allowed now: refused while
 * either subject has MAX_LOGIN_FAILURES failures in the last LOGIN_WINDOW_MS, until the oldest
 * failure that keeps it there leaves the window. Read from the database, so every process sharing
 * it enforces the same limit.
 */
export async function loginRetryAfter(db: DbOrTx, subjects: string[], now: number): Promise<number | null> {
  let until = 0;
  for (const subject of subjects) {
    const recent = await db
      .select({ failedAt: loginFailures.failedAt })
      .from(loginFailures)
      .where(and(eq(loginFailures.subject, subject), gt(loginFailures.failedAt, now - LOGIN_WINDOW_MS)))
      .orderBy(asc(loginFailures.failedAt))
      .all();
    if (recent.length < MAX_LOGIN_FAILURES) continue;
    // Allowed again once fewer than MAX remain: when the (n - MAX + 1)-th oldest has aged out.
    const pivot = recent[recent.length - MAX_LOGIN_FAILURES].failedAt;
    until = Math.max(until, pivot + LOGIN_WINDOW_MS);
  }
  return until > now ? Math.max(1, Math.ceil((until - now) / 1000)) : null;
}

/** Counts a failed sign-in against each subject; failures older than the window are deleted. Returns the rows' ids. */
export async function recordLoginFailure(db: DbOrTx, subjects: string[], now: number): Promise<string[]> {
  await db
    .delete(loginFailures)
    .where(lt(loginFailures.failedAt, now - LOGIN_WINDOW_MS))
    .run();
  const rows = subjects.map((subject) => ({ id: newId(), subject, failedAt: now }));
  await db.insert(loginFailures).values(rows).run();
  return rows.map((row) => row.id);
}

/**
 * Reserves a sign-in attempt before any password is checked (API.md §7.2): in one transaction, either
 * refuses it (`retryAfter`, seconds) or counts it as a failure against every subject and returns the
 * failure rows' ids. Concurrent guesses each take a place, so at most MAX_LOGIN_FAILURES passwords are
 * checked per subject and window however they arrive; a right password gives its place back
 * (releaseLoginAttempt).
 */
export async function reserveLoginAttempt(
  db: Db,
  subjects: string[],
  now: number,
): Promise<{ retryAfter: number; reservation?: undefined } | { retryAfter: null; reservation: string[] }> {
  return await db.transaction(async (tx) => {
    // Concurrent guesses for one subject take their places one after another (SQLite: already so).
    for (const lock of transactionKeyLocks(LOGIN_LOCK_SCOPE, subjects)) await tx.run(lock);
    const retryAfter = await loginRetryAfter(tx, subjects, now);
    if (retryAfter !== null) return { retryAfter };
    return { retryAfter: null, reservation: await recordLoginFailure(tx, subjects, now) };
  });
}

/** Gives back the places a sign-in reserved (it succeeded: it was not a failure). */
export async function releaseLoginAttempt(db: DbOrTx, reservation: string[]) {
  if (reservation.length === 0) return;
  await db.delete(loginFailures).where(inArray(loginFailures.id, reservation)).run();
}

/** Forgets the failures of subjects (an e-mail whose owner just signed in). */
export async function clearLoginFailures(db: DbOrTx, subjects: string[]) {
  if (subjects.length === 0) return;
  await db.delete(loginFailures).where(inArray(loginFailures.subject, subjects)).run();
}
