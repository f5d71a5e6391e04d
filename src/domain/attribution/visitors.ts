import { and, eq, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { groupCommit } from "../../db/group-commit";
import { preparedPerConnection } from "../../db/prepared";
import { type VisitorRow, visitors, workspaces } from "../../db/schema";
import { AppError } from "../../lib/errors";
import { isUuid } from "../../lib/ids";
import { clickById } from "./clicks";
import { checkIdentifiers, resolveContact } from "./conversions";

/**
 * The tracking script's reports (API.md §6.5). Public and unauthenticated: they answer 204 whatever
 * happened, so they never tell whether a code, a visitor or a contact exists; anything malformed
 * is dropped without a word.
 */

const visitorByVid = preparedPerConnection((db: DbOrTx) =>
  db
    .select()
    .from(visitors)
    .where(and(eq(visitors.workspaceId, sql.placeholder("ws")), eq(visitors.vid, sql.placeholder("vid"))))
    .prepare(),
);

export async function visitorOf(
  db: DbOrTx,
  workspaceId: string,
  vid: string,
): Promise<VisitorRow | undefined> {
  return await visitorByVid(db).get({ ws: workspaceId, vid });
}

const workspaceByPublicId = preparedPerConnection((db: DbOrTx) =>
  db
    .select({ id: workspaces.id })
    .from(workspaces)
    .where(eq(workspaces.publicId, sql.placeholder("publicId")))
    .prepare(),
);

/** The workspace a page's `/t.js?w=<public id>` names, or null. */
export async function workspaceIdByPublicId(db: DbOrTx, publicId: unknown): Promise<string | null> {
  if (typeof publicId !== "string" || !/^[0-9a-z_]{4,64}$/.test(publicId)) return null;
  return (await workspaceByPublicId(db).get({ publicId }))?.id ?? null;
}

async function upsertVisitor(
  tx: DbOrTx,
  workspaceId: string,
  vid: string,
  set: { contactId?: string | null; clickId?: string },
  now: number,
) {
  const changes: Partial<VisitorRow> = { updatedAt: now };
  if (set.contactId) changes.contactId = set.contactId;
  if (set.clickId) changes.clickId = set.clickId;
  await tx
    .insert(visitors)
    .values({
      workspaceId,
      vid,
      contactId: set.contactId ?? null,
      clickId: set.clickId ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({ target: [visitors.workspaceId, visitors.vid], set: changes })
    .run();
}

export interface CollectInput {
  /** Workspace public id from `/t.js?w=`; optional. */
  w?: unknown;
  vid?: unknown;
  vcx?: unknown;
}

/**
 * `POST /t/collect`: a landing with `vcx` ties the visitor to the click (and so to the click's
 * contact) in the click's workspace. With `w`, the click must be that workspace's.
 */
export async function collectVisit(db: Db, input: CollectInput, now = Date.now()): Promise<void> {
  if (typeof input.vid !== "string" || !isUuid(input.vid)) return;
  if (typeof input.vcx !== "string" || !isUuid(input.vcx)) return;
  const vid = input.vid.toLowerCase();
  const click = await clickById(db, input.vcx.toLowerCase());
  if (!click) return;
  if (input.w !== undefined && input.w !== null && input.w !== "") {
    if ((await workspaceIdByPublicId(db, input.w)) !== click.workspaceId) return;
  }
  await groupCommit(
    db,
    async (tx) =>
      await upsertVisitor(tx, click.workspaceId, vid, { contactId: click.contactId, clickId: click.id }, now),
  );
}

export interface IdentifyInput {
  w?: unknown;
  vid?: unknown;
  email?: unknown;
  phone?: unknown;
  external_id?: unknown;
}

/**
 * `POST /t/identify`: ties the visitor to a known contact of the script's workspace (`w`), by
 * `external_id`, `phone` or `email` (strongest first). Never creates a contact.
 */
export async function identifyVisitor(db: Db, input: IdentifyInput, now = Date.now()): Promise<void> {
  if (typeof input.vid !== "string" || !isUuid(input.vid)) return;
  const workspaceId = await workspaceIdByPublicId(db, input.w);
  if (!workspaceId) return;
  let ids: ReturnType<typeof checkIdentifiers>;
  try {
    ids = checkIdentifiers({ external_id: input.external_id, phone: input.phone, email: input.email });
  } catch (error) {
    if (error instanceof AppError) return;
    throw error;
  }
  if (Object.keys(ids).length === 0) return;
  const { contactId } = await resolveContact(db, workspaceId, ids);
  if (!contactId) return;
  const vid = input.vid.toLowerCase();
  await groupCommit(db, async (tx) => await upsertVisitor(tx, workspaceId, vid, { contactId }, now));
}
