import { eq } from "drizzle-orm";
import type { Db, DbOrTx } from "../db/client";
import { users as usersTable, workspaces } from "../db/schema";
import { AppError, invalid, notFound } from "../lib/errors";
import { clearLoginFailures, loginSubjects, releaseLoginAttempt, reserveLoginAttempt } from "./login-limit";
import { checkNewPassword, hashPassword, verifyPassword } from "./passwords";
import type { Role } from "./roles";
import { type AuthenticatedSession, createSession, revokeUserSessions, type SessionUser } from "./sessions";
import { consumeSetupToken, findLiveSetupToken, issueSetupToken, setupUrl } from "./setup-tokens";
import {
  addMember,
  checkEmail,
  checkName,
  findUser,
  findUserByEmail,
  firstMembership,
  insertMembership,
  insertUser,
  type MemberRecord,
  roleIn,
  setPasswordHash,
  updateMemberRole,
} from "./users";

export const INVALID_LOGIN = "Invalid email or password";
export const TOO_MANY_ATTEMPTS = "Too many sign-in attempts: try again later";

/** A new session and who it is for; `token` goes into the cookie and nowhere else. */
export interface SignedIn {
  token: string;
  user: SessionUser;
  workspace: { id: string; name: string };
}

async function workspaceName(db: DbOrTx, workspaceId: string): Promise<string> {
  const row = await db
    .select({ name: workspaces.name })
    .from(workspaces)
    .where(eq(workspaces.id, workspaceId))
    .get();
  if (!row) throw notFound();
  return row.name;
}

/**
 * Signs in with e-mail and password (API.md §6.7). An unknown e-mail and a wrong password answer
 * the same 401 after the same work (one argon2 verification). Each attempt is counted as a failure
 * before its password is checked (a right one is given back); while the client's address or the
 * e-mail has 10 in 15 minutes, every attempt is refused with 429 before any password is checked. Lands in `workspaceId` when given (the user must be a member), else the oldest membership.
 */
export async function signIn(
  db: Db,
  input: { email: string; password: string; address: string; workspaceId?: string; now: number },
): Promise<SignedIn> {
  const subjects = loginSubjects(input.address, input.email);
  const both = [subjects.address, subjects.email];
  // The attempt is counted as a failure before the password is checked, so concurrent guesses
  // cannot all pass the limit while the slow check runs (API.md §7.2).
  const reserved = await reserveLoginAttempt(db, both, input.now);
  if (reserved.retryAfter !== null)
    throw new AppError("rate_limited", TOO_MANY_ATTEMPTS, { retry_after: reserved.retryAfter });

  const user = await findUserByEmail(db, input.email);
  const valid = await verifyPassword(input.password, user?.passwordHash);
  if (!user || !valid) throw new AppError("unauthorized", INVALID_LOGIN);
  // The right password: its reserved place is given back, and the e-mail's failures forgotten.
  await releaseLoginAttempt(db, reserved.reservation);
  const askedRole = input.workspaceId ? await roleIn(db, user.id, input.workspaceId) : null;
  const membership =
    input.workspaceId && askedRole
      ? {
          workspaceId: input.workspaceId,
          workspaceName: await workspaceName(db, input.workspaceId),
          role: askedRole,
        }
      : input.workspaceId
        ? null
        : await firstMembership(db, user.id);
  if (!membership) {
    throw new AppError(
      "forbidden",
      input.workspaceId
        ? "This account is not a member of this workspace"
        : "This account is not a member of any workspace",
    );
  }
  return await db.transaction(async (tx) => {
    await clearLoginFailures(tx, [subjects.email]);
    const token = await createSession(tx, {
      userId: user.id,
      workspaceId: membership.workspaceId,
      now: input.now,
    });
    return {
      token,
      user: { id: user.id, email: user.email, name: user.name, role: membership.role },
      workspace: { id: membership.workspaceId, name: membership.workspaceName },
    };
  });
}

/**
 * Follows a setup link: sets the password of the user the token names, or creates the user (e-mail
 * from the token when it names one, else from the body) as a member with the token's role; the
 * token is spent and the person is signed in. 422 for a bad body, 410 for a token that is unknown,
 * expired or used, 409 when a new user's e-mail is taken.
 */
export async function completeSetup(
  db: Db,
  input: { token: string; password: string; name?: string; email?: string; now: () => number },
): Promise<SignedIn> {
  // 1. The body (422) before the token (410), as everywhere.
  checkNewPassword(input.password);
  const name = input.name === undefined ? undefined : checkName(input.name);
  const bodyEmail = input.email === undefined ? undefined : checkEmail(input.email);

  // 2. The token must be live before a password is hashed (argon2 is the expensive part).
  const row = await findLiveSetupToken(db, input.token, input.now());
  let email: string | undefined;
  if (!row.userId) {
    email = row.email ?? bodyEmail;
    if (!email) throw invalid("email is required");
    if (!name) throw invalid("name is required");
    if (await findUserByEmail(db, email))
      throw new AppError("conflict", "A user with this email already exists");
  }
  const passwordHash = await hashPassword(input.password);

  // 3. Spend the token and sign in, in one transaction.
  const now = input.now();
  return await db.transaction(async (tx) => {
    const token = await consumeSetupToken(tx, input.token, now);
    let user = token.userId ? await findUser(tx, token.userId) : undefined;
    if (token.userId) {
      if (!user) throw new AppError("gone", "This setup link has expired or was already used");
      await setPasswordHash(tx, user.id, passwordHash, now);
      // A new password ends every session made with the old one.
      await revokeUserSessions(tx, user.id);
      if (name !== undefined && name !== user.name) {
        user = { ...user, name };
        await tx.update(usersTable).set({ name, updatedAt: now }).where(eq(usersTable.id, user.id)).run();
      }
    } else {
      user = await insertUser(tx, { email: email as string, name: name as string, passwordHash, now });
    }
    await insertMembership(tx, user.id, token.workspaceId, token.role as Role, now);
    const role = (await roleIn(tx, user.id, token.workspaceId)) as Role;
    const sessionToken = await createSession(tx, { userId: user.id, workspaceId: token.workspaceId, now });
    return {
      token: sessionToken,
      user: { id: user.id, email: user.email, name: user.name, role },
      workspace: { id: token.workspaceId, name: await workspaceName(tx, token.workspaceId) },
    };
  });
}

/**
 * Changes the signed-in user's password and ends every other session of theirs (all workspaces);
 * the current one stays. A wrong `current_password` is 422 and counts as a failed sign-in.
 */
export async function changePassword(
  db: Db,
  input: {
    session: AuthenticatedSession;
    sessionToken: string;
    currentPassword: string;
    newPassword: string;
    address: string;
    now: () => number;
  },
) {
  checkNewPassword(input.newPassword, "new_password");
  const user = await findUser(db, input.session.user.id);
  if (!user) throw new AppError("unauthorized", "Not signed in");
  const subjects = loginSubjects(input.address, user.email);
  const both = [subjects.address, subjects.email];
  const reserved = await reserveLoginAttempt(db, both, input.now());
  if (reserved.retryAfter !== null)
    throw new AppError("rate_limited", TOO_MANY_ATTEMPTS, { retry_after: reserved.retryAfter });
  if (!(await verifyPassword(input.currentPassword, user.passwordHash)))
    throw invalid("current_password is incorrect");
  await releaseLoginAttempt(db, reserved.reservation);
  const passwordHash = await hashPassword(input.newPassword);
  const now = input.now();
  await db.transaction(async (tx) => {
    await setPasswordHash(tx, user.id, passwordHash, now);
    await revokeUserSessions(tx, user.id, input.sessionToken);
  });
}

/**
 * Invites a person to a workspace (POST /v1/users): a new user, or an existing one added with the
 * role. Someone without a password yet gets a one-time setup link (24 h); someone who already has
 * one signs in as before (`setup_url` null).
 */
export async function inviteMember(
  db: Db,
  input: { workspaceId: string; email: string; name: string; role: Role; publicUrl: string; now: number },
): Promise<{ user: MemberRecord; setup_url: string | null }> {
  const email = checkEmail(input.email);
  const name = checkName(input.name);
  return await db.transaction(async (tx) => {
    const { member, user } = await addMember(tx, { ...input, email, name });
    const setup =
      user.passwordHash === null
        ? setupUrl(
            input.publicUrl,
            await issueSetupToken(tx, {
              workspaceId: input.workspaceId,
              role: input.role,
              userId: user.id,
              now: input.now,
            }),
          )
        : null;
    return { user: member, setup_url: setup };
  });
}

/**
 * `outreach users create`: makes the user a member of the workspace (a new user, an existing one
 * added, or an existing member kept — its role changed when `role` is given), then sets the
 * password when one is given, else answers a one-time setup link (24 h) for it — which is also how
 * an operator resets a lost password.
 */
export async function provisionUser(
  db: Db,
  input: {
    workspaceId: string;
    email: string;
    name?: string;
    role?: Role;
    password?: string;
    publicUrl: string;
    now: number;
  },
): Promise<{ user: MemberRecord; created: boolean; setup_url: string | null }> {
  const email = checkEmail(input.email, "--email");
  const name = checkName(input.name ?? email.split("@")[0], "--name");
  if (input.password !== undefined) checkNewPassword(input.password);
  const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
  return await db.transaction(async (tx) => {
    await workspaceName(tx, input.workspaceId);
    let member: MemberRecord;
    let created = false;
    const existing = await findUserByEmail(tx, email);
    const currentRole = existing ? await roleIn(tx, existing.id, input.workspaceId) : null;
    if (existing && currentRole) {
      member = await updateMemberRole(
        tx,
        input.workspaceId,
        existing.id,
        input.role ?? currentRole,
        input.now,
      );
    } else {
      const added = await addMember(tx, {
        workspaceId: input.workspaceId,
        email,
        name,
        role: input.role ?? "admin",
        now: input.now,
      });
      member = added.member;
      created = added.created;
    }
    if (passwordHash !== null) {
      await setPasswordHash(tx, member.id, passwordHash, input.now);
      await revokeUserSessions(tx, member.id);
      return { user: { ...member, setup_pending: false }, created, setup_url: null };
    }
    const token = await issueSetupToken(tx, {
      workspaceId: input.workspaceId,
      role: member.role,
      userId: member.id,
      now: input.now,
    });
    return { user: member, created, setup_url: setupUrl(input.publicUrl, token) };
  });
}

/**
 * Signs in the existing user whose e-mail a provider verified (OAuth): the first of `emails` that
 * belongs to a member of a workspace, in that user's first workspace. Never creates a user: an
 * address nobody was invited with is 401.
 */
export async function signInWithVerifiedEmail(db: Db, emails: string[], now: number): Promise<SignedIn> {
  for (const email of emails) {
    const user = await findUserByEmail(db, email);
    const membership = user ? await firstMembership(db, user.id) : null;
    if (!user || !membership) continue;
    const token = await createSession(db, { userId: user.id, workspaceId: membership.workspaceId, now });
    return {
      token,
      user: { id: user.id, email: user.email, name: user.name, role: membership.role },
      workspace: { id: membership.workspaceId, name: membership.workspaceName },
    };
  }
  throw new AppError("unauthorized", "No account has this e-mail address");
}
