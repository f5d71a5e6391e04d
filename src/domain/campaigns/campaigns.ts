import { and, count, eq, inArray, isNull } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { containsText } from "../../db/dialect";
import { newestFirstPage } from "../../db/paging";
import {
  type CampaignAudience,
  type CampaignMessage,
  type CampaignQuietHours,
  type CampaignRow,
  campaignRecipients,
  campaigns,
  contacts,
  lists,
  messages,
  NUMBER_IS_ACTIVE,
  numbers,
  pools,
  segments,
} from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { enqueueJob } from "../../jobs/queue";
import { conflict, invalid, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { normalizePhone } from "../../lib/phone";
import { parseIsoDate, toIso } from "../../lib/time";
import { agentForReference } from "../agents/agents";
import { checkLinkDomainReference } from "../attribution/link-domains";
import { offerExists } from "../attribution/offers";
import { campaignCallStats, checkSay } from "../calls/calls";
import { emitEvent } from "../events";
import { MAX_BODY_LENGTH } from "../messaging/message-json";
import { audienceHasAnyone } from "./audience";
import { checkMergeFields } from "./merge";
import { type CampaignStats, campaignStats } from "./stats";

export const CAMPAIGN_TYPES = ["sms", "voice"] as const;
export const CAMPAIGN_STATUSES = ["draft", "scheduled", "active", "paused", "completed", "canceled"] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
const MAX_VARIANTS = 10;

/** The Campaign record (API.md §3 Campaigns); also the data of `campaign.*` events. */
export interface CampaignJson {
  id: string;
  name: string;
  campaign_type: string;
  status: string;
  audience: CampaignAudience;
  message: CampaignMessage | null;
  say: string | null;
  agent_id: string | null;
  from: string | null;
  pool_id: string | null;
  offer_id: string | null;
  link_domain_id: string | null;
  send_at: string | null;
  quiet_hours: CampaignQuietHours | null;
  throttle_per_minute: number | null;
  created_at: string;
  updated_at: string;
  launched_at: string | null;
  completed_at: string | null;
  canceled_at: string | null;
  stats: CampaignStats;
}

export async function campaignJson(db: DbOrTx, row: CampaignRow): Promise<CampaignJson> {
  return {
    id: row.id,
    name: row.name,
    campaign_type: row.campaignType,
    status: row.status,
    audience: row.audience,
    message: row.message,
    say: row.say,
    agent_id: row.agentId,
    from: row.fromNumber,
    pool_id: row.poolId,
    offer_id: row.offerId,
    link_domain_id: row.linkDomainId,
    send_at: toIso(row.sendAt),
    quiet_hours: row.quietHours,
    throttle_per_minute: row.throttlePerMinute,
    created_at: toIso(row.createdAt) as string,
    updated_at: toIso(row.updatedAt) as string,
    launched_at: toIso(row.launchedAt),
    completed_at: toIso(row.completedAt),
    canceled_at: toIso(row.canceledAt),
    stats:
      row.campaignType === "voice"
        ? { ...(await campaignStats(db, row)), calls: await campaignCallStats(db, row.workspaceId, row.id) }
        : await campaignStats(db, row),
  };
}

// ---------------------------------------------------------------------------------------------
// Input and validation.

export interface CampaignInput {
  name?: string;
  campaign_type?: string;
  audience?: Partial<CampaignAudience>;
  message?: {
    body?: string | null;
    variants?: { name: string; body: string; weight: number }[] | null;
  } | null;
  say?: string | null;
  agent_id?: string | null;
  from?: string | null;
  pool_id?: string | null;
  offer_id?: string | null;
  link_domain_id?: string | null;
  send_at?: string | null;
  /** Checked here, not by the schema: see parseQuietHours. */
  quiet_hours?: { enabled?: unknown; start_hour?: unknown; end_hour?: unknown } | null;
  throttle_per_minute?: number | null;
}

/** The stored configuration a campaign is validated and run with. */
type CampaignConfig = Pick<
  CampaignRow,
  | "name"
  | "campaignType"
  | "audience"
  | "message"
  | "say"
  | "agentId"
  | "fromNumber"
  | "poolId"
  | "offerId"
  | "linkDomainId"
  | "sendAt"
  | "quietHours"
  | "throttlePerMinute"
>;

const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/** Checks the fields present in `input` on their own (no database) and turns them into columns. */
function parseInput(input: CampaignInput, now: number): Partial<CampaignConfig> {
  const out: Partial<CampaignConfig> = {};
  if (input.name !== undefined) {
    if (input.name.trim() === "") throw invalid("name is required");
    out.name = input.name;
  }
  if (input.campaign_type !== undefined) out.campaignType = input.campaign_type;
  if (input.audience !== undefined) {
    const a = input.audience;
    out.audience = {
      list_ids: a.list_ids ?? [],
      segment_ids: a.segment_ids ?? [],
      contact_ids: a.contact_ids ?? [],
      exclude_list_ids: a.exclude_list_ids ?? [],
    };
  }
  if (input.message !== undefined) {
    if (input.message === null) out.message = null;
    else {
      const body = input.message.body ?? null;
      const variants = input.message.variants ?? null;
      if (body !== null) checkText(body, "message.body");
      if (variants !== null) {
        if (variants.length === 0) throw invalid("message.variants must have at least 1 item");
        if (variants.length > MAX_VARIANTS)
          throw invalid(`message.variants has too many items (max ${MAX_VARIANTS})`);
        const names = new Set<string>();
        variants.forEach((v, i) => {
          const at = `message.variants[${i}]`;
          if (v.name.trim() === "") throw invalid(`${at}.name is required`);
          if (names.has(v.name)) throw invalid(`${at}.name is used twice`);
          names.add(v.name);
          checkText(v.body, `${at}.body`);
          if (!Number.isFinite(v.weight) || v.weight <= 0)
            throw invalid(`${at}.weight must be a positive number`);
        });
      }
      out.message = {
        body,
        variants: variants?.map((v) => ({ name: v.name, body: v.body, weight: v.weight })) ?? null,
      };
    }
  }
  if (input.say !== undefined) out.say = input.say;
  if (input.agent_id !== undefined) out.agentId = input.agent_id;
  if (input.from !== undefined) {
    if (input.from === null) out.fromNumber = null;
    else {
      const from = normalizePhone(input.from);
      if (!from) throw invalid("from must be a valid phone number");
      out.fromNumber = from;
    }
  }
  if (input.pool_id !== undefined) out.poolId = input.pool_id;
  if (input.offer_id !== undefined) out.offerId = input.offer_id;
  if (input.link_domain_id !== undefined) out.linkDomainId = input.link_domain_id;
  if (input.send_at !== undefined) {
    if (input.send_at === null) out.sendAt = null;
    else {
      // A date-time with its zone, on a day that exists.
      const at = ISO_RE.test(input.send_at) ? parseIsoDate(input.send_at) : Number.NaN;
      if (Number.isNaN(at))
        throw invalid("send_at must be an ISO 8601 timestamp (e.g. 2026-11-21T21:06:45Z)");
      if (at <= now) throw invalid("send_at must be in the future");
      out.sendAt = at;
    }
  }
  if (input.quiet_hours !== undefined) out.quietHours = parseQuietHours(input.quiet_hours);
  if (input.throttle_per_minute !== undefined) out.throttlePerMinute = input.throttle_per_minute;
  return out;
}

function parseQuietHours(input: CampaignInput["quiet_hours"]): CampaignQuietHours | null {
  if (input === null || input === undefined) return null;
  const hour = (value: unknown, name: string, fallback: number) => {
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 23)
      throw invalid(`quiet_hours.${name} must be an integer between 0 and 23`);
    return value;
  };
  if (input.enabled !== undefined && typeof input.enabled !== "boolean")
    throw invalid("quiet_hours.enabled must be a boolean");
  return {
    enabled: (input.enabled as boolean | undefined) ?? true,
    start_hour: hour(input.start_hour, "start_hour", 21),
    end_hour: hour(input.end_hour, "end_hour", 8),
  };
}

function checkText(body: string, path: string) {
  if (body.trim() === "") throw invalid(`${path} is required`);
  if (body.length > MAX_BODY_LENGTH) throw invalid(`${path} is too long (max ${MAX_BODY_LENGTH})`);
}

/**
 * The ids a configuration names are the workspace's (422 naming the path): the audience's, the
 * offer's and the pool's. Checked for a PATCH body alone before the campaign's state (API.md §1:
 * body validation, then lookup, then state), and for the whole configuration by `checkConfig`.
 */
async function checkReferences(
  db: DbOrTx,
  workspaceId: string,
  config: Partial<Pick<CampaignConfig, "audience" | "offerId" | "poolId">>,
) {
  const a = config.audience;
  if (a) {
    await checkIds(db, workspaceId, lists, a.list_ids, "audience.list_ids");
    await checkIds(db, workspaceId, segments, a.segment_ids, "audience.segment_ids");
    await checkIds(db, workspaceId, contacts, a.contact_ids, "audience.contact_ids");
    await checkIds(db, workspaceId, lists, a.exclude_list_ids, "audience.exclude_list_ids");
  }
  if (config.offerId && !(await offerExists(db, workspaceId, config.offerId)))
    throw invalid("offer_id does not exist");
  if (config.poolId) await checkIds(db, workspaceId, pools, [config.poolId], "pool_id", false);
}

/**
 * Checks a whole configuration against the workspace: the content the campaign type needs, merge
 * fields, and that every id in it is the workspace's (422 naming the path:
 * `audience.list_ids[0] does not exist`). An SMS campaign's agent answers the replies (an SMS agent);
 * a voice campaign's agent makes the calls (a voice agent).
 */
async function checkConfig(db: DbOrTx, workspaceId: string, config: CampaignConfig) {
  if (config.campaignType === "sms") {
    const message = config.message;
    if (!message || (message.body === null && message.variants === null))
      throw invalid("message.body is required");
    const hasOffer = config.offerId !== null;
    if (message.body !== null) checkMergeFields(message.body, "message.body", hasOffer);
    message.variants?.forEach((v, i) => {
      checkMergeFields(v.body, `message.variants[${i}].body`, hasOffer);
    });
  } else if (config.say === null && config.agentId === null) {
    throw invalid("say or agent_id is required for a voice campaign");
  } else if (config.say !== null && config.agentId !== null) {
    throw invalid("say and agent_id cannot both be set for a voice campaign: choose one");
  } else if (config.say !== null) {
    checkSay(config.say);
  }
  await checkReferences(db, workspaceId, config);
  if (config.agentId !== null) {
    const agent = await agentForReference(db, workspaceId, config.agentId, "agent_id");
    if (agent.channel !== config.campaignType)
      throw invalid(`agent_id must be ${config.campaignType === "sms" ? "an SMS" : "a voice"} agent`);
  }
  if (config.fromNumber !== null && config.poolId !== null)
    throw invalid("from and pool_id cannot both be set: give one");
  if (config.fromNumber !== null) {
    const found = await db
      .select({ id: numbers.id, voiceCapable: numbers.voiceCapable })
      .from(numbers)
      .where(
        and(eq(numbers.workspaceId, workspaceId), eq(numbers.number, config.fromNumber), NUMBER_IS_ACTIVE),
      )
      .get();
    if (!found) throw invalid("from is not a number of this workspace");
    if (config.campaignType === "voice" && !found.voiceCapable)
      throw invalid("from cannot place calls: the number has no voice capability");
  }
  if (config.poolId !== null) {
    const active = await db
      .select({ n: count() })
      .from(numbers)
      .where(
        and(
          eq(numbers.workspaceId, workspaceId),
          eq(numbers.poolId, config.poolId),
          NUMBER_IS_ACTIVE,
          config.campaignType === "voice" ? eq(numbers.voiceCapable, true) : undefined,
        ),
      )
      .get();
    if (!active?.n)
      throw invalid(
        config.campaignType === "voice"
          ? "pool_id has no active voice-capable numbers"
          : "pool_id has no active numbers",
      );
  }
}

type IdTable = typeof lists | typeof segments | typeof contacts | typeof pools;

/** 422 `<path>[i] does not exist` for the first id that is not one of the workspace's rows. */
async function checkIds(
  db: DbOrTx,
  workspaceId: string,
  table: IdTable,
  ids: string[],
  path: string,
  indexed = true,
) {
  if (ids.length === 0) return;
  const name = (i: number) => (indexed ? `${path}[${i}]` : path);
  const wellFormed = ids.filter(isUuid);
  const found = new Set(
    wellFormed.length
      ? (
          await db
            .select({ id: table.id })
            .from(table)
            .where(and(eq(table.workspaceId, workspaceId), inArray(table.id, wellFormed)))
            .all()
        ).map((row) => row.id)
      : [],
  );
  ids.forEach((id, i) => {
    if (!found.has(id)) throw invalid(`${name(i)} does not exist`);
  });
}

// ---------------------------------------------------------------------------------------------
// CRUD.

export async function findCampaign(db: DbOrTx, workspaceId: string, id: string): Promise<CampaignRow> {
  const row = await workspaceRow(db, campaigns, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

/** POST /v1/campaigns: a draft, validated whole (every id checked) in one transaction. */
export async function createCampaign(
  db: Db,
  workspaceId: string,
  input: CampaignInput,
  now = Date.now(),
): Promise<CampaignJson> {
  const parsed = parseInput(input, now);
  if (parsed.name === undefined) throw invalid("name is required");
  const config: CampaignConfig = {
    name: parsed.name,
    campaignType: parsed.campaignType ?? "sms",
    audience: parsed.audience ?? { list_ids: [], segment_ids: [], contact_ids: [], exclude_list_ids: [] },
    message: parsed.message ?? null,
    say: parsed.say ?? null,
    agentId: parsed.agentId ?? null,
    fromNumber: parsed.fromNumber ?? null,
    poolId: parsed.poolId ?? null,
    offerId: parsed.offerId ?? null,
    linkDomainId: parsed.linkDomainId ?? null,
    sendAt: parsed.sendAt ?? null,
    quietHours: parsed.quietHours ?? null,
    throttlePerMinute: parsed.throttlePerMinute ?? null,
  };
  return await db.transaction(async (tx) => {
    await checkConfig(tx, workspaceId, config);
    await checkLinkDomainReference(tx, workspaceId, config.linkDomainId);
    const row: CampaignRow = {
      id: newId(),
      workspaceId,
      ...config,
      status: "draft",
      createdAt: now,
      updatedAt: now,
      launchedAt: null,
      completedAt: null,
      canceledAt: null,
      resolvedAt: null,
      dispatchGeneration: 0,
      throttleWindowStart: null,
      throttleWindowCount: 0,
    };
    await tx.insert(campaigns).values(row).run();
    return await campaignJson(tx, row);
  });
}

export async function getCampaign(db: DbOrTx, workspaceId: string, id: string): Promise<CampaignJson> {
  return await campaignJson(db, await findCampaign(db, workspaceId, id));
}

/** Campaigns newest first, filtered by `status` and a name search `q`. */
export async function listCampaigns(
  db: DbOrTx,
  workspaceId: string,
  filters: { status?: string; q?: string },
  page: { limit: number; offset: number },
): Promise<{ campaigns: CampaignJson[]; total: number }> {
  const conditions = [eq(campaigns.workspaceId, workspaceId), containsText(campaigns.name, filters.q)];
  if (filters.status !== undefined) {
    if (!(CAMPAIGN_STATUSES as readonly string[]).includes(filters.status))
      throw invalid(`status must be one of ${CAMPAIGN_STATUSES.join(", ")}`);
    conditions.push(eq(campaigns.status, filters.status));
  }
  const where = and(...conditions);
  const { rows, total } = await newestFirstPage(
    db,
    campaigns,
    where,
    [campaigns.createdAt, campaigns.id],
    page,
  );
  const items: CampaignJson[] = [];
  for (const row of rows) items.push(await campaignJson(db, row));
  return { campaigns: items, total };
}

/** PATCH /v1/campaigns/{id}: while draft or scheduled; the result is validated whole. */
export async function updateCampaign(
  db: Db,
  workspaceId: string,
  id: string,
  input: CampaignInput,
  now = Date.now(),
): Promise<CampaignJson> {
  const parsed = parseInput(input, now);
  return await db.transaction(async (tx) => {
    const row = await findCampaign(tx, workspaceId, id);
    await checkReferences(tx, workspaceId, parsed);
    // Only a domain the body names is checked: one named earlier and deleted since falls back.
    await checkLinkDomainReference(tx, workspaceId, parsed.linkDomainId);
    if (row.status !== "draft" && row.status !== "scheduled")
      throw conflict(`Campaign is ${row.status}: only a draft or scheduled campaign can be changed`);
    const next: CampaignRow = { ...row, ...parsed, updatedAt: now };
    if (row.status === "scheduled" && next.sendAt === null)
      throw invalid("send_at is required while the campaign is scheduled (cancel it instead)");
    await checkConfig(tx, workspaceId, next);
    await tx
      .update(campaigns)
      .set({ ...parsed, updatedAt: now })
      .where(eq(campaigns.id, row.id))
      .run();
    // A scheduled campaign moved to another time starts then (the start job re-reads send_at).
    if (row.status === "scheduled" && next.sendAt !== row.sendAt && next.sendAt !== null)
      await enqueueJob(
        tx,
        "campaigns.start",
        { campaign_id: row.id },
        { workspaceId, runAt: next.sendAt, now },
      );
    return await campaignJson(tx, next);
  });
}

/** DELETE /v1/campaigns/{id}: drafts only (a launched campaign keeps its record and messages). */
export async function deleteCampaign(db: Db, workspaceId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await findCampaign(tx, workspaceId, id);
    if (row.status !== "draft") throw conflict(`Campaign is ${row.status}: only a draft can be deleted`);
    await tx.delete(campaigns).where(eq(campaigns.id, row.id)).run();
  });
}

// ---------------------------------------------------------------------------------------------
// Control: launch, pause, resume, cancel.

/**
 * POST /v1/campaigns/{id}/launch: a draft whose `send_at` is in the future becomes `scheduled`
 * (a start job waits for it); otherwise it starts now. The configuration is checked again (ids
 * may have been deleted since) and an empty audience is refused (422); a refused launch changes
 * nothing.
 */
export async function launchCampaign(
  db: Db,
  workspaceId: string,
  id: string,
  now = Date.now(),
): Promise<CampaignJson> {
  return await db.transaction(async (tx) => {
    const row = await findCampaign(tx, workspaceId, id);
    if (row.status !== "draft") throw conflict(`Campaign is ${row.status}: only a draft can be launched`);
    await checkConfig(tx, workspaceId, row);
    if (!(await audienceHasAnyone(tx, workspaceId, row.audience, now)))
      throw invalid("audience is empty: no contact is in its lists, segments or contact_ids");
    if (row.sendAt !== null && row.sendAt > now) {
      await tx
        .update(campaigns)
        .set({ status: "scheduled", updatedAt: now })
        .where(eq(campaigns.id, row.id))
        .run();
      await enqueueJob(
        tx,
        "campaigns.start",
        { campaign_id: row.id },
        { workspaceId, runAt: row.sendAt, now },
      );
      return await campaignJson(tx, { ...row, status: "scheduled", updatedAt: now });
    }
    return await campaignJson(tx, await startCampaign(tx, row, now));
  });
}

/**
 * Makes a campaign active now: resolution of its audience and its dispatcher start as jobs, and
 * `campaign.started` is emitted, all in the caller's transaction.
 */
export async function startCampaign(tx: DbOrTx, row: CampaignRow, now: number): Promise<CampaignRow> {
  const next: CampaignRow = {
    ...row,
    status: "active",
    launchedAt: now,
    updatedAt: now,
    dispatchGeneration: row.dispatchGeneration + 1,
  };
  await tx
    .update(campaigns)
    .set({
      status: next.status,
      launchedAt: now,
      updatedAt: now,
      dispatchGeneration: next.dispatchGeneration,
    })
    .where(eq(campaigns.id, row.id))
    .run();
  const options = { workspaceId: row.workspaceId, now };
  await enqueueJob(tx, "campaigns.resolve", { campaign_id: row.id, after: null }, options);
  await enqueueJob(
    tx,
    "campaigns.dispatch",
    { campaign_id: row.id, generation: next.dispatchGeneration },
    options,
  );
  await emitEvent(tx, row.workspaceId, "campaign.started", await campaignJson(tx, next), now);
  return next;
}

/** POST /v1/campaigns/{id}/pause: active → paused; the dispatcher hands nothing more off. */
export async function pauseCampaign(
  db: Db,
  workspaceId: string,
  id: string,
  now = Date.now(),
): Promise<CampaignJson> {
  return await db.transaction(async (tx) => {
    const row = await findCampaign(tx, workspaceId, id);
    if (row.status !== "active")
      throw conflict(`Campaign is ${row.status}: only an active campaign can be paused`);
    await tx
      .update(campaigns)
      .set({ status: "paused", updatedAt: now })
      .where(eq(campaigns.id, row.id))
      .run();
    return await campaignJson(tx, { ...row, status: "paused", updatedAt: now });
  });
}

/** POST /v1/campaigns/{id}/resume: paused → active, with a new dispatcher (older ones stop). */
export async function resumeCampaign(
  db: Db,
  workspaceId: string,
  id: string,
  now = Date.now(),
): Promise<CampaignJson> {
  return await db.transaction(async (tx) => {
    const row = await findCampaign(tx, workspaceId, id);
    if (row.status !== "paused")
      throw conflict(`Campaign is ${row.status}: only a paused campaign can be resumed`);
    const generation = row.dispatchGeneration + 1;
    await tx
      .update(campaigns)
      .set({ status: "active", updatedAt: now, dispatchGeneration: generation })
      .where(eq(campaigns.id, row.id))
      .run();
    await enqueueJob(tx, "campaigns.dispatch", { campaign_id: row.id, generation }, { workspaceId, now });
    return await campaignJson(tx, {
      ...row,
      status: "active",
      updatedAt: now,
      dispatchGeneration: generation,
    });
  });
}

/**
 * POST /v1/campaigns/{id}/cancel: any non-final state → canceled, for good. Messages already
 * handed to the send queue still go out; recipients not handed off stay `queued`/`deferred` and
 * never will be; the deferred ones' waiting messages (QUEUED with send_at) become FAILED with
 * error_code `campaign_canceled`, in one statement (no `message.failed` per message), and their
 * recipients follow them: `failed`, reason `campaign_canceled`, no `send_at`.
 */
export async function cancelCampaign(
  db: Db,
  workspaceId: string,
  id: string,
  now = Date.now(),
): Promise<CampaignJson> {
  return await db.transaction(async (tx) => {
    const row = await findCampaign(tx, workspaceId, id);
    if (row.status === "completed" || row.status === "canceled")
      throw conflict(
        `Campaign is ${row.status}: only a draft, scheduled, active or paused campaign can be canceled`,
      );
    await tx
      .update(campaigns)
      .set({ status: "canceled", canceledAt: now, updatedAt: now })
      .where(eq(campaigns.id, row.id))
      .run();
    await tx
      .update(messages)
      .set({
        status: "FAILED",
        errorCode: "campaign_canceled",
        errorMessage: "Campaign canceled",
        updatedAt: now,
      })
      .where(
        and(
          inArray(
            messages.id,
            tx
              .select({ id: campaignRecipients.messageId })
              .from(campaignRecipients)
              .where(
                and(eq(campaignRecipients.campaignId, row.id), eq(campaignRecipients.outcome, "deferred")),
              ),
          ),
          eq(messages.status, "QUEUED"),
          isNull(messages.handoffStartedAt),
        ),
      )
      .run();
    await tx
      .update(campaignRecipients)
      .set({ outcome: "failed", reason: "campaign_canceled", sendAt: null })
      .where(
        and(
          eq(campaignRecipients.campaignId, row.id),
          eq(campaignRecipients.outcome, "deferred"),
          inArray(
            campaignRecipients.messageId,
            tx
              .select({ id: messages.id })
              .from(messages)
              .where(
                and(
                  eq(messages.workspaceId, row.workspaceId),
                  eq(messages.campaignId, row.id),
                  eq(messages.status, "FAILED"),
                  eq(messages.errorCode, "campaign_canceled"),
                ),
              ),
          ),
        ),
      )
      .run();
    return await campaignJson(tx, { ...row, status: "canceled", canceledAt: now, updatedAt: now });
  });
}
