import { and, desc, eq, gte, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { changeWatchOf, type Db, type DbOrTx, memo, type Tx } from "../../db/client";
import { CommitCheckedCaches } from "../../db/commit-watch";
import { nullsLast, sameLowerCase } from "../../db/dialect";
import { type BatchOutcome, groupBatch } from "../../db/group-commit";
import { newestFirstPage } from "../../db/paging";
import { allOver, insertRowsReturning, preparedPerConnection } from "../../db/prepared";
import {
  agentThreads,
  type ClickRow,
  type ConversionRow,
  clicks,
  contacts,
  conversations,
  conversions,
  flowRuns,
  flowSteps,
  workspaces,
} from "../../db/schema";
import { AppError, invalid } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { normalizePhone } from "../../lib/phone";
import { toIso } from "../../lib/time";
import { emitEvent, emitEvents } from "../events";
import { clickById } from "./clicks";
import { checkCurrency, checkEventName, checkValue } from "./values";
import { visitorOf } from "./visitors";

/** Last click within this window before a conversion is credited (API.md §3 Offers & tracking). */
export const ATTRIBUTION_WINDOW_MS = 30 * 86_400_000;

export const IDENTIFIERS = ["vcx", "vid", "external_id", "phone", "email"] as const;

export interface ConversionInput {
  txn: string;
  value?: number | null;
  currency?: string | null;
  event?: string | null;
  email?: string;
  phone?: string;
  external_id?: string;
  vid?: string;
  vcx?: string;
}

/** The seed's Conversion response: the only success body without `ok`. */
export interface ConversionOutcome {
  recorded: true;
  duplicate: boolean;
  contact_id: string | null;
}

/** The conversion record (API.md §5 conversions list, `conversion.recorded` data). */
export interface ConversionJson {
  id: string;
  txn: string;
  event: string;
  value: number | null;
  currency: string;
  contact_id: string;
  campaign_id: string | null;
  offer_id: string | null;
  message_id: string | null;
  click_id: string | null;
  agent_id: string | null;
  flow_id: string | null;
  created_at: string;
}

export function conversionJson(row: ConversionRow): ConversionJson {
  return {
    id: row.id,
    txn: row.txn,
    event: row.event,
    value: row.value,
    currency: row.currency,
    contact_id: row.contactId,
    campaign_id: row.campaignId,
    offer_id: row.offerId,
    message_id: row.messageId,
    click_id: row.clickId,
    agent_id: row.agentId,
    flow_id: row.flowId,
    created_at: toIso(row.createdAt) as string,
  };
}

export const NO_IDENTIFIER = "At least one identifier is required (vcx, vid, external_id, phone, email)";
export const NO_MATCH = "No contact matched the identifiers";
export const TRACKING_DISABLED = "Conversion tracking is disabled for this workspace";
const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

const trackingFlag = preparedPerConnection((db: DbOrTx) =>
  db
    .select({ enabled: workspaces.conversionTrackingEnabled })
    .from(workspaces)
    .where(eq(workspaces.id, sql.placeholder("id")))
    .prepare(),
);

const trackingCaches = new CommitCheckedCaches<string, boolean>();
const trackingCache = (db: DbOrTx) =>
  memo(db, trackingCaches, () => trackingCaches.create(changeWatchOf(db), 10_000));

/**
 * Forgets every remembered tracking switch in this process: called by whatever changes a
 * workspace's `conversion_tracking_enabled` here (another connection's commit empties the caches
 * by itself).
 */
export function invalidateTrackingFlags() {
  trackingCaches.clear();
}

/**
 * Whether the workspace records conversions, remembered per database: read outside a transaction
 * it cost each conversion a read transaction of its own. Never stale (see CommitCheckedCache): a
 * settings change in this process empties it, and so does any commit by another connection.
 */
async function trackingEnabled(db: Db, workspaceId: string): Promise<boolean> {
  const cache = trackingCache(db);
  let enabled = cache.get(workspaceId);
  if (enabled === undefined) {
    const row = await trackingFlag(db).get({ id: workspaceId });
    // An unknown workspace is not remembered (and not refused here: the write finds it).
    if (!row) return true;
    enabled = row.enabled;
    cache.set(workspaceId, enabled);
  }
  return enabled;
}

/** 403 `Conversion tracking is disabled for this workspace` when settings turn it off. */
export async function assertTrackingEnabled(db: Db, workspaceId: string) {
  if (!(await trackingEnabled(db, workspaceId))) throw new AppError("forbidden", TRACKING_DISABLED);
}

/** Identifiers as given, checked and normalised; absent or empty ones are left out. */
export interface Identifiers {
  vcx?: string;
  vid?: string;
  external_id?: string;
  phone?: string;
  email?: string;
}

const present = (v: unknown): v is string => typeof v === "string" && v.trim() !== "";

/** Checks the identifiers' shapes (422 naming the field); phone becomes E.164. */
export function checkIdentifiers(input: Partial<Record<(typeof IDENTIFIERS)[number], unknown>>): Identifiers {
  const out: Identifiers = {};
  if (present(input.vcx)) {
    if (!isUuid(input.vcx.trim())) throw invalid("vcx must be a click id (a UUID from a tracked link)");
    out.vcx = input.vcx.trim().toLowerCase();
  }
  if (present(input.vid)) {
    if (!isUuid(input.vid.trim()))
      throw invalid("vid must be a visitor id (a UUID from the tracking script)");
    out.vid = input.vid.trim().toLowerCase();
  }
  if (present(input.external_id)) out.external_id = input.external_id;
  if (present(input.phone)) {
    const e164 = normalizePhone(input.phone);
    if (!e164) throw invalid("phone must be a valid phone number");
    out.phone = e164;
  }
  if (present(input.email)) {
    const email = input.email.trim();
    if (!EMAIL_RE.test(email)) throw invalid("email must be a valid email address");
    out.email = email;
  }
  return out;
}

const contactByExternalId = preparedPerConnection((db: DbOrTx) =>
  db
    .select({ id: contacts.id })
    .from(contacts)
    .where(
      and(eq(contacts.workspaceId, sql.placeholder("ws")), eq(contacts.externalId, sql.placeholder("value"))),
    )
    .orderBy(contacts.createdAt)
    .limit(1)
    .prepare(),
);
const contactByPhone = preparedPerConnection((db: DbOrTx) =>
  db
    .select({ id: contacts.id })
    .from(contacts)
    .where(
      and(
        eq(contacts.workspaceId, sql.placeholder("ws")),
        eq(contacts.phoneNumber, sql.placeholder("value")),
      ),
    )
    .prepare(),
);
const contactByEmail = preparedPerConnection((db: DbOrTx) =>
  db
    .select({ id: contacts.id })
    .from(contacts)
    // lower(email) is indexed (contacts_workspace_email_lower_idx).
    .where(
      and(
        eq(contacts.workspaceId, sql.placeholder("ws")),
        sameLowerCase(contacts.email, sql.placeholder("value")),
      ),
    )
    .orderBy(contacts.createdAt)
    .limit(1)
    .prepare(),
);

/**
 * The contact the identifiers name, strongest first (`vcx vid external_id phone email`): the first
 * that resolves to a contact of the workspace wins. Also answers the click the visitor evidence
 * points at (the `vcx` click, or the visitor's landing click), for attribution.
 */
export async function resolveContact(
  db: DbOrTx,
  workspaceId: string,
  ids: Identifiers,
): Promise<{ contactId: string | null; click: ClickRow | null }> {
  let evidence: ClickRow | null = null;
  if (ids.vcx) {
    const click = await clickById(db, ids.vcx);
    if (click && click.workspaceId === workspaceId) {
      evidence = click;
      if (click.contactId) return { contactId: click.contactId, click };
    }
  }
  if (ids.vid) {
    const visitor = await visitorOf(db, workspaceId, ids.vid);
    if (visitor) {
      const click = visitor.clickId ? await clickById(db, visitor.clickId) : undefined;
      if (click && click.workspaceId === workspaceId) evidence ??= click;
      if (visitor.contactId) return { contactId: visitor.contactId, click: evidence };
    }
  }
  const lookups: [string | undefined, typeof contactByPhone][] = [
    [ids.external_id, contactByExternalId],
    [ids.phone, contactByPhone],
    [ids.email, contactByEmail],
  ];
  for (const [value, lookup] of lookups) {
    if (value === undefined) continue;
    const found = await lookup(db).get({ ws: workspaceId, value });
    if (found) return { contactId: found.id, click: evidence };
  }
  return { contactId: null, click: evidence };
}

/**
 * A contact's rows of the workspace since the attribution window's start: placeholders `ws`,
 * `contact` and `since`, for the last-click and last-touch lookups.
 */
const inContactWindow = (workspaceId: SQLiteColumn, contactId: SQLiteColumn, at: SQLiteColumn) =>
  and(
    eq(workspaceId, sql.placeholder("ws")),
    eq(contactId, sql.placeholder("contact")),
    gte(at, sql.placeholder("since")),
  );

const latestClickOf = preparedPerConnection((db: DbOrTx) =>
  db
    .select()
    .from(clicks)
    .where(inContactWindow(clicks.workspaceId, clicks.contactId, clicks.createdAt))
    .orderBy(desc(clicks.createdAt))
    .limit(1)
    .prepare(),
);

/**
 * Last click within 30 days: the contact's latest click, or the click the visitor came from
 * when that one is later (a generic offer link knows no contact until the visitor is identified).
 */
export async function attributedClick(
  db: DbOrTx,
  workspaceId: string,
  contactId: string,
  evidence: ClickRow | null,
  now: number,
): Promise<ClickRow | null> {
  const since = now - ATTRIBUTION_WINDOW_MS;
  const latest = (await latestClickOf(db).get({ ws: workspaceId, contact: contactId, since })) ?? null;
  const candidate =
    evidence &&
    evidence.createdAt >= since &&
    evidence.createdAt <= now &&
    (evidence.contactId ?? contactId) === contactId
      ? evidence
      : null;
  if (!latest) return candidate;
  if (!candidate) return latest;
  return candidate.createdAt > latest.createdAt ? candidate : latest;
}

/** The agent that last wrote to the contact in the window (placeholders of `inContactWindow`). */
const agentTouch = (db: DbOrTx) =>
  db
    .select({ agentId: agentThreads.agentId })
    .from(conversations)
    .innerJoin(agentThreads, eq(agentThreads.conversationId, conversations.id))
    .where(
      inContactWindow(conversations.workspaceId, conversations.contactId, agentThreads.lastAgentMessageAt),
    )
    .orderBy(nullsLast(desc(agentThreads.lastAgentMessageAt)))
    .limit(1);

/** The flow that last messaged or called the contact in the window. */
const flowTouch = (db: DbOrTx) =>
  db
    .select({ flowId: flowRuns.flowId })
    .from(flowRuns)
    .innerJoin(flowSteps, eq(flowSteps.runId, flowRuns.id))
    .where(
      and(
        inContactWindow(flowRuns.workspaceId, flowRuns.contactId, flowSteps.enteredAt),
        sql`(${flowSteps.messageId} IS NOT NULL OR ${flowSteps.callId} IS NOT NULL)`,
      ),
    )
    .orderBy(desc(flowSteps.enteredAt))
    .limit(1);

const latestFlowTouchOf = preparedPerConnection((db: DbOrTx) => flowTouch(db).prepare());

/**
 * Both last touches in one statement, each a scalar subquery beside the workspace's row: one
 * statement a conversion instead of two.
 */
const latestTouchesOf = preparedPerConnection((db: DbOrTx) =>
  db
    .select({
      agentId: sql<string | null>`(${agentTouch(db)})`,
      flowId: sql<string | null>`(${flowTouch(db)})`,
    })
    .from(workspaces)
    .where(eq(workspaces.id, sql.placeholder("ws")))
    .prepare(),
);

/**
 * The agent and the flow a conversion is credited to, each by last touch within the attribution
 * window and independently of the click: the SMS agent that last wrote to the contact, and the
 * flow that last sent the contact a message or placed a call (API.md §6.5: agent_id, flow_id,
 * null when none). A flow that only enrolled the contact, or only waited, touched nobody.
 */
export async function attributedTouches(
  db: DbOrTx,
  workspaceId: string,
  contactId: string,
  now: number,
): Promise<{ agentId: string | null; flowId: string | null }> {
  const touches = await latestTouchesOf(db).get(touchWindow(workspaceId, contactId, now));
  return { agentId: touches?.agentId ?? null, flowId: touches?.flowId ?? null };
}

/** The flow part of `attributedTouches` alone (an agent's own conversion names its agent). */
async function attributedFlow(
  db: DbOrTx,
  workspaceId: string,
  contactId: string,
  now: number,
): Promise<string | null> {
  return (await latestFlowTouchOf(db).get(touchWindow(workspaceId, contactId, now)))?.flowId ?? null;
}

const touchWindow = (workspaceId: string, contactId: string, now: number) => ({
  ws: workspaceId,
  contact: contactId,
  since: now - ATTRIBUTION_WINDOW_MS,
});

const conversionByTxn = preparedPerConnection((db: DbOrTx) =>
  db
    .select({ contactId: conversions.contactId })
    .from(conversions)
    .where(
      and(eq(conversions.workspaceId, sql.placeholder("ws")), eq(conversions.txn, sql.placeholder("txn"))),
    )
    .prepare(),
);
/**
 * Conversion rows inserted unless their `txn` is recorded: a row left out was recorded by another
 * transaction since the caller looked (its `txn` is the idempotency key, forever).
 */
async function insertNewConversions(tx: DbOrTx, rows: ConversionRow[]): Promise<Set<string>> {
  const written = await insertRowsReturning(tx, conversions, rows, "record", {
    conflict: { target: [conversions.workspaceId, conversions.txn] },
    returning: { id: conversions.id },
  });
  return new Set(written.map((row) => row.id));
}

/**
 * `POST /v1/conversion` (seed endpoint 1, API.md §3 Conversions): validates, then in one write
 * answers a duplicate `txn` with its original contact and writes nothing, or matches the contact,
 * credits the last click within 30 days (and the agent and the flow that last touched the contact,
 * `attributedTouches`) and records the conversion with `conversion.recorded`. The conversions of
 * one event-loop turn are recorded together (groupBatch, src/db/group-commit.ts): one
 * transaction, their reads made at once and their rows written by one insert.
 */
export async function recordConversion(
  db: Db,
  workspaceId: string,
  input: ConversionInput,
  now = Date.now(),
): Promise<ConversionOutcome> {
  // 1. The body, whole, before anything is read or written.
  const txn = typeof input.txn === "string" ? input.txn.trim() : "";
  if (txn === "") throw invalid("txn is required");
  if (txn.length > 255) throw invalid("txn is too long (max 255)");
  // An optional field sent as null is absent.
  const event = input.event === undefined || input.event === null ? "purchase" : checkEventName(input.event);
  const value = input.value === undefined || input.value === null ? null : checkValue(input.value, "value");
  const currency =
    input.currency === undefined || input.currency === null
      ? "USD"
      : checkCurrency(input.currency, "currency");
  const ids = checkIdentifiers(input);
  if (Object.keys(ids).length === 0) throw invalid(NO_IDENTIFIER);
  const request: ConversionRequest = { workspaceId, txn, event, value, currency, ids, now };
  return await groupBatch(db, "conversions.record", request, recordConversions);
}

/** A checked `POST /v1/conversion`, waiting for its group. */
interface ConversionRequest {
  workspaceId: string;
  txn: string;
  event: string;
  value: number | null;
  currency: string;
  ids: Identifiers;
  now: number;
}

const duplicateOf = (contactId: string): BatchOutcome<ConversionOutcome> => ({
  ok: true,
  value: { recorded: true, duplicate: true, contact_id: contactId },
});

/**
 * The conversions of a group, answered in order as if recorded one after another. Each step's
 * reads are made for every conversion at once (on PostgreSQL the group's statements go out
 * together, a few round trips for the whole group instead of a few per conversion):
 *   1. `txn` is the idempotency key, forever: one already recorded is a duplicate and writes
 *      nothing, and so is a second conversion of the same `txn` in this group. The contact,
 *      strongest identifier first; never recorded against nobody (422).
 *   2. Attribution: the last click, agent and flow (`attributedClick`, `attributedTouches`).
 *   3. The rows, in one insert that leaves out a `txn` another transaction recorded meanwhile
 *      (that conversion answers as the duplicate it is), then `conversion.recorded` for each row
 *      written.
 */
async function recordConversions(
  tx: Tx,
  requests: ConversionRequest[],
): Promise<BatchOutcome<ConversionOutcome>[]> {
  const found = await allOver(
    requests.map(({ workspaceId, txn, ids }) =>
      allOver([conversionByTxn(tx).get({ ws: workspaceId, txn }), resolveContact(tx, workspaceId, ids)]),
    ),
  );
  const outcomes: BatchOutcome<ConversionOutcome>[] = new Array(requests.length);
  const recording = new Map<string, number>(); // workspace and txn → the request recording it
  const recorded: { at: number; contactId: string; evidence: ClickRow | null }[] = [];
  const repeats: { at: number; first: number }[] = [];
  for (const [at, request] of requests.entries()) {
    const [existing, { contactId, click: evidence }] = found[at];
    const key = `${request.workspaceId} ${request.txn}`;
    const first = recording.get(key);
    if (existing) outcomes[at] = duplicateOf(existing.contactId);
    else if (first !== undefined) repeats.push({ at, first });
    else if (!contactId) outcomes[at] = { ok: false, error: invalid(NO_MATCH) };
    else {
      recording.set(key, at);
      recorded.push({ at, contactId, evidence });
    }
  }
  const credited = await allOver(
    recorded.map(({ at, contactId, evidence }) => {
      const { workspaceId, now } = requests[at];
      return allOver([
        attributedClick(tx, workspaceId, contactId, evidence, now),
        attributedTouches(tx, workspaceId, contactId, now),
      ]);
    }),
  );
  const rows = recorded.map(({ at, contactId }, n): ConversionRow => {
    const { workspaceId, txn, event, value, currency, now } = requests[at];
    const [click, touches] = credited[n];
    return {
      id: newId(),
      workspaceId,
      txn,
      event,
      value,
      currency,
      contactId,
      clickId: click?.id ?? null,
      offerId: click?.offerId ?? null,
      campaignId: click?.campaignId ?? null,
      messageId: click?.messageId ?? null,
      numberId: click?.numberId ?? null,
      agentId: touches.agentId,
      flowId: touches.flowId,
      createdAt: now,
    };
  });
  const written = await insertNewConversions(tx, rows);
  const fresh: ConversionRow[] = [];
  for (const [n, row] of rows.entries()) {
    const { at } = recorded[n];
    if (!written.has(row.id)) {
      // Recorded by another transaction since this group read: its contact, as any duplicate's.
      const existing = await conversionByTxn(tx).get({ ws: row.workspaceId, txn: row.txn });
      if (!existing) throw new Error(`conversion ${row.txn} was neither written nor found`);
      outcomes[at] = duplicateOf(existing.contactId);
      continue;
    }
    outcomes[at] = { ok: true, value: { recorded: true, duplicate: false, contact_id: row.contactId } };
    fresh.push(row);
  }
  // A repeat of a txn this batch recorded answers the contact its first got (its own, or that of
  // the conversion another transaction recorded first).
  for (const { at, first } of repeats) {
    const answer = outcomes[first];
    outcomes[at] = answer.ok ? duplicateOf(answer.value.contact_id as string) : answer;
  }
  for (const [workspaceId, ofWorkspace] of Map.groupBy(fresh, (row) => row.workspaceId))
    await emitEvents(
      tx,
      workspaceId,
      "conversion.recorded",
      ofWorkspace.map(conversionJson),
      Math.max(...ofWorkspace.map((row) => row.createdAt)),
    );
  return outcomes;
}

export async function listConversions(
  db: DbOrTx,
  workspaceId: string,
  filter: { contact_id?: string; campaign_id?: string; offer_id?: string; event?: string },
  page: { limit: number; offset: number },
): Promise<{ conversions: ConversionJson[]; total: number }> {
  const where = and(
    eq(conversions.workspaceId, workspaceId),
    filter.contact_id !== undefined ? eq(conversions.contactId, filter.contact_id) : undefined,
    filter.campaign_id !== undefined ? eq(conversions.campaignId, filter.campaign_id) : undefined,
    filter.offer_id !== undefined ? eq(conversions.offerId, filter.offer_id) : undefined,
    filter.event !== undefined ? eq(conversions.event, filter.event) : undefined,
  );
  const { rows, total } = await newestFirstPage(
    db,
    conversions,
    where,
    [conversions.createdAt, conversions.id],
    page,
  );
  return { conversions: rows.map(conversionJson), total };
}

/**
 * A conversion an SMS agent records (API.md §6.3: a conversion keyword, or the goal reached with
 * `conversion_on_agent_goal`): `event: lead`, attributed to the agent and to the contact's last
 * click as any conversion is, once per `txn` (`agent:<conversation id>:<keyword|goal>`). Nothing
 * is recorded while the workspace's conversion tracking is off. Runs in the caller's transaction.
 */
export async function recordAgentConversion(
  tx: DbOrTx,
  input: { workspaceId: string; contactId: string; agentId: string; txn: string; now: number },
): Promise<boolean> {
  const { workspaceId, contactId, txn, now } = input;
  if (!(await trackingFlag(tx).get({ id: workspaceId }))?.enabled) return false;
  if (await conversionByTxn(tx).get({ ws: workspaceId, txn })) return false;
  const click = await attributedClick(tx, workspaceId, contactId, null, now);
  const row: ConversionRow = {
    id: newId(),
    workspaceId,
    txn,
    event: "lead",
    value: null,
    currency: "USD",
    contactId,
    clickId: click?.id ?? null,
    offerId: click?.offerId ?? null,
    campaignId: click?.campaignId ?? null,
    messageId: click?.messageId ?? null,
    numberId: click?.numberId ?? null,
    agentId: input.agentId,
    flowId: await attributedFlow(tx, workspaceId, contactId, now),
    createdAt: now,
  };
  // Recorded by another transaction since it was looked for (the user posting this txn): once.
  if (!(await insertNewConversions(tx, [row])).has(row.id)) return false;
  await emitEvent(tx, workspaceId, "conversion.recorded", conversionJson(row), now);
  return true;
}
