import { and, asc, count, desc, eq } from "drizzle-orm";
import type { DbOrTx } from "../db/client";
import { memberships, sessions, setupTokens, type UserRow, users, workspaces } from "../db/schema";
import { AppError, conflict, invalid, notFound } from "../lib/errors";
import { isUuid, newId } from "../lib/ids";
import { toIso } from "../lib/time";
import { ROLES, type Role } from "./roles";

/** A member of a workspace as the API shows it. */
export interface MemberRecord {
  id: string;
  email: string;
  name: string;
  role: Role;
  /** True until the user has set a password (their setup link is unused). */
  setup_pending: boolean;
  created_at: string;
}

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MAX_EMAIL_LENGTH = 254;
export const MAX_NAME_LENGTH = 200;

/** E-mail addresses are compared and stored lower-cased, without surrounding spaces. */
export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

/** The normalised address, or 422 `<field> must be a valid email address`. */
export function checkEmail(raw: string, field = "email"): string {
  const email = normalizeEmail(raw);
  if (email.length > MAX_EMAIL_LENGTH) throw invalid(`${field} is too long (max ${MAX_EMAIL_LENGTH})`);
  if (!EMAIL_RE.test(email)) throw invalid(`${field} must be a valid email address`);
  return email;
}

export function checkRole(raw: string, field = "role"): Role {
  if (!ROLES.includes(raw as Role)) throw invalid(`${field} must be one of ${ROLES.join(", ")}`);
  return raw as Role;
}

/** A user's name: 1–200 characters after trimming. */
export function checkName(raw: string, field = "name"): string {
  const name = raw.trim();
  if (name === "") throw invalid(`${field} is required`);
  if (name.length > MAX_NAME_LENGTH) throw invalid(`${field} is too long (max ${MAX_NAME_LENGTH})`);
  return name;
}

export async function findUserByEmail(db: DbOrTx, email: string): Promise<UserRow | undefined> {
  return await db
    .select()
    .from(users)
    .where(eq(users.email, normalizeEmail(email)))
    .get();
}

export async function findUser(db: DbOrTx, id: string): Promise<UserRow | undefined> {
  return await db.select().from(users).where(eq(users.id, id)).get();
}

/** The user's role in a workspace, or null when not a member. */
export async function roleIn(db: DbOrTx, userId: string, workspaceId: string): Promise<Role | null> {
  const row = await db
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.userId, userId), eq(memberships.workspaceId, workspaceId)))
    .get();
  return row ? (row.role as Role) : null;
}

/** The workspace a sign-in lands in when none is asked for: the user's oldest membership. */
export async function firstMembership(
  db: DbOrTx,
  userId: string,
): Promise<{ workspaceId: string; workspaceName: string; role: Role } | null> {
  const row = await db
    .select({ workspaceId: memberships.workspaceId, workspaceName: workspaces.name, role: memberships.role })
    .from(memberships)
    .innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
    .where(eq(memberships.userId, userId))
    .orderBy(asc(memberships.createdAt))
    .limit(1)
    .get();
  return row ? { ...row, role: row.role as Role } : null;
}

function toRecord(user: UserRow, role: string): MemberRecord {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    role: role as Role,
    setup_pending: user.passwordHash === null,
    created_at: toIso(user.createdAt) as string,
  };
}

/** Members of a workspace, newest membership first. */
export async function listMembers(
  db: DbOrTx,
  workspaceId: string,
  page: { limit: number; offset: number },
): Promise<{ users: MemberRecord[]; total: number }> {
  const rows = await db
    .select({ user: users, role: memberships.role })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.workspaceId, workspaceId))
    .orderBy(desc(memberships.createdAt), desc(users.id))
    .limit(page.limit)
    .offset(page.offset)
    .all();
  const total =
    (await db.select({ n: count() }).from(memberships).where(eq(memberships.workspaceId, workspaceId)).get())
      ?.n ?? 0;
  return { users: rows.map((row) => toRecord(row.user, row.role)), total };
}

/** One member of a workspace; 404 for an unknown user or one of another workspace. */
export async function getMember(db: DbOrTx, workspaceId: string, userId: string): Promise<MemberRecord> {
  if (!isUuid(userId)) throw notFound();
  const row = await db
    .select({ user: users, role: memberships.role })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)))
    .get();
  if (!row) throw notFound();
  return toRecord(row.user, row.role);
}

/** Inserts a user without a password (set later by a setup link or `--password-stdin`). */
export async function insertUser(
  db: DbOrTx,
  input: { email: string; name: string; passwordHash?: string | null; now: number },
): Promise<UserRow> {
  const row: UserRow = {
    id: newId(),
    email: normalizeEmail(input.email),
    name: input.name,
    passwordHash: input.passwordHash ?? null,
    createdAt: input.now,
    updatedAt: input.now,
  };
  if (await findUserByEmail(db, row.email)) throw conflict("A user with this email already exists");
  await db.insert(users).values(row).run();
  return row;
}

export async function insertMembership(
  db: DbOrTx,
  userId: string,
  workspaceId: string,
  role: Role,
  now: number,
) {
  await db
    .insert(memberships)
    .values({ userId, workspaceId, role, createdAt: now })
    .onConflictDoNothing()
    .run();
}

/**
 * Adds a person to a workspace with a role: a new user (no password yet) for an unknown e-mail,
 * else the existing user (name unchanged). 409 when already a member.
 */
export async function addMember(
  db: DbOrTx,
  input: { workspaceId: string; email: string; name: string; role: Role; now: number },
): Promise<{ member: MemberRecord; user: UserRow; created: boolean }> {
  const workspace = await db
    .select({ id: workspaces.id })
    .from(workspaces)
    .where(eq(workspaces.id, input.workspaceId))
    .get();
  if (!workspace) throw notFound();
  let user = await findUserByEmail(db, input.email);
  const created = !user;
  if (!user) {
    user = await insertUser(db, { email: input.email, name: input.name, now: input.now });
  } else if (await roleIn(db, user.id, input.workspaceId)) {
    throw conflict("This user is already a member of this workspace");
  }
  await insertMembership(db, user.id, input.workspaceId, input.role, input.now);
  return { member: toRecord(user, input.role), user, created };
}

async function adminCount(db: DbOrTx, workspaceId: string): Promise<number> {
  return (
    (
      await db
        .select({ n: count() })
        .from(memberships)
        .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.role, "admin")))
        .get()
    )?.n ?? 0
  );
}

const LAST_ADMIN = "The last admin of a workspace cannot be removed or demoted";

/** Changes a member's role; 409 when it would leave the workspace without an admin. */
export async function updateMemberRole(
  db: DbOrTx,
  workspaceId: string,
  userId: string,
  role: Role,
  now: number,
): Promise<MemberRecord> {
  const member = await getMember(db, workspaceId, userId);
  if (member.role === role) return member;
  if (member.role === "admin" && (await adminCount(db, workspaceId)) <= 1) throw conflict(LAST_ADMIN);
  await db
    .update(memberships)
    .set({ role })
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)))
    .run();
  await db.update(users).set({ updatedAt: now }).where(eq(users.id, userId)).run();
  return { ...member, role };
}

/**
 * Takes a member out of a workspace: the membership, their sessions in it and their unused setup
 * links for it go. The user row stays (other workspaces, a later invitation). 409 for the last admin.
 */
export async function removeMember(db: DbOrTx, workspaceId: string, userId: string): Promise<MemberRecord> {
  const member = await getMember(db, workspaceId, userId);
  if (member.role === "admin" && (await adminCount(db, workspaceId)) <= 1) throw conflict(LAST_ADMIN);
  await db
    .delete(memberships)
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)))
    .run();
  await db
    .delete(sessions)
    .where(and(eq(sessions.workspaceId, workspaceId), eq(sessions.userId, userId)))
    .run();
  await db
    .delete(setupTokens)
    .where(and(eq(setupTokens.workspaceId, workspaceId), eq(setupTokens.userId, userId)))
    .run();
  return member;
}

/** Stores a new password hash for a user. */
export async function setPasswordHash(db: DbOrTx, userId: string, passwordHash: string, now: number) {
  const result = (await db
    .update(users)
    .set({ passwordHash, updatedAt: now })
    .where(eq(users.id, userId))
    .run()) as unknown as {
    changes: number;
  };
  if (result.changes === 0) throw new AppError("not_found", "Not found");
}

/** How many users there are, in every workspace. */
export async function countUsers(db: DbOrTx): Promise<number> {
  return (await db.select({ n: count() }).from(users).get())?.n ?? 0;
}
