import { and, eq, lt, ne, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../db/client";
import { memberships, sessions, users, workspaces } from "../db/schema";
import type { Scope } from "../domain/workspace/api-keys";
import { type Role, scopesOf } from "./roles";
import { hashToken, isWellFormedToken, newToken } from "./tokens";

/** A session unused this long is over; every use moves the end this far ahead again. */
export const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** `last_seen_at` / `expires_at` are written at most this often per session: using one stays a read. */
export const SESSION_TOUCH_INTERVAL_MS = 60_000;

/** The signed-in person, as `/v1/me` and `/auth/session` show them. */
export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: Role;
}

/** A request authenticated by the session cookie: the user, in the session's workspace. */
export interface AuthenticatedSession {
  kind: "session";
  /** The session's id (the SHA-256 of its token). */
  sessionId: string;
  user: SessionUser;
  scopes: Scope[];
  workspaceId: string;
  workspaceName: string;
}

/** Starts a session for a member of a workspace; answers the token for the cookie (never stored). */
export async function createSession(
  db: DbOrTx,
  input: { userId: string; workspaceId: string; now: number },
): Promise<string> {
  const token = newToken();
  // Sessions past their end are of no use to anyone: cleared as new ones are made.
  await db.delete(sessions).where(lt(sessions.expiresAt, input.now)).run();
  await db
    .insert(sessions)
    .values({
      id: hashToken(token),
      userId: input.userId,
      workspaceId: input.workspaceId,
      createdAt: input.now,
      expiresAt: input.now + SESSION_TTL_MS,
      lastSeenAt: input.now,
    })
    .run();
  return token;
}

/** Ends the session of a token (logout); nothing happens for an unknown one. */
export async function revokeSession(db: DbOrTx, token: string) {
  if (!isWellFormedToken(token)) return;
  await db
    .delete(sessions)
    .where(eq(sessions.id, hashToken(token)))
    .run();
}

/** Ends every session of a user, but the one of `exceptToken` when given (a password change). */
export async function revokeUserSessions(db: DbOrTx, userId: string, exceptToken?: string) {
  const where = exceptToken
    ? and(eq(sessions.userId, userId), ne(sessions.id, hashToken(exceptToken)))
    : eq(sessions.userId, userId);
  await db.delete(sessions).where(where).run();
}

/**
 * Resolves a session token to its user, role and workspace — read from the database on every
 * request, so a logout, a revocation, a removed membership or a changed role counts at once.
 * Answers null for anything that is not a live session (malformed, unknown, expired, or whose
 * membership is gone). `extended` is true when this use moved the expiry forward (at most once a
 * minute): the caller sends the cookie again with a fresh Max-Age.
 */
export function createSessionAuthenticator(db: Db) {
  const byId = db
    .select({
      sessionId: sessions.id,
      expiresAt: sessions.expiresAt,
      lastSeenAt: sessions.lastSeenAt,
      userId: users.id,
      email: users.email,
      name: users.name,
      role: memberships.role,
      workspaceId: workspaces.id,
      workspaceName: workspaces.name,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .innerJoin(
      memberships,
      and(eq(memberships.userId, sessions.userId), eq(memberships.workspaceId, sessions.workspaceId)),
    )
    .innerJoin(workspaces, eq(workspaces.id, sessions.workspaceId))
    .where(eq(sessions.id, sql.placeholder("id")))
    .prepare();
  const touch = db
    .update(sessions)
    .set({
      lastSeenAt: sql`${sql.placeholder("now")}`,
      expiresAt: sql`${sql.placeholder("expiresAt")}`,
    })
    .where(eq(sessions.id, sql.placeholder("id")))
    .prepare();

  return async function authenticateSession(
    token: string,
    now = Date.now(),
  ): Promise<{ session: AuthenticatedSession; extended: boolean } | null> {
    if (!isWellFormedToken(token)) return null;
    const row = await byId.get({ id: hashToken(token) });
    if (!row || row.expiresAt <= now) return null;
    let extended = false;
    if (now - row.lastSeenAt >= SESSION_TOUCH_INTERVAL_MS) {
      try {
        await touch.run({ id: row.sessionId, now, expiresAt: now + SESSION_TTL_MS });
        extended = true;
      } catch {
        // A busy database must not fail the request; a later request will slide it.
      }
    }
    const role = row.role as Role;
    return {
      session: {
        kind: "session",
        sessionId: row.sessionId,
        user: { id: row.userId, email: row.email, name: row.name, role },
        scopes: scopesOf(role),
        workspaceId: row.workspaceId,
        workspaceName: row.workspaceName,
      },
      extended,
    };
  };
}

export type SessionAuthenticator = ReturnType<typeof createSessionAuthenticator>;
