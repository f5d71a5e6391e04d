import { and, asc, eq, inArray, or, type SQL, sql } from "drizzle-orm";
import { decideSend } from "../../compliance";
import type { DbOrTx } from "../../db/client";
import { insertRows } from "../../db/prepared";
import {
  type CampaignAudience,
  type CampaignRow,
  type ContactRow,
  campaignRecipients,
  contacts,
  listMembers,
} from "../../db/schema";
import { segmentWhere } from "../audience/segments";
import { suppressionReasons } from "../audience/suppression";
import { chooseVariant } from "./merge";

/** Contacts read per resolution step: each step is one job and one transaction, short enough (tens of ms) not to hold other requests. */
export const RESOLVE_CHUNK = 500;

const FALSE = sql`1 = 0`;

/**
 * The audience as one SQL condition on `contacts`: (in any list ∪ in any segment, evaluated at
 * `now` ∪ one of contact_ids) and in no excluded list. Each contact appears once however many
 * ways it is in, so the audience is de-duplicated by construction.
 */
export async function audienceCondition(
  tx: DbOrTx,
  workspaceId: string,
  audience: CampaignAudience,
  now: number,
): Promise<SQL> {
  const anyOf: SQL[] = [];
  if (audience.list_ids.length)
    anyOf.push(
      sql`EXISTS (SELECT 1 FROM ${listMembers} WHERE ${inArray(listMembers.listId, audience.list_ids)} AND ${listMembers.contactId} = ${contacts.id})`,
    );
  for (const segmentId of audience.segment_ids)
    anyOf.push(await segmentWhere(tx, workspaceId, segmentId, now));
  if (audience.contact_ids.length) anyOf.push(inArray(contacts.id, audience.contact_ids));
  const conditions: SQL[] = [
    eq(contacts.workspaceId, workspaceId),
    anyOf.length ? (or(...anyOf) as SQL) : FALSE,
  ];
  if (audience.exclude_list_ids.length)
    conditions.push(
      sql`NOT EXISTS (SELECT 1 FROM ${listMembers} WHERE ${inArray(listMembers.listId, audience.exclude_list_ids)} AND ${listMembers.contactId} = ${contacts.id})`,
    );
  return and(...conditions) as SQL;
}

export async function audienceHasAnyone(
  tx: DbOrTx,
  workspaceId: string,
  audience: CampaignAudience,
  now: number,
) {
  return Boolean(
    await tx
      .select({ id: contacts.id })
      .from(contacts)
      .where(await audienceCondition(tx, workspaceId, audience, now))
      .limit(1)
      .get(),
  );
}

/** Where a resolution walk stopped: the last contact written (its created_at and id). */
export interface AudienceCursor {
  created_at: number;
  id: string;
}

/**
 * One page of the audience in (created_at, id) order — the order recipients are resolved in —
 * starting after `after`. The walk is a range of the index (workspace_id, created_at, id), so
 * every chunk costs its own size, not the workspace's. Segments are evaluated at `at` (the launch).
 */
export async function audiencePage(
  tx: DbOrTx,
  campaign: CampaignRow,
  at: number,
  page: { after?: AudienceCursor | null; limit: number; offset?: number; contactId?: string },
): Promise<ContactRow[]> {
  const where = await audienceCondition(tx, campaign.workspaceId, campaign.audience, at);
  const after = page.after
    ? sql`(${contacts.createdAt}, ${contacts.id}) > (${page.after.created_at}, ${page.after.id})`
    : undefined;
  // One contact (a preview for that contact): the page is it when it is in the audience, else empty.
  const only = page.contactId ? eq(contacts.id, page.contactId) : undefined;
  return await tx
    .select()
    .from(contacts)
    .where(and(where, after, only))
    .orderBy(asc(contacts.createdAt), asc(contacts.id))
    .limit(page.limit)
    .offset(page.offset ?? 0)
    .all();
}

/** Variant name of a contact, or null for a campaign without variants. */
export function variantFor(campaign: CampaignRow, contactId: string): string | null {
  const variants = campaign.message?.variants;
  return variants?.length ? chooseVariant(variants, campaign.id, contactId).name : null;
}

/**
 * Recipient rows for one page of contacts. What can never be sent is recorded as skipped at once
 * with the compliance module's reason (suppressed, opted_out, no_phone, invalid_phone: the checks
 * of every send kind); the rest is queued and decided in full at the moment of sending.
 */
export async function writeRecipients(tx: DbOrTx, campaign: CampaignRow, page: ContactRow[], now: number) {
  if (page.length === 0) return;
  const suppressed = await suppressionReasons(
    tx,
    campaign.workspaceId,
    page.map((c) => c.phoneNumber),
  );
  const rows = page.map((contact) => {
    const reason = suppressed.get(contact.phoneNumber) ?? null;
    const decision = decideSend(
      {
        channel: "sms",
        kind: "transactional",
        phone: contact.phoneNumber,
        timezone: contact.timezone,
        suppressed: reason !== null && reason !== "opt_out",
        opted_out: !contact.optedIn || reason === "opt_out",
      },
      now,
    );
    const permission =
      decision.action === "skip"
        ? { allowed: false, reason: decision.reason }
        : { allowed: true, reason: null };
    return {
      campaignId: campaign.id,
      contactId: contact.id,
      workspaceId: campaign.workspaceId,
      phoneNumber: contact.phoneNumber,
      variant: variantFor(campaign, contact.id),
      outcome: permission.allowed ? "queued" : "skipped",
      reason: permission.allowed ? null : permission.reason,
      sendAt: null,
      dueAt: now,
      messageId: null,
      callId: null,
      handedOffAt: null,
      repliedAt: null,
      optedOutAt: null,
      createdAt: now,
    };
  });
  // Replayed after a crash, the same rows are ignored: (campaign, contact) is unique. On SQLite one
  // prepared row insert each (building a 500-row INSERT's SQL cost more than running it, ~25 µs a
  // row); on PostgreSQL one statement for the chunk instead of 500 round trips.
  await insertRows(tx, campaignRecipients, rows, { ignoreDuplicates: true });
}
