import type { ContactRow } from "../../db/schema";
import { invalid } from "../../lib/errors";
import { isFieldKey } from "../audience/contacts";

/**
 * Merge fields of campaign bodies (API.md §3 Campaigns, §6.2): `{{first_name}}`, `{{last_name}}`,
 * the other contact columns (`email`, `phone_number`, `external_id`), `{{fields.<key>}}` and
 * `{{offer_url}}`, each with an optional fallback after a bar: `{{first_name|there}}`.
 * Pure: no database.
 */
const MERGE_FIELD_RE = /\{\{\s*([^{}|]*?)\s*(?:\|([^{}]*))?\}\}/g;
const CONTACT_COLUMNS = ["first_name", "last_name", "email", "phone_number", "external_id"] as const;

export interface MergeField {
  /** As written between the braces, e.g. `first_name|there`. */
  raw: string;
  name: string;
  fallback: string;
}

export function mergeFieldsOf(body: string): MergeField[] {
  const found: MergeField[] = [];
  for (const match of body.matchAll(MERGE_FIELD_RE)) {
    found.push({ raw: match[0], name: match[1], fallback: match[2] ?? "" });
  }
  return found;
}

function isKnownField(name: string): boolean {
  if ((CONTACT_COLUMNS as readonly string[]).includes(name) || name === "offer_url") return true;
  return name.startsWith("fields.") && isFieldKey(name.slice("fields.".length));
}

/**
 * 422 `<path> has an unknown merge field {{favourite_color}}` for a field that is neither a contact
 * column, `fields.x` nor `offer_url`; `{{offer_url}}` needs an offer on the campaign.
 */
export function checkMergeFields(body: string, path: string, hasOffer: boolean) {
  for (const field of mergeFieldsOf(body)) {
    if (!isKnownField(field.name)) throw invalid(`${path} has an unknown merge field {{${field.name}}}`);
    if (field.name === "offer_url" && !hasOffer)
      throw invalid(`${path} uses {{offer_url}} but the campaign has no offer_id`);
  }
}

/** The body for one contact: every merge field replaced by its value, or its fallback when empty. */
export function mergeBody(body: string, contact: ContactRow, extra: { offerUrl?: string } = {}): string {
  return body.replace(MERGE_FIELD_RE, (_all, name: string, fallback: string | undefined) => {
    let value: unknown;
    if (name === "offer_url") value = extra.offerUrl;
    else if (name.startsWith("fields.")) {
      const key = name.slice("fields.".length);
      value = Object.hasOwn(contact.fields ?? {}, key) ? contact.fields[key] : undefined;
    } else if (name === "first_name") value = contact.firstName;
    else if (name === "last_name") value = contact.lastName;
    else if (name === "email") value = contact.email;
    else if (name === "phone_number") value = contact.phoneNumber;
    else if (name === "external_id") value = contact.externalId;
    const text = value === undefined || value === null ? "" : String(value).trim();
    return text === "" ? (fallback ?? "").trim() : text;
  });
}

export interface Variant {
  name: string;
  body: string;
  weight: number;
}

/**
 * The variant a contact gets: deterministic from contact id + campaign id (FNV-1a hash into the
 * weights' total), so a preview, a re-run after a crash and the real send agree.
 */
export function chooseVariant<V extends { weight: number }>(
  variants: V[],
  campaignId: string,
  contactId: string,
): V {
  const total = variants.reduce((sum, v) => sum + v.weight, 0);
  const point = (fnv1a(`${campaignId}:${contactId}`) / 0x1_0000_0000) * total;
  let acc = 0;
  for (const variant of variants) {
    acc += variant.weight;
    if (point < acc) return variant;
  }
  return variants[variants.length - 1];
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
