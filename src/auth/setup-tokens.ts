import { and, eq, gt, isNull, lt } from "drizzle-orm";
import type { DbOrTx } from "../db/client";
import { type SetupTokenRow, setupTokens } from "../db/schema";
import { AppError } from "../lib/errors";
import type { Role } from "./roles";
import { hashToken, isWellFormedToken, newToken } from "./tokens";

/** A setup link works once, within this long of being made. */
export const SETUP_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;

export const SETUP_LINK_GONE = "This setup link has expired or was already used";
const gone = () => new AppError("gone", SETUP_LINK_GONE);

/**
 * Makes a one-time setup token: for `userId`, it sets that user's password; otherwise it creates a
 * user (with `email` when given, else the one typed at setup) with `role` in the workspace. The
 * token is answered once; only its SHA-256 is stored.
 */
export async function issueSetupToken(
  db: DbOrTx,
  input: { workspaceId: string; role: Role; userId?: string | null; email?: string | null; now: number },
): Promise<string> {
  const token = newToken();
  // Links long past their end are of no use even as a record: cleared as new ones are made.
  await db
    .delete(setupTokens)
    .where(lt(setupTokens.expiresAt, input.now - SETUP_TOKEN_TTL_MS * 30))
    .run();
  await db
    .insert(setupTokens)
    .values({
      id: hashToken(token),
      workspaceId: input.workspaceId,
      userId: input.userId ?? null,
      email: input.email ?? null,
      role: input.role,
      expiresAt: input.now + SETUP_TOKEN_TTL_MS,
      usedAt: null,
      createdAt: input.now,
    })
    .run();
  return token;
}

/** The link a person opens to set their password: `<PUBLIC_URL>/setup?token=…`. */
export function setupUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/setup?token=${token}`;
}

/** The live (unused, unexpired) token row; 410 for anything else. */
export async function findLiveSetupToken(db: DbOrTx, token: string, now: number): Promise<SetupTokenRow> {
  if (!isWellFormedToken(token)) throw gone();
  const row = await db
    .select()
    .from(setupTokens)
    .where(eq(setupTokens.id, hashToken(token)))
    .get();
  if (!row || row.usedAt !== null || row.expiresAt <= now) throw gone();
  return row;
}

/** Marks the token used, atomically: of two concurrent setups with one token, one wins, one gets 410. */
export async function consumeSetupToken(db: DbOrTx, token: string, now: number): Promise<SetupTokenRow> {
  const row = await findLiveSetupToken(db, token, now);
  const result = (await db
    .update(setupTokens)
    .set({ usedAt: now })
    .where(and(eq(setupTokens.id, row.id), isNull(setupTokens.usedAt), gt(setupTokens.expiresAt, now)))
    .run()) as unknown as { changes: number };
  if (result.changes !== 1) throw gone();
  return { ...row, usedAt: now };
}
