import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { containsText } from "../../db/dialect";
import { newestFirstPage } from "../../db/paging";
import { type OfferRow, offers, trackedLinks } from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { invalid, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { toIso } from "../../lib/time";
import { checkWebhookUrl } from "../../webhooks/targets";
import { invalidateLinkCache } from "./clicks";
import { checkLinkDomainReference, linkBaseUrl } from "./link-domains";
import { checkCurrency, checkValue } from "./values";

/** The Offer as the API returns it (API.md §3 Offers & tracking). */
export interface OfferJson {
  id: string;
  name: string;
  destination_url: string;
  value: number | null;
  currency: string;
  status: "active" | "paused";
  tracking_url: string;
  link_domain_id: string | null;
  created_at: string;
}

export const OFFER_STATUSES = ["active", "paused"] as const;

export interface OfferInput {
  name?: string;
  destination_url?: string;
  value?: number | null;
  currency?: string;
  status?: (typeof OFFER_STATUSES)[number];
  link_domain_id?: string | null;
}

const CODE_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * A random link code of `length` base62 characters (rejection sampling, so every character is
 * equally likely). 10 characters ≈ 59 bits: not guessable, and short enough for an SMS.
 */
export function newLinkCode(length = 10): string {
  const out: string[] = [];
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && out.length < length) out.push(CODE_ALPHABET[byte % 62]);
    }
  }
  return out.join("");
}

/** `/r/<code>` under a base URL: a verified link domain (`https://<domain>`) or PUBLIC_URL. */
export function trackingUrl(base: string, code: string): string {
  return `${base}/r/${code}`;
}

/**
 * The Offer record; `tracking_url` is on the offer's link domain, else the workspace's default
 * verified domain, else PUBLIC_URL (`publicUrl`), as the link is shared at this moment.
 */
export async function offerJson(db: DbOrTx, row: OfferRow, publicUrl: string): Promise<OfferJson> {
  const base = await linkBaseUrl(db, row.workspaceId, [row.linkDomainId], publicUrl);
  return {
    id: row.id,
    name: row.name,
    destination_url: row.destinationUrl,
    value: row.value,
    currency: row.currency,
    status: row.status as OfferJson["status"],
    tracking_url: trackingUrl(base, row.code),
    link_domain_id: row.linkDomainId,
    created_at: toIso(row.createdAt) as string,
  };
}

/** A control character (C0, DEL, C1) or any space: never part of a URL as written (API.md §7.2). */
const UNSAFE_URL_CHARACTER =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  /[\u0000-\u0020\u007f-\u009f\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/**
 * An offer's destination: an absolute http(s) URL, with no control characters or spaces, without credentials that does not point at a
 * link-local or cloud-metadata address (the webhook target rules; private addresses are allowed,
 * a self-hosted landing page may live there). Returns the URL as given.
 */
export function checkDestinationUrl(raw: string): string {
  // The URL parser drops tabs and line breaks and trims spaces, so "https://a.example/x\r\nSet-Cookie: …"
  // parses; stored as given it would be written into a redirect's Location header.
  if (UNSAFE_URL_CHARACTER.test(raw)) throw invalid("destination_url must be a valid URL");
  const problem = checkWebhookUrl(raw, true);
  if (problem) throw invalid(`destination_url ${problem}`);
  return raw;
}

function checkInput(input: OfferInput) {
  if (input.name !== undefined && input.name.trim() === "") throw invalid("name is required");
  if (input.destination_url !== undefined) checkDestinationUrl(input.destination_url);
  if (input.value !== undefined && input.value !== null) checkValue(input.value, "value");
}

export async function createOffer(
  db: DbOrTx,
  workspaceId: string,
  input: OfferInput & { name: string; destination_url: string },
  publicUrl: string,
  now = Date.now(),
): Promise<OfferJson> {
  checkInput(input);
  const row: OfferRow = {
    id: newId(),
    workspaceId,
    name: input.name,
    destinationUrl: input.destination_url,
    value: input.value ?? null,
    currency: input.currency === undefined ? "USD" : checkCurrency(input.currency, "currency"),
    status: input.status ?? "active",
    code: newLinkCode(8),
    linkDomainId: input.link_domain_id ?? null,
    createdAt: now,
    updatedAt: now,
  };
  return await db.transaction(async (tx) => {
    await checkLinkDomainReference(tx, workspaceId, input.link_domain_id);
    await tx.insert(offers).values(row).run();
    // The offer's own link: a click on it knows the offer only.
    await tx
      .insert(trackedLinks)
      .values({ code: row.code, workspaceId, offerId: row.id, createdAt: now })
      .run();
    return await offerJson(tx, row, publicUrl);
  });
}

/** The workspace's offer, or 404 (malformed, unknown or another workspace's id). */
export async function findOffer(db: DbOrTx, workspaceId: string, id: string): Promise<OfferRow> {
  const row = await workspaceRow(db, offers, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

/** True when `id` is an offer of the workspace (a campaign's `offer_id`). */
export async function offerExists(db: DbOrTx, workspaceId: string, id: string): Promise<boolean> {
  return (await workspaceRow(db, offers, workspaceId, id)) !== undefined;
}

export async function listOffers(
  db: DbOrTx,
  workspaceId: string,
  filter: { status?: string; q?: string },
  page: { limit: number; offset: number },
  publicUrl: string,
): Promise<{ offers: OfferJson[]; total: number }> {
  if (filter.status !== undefined && !(OFFER_STATUSES as readonly string[]).includes(filter.status))
    throw invalid(`status must be one of ${OFFER_STATUSES.join(", ")}`);
  const where = and(
    eq(offers.workspaceId, workspaceId),
    filter.status ? eq(offers.status, filter.status) : undefined,
    containsText(offers.name, filter.q),
  );
  const { rows, total } = await newestFirstPage(db, offers, where, [offers.createdAt, offers.id], page);
  const items: OfferJson[] = [];
  for (const row of rows) items.push(await offerJson(db, row, publicUrl));
  return { offers: items, total };
}

export async function updateOffer(
  db: DbOrTx,
  workspaceId: string,
  id: string,
  patch: OfferInput,
  publicUrl: string,
  now = Date.now(),
): Promise<OfferJson> {
  const updated = await db.transaction(async (tx) => {
    const row = await findOffer(tx, workspaceId, id);
    checkInput(patch);
    if (patch.link_domain_id !== undefined)
      await checkLinkDomainReference(tx, workspaceId, patch.link_domain_id);
    const changes: Partial<OfferRow> = { updatedAt: now };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.destination_url !== undefined) changes.destinationUrl = patch.destination_url;
    if (patch.value !== undefined) changes.value = patch.value;
    if (patch.currency !== undefined) changes.currency = checkCurrency(patch.currency, "currency");
    if (patch.status !== undefined) changes.status = patch.status;
    if (patch.link_domain_id !== undefined) changes.linkDomainId = patch.link_domain_id;
    await tx.update(offers).set(changes).where(eq(offers.id, row.id)).run();
    return await offerJson(tx, { ...row, ...changes }, publicUrl);
  });
  // Its links answer with the new status and destination from the next click on.
  invalidateLinkCache();
  return updated;
}

/**
 * Deletes an offer and its links (they answer 404 from now on); clicks and conversions already
 * recorded keep its id.
 */
export async function deleteOffer(db: DbOrTx, workspaceId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await findOffer(tx, workspaceId, id);
    await tx
      .delete(trackedLinks)
      .where(and(eq(trackedLinks.workspaceId, workspaceId), eq(trackedLinks.offerId, row.id)))
      .run();
    await tx.delete(offers).where(eq(offers.id, row.id)).run();
  });
  invalidateLinkCache();
}

/**
 * A per-recipient link for a campaign or flow message (`{{offer_url}}`): written in the transaction that
 * writes the message, so a click knows its contact, campaign, message and sending number.
 */
export async function createRecipientLink(
  tx: DbOrTx,
  link: {
    workspaceId: string;
    offerId: string;
    contactId: string;
    /** Null for a flow's link. */
    campaignId: string | null;
    messageId: string;
    numberId: string | null;
    code: string;
  },
  now: number,
) {
  await tx
    .insert(trackedLinks)
    .values({ ...link, createdAt: now })
    .run();
}

/** PUBLIC_URL for links written outside a request (the campaign dispatcher); set at boot. */
let publicBaseUrl = "http://localhost:3000";
export function configureTrackedLinks(options: { publicUrl: string }) {
  publicBaseUrl = options.publicUrl;
}

/** PUBLIC_URL as set at boot: the base of links when a workspace has no verified link domain. */
export function publicLinkBase(): string {
  return publicBaseUrl;
}

/**
 * The base of a workspace's links at this moment (`https://<domain>` or PUBLIC_URL): the first
 * verified domain of `named` (e.g. the campaign's, then the offer's), else the default.
 */
export async function workspaceLinkBase(
  db: DbOrTx,
  workspaceId: string,
  named: readonly (string | null | undefined)[] = [],
): Promise<string> {
  return await linkBaseUrl(db, workspaceId, named, publicBaseUrl);
}

/**
 * The base of a campaign's `{{offer_url}}` links: the campaign's link domain, else its offer's,
 * else the workspace's default, else PUBLIC_URL (resolved when the message is written, so a domain
 * deleted or failed meanwhile falls back).
 */
export async function campaignLinkBase(
  db: DbOrTx,
  campaign: { workspaceId: string; offerId: string | null; linkDomainId: string | null },
): Promise<string> {
  const offer = campaign.offerId
    ? await db
        .select({ linkDomainId: offers.linkDomainId })
        .from(offers)
        .where(and(eq(offers.workspaceId, campaign.workspaceId), eq(offers.id, campaign.offerId)))
        .get()
    : undefined;
  return await workspaceLinkBase(db, campaign.workspaceId, [campaign.linkDomainId, offer?.linkDomainId]);
}

/**
 * `{{offer_url}}` for one campaign recipient: a new code whose link row is written with the
 * message (`createRecipientLink`). Returns the code and the URL (under `base`) to merge into the body.
 */
export function newRecipientLink(base: string): { code: string; url: string } {
  const code = newLinkCode(RECIPIENT_CODE_LENGTH);
  return { code, url: trackingUrl(base, code) };
}

const RECIPIENT_CODE_LENGTH = 10;

/**
 * `{{offer_url}}` in a campaign preview: the shape and length of a recipient's own link, whose code
 * is only made when the message is written (so the previewed length and segments are the sent ones).
 */
export function previewRecipientLink(base: string): string {
  return trackingUrl(base, "X".repeat(RECIPIENT_CODE_LENGTH));
}
