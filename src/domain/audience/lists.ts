import { and, count, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { containsText } from "../../db/dialect";
import { type ContactRow, contacts, type ListRow, listMembers, lists } from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { invalid, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { normalizePhone } from "../../lib/phone";
import { toIso } from "../../lib/time";
import { ensureContact } from "./contacts";

/** The List as the API returns it (seed "List"). */
export interface ListJson {
  id: string;
  name: string;
  description: string;
  contacts: number;
  created_at: string;
}

export function listJson(row: ListRow, members: number): ListJson {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    contacts: members,
    created_at: toIso(row.createdAt) as string,
  };
}

/** The workspace's list, or undefined (malformed ids included). */
export async function getListRow(db: DbOrTx, workspaceId: string, id: string): Promise<ListRow | undefined> {
  return await workspaceRow(db, lists, workspaceId, id);
}

async function requireList(db: DbOrTx, workspaceId: string, id: string): Promise<ListRow> {
  const row = await getListRow(db, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

export async function memberCount(db: DbOrTx, listId: string): Promise<number> {
  return (
    (await db.select({ n: count() }).from(listMembers).where(eq(listMembers.listId, listId)).get())?.n ?? 0
  );
}

export async function getList(db: DbOrTx, workspaceId: string, id: string): Promise<ListJson> {
  const row = await requireList(db, workspaceId, id);
  return listJson(row, await memberCount(db, row.id));
}

export async function createList(
  db: Db,
  workspaceId: string,
  input: { name: string; description?: string },
  now = Date.now(),
): Promise<ListJson> {
  const row: ListRow = {
    id: newId(),
    workspaceId,
    name: input.name,
    description: input.description ?? "",
    createdAt: now,
    updatedAt: now,
  };
  await db.insert(lists).values(row).run();
  return listJson(row, 0);
}

export async function listLists(
  db: DbOrTx,
  workspaceId: string,
  options: { q?: string; limit: number; offset: number },
): Promise<{ lists: ListJson[]; total: number }> {
  const q = options.q?.trim();
  const where = and(eq(lists.workspaceId, workspaceId), containsText(lists.name, q));
  const members =
    sql<number>`(SELECT count(*) FROM ${listMembers} WHERE ${listMembers.listId} = ${lists.id})`.mapWith(
      Number,
    );
  const rows = await db
    .select({ list: lists, members })
    .from(lists)
    .where(where)
    .orderBy(desc(lists.createdAt), desc(lists.id))
    .limit(options.limit)
    .offset(options.offset)
    .all();
  const total = (await db.select({ n: count() }).from(lists).where(where).get())?.n ?? 0;
  return { lists: rows.map((r) => listJson(r.list, Number(r.members))), total };
}

/** Renaming or re-describing a list leaves its membership unchanged (seed rule 4). */
export async function updateList(
  db: Db,
  workspaceId: string,
  id: string,
  patch: { name?: string; description?: string },
  now = Date.now(),
): Promise<ListJson> {
  return await db.transaction(async (tx) => {
    const row = await requireList(tx, workspaceId, id);
    const changes: Partial<ListRow> = { updatedAt: now };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.description !== undefined) changes.description = patch.description;
    await tx
      .update(lists)
      .set(changes)
      .where(and(eq(lists.workspaceId, workspaceId), eq(lists.id, id)))
      .run();
    return listJson({ ...row, ...changes }, await memberCount(tx, id));
  });
}

/** Deletes the list and its memberships; the contacts stay. */
export async function deleteList(db: Db, workspaceId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    await requireList(tx, workspaceId, id);
    await tx.delete(listMembers).where(eq(listMembers.listId, id)).run();
    await tx
      .delete(lists)
      .where(and(eq(lists.workspaceId, workspaceId), eq(lists.id, id)))
      .run();
  });
}

/** Called in the transaction that adds contacts to a list (flows' added_to_list trigger). */
type MembersAddedListener = (
  tx: DbOrTx,
  workspaceId: string,
  listId: string,
  contactIds: string[],
  now: number,
) => Promise<void> | void;
const membersAddedListeners: MembersAddedListener[] = [];
export function onListMembersAdded(listener: MembersAddedListener) {
  membersAddedListeners.push(listener);
}
/** Tells the listeners which contacts were just added to `listId` (not those already in it). */
export async function listMembersAdded(
  tx: DbOrTx,
  workspaceId: string,
  listId: string,
  contactIds: string[],
  now: number,
) {
  if (contactIds.length === 0) return;
  for (const listener of membersAddedListeners) await listener(tx, workspaceId, listId, contactIds, now);
}

export interface MembershipInput {
  contact_ids?: string[];
  phone_numbers?: string[];
}

function normalizedPhones(input: MembershipInput): string[] {
  return (input.phone_numbers ?? []).map((p, i) => {
    const e164 = normalizePhone(p);
    if (!e164) throw invalid(`phone_numbers[${i}] must be a valid phone number`);
    return e164;
  });
}

async function workspaceContactIds(db: DbOrTx, workspaceId: string, ids: string[]): Promise<string[]> {
  const wanted = [...new Set(ids.filter(isUuid))];
  const out: string[] = [];
  for (let i = 0; i < wanted.length; i += 500) {
    const found = await db
      .select({ id: contacts.id })
      .from(contacts)
      .where(and(eq(contacts.workspaceId, workspaceId), inArray(contacts.id, wanted.slice(i, i + 500))))
      .all();
    for (const r of found) out.push(r.id);
  }
  return out;
}

/**
 * Adds contacts by id and/or phone number. Unknown or foreign ids, and contacts already in the
 * list, count as `skipped`; a phone number with no contact yet creates the contact (source `api`).
 */
export async function addMembers(
  db: Db,
  workspaceId: string,
  listId: string,
  input: MembershipInput,
  now = Date.now(),
): Promise<{ added: number; skipped: number }> {
  const phones = normalizedPhones(input);
  const requested = (input.contact_ids?.length ?? 0) + phones.length;
  return await db.transaction(async (tx) => {
    await requireList(tx, workspaceId, listId);
    const ids = new Set(await workspaceContactIds(tx, workspaceId, input.contact_ids ?? []));
    for (const phone of phones) ids.add((await ensureContact(tx, workspaceId, phone, "api", now)).contact.id);
    const addedIds: string[] = [];
    const all = [...ids];
    for (let i = 0; i < all.length; i += 500) {
      const inserted = await tx
        .insert(listMembers)
        .values(
          all.slice(i, i + 500).map((contactId) => ({ listId, contactId, workspaceId, createdAt: now })),
        )
        .onConflictDoNothing()
        .returning({ contactId: listMembers.contactId })
        .all();
      for (const row of inserted) addedIds.push(row.contactId);
    }
    await listMembersAdded(tx, workspaceId, listId, addedIds, now);
    const added = addedIds.length;
    return { added, skipped: requested - added };
  });
}

/** Removes contacts (by id or phone number) from the list; `removed` counts actual removals. */
export async function removeMembers(
  db: Db,
  workspaceId: string,
  listId: string,
  input: MembershipInput,
): Promise<{ removed: number }> {
  const phones = normalizedPhones(input);
  return await db.transaction(async (tx) => {
    await requireList(tx, workspaceId, listId);
    const ids = new Set(await workspaceContactIds(tx, workspaceId, input.contact_ids ?? []));
    for (let i = 0; i < phones.length; i += 500) {
      const found = await tx
        .select({ id: contacts.id })
        .from(contacts)
        .where(
          and(eq(contacts.workspaceId, workspaceId), inArray(contacts.phoneNumber, phones.slice(i, i + 500))),
        )
        .all();
      for (const r of found) ids.add(r.id);
    }
    let removed = 0;
    const all = [...ids];
    for (let i = 0; i < all.length; i += 500) {
      const result = (await tx
        .delete(listMembers)
        .where(and(eq(listMembers.listId, listId), inArray(listMembers.contactId, all.slice(i, i + 500))))
        .run()) as unknown as { changes: number };
      removed += result.changes;
    }
    return { removed };
  });
}

/** The list's contacts, newest contact first (ids are time-ordered; served by the primary key). */
export async function listMemberContacts(
  db: DbOrTx,
  workspaceId: string,
  listId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: ContactRow[]; total: number }> {
  await requireList(db, workspaceId, listId);
  const rows = await db
    .select({ contact: contacts })
    .from(listMembers)
    .innerJoin(contacts, eq(contacts.id, listMembers.contactId))
    .where(eq(listMembers.listId, listId))
    .orderBy(desc(listMembers.contactId))
    .limit(page.limit)
    .offset(page.offset)
    .all();
  return { rows: rows.map((r) => r.contact), total: await memberCount(db, listId) };
}
