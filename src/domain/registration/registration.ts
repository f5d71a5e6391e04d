/**
 * 10DLC brand and campaign registration and short-code requests (API.md §3 10DLC, Short codes).
 * Records are checked with the registry's rules (src/compliance/registration.ts) and reviewed by
 * the carrier adapter's registry as a durable job (`registry.review`) a review's time after each
 * submission: the simulated carrier decides deterministically; with a carrier that registers in
 * its own console (Twilio) these routes answer 501. Every status change emits its event.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { RegistryReviewer } from "../../carriers/carrier";
import {
  type BrandInput,
  checkBrand,
  checkShortCodeRequest,
  checkTendlcCampaign,
  type PreflightIssue,
  preflight,
  preflightPassed,
  type TendlcCampaignInput,
} from "../../compliance/registration";
import type { Db, DbOrTx } from "../../db/client";
import { newestFirstPage } from "../../db/paging";
import {
  linkDomains,
  NUMBER_IS_ACTIVE,
  numbers,
  type ShortCodeRequestRow,
  shortCodeRequests,
  type TendlcBrandRow,
  type TendlcCampaignRow,
  tendlcBrands,
  tendlcCampaignNumbers,
  tendlcCampaigns,
  workspaces,
} from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import type { JobContext, JobPayloads } from "../../jobs/catalog";
import { RescheduleJob } from "../../jobs/catalog";
import { enqueueJob } from "../../jobs/queue";
import { AppError, conflict, invalid, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { toIso } from "../../lib/time";
import { emitEvent } from "../events";

const TWILIO_CONSOLE =
  "Not implemented yet in this version with CARRIER=twilio: register 10DLC brands and campaigns and request short codes in Twilio's console (Trust Hub); this API registers with the simulated carrier";

const registries = new WeakMap<Db, RegistryReviewer | null>();

/** Wires registration to the carrier's registry at boot (null: the provider's console). */
export function startRegistration(db: Db, registry: RegistryReviewer | null) {
  registries.set(db, registry);
}

function registryOf(db: Db): RegistryReviewer {
  const registry = registries.get(db);
  if (!registry) throw new AppError("not_implemented", TWILIO_CONSOLE);
  return registry;
}

async function scheduleReview(
  tx: DbOrTx,
  registry: RegistryReviewer,
  workspaceId: string,
  kind: JobPayloads["registry.review"]["kind"],
  id: string,
  now: number,
) {
  await enqueueJob(
    tx,
    "registry.review",
    { kind, id },
    { workspaceId, runAt: now + registry.reviewDelayMs, now },
  );
}

// ---------------------------------------------------------------------------------------------
// Brands.

export function brandJson(row: TendlcBrandRow) {
  return {
    id: row.id,
    legal_name: row.legalName,
    ein: row.ein,
    entity_type: row.entityType,
    vertical: row.vertical,
    website: row.website,
    email: row.email,
    phone: row.phone,
    address: row.address,
    status: row.status,
    failure_reasons: row.failureReasons,
    created_at: toIso(row.createdAt) as string,
    updated_at: toIso(row.updatedAt) as string,
  };
}

async function findBrand(db: DbOrTx, workspaceId: string, id: string): Promise<TendlcBrandRow> {
  const row = await workspaceRow(db, tendlcBrands, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

function brandInputOf(row: TendlcBrandRow): BrandInput {
  return {
    legal_name: row.legalName,
    ein: row.ein,
    entity_type: row.entityType as BrandInput["entity_type"],
    vertical: row.vertical as BrandInput["vertical"],
    website: row.website,
    email: row.email,
    phone: row.phone,
    address: row.address as unknown as BrandInput["address"],
  };
}

function brandColumns(input: BrandInput) {
  return {
    legalName: input.legal_name,
    ein: input.ein,
    entityType: input.entity_type,
    vertical: input.vertical,
    website: input.website ?? null,
    email: input.email,
    phone: input.phone,
    address: input.address as unknown as Record<string, string>,
  };
}

export async function createBrand(db: Db, workspaceId: string, body: unknown, now = Date.now()) {
  const registry = registryOf(db);
  const input = checkBrand(body);
  return await db.transaction(async (tx) => {
    const row: TendlcBrandRow = {
      id: newId(),
      workspaceId,
      ...brandColumns(input),
      status: "PENDING",
      failureReasons: [],
      createdAt: now,
      updatedAt: now,
      reviewedAt: null,
    };
    await tx.insert(tendlcBrands).values(row).run();
    await scheduleReview(tx, registry, workspaceId, "brand", row.id, now);
    return brandJson(row);
  });
}

/** PATCH: a VERIFIED brand cannot change (409); any other goes back to PENDING and is reviewed again. */
export async function updateBrand(db: Db, workspaceId: string, id: string, body: unknown, now = Date.now()) {
  const registry = registryOf(db);
  const patch = checkBrand(body, true);
  return await db.transaction(async (tx) => {
    const current = await findBrand(tx, workspaceId, id);
    if (current.status === "VERIFIED")
      throw conflict("Brand is VERIFIED: a verified registration cannot be edited");
    const merged = checkBrand({ ...brandInputOf(current), ...patch });
    const row: TendlcBrandRow = {
      ...current,
      ...brandColumns(merged),
      status: "PENDING",
      failureReasons: [],
      updatedAt: now,
    };
    await tx.update(tendlcBrands).set(row).where(eq(tendlcBrands.id, id)).run();
    await scheduleReview(tx, registry, workspaceId, "brand", id, now);
    return brandJson(row);
  });
}

export async function getBrand(db: DbOrTx, workspaceId: string, id: string) {
  return brandJson(await findBrand(db, workspaceId, id));
}

export async function listBrands(db: DbOrTx, workspaceId: string, page: { limit: number; offset: number }) {
  const where = eq(tendlcBrands.workspaceId, workspaceId);
  const { rows, total } = await newestFirstPage(
    db,
    tendlcBrands,
    where,
    [tendlcBrands.createdAt, tendlcBrands.id],
    page,
  );
  return {
    items: rows.map(brandJson),
    total,
  };
}

// ---------------------------------------------------------------------------------------------
// 10DLC campaigns.

export function tendlcCampaignJson(row: TendlcCampaignRow) {
  return {
    id: row.id,
    brand_id: row.brandId,
    use_case: row.useCase,
    description: row.description,
    message_flow: row.messageFlow,
    sample_messages: row.sampleMessages,
    help_message: row.helpMessage,
    optout_message: row.optoutMessage,
    has_embedded_links: row.hasEmbeddedLinks,
    has_embedded_phone: row.hasEmbeddedPhone,
    number_ids: row.numberIds,
    status: row.status,
    rejection_reasons: row.rejectionReasons,
    warnings: row.warnings as unknown as PreflightIssue[],
    created_at: toIso(row.createdAt) as string,
    updated_at: toIso(row.updatedAt) as string,
  };
}

async function findTendlcCampaign(db: DbOrTx, workspaceId: string, id: string): Promise<TendlcCampaignRow> {
  const row = await workspaceRow(db, tendlcCampaigns, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

function campaignInputOf(row: TendlcCampaignRow): TendlcCampaignInput {
  return {
    brand_id: row.brandId,
    use_case: row.useCase as TendlcCampaignInput["use_case"],
    description: row.description,
    message_flow: row.messageFlow,
    sample_messages: row.sampleMessages,
    help_message: row.helpMessage,
    optout_message: row.optoutMessage,
    has_embedded_links: row.hasEmbeddedLinks,
    has_embedded_phone: row.hasEmbeddedPhone,
    number_ids: row.numberIds,
  };
}

/** The brand and numbers a campaign names must be the workspace's (422 naming the path). */
async function checkReferences(
  tx: DbOrTx,
  workspaceId: string,
  input: TendlcCampaignInput,
): Promise<TendlcBrandRow> {
  const brand = isUuid(input.brand_id)
    ? await tx
        .select()
        .from(tendlcBrands)
        .where(and(eq(tendlcBrands.workspaceId, workspaceId), eq(tendlcBrands.id, input.brand_id)))
        .get()
    : undefined;
  if (!brand) throw invalid("brand_id does not exist");
  const wanted = input.number_ids.filter(isUuid);
  const found = new Set(
    wanted.length
      ? (
          await tx
            .select({ id: numbers.id })
            .from(numbers)
            .where(and(eq(numbers.workspaceId, workspaceId), NUMBER_IS_ACTIVE, inArray(numbers.id, wanted)))
            .all()
        ).map((r) => r.id)
      : [],
  );
  const missing = input.number_ids.findIndex((id) => !found.has(id));
  if (missing >= 0) throw invalid(`number_ids[${missing}] does not exist`);
  return brand;
}

/** The workspace's verified link domains: sample links on them are the campaign's own links. */
async function verifiedLinkDomains(db: DbOrTx, workspaceId: string): Promise<string[]> {
  return (
    await db
      .select({ domain: linkDomains.domain })
      .from(linkDomains)
      .where(and(eq(linkDomains.workspaceId, workspaceId), eq(linkDomains.status, "verified")))
      .all()
  ).map((row) => row.domain);
}

/** The pre-flight for a checked campaign; its errors block (422 naming the field), warnings are kept. */
async function blockingPreflight(
  tx: DbOrTx,
  input: TendlcCampaignInput,
  brand: TendlcBrandRow,
): Promise<PreflightIssue[]> {
  const issues = preflight(
    input,
    { legal_name: brand.legalName },
    await verifiedLinkDomains(tx, brand.workspaceId),
  );
  const error = issues.find((issue) => issue.severity === "error");
  if (error) throw invalid(`${error.field}: ${error.message}`, { code: error.code });
  return issues;
}

async function writeNumbers(tx: DbOrTx, workspaceId: string, campaignId: string, numberIds: string[]) {
  await tx.delete(tendlcCampaignNumbers).where(eq(tendlcCampaignNumbers.campaignId, campaignId)).run();
  if (numberIds.length)
    await tx
      .insert(tendlcCampaignNumbers)
      .values(numberIds.map((numberId) => ({ campaignId, numberId, workspaceId })))
      .run();
}

export async function createTendlcCampaign(db: Db, workspaceId: string, body: unknown, now = Date.now()) {
  const registry = registryOf(db);
  const input = checkTendlcCampaign(body);
  return await db.transaction(async (tx) => {
    const brand = await checkReferences(tx, workspaceId, input);
    const issues = await blockingPreflight(tx, input, brand);
    const row: TendlcCampaignRow = {
      id: newId(),
      workspaceId,
      brandId: brand.id,
      useCase: input.use_case,
      description: input.description,
      messageFlow: input.message_flow,
      sampleMessages: input.sample_messages,
      helpMessage: input.help_message,
      optoutMessage: input.optout_message,
      hasEmbeddedLinks: input.has_embedded_links,
      hasEmbeddedPhone: input.has_embedded_phone,
      numberIds: input.number_ids,
      status: "PENDING",
      rejectionReasons: [],
      warnings: issues as unknown as Record<string, unknown>[],
      createdAt: now,
      updatedAt: now,
      reviewedAt: null,
    };
    await tx.insert(tendlcCampaigns).values(row).run();
    await writeNumbers(tx, workspaceId, row.id, row.numberIds);
    await scheduleReview(tx, registry, workspaceId, "campaign", row.id, now);
    return tendlcCampaignJson(row);
  });
}

/** PATCH: an APPROVED campaign cannot change (409); any other is checked again and re-reviewed. */
export async function updateTendlcCampaign(
  db: Db,
  workspaceId: string,
  id: string,
  body: unknown,
  now = Date.now(),
) {
  const registry = registryOf(db);
  const patch = checkTendlcCampaign(body, true);
  return await db.transaction(async (tx) => {
    const current = await findTendlcCampaign(tx, workspaceId, id);
    if (current.status === "APPROVED")
      throw conflict("10DLC campaign is APPROVED: an approved registration cannot be edited");
    const input = checkTendlcCampaign({ ...campaignInputOf(current), ...patch });
    const brand = await checkReferences(tx, workspaceId, input);
    const issues = await blockingPreflight(tx, input, brand);
    const row: TendlcCampaignRow = {
      ...current,
      brandId: brand.id,
      useCase: input.use_case,
      description: input.description,
      messageFlow: input.message_flow,
      sampleMessages: input.sample_messages,
      helpMessage: input.help_message,
      optoutMessage: input.optout_message,
      hasEmbeddedLinks: input.has_embedded_links,
      hasEmbeddedPhone: input.has_embedded_phone,
      numberIds: input.number_ids,
      status: "PENDING",
      rejectionReasons: [],
      warnings: issues as unknown as Record<string, unknown>[],
      updatedAt: now,
    };
    await tx.update(tendlcCampaigns).set(row).where(eq(tendlcCampaigns.id, id)).run();
    await writeNumbers(tx, workspaceId, id, row.numberIds);
    await scheduleReview(tx, registry, workspaceId, "campaign", id, now);
    return tendlcCampaignJson(row);
  });
}

/** POST /v1/10dlc/campaigns/preflight: the same checks as create, writing nothing. */
export async function preflightCampaign(db: Db, workspaceId: string, body: unknown) {
  const input = checkTendlcCampaign(body);
  const brand = await checkReferences(db, workspaceId, input);
  const issues = preflight(
    input,
    { legal_name: brand.legalName },
    await verifiedLinkDomains(db, workspaceId),
  );
  return { passed: preflightPassed(issues), issues };
}

export async function getTendlcCampaign(db: DbOrTx, workspaceId: string, id: string) {
  return tendlcCampaignJson(await findTendlcCampaign(db, workspaceId, id));
}

export async function listTendlcCampaigns(
  db: DbOrTx,
  workspaceId: string,
  page: { limit: number; offset: number },
) {
  const where = eq(tendlcCampaigns.workspaceId, workspaceId);
  const { rows, total } = await newestFirstPage(
    db,
    tendlcCampaigns,
    where,
    [tendlcCampaigns.createdAt, tendlcCampaigns.id],
    page,
  );
  return {
    items: rows.map(tendlcCampaignJson),
    total,
  };
}

// ---------------------------------------------------------------------------------------------
// Short-code requests.

export function shortCodeJson(row: ShortCodeRequestRow) {
  return {
    id: row.id,
    type: row.type,
    vanity_code: row.vanityCode,
    use_case: row.useCase,
    monthly_volume: row.monthlyVolume,
    sample_messages: row.sampleMessages,
    status: row.status,
    short_code: row.shortCode,
    rejection_reasons: row.rejectionReasons,
    created_at: toIso(row.createdAt) as string,
    updated_at: toIso(row.updatedAt) as string,
  };
}

export async function createShortCodeRequest(db: Db, workspaceId: string, body: unknown, now = Date.now()) {
  const registry = registryOf(db);
  const input = checkShortCodeRequest(body);
  return await db.transaction(async (tx) => {
    const row: ShortCodeRequestRow = {
      id: newId(),
      workspaceId,
      type: input.type,
      vanityCode: input.vanity_code ?? null,
      useCase: input.use_case,
      monthlyVolume: input.monthly_volume,
      sampleMessages: input.sample_messages,
      status: "submitted",
      shortCode: null,
      rejectionReasons: [],
      createdAt: now,
      updatedAt: now,
    };
    await tx.insert(shortCodeRequests).values(row).run();
    // Two steps, half a review each: submitted → in_review → approved | rejected.
    await enqueueJob(
      tx,
      "registry.review",
      { kind: "short_code", id: row.id },
      { workspaceId, runAt: now + Math.round(registry.reviewDelayMs / 2), now },
    );
    return shortCodeJson(row);
  });
}

async function findShortCode(db: DbOrTx, workspaceId: string, id: string): Promise<ShortCodeRequestRow> {
  const row = await workspaceRow(db, shortCodeRequests, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

export async function getShortCodeRequest(db: DbOrTx, workspaceId: string, id: string) {
  return shortCodeJson(await findShortCode(db, workspaceId, id));
}

export async function listShortCodeRequests(
  db: DbOrTx,
  workspaceId: string,
  page: { limit: number; offset: number },
) {
  const where = eq(shortCodeRequests.workspaceId, workspaceId);
  const { rows, total } = await newestFirstPage(
    db,
    shortCodeRequests,
    where,
    [shortCodeRequests.createdAt, shortCodeRequests.id],
    page,
  );
  return {
    items: rows.map(shortCodeJson),
    total,
  };
}

// ---------------------------------------------------------------------------------------------
// The review job.

/**
 * `registry.review`: the carrier's registry decides one pending record, and the decision is written
 * with its event in the job's transaction. A campaign whose brand is still PENDING waits for it.
 */
export async function registryReviewJob(payload: JobPayloads["registry.review"], ctx: JobContext) {
  const registry = registries.get(ctx.db);
  if (!registry) return;
  const now = ctx.clock.now();
  if (payload.kind === "brand") {
    await ctx.completeWith(async (tx) => {
      const row = await tx.select().from(tendlcBrands).where(eq(tendlcBrands.id, payload.id)).get();
      if (row?.status !== "PENDING") return;
      const result = registry.reviewBrand({ legal_name: row.legalName, ein: row.ein });
      const next = {
        ...row,
        status: result.status,
        failureReasons: result.reasons,
        reviewedAt: now,
        updatedAt: now,
      };
      await tx.update(tendlcBrands).set(next).where(eq(tendlcBrands.id, row.id)).run();
      await emitEvent(tx, row.workspaceId, "brand.updated", brandJson(next), now);
    });
    return;
  }
  if (payload.kind === "campaign") {
    const row = await ctx.db.select().from(tendlcCampaigns).where(eq(tendlcCampaigns.id, payload.id)).get();
    if (row?.status !== "PENDING") return;
    const brand = await ctx.db.select().from(tendlcBrands).where(eq(tendlcBrands.id, row.brandId)).get();
    if (brand?.status === "PENDING") throw new RescheduleJob(now + registry.reviewDelayMs);
    await ctx.completeWith(async (tx) => {
      const current = await tx.select().from(tendlcCampaigns).where(eq(tendlcCampaigns.id, payload.id)).get();
      if (current?.status !== "PENDING") return;
      const result = registry.reviewCampaign(campaignInputOf(current), {
        status: brand?.status ?? "FAILED",
        legal_name: brand?.legalName ?? "",
      });
      const next = {
        ...current,
        status: result.status,
        rejectionReasons: result.reasons,
        reviewedAt: now,
        updatedAt: now,
      };
      await tx.update(tendlcCampaigns).set(next).where(eq(tendlcCampaigns.id, current.id)).run();
      await emitEvent(tx, current.workspaceId, "tendlc_campaign.updated", tendlcCampaignJson(next), now);
    });
    return;
  }
  await ctx.completeWith(async (tx) => {
    const row = await tx.select().from(shortCodeRequests).where(eq(shortCodeRequests.id, payload.id)).get();
    if (!row) return;
    if (row.status === "submitted") {
      const next = { ...row, status: "in_review", updatedAt: now };
      await tx.update(shortCodeRequests).set(next).where(eq(shortCodeRequests.id, row.id)).run();
      await emitEvent(tx, row.workspaceId, "short_code.updated", shortCodeJson(next), now);
      await enqueueJob(
        tx,
        "registry.review",
        { kind: "short_code", id: row.id },
        { workspaceId: row.workspaceId, runAt: now + Math.round(registry.reviewDelayMs / 2), now },
      );
      return;
    }
    if (row.status !== "in_review") return;
    const result = registry.reviewShortCode(
      {
        type: row.type as "random" | "vanity",
        vanity_code: row.vanityCode,
        use_case: row.useCase as TendlcCampaignInput["use_case"],
        monthly_volume: row.monthlyVolume,
        sample_messages: row.sampleMessages,
      },
      row.id,
    );
    const next: ShortCodeRequestRow = {
      ...row,
      status: result.status,
      shortCode: result.short_code ?? null,
      rejectionReasons: result.reasons,
      updatedAt: now,
    };
    await tx.update(shortCodeRequests).set(next).where(eq(shortCodeRequests.id, row.id)).run();
    if (next.status === "approved" && next.shortCode)
      await addShortCodeNumber(tx, row.workspaceId, next.shortCode, now);
    await emitEvent(tx, row.workspaceId, "short_code.updated", shortCodeJson(next), now);
  });
}

/** The approved code becomes a number of the workspace (SMS only; no daily cap; the workspace's zone). */
async function addShortCodeNumber(tx: DbOrTx, workspaceId: string, code: string, now: number) {
  const ws = await tx
    .select({ timezone: workspaces.timezone })
    .from(workspaces)
    .where(eq(workspaces.id, workspaceId))
    .get();
  await tx
    .insert(numbers)
    .values({
      id: newId(),
      workspaceId,
      number: code,
      poolId: null,
      dailyLimit: null,
      agentId: null,
      voiceCapable: false,
      status: "active",
      carrierNumberId: `SC${code}`,
      timezone: ws?.timezone ?? "America/New_York",
      createdAt: now,
      updatedAt: now,
      releasedAt: null,
    })
    .onConflictDoNothing()
    .run();
}
