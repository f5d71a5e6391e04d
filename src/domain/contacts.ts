import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../db/client";
import { type ContactRow, contacts } from "../db/schema";
import { timezoneForPhone } from "../lib/area-codes";
import { invalid } from "../lib/errors";
import { newId } from "../lib/ids";
import { normalizePhone } from "../lib/phone";
import { toIso } from "../lib/time";
import { emitEvent } from "./events";

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
  fields: Record<string, unknown>;
  created_at: string;
  updated_at: string;
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
    timezone: row.timezone,
    fields: row.fields ?? {},
    created_at: toIso(row.createdAt) as string,
    updated_at: toIso(row.updatedAt) as string,
  };
}

/** The workspace's contact with this E.164 number, or undefined. */
export function findContactByPhone(db: DbOrTx, workspaceId: string, e164: string): ContactRow | undefined {
  return db
    .select()
    .from(contacts)
    .where(and(eq(contacts.workspaceId, workspaceId), eq(contacts.phoneNumber, e164)))
    .get();
}

/**
 * Finds the workspace's contact by phone number (normalised to E.164) or creates it: opted in,
 * time zone from the area code, `contact.created` emitted in the same transaction. Used by every
 * path that meets a number first (inbound messages, one-off sends, imports).
 * Throws 422 `phone_number must be a valid phone number` when `phone` cannot be a number.
 */
export function ensureContact(
  tx: DbOrTx,
  workspaceId: string,
  phone: string,
  source: string,
  now = Date.now(),
): { contact: ContactRow; created: boolean } {
  const e164 = normalizePhone(phone);
  if (!e164) throw invalid("phone_number must be a valid phone number");
  const existing = findContactByPhone(tx, workspaceId, e164);
  if (existing) return { contact: existing, created: false };
  const row: ContactRow = {
    id: newId(),
    workspaceId,
    phoneNumber: e164,
    firstName: null,
    lastName: null,
    email: null,
    externalId: null,
    source,
    optedIn: true,
    timezone: timezoneForPhone(e164),
    fields: {},
    createdAt: now,
    updatedAt: now,
  };
  tx.insert(contacts).values(row).run();
  emitEvent(tx, workspaceId, "contact.created", contactJson(row), now);
  return { contact: row, created: true };
}
