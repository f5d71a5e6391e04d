import { and, count, desc, eq, or, type SQL, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { escapeLike, inJsonListParam, jsonList, likeInsensitive } from "../../db/dialect";
import { insertRowsReturning, preparedPerConnection, rowPlaceholders } from "../../db/prepared";
import { audienceVersions, type ContactRow, contacts } from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { timezoneForPhone } from "../../lib/area-codes";
import { conflict, invalid, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { normalizePhone } from "../../lib/phone";
import { stateCodeOf } from "../../lib/state-codes";
import { textProblem } from "../../lib/text";
import { isTimeZone, toIso } from "../../lib/time";
import { emitEvent, emitEvents } from "../events";

/** The Contact as the API returns it (API.md §3 Contacts). */
export interface ContactJson {
  id: string;
  phone_number: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  external_id: string | null;
  source: string;
  opted_in: boolean;
  timezone: string | null;
  timezone_source: "given" | "area_code";
  state: string | null;
  fields: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/**
 * Custom fields with their keys sorted (UTF-16 code-unit order), as the API shows them and the
 * engine reads them: the same on both databases (PostgreSQL's jsonb keeps keys shorter-first, SQLite
 * as written).
 */
export function inKeyOrder(fields: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(fields);
  if (keys.length < 2) return fields;
  // Own data properties whatever the key (field names exclude __proto__ anyway).
  return Object.fromEntries(keys.sort().map((key) => [key, fields[key]]));
}

export function contactJson(row: ContactRow): ContactJson {
  return {
    id: row.id,
    phone_number: row.phoneNumber,
    first_name: row.firstName,
    last_name: row.lastName,
    email: row.email,
    external_id: row.externalId,
    source: row.source,
    opted_in: row.optedIn,
    // A zone not given is the area code's main zone, for display: the rules check all its zones.
    timezone: row.timezone ?? timezoneForPhone(row.phoneNumber),
    timezone_source: row.timezone ? "given" : "area_code",
    state: row.state,
    fields: inKeyOrder(row.fields ?? {}),
    created_at: toIso(row.createdAt) as string,
    updated_at: toIso(row.updatedAt) as string,
  };
}

/** The workspace's contact with this E.164 number, or undefined. */
const contactStatements = preparedPerConnection((db) => ({
  byPhone: db
    .select()
    .from(contacts)
    .where(
      and(
        eq(contacts.workspaceId, sql.placeholder("workspaceId")),
        eq(contacts.phoneNumber, sql.placeholder("phone")),
      ),
    )
    .prepare(),
  byPhones: db
    .select()
    .from(contacts)
    .where(
      and(
        eq(contacts.workspaceId, sql.placeholder("workspaceId")),
        inJsonListParam(contacts.phoneNumber, "phones"),
      ),
    )
    .prepare(),
  // The same number's contact made meanwhile by another transaction (contacts_workspace_phone_idx)
  // leaves this one unwritten: nothing comes back.
  insert: db
    .insert(contacts)
    .values(rowPlaceholders(contacts))
    .onConflictDoNothing({ target: [contacts.workspaceId, contacts.phoneNumber] })
    .returning({ id: contacts.id })
    .prepare(),
}));

/** The workspace's contacts of `phones` (E.164), by number, in one statement; those not found are absent. */
export async function findContactsByPhones(
  db: DbOrTx,
  workspaceId: string,
  phones: readonly string[],
): Promise<Map<string, ContactRow>> {
  if (phones.length === 0) return new Map();
  const rows = await contactStatements(db).byPhones.all({ workspaceId, phones: jsonList([...phones]) });
  return new Map(rows.map((row) => [row.phoneNumber, row]));
}

export async function findContactByPhone(
  db: DbOrTx,
  workspaceId: string,
  e164: string,
): Promise<ContactRow | undefined> {
  return await contactStatements(db).byPhone.get({ workspaceId, phone: e164 });
}

/** A contact first met at `e164` (ensureContact's): opted in, nothing else known. */
export function newContactRow(workspaceId: string, e164: string, source: string, now: number): ContactRow {
  return {
    id: newId(),
    workspaceId,
    phoneNumber: e164,
    firstName: null,
    lastName: null,
    email: null,
    externalId: null,
    source,
    optedIn: true,
    timezone: null,
    state: null,
    fields: {},
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Finds the workspace's contact by phone number (normalised to E.164) or creates it: opted in,
 * time zone and state from the area code (none stored), `contact.created` emitted in the same transaction. Used by every
 * path that meets a number first (inbound messages, one-off sends, imports). Two transactions
 * meeting a new number at once (two servers on PostgreSQL) agree on one contact: the second finds
 * the first's (`created: false`, no second event).
 * Throws 422 `phone_number must be a valid phone number` when `phone` cannot be a number.
 */
export async function ensureContact(
  tx: DbOrTx,
  workspaceId: string,
  phone: string,
  source: string,
  now = Date.now(),
  /** The contact of `phone` when the caller has looked it up already (none: `{contact: undefined}`). */
  known?: { contact: ContactRow | undefined },
): Promise<{ contact: ContactRow; created: boolean }> {
  const e164 = normalizePhone(phone);
  if (!e164) throw invalid("phone_number must be a valid phone number");
  const existing = known ? known.contact : await findContactByPhone(tx, workspaceId, e164);
  if (existing) return { contact: existing, created: false };
  const { byPhone, created } = await ensureContacts(tx, workspaceId, [e164], new Map(), source, now);
  const contact = byPhone.get(e164) as ContactRow;
  return { contact, created: created.has(contact.id) };
}

/**
 * ensureContact for many numbers (E.164) at once (ensureContact runs it for one): the contacts of
 * `phones` among `found` (read by the caller with findContactsByPhones), and new ones made
 * together (one statement on PostgreSQL) with their `contact.created`; a number's contact that
 * another transaction made meanwhile is read. `created`: the ids of the contacts made here.
 */
export async function ensureContacts(
  tx: DbOrTx,
  workspaceId: string,
  phones: readonly string[],
  found: ReadonlyMap<string, ContactRow>,
  source: string,
  now: number,
): Promise<{ byPhone: Map<string, ContactRow>; created: Set<string> }> {
  const byPhone = new Map(found);
  const rows = [...new Set(phones)]
    .filter((phone) => !byPhone.has(phone))
    .map((phone) => newContactRow(workspaceId, phone, source, now));
  const created = new Set<string>();
  if (rows.length === 0) return { byPhone, created };
  const written = await insertRowsReturning(tx, contacts, rows, "ensure-contact", {
    conflict: { target: [contacts.workspaceId, contacts.phoneNumber] },
    returning: { id: contacts.id },
  });
  const made = new Set(written.map((row) => row.id));
  const lost: string[] = [];
  for (const row of rows) {
    if (made.has(row.id)) {
      byPhone.set(row.phoneNumber, row);
      created.add(row.id);
    } else lost.push(row.phoneNumber);
  }
  if (lost.length > 0) {
    // The conflicts waited for the other transactions' commits, so their contacts can be read now.
    const meanwhile = await findContactsByPhones(tx, workspaceId, lost);
    for (const phone of lost) {
      const contact = meanwhile.get(phone);
      if (!contact) throw new Error(`contact of ${phone} made meanwhile cannot be read`);
      byPhone.set(phone, contact);
    }
  }
  await emitEvents(
    tx,
    workspaceId,
    "contact.created",
    rows.filter((row) => created.has(row.id)).map(contactJson),
    now,
  );
  return { byPhone, created };
}

// ---------------------------------------------------------------------------------------------
// Contact CRUD (API.md §3 Contacts)
// ---------------------------------------------------------------------------------------------

export const MAX_FIELD_KEYS = 100;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const FIELD_KEY_RE = /^[^"\\\u0000-\u001f]{1,64}$/;
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface ContactInput {
  phone_number?: string;
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
  external_id?: string | null;
  opted_in?: boolean;
  timezone?: string | null;
  state?: string | null;
  fields?: Record<string, unknown> | unknown;
}

/** A state or province as stored: its two-letter code (checked before); blank is null. */
function normalizeStateCode(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  return value.trim() === "" ? null : stateCodeOf(value);
}

/** A custom field key usable in `fields` and in segment rules (`fields.<key>`). */
export function isFieldKey(key: string): boolean {
  // "__proto__" would set an object's prototype instead of a field.
  return FIELD_KEY_RE.test(key) && key !== "__proto__";
}

/** Checks a custom `fields` object: scalar values, sane keys. `prefix` names the field in errors. */
export function checkFields(value: unknown, prefix = "fields"): asserts value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw invalid(`${prefix} must be an object`);
  const fields = value as Record<string, unknown>;
  const keys = Object.keys(fields);
  if (keys.length > MAX_FIELD_KEYS) throw invalid(`${prefix} has too many keys (max ${MAX_FIELD_KEYS})`);
  for (const key of keys) {
    if (!isFieldKey(key) || textProblem(key))
      throw invalid(`${prefix}.${key.slice(0, 64)} is not a valid field name`);
    const value = fields[key];
    if (typeof value === "string") {
      if (value.length > 2000) throw invalid(`${prefix}.${key} is too long (max 2000)`);
      const problem = textProblem(value);
      if (problem) throw invalid(`${prefix}.${key} ${problem}`);
    } else if (value !== null && typeof value !== "number" && typeof value !== "boolean") {
      throw invalid(`${prefix}.${key} must be a string, number, boolean or null`);
    } else if (typeof value === "number" && !Number.isFinite(value)) {
      throw invalid(`${prefix}.${key} must be a finite number`);
    }
  }
}

/** Normalises and checks the scalar inputs shared by create, update and import. */
export function checkContactScalars(input: ContactInput): void {
  for (const [name, max] of TEXT_LIMITS) {
    const value = input[name];
    if (typeof value !== "string") continue;
    if (value.length > max) throw invalid(`${name} is too long (max ${max})`);
    const problem = textProblem(value);
    if (problem) throw invalid(`${name} ${problem}`);
  }
  if (input.email !== undefined && input.email !== null && input.email !== "" && !EMAIL_RE.test(input.email))
    throw invalid("email must be a valid email address");
  if (input.timezone !== undefined && input.timezone !== null && !isTimeZone(input.timezone))
    throw invalid("timezone must be an IANA time zone");
  if (typeof input.state === "string" && input.state.trim() !== "" && stateCodeOf(input.state) === null)
    throw invalid("state must be a two-letter state or province code");
  if (input.fields !== undefined) checkFields(input.fields);
}

const TEXT_LIMITS: [keyof ContactInput & string, number][] = [
  ["first_name", 200],
  ["last_name", 200],
  ["email", 320],
  ["external_id", 200],
  ["timezone", 100],
  ["state", 100],
];

const blankToNull = (v: string | null | undefined) => (v === undefined ? undefined : v === "" ? null : v);

function duplicatePhone(existing: ContactRow) {
  return conflict("Contact with this phone_number already exists", { contact_id: existing.id });
}

export async function createContact(
  db: Db,
  workspaceId: string,
  input: ContactInput,
  source = "api",
  now = Date.now(),
): Promise<ContactRow> {
  const phone = normalizePhone(input.phone_number);
  if (!phone) throw invalid("phone_number must be a valid phone number");
  checkContactScalars(input);
  return await db.transaction(async (tx) => {
    const existing = await findContactByPhone(tx, workspaceId, phone);
    if (existing) throw duplicatePhone(existing);
    const row: ContactRow = {
      id: newId(),
      workspaceId,
      phoneNumber: phone,
      firstName: blankToNull(input.first_name) ?? null,
      lastName: blankToNull(input.last_name) ?? null,
      email: blankToNull(input.email) ?? null,
      externalId: blankToNull(input.external_id) ?? null,
      source,
      optedIn: input.opted_in ?? true,
      // Only a zone the caller gives is stored (given); none: the area code decides.
      timezone: input.timezone ?? null,
      state: normalizeStateCode(input.state) ?? null,
      fields: withoutNulls((input.fields ?? {}) as Record<string, unknown>),
      createdAt: now,
      updatedAt: now,
    };
    // Another transaction (another server) may have written the number since the read: its row
    // answers 409 as one found first would.
    const inserted = await contactStatements(tx).insert.all(row);
    if (inserted.length === 0) {
      const winner = await findContactByPhone(tx, workspaceId, phone);
      if (winner) throw duplicatePhone(winner);
      throw new Error("contact insert conflicted, yet no contact has the number");
    }
    await emitEvent(tx, workspaceId, "contact.created", contactJson(row), now);
    return row;
  });
}

function withoutNulls(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== null) out[k] = v;
  return out;
}

/** Merges custom fields: keys set to null are removed, others replace. */
export function mergeFields(
  current: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

export async function getContact(db: DbOrTx, workspaceId: string, id: string): Promise<ContactRow> {
  const row = await workspaceRow(db, contacts, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

/**
 * Partial update. `fields` merges (null removes a key). Changing `opted_in` emits
 * `contact.opted_out` / `contact.opted_in`; `opted_in=false` blocks every send (canSendTo).
 */
export async function updateContact(
  db: Db,
  workspaceId: string,
  id: string,
  patch: ContactInput,
  now = Date.now(),
): Promise<ContactRow> {
  let phone: string | undefined;
  if (patch.phone_number !== undefined) {
    phone = normalizePhone(patch.phone_number) ?? undefined;
    if (!phone) throw invalid("phone_number must be a valid phone number");
  }
  checkContactScalars(patch);
  return await db.transaction(async (tx) => {
    const row = await getContact(tx, workspaceId, id);
    const changes: Partial<ContactRow> = { updatedAt: now };
    if (phone !== undefined && phone !== row.phoneNumber) {
      const other = await findContactByPhone(tx, workspaceId, phone);
      if (other) throw duplicatePhone(other);
      changes.phoneNumber = phone;
    }
    if (patch.first_name !== undefined) changes.firstName = blankToNull(patch.first_name) ?? null;
    if (patch.last_name !== undefined) changes.lastName = blankToNull(patch.last_name) ?? null;
    if (patch.email !== undefined) changes.email = blankToNull(patch.email) ?? null;
    if (patch.external_id !== undefined) changes.externalId = blankToNull(patch.external_id) ?? null;
    // A zone makes the contact's zone `given`; null returns it to the area code's.
    if (patch.timezone !== undefined) changes.timezone = patch.timezone;
    if (patch.state !== undefined) changes.state = normalizeStateCode(patch.state) ?? null;
    if (patch.opted_in !== undefined) changes.optedIn = patch.opted_in;
    if (patch.fields !== undefined)
      changes.fields = mergeFields(row.fields ?? {}, patch.fields as Record<string, unknown>);
    await tx
      .update(contacts)
      .set(changes)
      .where(and(eq(contacts.workspaceId, workspaceId), eq(contacts.id, id)))
      .run();
    const updated = { ...row, ...changes };
    if (patch.opted_in !== undefined && patch.opted_in !== row.optedIn) {
      await emitEvent(
        tx,
        workspaceId,
        updated.optedIn ? "contact.opted_in" : "contact.opted_out",
        contactJson(updated),
        now,
      );
    }
    return updated;
  });
}

/** Deletes the contact and its list memberships; a suppression entry for its number stays. */
export async function deleteContact(db: Db, workspaceId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    await getContact(tx, workspaceId, id);
    await tx
      .delete(contacts)
      .where(and(eq(contacts.workspaceId, workspaceId), eq(contacts.id, id)))
      .run();
  });
}

/** `q` matches first name, last name, phone number (digits too) and email. */
function searchCondition(q: string): SQL | undefined {
  const text = q.trim();
  if (!text) return undefined;
  const pattern = `%${escapeLike(text)}%`;
  const parts: SQL[] = [
    likeInsensitive(contacts.firstName, pattern),
    likeInsensitive(contacts.lastName, pattern),
    likeInsensitive(contacts.email, pattern),
    likeInsensitive(contacts.phoneNumber, pattern),
    likeInsensitive(sql`(${contacts.firstName} || ' ' || ${contacts.lastName})`, pattern),
  ];
  const digits = text.replace(/\D/g, "");
  if (digits.length >= 3 && digits !== text) {
    parts.push(likeInsensitive(contacts.phoneNumber, `%${digits}%`));
  }
  const phone = normalizePhone(text);
  if (phone) parts.push(eq(contacts.phoneNumber, phone));
  return or(...parts);
}

export async function listContacts(
  db: DbOrTx,
  workspaceId: string,
  options: { q?: string; limit: number; offset: number },
): Promise<{ rows: ContactRow[]; total: number }> {
  const where = and(
    eq(contacts.workspaceId, workspaceId),
    options.q ? searchCondition(options.q) : undefined,
  );
  const rows = await db
    .select()
    .from(contacts)
    .where(where)
    .orderBy(desc(contacts.createdAt), desc(contacts.id))
    .limit(options.limit)
    .offset(options.offset)
    .all();
  // Without a search the total is the workspace's counter (kept by triggers), not a count of the index.
  const total = options.q
    ? ((await db.select({ n: count() }).from(contacts).where(where).get())?.n ?? 0)
    : ((
        await db
          .select({ n: audienceVersions.contactCount })
          .from(audienceVersions)
          .where(eq(audienceVersions.workspaceId, workspaceId))
          .get()
      )?.n ?? 0);
  return { rows, total };
}

/**
 * Opts a contact out (or back in) inside the caller's transaction, emitting `contact.opted_out` /
 * `contact.opted_in` when it changes. For inbound STOP/START handling; returns the contact as it is
 * now, or undefined for an unknown id.
 */
export async function setOptedIn(
  tx: DbOrTx,
  workspaceId: string,
  contactId: string,
  optedIn: boolean,
  now = Date.now(),
): Promise<ContactRow | undefined> {
  const row = await tx
    .select()
    .from(contacts)
    .where(and(eq(contacts.workspaceId, workspaceId), eq(contacts.id, contactId)))
    .get();
  if (!row || row.optedIn === optedIn) return row;
  await tx
    .update(contacts)
    .set({ optedIn, updatedAt: now })
    .where(and(eq(contacts.workspaceId, workspaceId), eq(contacts.id, contactId)))
    .run();
  const updated = { ...row, optedIn, updatedAt: now };
  await emitEvent(
    tx,
    workspaceId,
    optedIn ? "contact.opted_in" : "contact.opted_out",
    contactJson(updated),
    now,
  );
  return updated;
}
