import { and, count, desc, eq, like, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { inJsonListParam, jsonList } from "../../db/dialect";
import { preparedPerConnection } from "../../db/prepared";
import { contacts, type SuppressionRow, suppressions } from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { conflict, invalid, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { normalizePhone } from "../../lib/phone";
import { toIso } from "../../lib/time";

export type SendBlock = "opted_out" | "suppressed";

export type SendPermission = { allowed: true } | { allowed: false; reason: SendBlock; message: string };

/**
 * The one check every send path calls, at accept time and again at send time: a number with a
 * suppression entry, or whose contact has `opted_in=false`, receives nothing.
 */
const sendChecks = preparedPerConnection((db) => {
  const workspaceId = sql.placeholder("workspaceId");
  const phone = sql.placeholder("phone");
  return {
    contact: db
      .select({ optedIn: contacts.optedIn })
      .from(contacts)
      .where(and(eq(contacts.workspaceId, workspaceId), eq(contacts.phoneNumber, phone)))
      .prepare(),
    suppression: db
      .select({ reason: suppressions.reason })
      .from(suppressions)
      .where(and(eq(suppressions.workspaceId, workspaceId), eq(suppressions.phoneNumber, phone)))
      .prepare(),
  };
});

/** Suppression reasons of many numbers of a workspace, prepared once per connection. */
const suppressionsOfMany = preparedPerConnection((db: DbOrTx) =>
  db
    .select({ phone: suppressions.phoneNumber, reason: suppressions.reason })
    .from(suppressions)
    .where(
      and(
        eq(suppressions.workspaceId, sql.placeholder("workspaceId")),
        inJsonListParam(suppressions.phoneNumber, "phones"),
      ),
    )
    .prepare(),
);

/**
 * The suppression reason of each of `phones` on the workspace's list, by number, in one statement
 * (a batch's senders: a campaign's recipients, a send batch): those not on it are absent.
 */
export async function suppressionReasons(
  db: DbOrTx,
  workspaceId: string,
  phones: Iterable<string>,
): Promise<Map<string, string>> {
  const list = [...new Set(phones)];
  if (list.length === 0) return new Map();
  const rows = await suppressionsOfMany(db).all({ workspaceId, phones: jsonList(list) });
  return new Map(rows.map((row) => [row.phone, row.reason]));
}

/** What a caller has read already of a number's send check, so `canSendTo` does not read it again. */
export interface KnownRecipient {
  /** The contact of the number (none: undefined). */
  contact: { optedIn: boolean | number } | undefined;
  /** The number's suppression reason, null when it has none; absent, `canSendTo` reads it. */
  suppression?: string | null;
}

export async function canSendTo(
  db: DbOrTx,
  workspaceId: string,
  phone: string,
  known?: KnownRecipient,
): Promise<SendPermission> {
  const statements = sendChecks(db);
  const contact = known ? known.contact : await statements.contact.get({ workspaceId, phone });
  if (contact && !contact.optedIn)
    return { allowed: false, reason: "opted_out", message: "Recipient has opted out" };
  const suppressed =
    known?.suppression === undefined
      ? await statements.suppression.get({ workspaceId, phone })
      : known.suppression === null
        ? undefined
        : { reason: known.suppression };
  if (suppressed) {
    return suppressed.reason === "opt_out"
      ? { allowed: false, reason: "opted_out", message: "Recipient has opted out" }
      : { allowed: false, reason: "suppressed", message: "Recipient is suppressed" };
  }
  return { allowed: true };
}

// ---------------------------------------------------------------------------------------------
// Suppression list CRUD (API.md §3 Suppression)
// ---------------------------------------------------------------------------------------------

export const SUPPRESSION_REASONS = ["manual", "opt_out", "carrier", "complaint"] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

export interface SuppressionJson {
  id: string;
  phone_number: string;
  reason: string;
  source: string | null;
  created_at: string;
}

export function suppressionJson(row: SuppressionRow): SuppressionJson {
  return {
    id: row.id,
    phone_number: row.phoneNumber,
    reason: row.reason,
    source: row.source,
    created_at: toIso(row.createdAt) as string,
  };
}

/**
 * Suppresses a number; a number already suppressed keeps its entry (returned with created=false).
 * For the inbound STOP path and carrier feedback as well as the API.
 */
export async function addSuppression(
  tx: DbOrTx,
  workspaceId: string,
  phone: string,
  reason: SuppressionReason,
  source: string | null = null,
  now = Date.now(),
): Promise<{ suppression: SuppressionRow; created: boolean }> {
  const e164 = normalizePhone(phone);
  if (!e164) throw invalid("phone_number must be a valid phone number");
  const existing = await tx
    .select()
    .from(suppressions)
    .where(and(eq(suppressions.workspaceId, workspaceId), eq(suppressions.phoneNumber, e164)))
    .get();
  if (existing) return { suppression: existing, created: false };
  const row: SuppressionRow = { id: newId(), workspaceId, phoneNumber: e164, reason, source, createdAt: now };
  await tx.insert(suppressions).values(row).run();
  return { suppression: row, created: true };
}

/** Removes a number's suppression entry, if any (e.g. START after STOP). */
export async function removeSuppressionByPhone(
  tx: DbOrTx,
  workspaceId: string,
  phone: string,
): Promise<boolean> {
  const e164 = normalizePhone(phone);
  if (!e164) return false;
  const result = (await tx
    .delete(suppressions)
    .where(and(eq(suppressions.workspaceId, workspaceId), eq(suppressions.phoneNumber, e164)))
    .run()) as unknown as { changes: number };
  return result.changes > 0;
}

export async function createSuppression(
  db: Db,
  workspaceId: string,
  input: { phone_number: string; reason?: SuppressionReason; source?: string | null },
  now = Date.now(),
): Promise<SuppressionRow> {
  return await db.transaction(async (tx) => {
    const { suppression, created } = await addSuppression(
      tx,
      workspaceId,
      input.phone_number,
      input.reason ?? "manual",
      input.source ?? "api",
      now,
    );
    if (!created) throw conflict("phone_number is already suppressed");
    return suppression;
  });
}

export async function getSuppression(db: DbOrTx, workspaceId: string, id: string): Promise<SuppressionRow> {
  const row = await workspaceRow(db, suppressions, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

export async function listSuppressions(
  db: DbOrTx,
  workspaceId: string,
  options: { q?: string; reason?: string; limit: number; offset: number },
): Promise<{ rows: SuppressionRow[]; total: number }> {
  const q = options.q?.trim();
  const digits = q?.replace(/[^\d+]/g, "");
  const where = and(
    eq(suppressions.workspaceId, workspaceId),
    options.reason ? eq(suppressions.reason, options.reason) : undefined,
    digits ? like(suppressions.phoneNumber, `%${digits}%`) : undefined,
  );
  const rows = await db
    .select()
    .from(suppressions)
    .where(where)
    .orderBy(desc(suppressions.createdAt), desc(suppressions.id))
    .limit(options.limit)
    .offset(options.offset)
    .all();
  const total = (await db.select({ n: count() }).from(suppressions).where(where).get())?.n ?? 0;
  return { rows, total };
}

export async function deleteSuppression(db: Db, workspaceId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    await getSuppression(tx, workspaceId, id);
    await tx
      .delete(suppressions)
      .where(and(eq(suppressions.workspaceId, workspaceId), eq(suppressions.id, id)))
      .run();
  });
}
