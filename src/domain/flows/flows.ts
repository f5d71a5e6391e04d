/**
 * Flows (seed: Flow, endpoints 12–13; API.md §3 Flows, §5, §6.6): records, activation, enrolment,
 * the durable dispatcher, the webhook node's deliveries, stats and runs.
 *
 * A flow's runs are rows; one dispatcher job per active flow (`flows.dispatch`, keyed by flow and
 * activation) takes its due runs in batches and advances each in the batch's transaction (the
 * runner, src/domain/flows/runner.ts), so a crash replays at most an uncommitted batch: a send is
 * written with the run's move past its node, never twice. Pausing stops the dispatcher (runs hold
 * where they are); activating again starts a new one. Enrolments wake it.
 */

import { and, eq, gt, gte, inArray, isNull, lt, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import {
  containsText,
  countWhere,
  inJsonList,
  inJsonListParam,
  jsonList,
  lockedForUpdate,
} from "../../db/dialect";
import { newestFirstPage } from "../../db/paging";
import { preparedPerConnection } from "../../db/prepared";
import {
  agents,
  contacts,
  type FlowRow,
  type FlowRunRow,
  flowReentrySkips,
  flowRuns,
  flowSteps,
  flows,
  linkDomains,
  lists,
  messages,
  offers,
  pools,
  RUN_IS_ACTIVE,
} from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import type { JobContext, JobPayloads } from "../../jobs/catalog";
import { RescheduleJob } from "../../jobs/catalog";
import { enqueueJob, wakeJob } from "../../jobs/queue";
import { conflict, invalid, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { log } from "../../lib/log";
import { toIso } from "../../lib/time";
import { postWebhook } from "../../webhooks/deliver";
import { generateWebhookSecret, webhookHeaders } from "../../webhooks/sign";
import { checkWebhookUrl } from "../../webhooks/targets";
import { contactJson } from "../audience/contacts";
import { parseRules } from "../audience/segments";
import { RETRY_SCHEDULE_MS, settingsFor } from "../webhooks/webhooks";
import { utcDay } from "../workspace/daily-budgets";
import { type DefinitionRefs, parseDefinition } from "./definition";
import { findFlowLoop, listLinksOf } from "./loops";
import { advanceRun, dueRuns, type FlowSettings, finishRun, flowGraph, RunEnv, runJson } from "./runner";
import type { FlowDefinition } from "./types";

export const FLOW_STATUSES = ["draft", "active", "paused"] as const;
export const RUN_STATUSES = ["active", "completed", "exited"] as const;
/** Stats window (API.md §3: `window_days: 30`). */
export const STATS_WINDOW_DAYS = 30;
/** The re-entry bound (API.md §7.2): entries of one contact into one flow per 24 hours. */
export const MAX_ENTRIES_PER_DAY = 5;
const ENTRY_BOUND_WINDOW_MS = 24 * 3_600_000;
/** Runs advanced per dispatcher transaction. */
export const DISPATCH_BATCH = 200;
/** The longest a dispatcher sleeps: how late a run made due while it was running can start. */
const MAX_SLEEP_MS = 1000;

export interface FlowJson {
  id: string;
  name: string;
  status: string;
  definition: FlowDefinition;
  settings: FlowSettings;
  created_at: string;
  updated_at: string;
}

export function flowJson(row: FlowRow): FlowJson {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    definition: row.definition as unknown as FlowDefinition,
    settings: row.settings as unknown as FlowSettings,
    created_at: toIso(row.createdAt) as string,
    updated_at: toIso(row.updatedAt) as string,
  };
}

export async function findFlow(db: DbOrTx, workspaceId: string, id: string): Promise<FlowRow> {
  const row = await workspaceRow(db, flows, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

// ---------------------------------------------------------------------------------------------
// Records.

export interface FlowInput {
  name?: string;
  status?: string;
  definition?: unknown;
  settings?: { exit_on_purchase?: boolean; allow_reentry?: boolean };
}

/** What the definition validator may ask of the workspace. */
function refsFor(tx: DbOrTx, workspaceId: string, allowPrivate: boolean): DefinitionRefs {
  const has = async (table: typeof lists | typeof pools | typeof offers, id: string) =>
    (await workspaceRow(tx, table, workspaceId, id)) !== undefined;
  const agentOf = async (id: string) => await workspaceRow(tx, agents, workspaceId, id);
  return {
    checkRules: async (rules, path) => await parseRules(tx, workspaceId, rules, path),
    // Checked again when the node runs (the host's addresses then), as webhook deliveries are.
    checkUrl: (url) => checkWebhookUrl(url, allowPrivate),
    async exists(kind, id) {
      if (kind === "list") return await has(lists, id);
      if (kind === "pool") return await has(pools, id);
      if (kind === "offer") return await has(offers, id);
      if (kind === "verified_link_domain")
        return (await workspaceRow(tx, linkDomains, workspaceId, id))?.status === "verified";
      const agent = await agentOf(id);
      if (kind === "agent") return agent !== undefined;
      if (kind === "sms_agent") return agent?.channel === "sms";
      return agent?.channel === "voice";
    },
  };
}

function triggerOf(definition: FlowDefinition) {
  const trigger = definition.nodes.find((node) => node.type === "trigger");
  const data = (trigger?.data ?? {}) as Record<string, unknown>;
  return {
    triggerEvent: String(data.event ?? "manual"),
    triggerListId: typeof data.list_id === "string" ? data.list_id : null,
  };
}

export async function createFlow(
  db: Db,
  workspaceId: string,
  input: FlowInput,
  now = Date.now(),
): Promise<FlowJson> {
  if (input.name === undefined || input.name.trim() === "") throw invalid("name is required");
  if (input.definition === undefined) throw invalid("definition is required");
  const status = input.status ?? "draft";
  const { allowPrivate } = settingsFor(db);
  return await db.transaction(async (tx) => {
    const parsed = await parseDefinition(input.definition, refsFor(tx, workspaceId, allowPrivate));
    const row: FlowRow = {
      id: newId(),
      workspaceId,
      name: input.name as string,
      status: "draft",
      definition: parsed.definition as unknown as Record<string, unknown>,
      settings: {
        exit_on_purchase: input.settings?.exit_on_purchase ?? false,
        allow_reentry: input.settings?.allow_reentry ?? false,
        webhook_secret: generateWebhookSecret(),
      },
      ...triggerOf(parsed.definition),
      exitOnPurchase: input.settings?.exit_on_purchase ?? false,
      dispatchGeneration: 0,
      createdAt: now,
      updatedAt: now,
    };
    await tx.insert(flows).values(row).run();
    return flowJson(status === "active" ? await activate(tx, row, now) : row);
  });
}

export async function getFlow(db: DbOrTx, workspaceId: string, id: string): Promise<FlowJson> {
  return flowJson(await findFlow(db, workspaceId, id));
}

export async function listFlows(
  db: DbOrTx,
  workspaceId: string,
  filters: { status?: string; q?: string },
  page: { limit: number; offset: number },
) {
  const conditions = [eq(flows.workspaceId, workspaceId), containsText(flows.name, filters.q)];
  if (filters.status !== undefined) {
    if (!(FLOW_STATUSES as readonly string[]).includes(filters.status))
      throw invalid(`status must be one of ${FLOW_STATUSES.join(", ")}`);
    conditions.push(eq(flows.status, filters.status));
  }
  const where = and(...conditions);
  const { rows, total } = await newestFirstPage(db, flows, where, [flows.createdAt, flows.id], page);
  return { items: rows.map(flowJson), total };
}

/**
 * PATCH: name and settings any time; the definition only while the flow is not active (409: pause
 * it first); `status` activates (draft or paused → active) or pauses (active → paused).
 */
export async function updateFlow(
  db: Db,
  workspaceId: string,
  id: string,
  input: FlowInput,
  now = Date.now(),
): Promise<FlowJson> {
  const { allowPrivate } = settingsFor(db);
  return await db.transaction(async (tx) => {
    let row = await findFlow(tx, workspaceId, id);
    const next: FlowRow = { ...row, updatedAt: now };
    if (input.name !== undefined) {
      if (input.name.trim() === "") throw invalid("name is required");
      next.name = input.name;
    }
    if (input.definition !== undefined) {
      // The body first (422), then the state (409): API.md §1's order.
      const parsed = await parseDefinition(input.definition, refsFor(tx, workspaceId, allowPrivate));
      if (row.status === "active") throw conflict("Flow is active: pause it before changing its definition");
      next.definition = parsed.definition as unknown as Record<string, unknown>;
      Object.assign(next, triggerOf(parsed.definition));
    }
    if (input.settings !== undefined) {
      const settings = { ...(row.settings as unknown as FlowSettings) };
      if (input.settings.exit_on_purchase !== undefined)
        settings.exit_on_purchase = input.settings.exit_on_purchase;
      if (input.settings.allow_reentry !== undefined) settings.allow_reentry = input.settings.allow_reentry;
      next.settings = settings as unknown as Record<string, unknown>;
      next.exitOnPurchase = settings.exit_on_purchase;
    }
    await tx
      .update(flows)
      .set({
        name: next.name,
        definition: next.definition,
        settings: next.settings,
        triggerEvent: next.triggerEvent,
        triggerListId: next.triggerListId,
        exitOnPurchase: next.exitOnPurchase,
        updatedAt: now,
      })
      .where(eq(flows.id, row.id))
      .run();
    row = next;
    if (input.status !== undefined && input.status !== row.status) {
      if (input.status === "active") row = await activate(tx, row, now);
      else if (input.status === "paused") {
        if (row.status !== "active")
          throw conflict(`Flow is ${row.status}: only an active flow can be paused`);
        await tx.update(flows).set({ status: "paused", updatedAt: now }).where(eq(flows.id, row.id)).run();
        row = { ...row, status: "paused" };
      } else throw conflict(`Flow is ${row.status}: it cannot go back to ${input.status}`);
    }
    return flowJson(row);
  });
}

/**
 * draft or paused → active, with a new dispatcher (an older one stops at its next step). A flow
 * whose list additions would start itself again through the active flows → 422 naming the loop.
 */
async function activate(tx: DbOrTx, row: FlowRow, now: number): Promise<FlowRow> {
  await refuseLoop(tx, row);
  const next: FlowRow = {
    ...row,
    status: "active",
    dispatchGeneration: row.dispatchGeneration + 1,
    updatedAt: now,
  };
  await tx
    .update(flows)
    .set({ status: "active", dispatchGeneration: next.dispatchGeneration, updatedAt: now })
    .where(eq(flows.id, row.id))
    .run();
  const payload = { flow_id: row.id, generation: next.dispatchGeneration };
  await enqueueJob(tx, "flows.dispatch", payload, {
    workspaceId: row.workspaceId,
    now,
    dedupeKey: dispatcherKey(payload),
  });
  return next;
}

/** 422 `flow would loop through flows: A → B → A` when `row`, active, would start itself again. */
async function refuseLoop(tx: DbOrTx, row: FlowRow) {
  const start = listLinksOf(row);
  if (start.addsTo.length === 0) return;
  const others = (
    await tx
      .select({ id: flows.id, name: flows.name, definition: flows.definition })
      .from(flows)
      .where(
        and(
          eq(flows.workspaceId, row.workspaceId),
          eq(flows.status, "active"),
          eq(flows.triggerEvent, "added_to_list"),
        ),
      )
      .all()
  ).map(listLinksOf);
  const loop = findFlowLoop(start, others);
  if (loop) throw invalid(`flow would loop through flows: ${loop.join(" → ")}`);
}

const dispatcherKey = (p: { flow_id: string; generation: number }) =>
  `flows.dispatch:${p.flow_id}:${p.generation}`;

/** Deletes a flow; its active runs end as exited (`flow_deleted`), their history stays. */
export async function deleteFlow(db: Db, workspaceId: string, id: string, now = Date.now()) {
  await db.transaction(async (tx) => {
    const row = await findFlow(tx, workspaceId, id);
    const active = await tx
      .select()
      .from(flowRuns)
      .where(and(eq(flowRuns.flowId, row.id), RUN_IS_ACTIVE))
      .all();
    for (const run of active) await finishRun(tx, row, run, "exited", "flow_deleted", now);
    await tx.delete(flows).where(eq(flows.id, row.id)).run();
  });
}

// ---------------------------------------------------------------------------------------------
// Enrolment.

/**
 * Starts runs for `contactIds` (contacts of the flow's workspace), due now at the trigger. A
 * contact with an active run in this flow is skipped; so is one who entered it MAX_ENTRIES_PER_DAY
 * times in the last 24 hours (counted as `skipped_reentry`); without `allow_reentry`, so is one who was
 * ever enrolled. Wakes the flow's dispatcher. Returns how many runs started.
 */
export async function enrollContacts(
  tx: DbOrTx,
  flow: FlowRow,
  contactIds: readonly string[],
  now: number,
): Promise<number> {
  const graph = flowGraph(flow);
  if (!graph.trigger || contactIds.length === 0) return 0;
  const reentry = (flow.settings as unknown as FlowSettings).allow_reentry;
  let started = 0;
  for (let i = 0; i < contactIds.length; i += 500) {
    const chunk = contactIds.slice(i, i + 500);
    const taken = new Set(
      (
        await tx
          .select({ contactId: flowRuns.contactId })
          .from(flowRuns)
          .where(
            and(
              eq(flowRuns.flowId, flow.id),
              inArray(flowRuns.contactId, chunk),
              reentry ? RUN_IS_ACTIVE : undefined,
            ),
          )
          .all()
      ).map((r) => r.contactId),
    );
    const free = chunk.filter((id) => !taken.has(id));
    // The re-entry bound: a contact who entered this flow MAX_ENTRIES_PER_DAY times in the last
    // 24 hours is skipped (only a flow that allows re-entry can get there).
    const bounded = reentry ? await overEntryBound(tx, flow.id, free, now) : new Set<string>();
    if (bounded.size > 0) await countReentrySkips(tx, flow, bounded.size, now);
    const rows = free
      .filter((id) => !bounded.has(id))
      .map((contactId) => ({
        id: newId(),
        workspaceId: flow.workspaceId,
        flowId: flow.id,
        contactId,
        status: "active",
        currentNodeId: graph.trigger?.id ?? null,
        currentStepId: null,
        waitingUntil: now,
        waitKind: null,
        repliedAt: null,
        exitReason: null,
        startedAt: now,
        endedAt: null,
        updatedAt: now,
      }));
    if (rows.length === 0) continue;
    const inserted = (await tx.insert(flowRuns).values(rows).onConflictDoNothing().run()) as unknown as {
      changes: number;
    };
    started += inserted.changes;
  }
  if (started > 0)
    await wakeJob(tx, dispatcherKey({ flow_id: flow.id, generation: flow.dispatchGeneration }), now);
  return started;
}

/** The contacts of `contactIds` who entered the flow MAX_ENTRIES_PER_DAY times in the 24 hours to `now`. */
async function overEntryBound(
  tx: DbOrTx,
  flowId: string,
  contactIds: string[],
  now: number,
): Promise<Set<string>> {
  if (contactIds.length === 0) return new Set();
  const rows = await tx
    .select({ contactId: flowRuns.contactId, n: sql<number>`count(*)`.mapWith(Number) })
    .from(flowRuns)
    .where(
      and(
        eq(flowRuns.flowId, flowId),
        inJsonList(flowRuns.contactId, contactIds),
        gt(flowRuns.startedAt, now - ENTRY_BOUND_WINDOW_MS),
      ),
    )
    .groupBy(flowRuns.contactId)
    .all();
  return new Set(rows.filter((row) => Number(row.n) >= MAX_ENTRIES_PER_DAY).map((row) => row.contactId));
}

/** Adds `n` entries refused by the re-entry bound to the flow's count of the UTC day. */
async function countReentrySkips(tx: DbOrTx, flow: FlowRow, n: number, now: number) {
  await tx
    .insert(flowReentrySkips)
    .values({ workspaceId: flow.workspaceId, flowId: flow.id, day: utcDay(now), count: n })
    .onConflictDoUpdate({
      target: [flowReentrySkips.workspaceId, flowReentrySkips.flowId, flowReentrySkips.day],
      set: { count: sql`${flowReentrySkips.count} + ${n}` },
    })
    .run();
}

/** Deletes re-entry skip counts older than the stats window (the only place they are read). */
export async function pruneReentrySkips(tx: DbOrTx, now: number) {
  await tx
    .delete(flowReentrySkips)
    .where(lt(flowReentrySkips.day, utcDay(now - STATS_WINDOW_DAYS * 86_400_000) - 1))
    .run();
}

/**
 * POST /v1/flows/{id}/enroll: the flow must be active (409); every id must be a contact of the
 * workspace (422 naming the first that is not). Returns `{enrolled, skipped}`.
 */
export async function enrollByRequest(
  db: Db,
  workspaceId: string,
  id: string,
  contactIds: string[],
  now = Date.now(),
): Promise<{ enrolled: number; skipped: number }> {
  if (contactIds.length === 0) throw invalid("contact_ids must not be empty");
  return await db.transaction(async (tx) => {
    const flow = await findFlow(tx, workspaceId, id);
    const unique = [...new Set(contactIds)];
    const found = new Set<string>();
    for (let i = 0; i < unique.length; i += 500) {
      const chunk = unique.slice(i, i + 500).filter(isUuid);
      if (chunk.length === 0) continue;
      for (const row of await tx
        .select({ id: contacts.id })
        .from(contacts)
        .where(and(eq(contacts.workspaceId, workspaceId), inArray(contacts.id, chunk)))
        .all())
        found.add(row.id);
    }
    const missing = contactIds.findIndex((cid) => !found.has(cid));
    if (missing >= 0) throw invalid(`contact_ids[${missing}] does not exist`);
    // The body first (422), then the state (409): API.md §1's order.
    if (flow.status !== "active")
      throw conflict(`Flow is ${flow.status}: activate it before enrolling contacts`);
    const enrolled = await enrollContacts(tx, flow, unique, now);
    return { enrolled, skipped: contactIds.length - enrolled };
  });
}

/**
 * The statements the event hooks run on every click, conversion, inbound message and new contact:
 * prepared once per connection, as they sit on the hot paths of those requests.
 */
const hookStatements = preparedPerConnection((db: DbOrTx) => ({
  triggered: db
    .select()
    .from(flows)
    .where(
      and(
        eq(flows.workspaceId, sql.placeholder("workspaceId")),
        eq(flows.status, "active"),
        eq(flows.triggerEvent, sql.placeholder("event")),
      ),
    )
    .prepare(),
  // Most contacts who convert are in no flow: a one-column probe answers that (~5 µs) before the
  // query that reads whole runs and flows (~25 µs even when it finds nothing, in bun:sqlite).
  anyActiveRun: db
    .select({ one: sql<number>`1` })
    .from(flowRuns)
    .where(
      and(
        eq(flowRuns.workspaceId, sql.placeholder("workspaceId")),
        eq(flowRuns.contactId, sql.placeholder("contactId")),
        RUN_IS_ACTIVE,
      ),
    )
    .limit(1)
    .prepare(),
  // The same probe for the contacts of a batch of purchases at once.
  activeRunContacts: db
    .selectDistinct({ contactId: flowRuns.contactId })
    .from(flowRuns)
    .where(
      and(
        eq(flowRuns.workspaceId, sql.placeholder("workspaceId")),
        inJsonListParam(flowRuns.contactId, "contactIds"),
        RUN_IS_ACTIVE,
      ),
    )
    .prepare(),
  purchaseExits: db
    .select({ run: flowRuns, flow: flows })
    .from(flowRuns)
    .innerJoin(flows, eq(flows.id, flowRuns.flowId))
    .where(
      and(
        eq(flowRuns.workspaceId, sql.placeholder("workspaceId")),
        eq(flowRuns.contactId, sql.placeholder("contactId")),
        RUN_IS_ACTIVE,
        eq(flows.exitOnPurchase, true),
      ),
    )
    .prepare(),
  replied: db
    .update(flowRuns)
    .set({
      repliedAt: sql`${sql.placeholder("now")}`,
      waitingUntil: sql`${sql.placeholder("now")}`,
      updatedAt: sql`${sql.placeholder("now")}`,
    })
    .where(
      and(
        eq(flowRuns.workspaceId, sql.placeholder("workspaceId")),
        eq(flowRuns.contactId, sql.placeholder("contactId")),
        RUN_IS_ACTIVE,
        eq(flowRuns.waitKind, "reply"),
        isNull(flowRuns.repliedAt),
      ),
    )
    .returning({ flowId: flowRuns.flowId })
    .prepare(),
}));

/** The active flows of a workspace that a trigger event starts. */
export async function flowsTriggeredBy(tx: DbOrTx, workspaceId: string, event: string): Promise<FlowRow[]> {
  return await hookStatements(tx).triggered.all({ workspaceId, event });
}

// ---------------------------------------------------------------------------------------------
// The dispatcher.

/** `flows.dispatch`: one batch per run, then again when the next run is due (at most 1 s later). */
export async function dispatchFlowJob(payload: JobPayloads["flows.dispatch"], ctx: JobContext) {
  const next = await dispatchFlowStep(ctx.db, payload, ctx.clock.now());
  if (next !== null) throw new RescheduleJob(next);
}

/**
 * One dispatcher step, in one transaction: up to DISPATCH_BATCH due runs advanced. Returns when to
 * run again, or null to stop (the flow is no longer active, or a newer dispatcher took over).
 */
export async function dispatchFlowStep(
  db: Db,
  payload: JobPayloads["flows.dispatch"],
  now: number,
): Promise<number | null> {
  return await db.transaction(async (tx) => {
    // The flow's row is held until the step commits: a step of the same flow started meanwhile
    // (a lease that ran out, another process) waits, then finds this one's runs moved on.
    const flow = await lockedForUpdate(tx.select().from(flows).where(eq(flows.id, payload.flow_id))).get();
    if (flow?.status !== "active" || flow.dispatchGeneration !== payload.generation) return null;
    const due = await dueRuns(tx, flow.id, now, DISPATCH_BATCH);
    if (due.length) {
      const byId = new Map(
        (
          await tx
            .select()
            .from(contacts)
            .where(
              inArray(
                contacts.id,
                due.map((run) => run.contactId),
              ),
            )
            .all()
        ).map((c) => [c.id, c]),
      );
      const env = new RunEnv();
      await env.prefetchFacts(tx, flow.workspaceId, [...byId.values()], now);
      for (const run of due) await advanceRun(tx, flow, run, byId.get(run.contactId), now, env);
    }
    if (due.length === DISPATCH_BATCH) return now;
    const next = (
      await tx
        .select({ at: sql<number | null>`min(${flowRuns.waitingUntil})`.mapWith(Number) })
        .from(flowRuns)
        .where(and(eq(flowRuns.flowId, flow.id), RUN_IS_ACTIVE))
        .get()
    )?.at;
    return next === null || next === undefined
      ? now + MAX_SLEEP_MS
      : Math.min(Math.max(next, now), now + MAX_SLEEP_MS);
  });
}

// ---------------------------------------------------------------------------------------------
// Replies and purchases.

/** An inbound message answers the contact's runs waiting for a reply: they go on by `replied` now. */
export async function markReplied(tx: DbOrTx, workspaceId: string, contactId: string, now: number) {
  const waiting = await hookStatements(tx).replied.all({ workspaceId, contactId, now });
  for (const { flowId } of waiting) await wakeDispatcherOf(tx, flowId, now);
}

async function wakeDispatcherOf(tx: DbOrTx, flowId: string, now: number) {
  const flow = await tx
    .select({ id: flows.id, generation: flows.dispatchGeneration })
    .from(flows)
    .where(eq(flows.id, flowId))
    .get();
  if (flow) await wakeJob(tx, dispatcherKey({ flow_id: flow.id, generation: flow.generation }), now);
}

/**
 * Which of `contactIds` are in an active run of the workspace: one probe for the contacts of many
 * purchases (a group of conversions), so that those in no flow skip `exitOnPurchase`'s own.
 */
export async function contactsInActiveRuns(
  tx: DbOrTx,
  workspaceId: string,
  contactIds: readonly string[],
): Promise<Set<string>> {
  const rows = await hookStatements(tx).activeRunContacts.all({
    workspaceId,
    contactIds: jsonList(contactIds),
  });
  return new Set(rows.map((row) => row.contactId));
}

/** A purchase exits the contact from every flow that opted in (seed rule 1); the others go on. */
export async function exitOnPurchase(
  tx: DbOrTx,
  workspaceId: string,
  contactId: string,
  now: number,
): Promise<number> {
  const statements = hookStatements(tx);
  if (!(await statements.anyActiveRun.get({ workspaceId, contactId }))) return 0;
  const runs = await statements.purchaseExits.all({ workspaceId, contactId });
  for (const { run, flow } of runs) await finishRun(tx, flow, run, "exited", "purchase", now);
  return runs.length;
}

// ---------------------------------------------------------------------------------------------
// The webhook node.

/**
 * `flows.webhook`: POSTs `{flow_id, run_id, node_id, contact}` to the node's URL, signed per
 * Standard Webhooks with the flow's own secret, under the webhooks' target rules. A failure is
 * retried on the webhooks' schedule (a new job per retry), then given up and logged; the run has
 * already gone on.
 */
export async function flowWebhookJob(payload: JobPayloads["flows.webhook"], ctx: JobContext) {
  const { db } = ctx;
  const flow = await db.select().from(flows).where(eq(flows.id, payload.flow_id)).get();
  const run = await db.select().from(flowRuns).where(eq(flowRuns.id, payload.run_id)).get();
  const node = flow ? flowGraph(flow).byId.get(payload.node_id) : undefined;
  if (!flow || !run || !node) return;
  const url = String(node.data?.url ?? "");
  const settings = settingsFor(db);
  const contact = await db.select().from(contacts).where(eq(contacts.id, run.contactId)).get();
  const body = JSON.stringify({
    flow_id: flow.id,
    run_id: run.id,
    node_id: node.id,
    contact: contact ? contactJson(contact) : null,
  });
  const messageId = `flowmsg_${run.id}_${node.id}`;
  const timestampSec = Math.floor(ctx.clock.now() / 1000);
  const problem = checkWebhookUrl(url, settings.allowPrivate);
  const response = problem
    ? { ok: false, status: null, error: `url ${problem}` }
    : await postWebhook({
        url,
        headers: {
          "content-type": "application/json",
          ...webhookHeaders(
            [(flow.settings as unknown as FlowSettings).webhook_secret],
            messageId,
            timestampSec,
            body,
          ),
        },
        body,
        timeoutMs: settings.timeoutMs,
        allowPrivate: settings.allowPrivate,
      });
  const nextRetry = payload.retry + 1;
  await ctx.completeWith(async (tx) => {
    if (response.ok || problem) {
      if (problem) log.warn("flow webhook refused", { flow_id: flow.id, node_id: node.id, problem });
      return;
    }
    if (nextRetry > RETRY_SCHEDULE_MS.length) {
      log.warn("flow webhook given up", { flow_id: flow.id, node_id: node.id, status: response.status });
      return;
    }
    await enqueueJob(
      tx,
      "flows.webhook",
      { ...payload, retry: nextRetry },
      {
        workspaceId: flow.workspaceId,
        runAt: ctx.clock.now() + RETRY_SCHEDULE_MS[nextRetry - 1],
        now: ctx.clock.now(),
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Stats and runs.

export interface NodeStats {
  type: string;
  entered: number;
  completed: number;
  sent: number;
  failed: number;
  waiting: number;
  skipped: number;
}

/**
 * `GET /v1/flows/{id}/stats` (API.md §3, §5): runs started in the last 30 days by status, entries
 * refused by the re-entry bound (`skipped_reentry`, by UTC day), and per
 * node (entered at least once in the window) its visits: entered, completed, sent, failed (a send
 * or call that failed, then or later), waiting (runs there now), skipped (by §6.1).
 */
export async function flowStats(db: DbOrTx, workspaceId: string, id: string, now = Date.now()) {
  const flow = await findFlow(db, workspaceId, id);
  const since = now - STATS_WINDOW_DAYS * 86_400_000;
  const byStatus = await db
    .select({
      status: flowRuns.status,
      reason: flowRuns.exitReason,
      n: sql<number>`count(*)`.mapWith(Number),
    })
    .from(flowRuns)
    .where(and(eq(flowRuns.flowId, flow.id), gte(flowRuns.startedAt, since)))
    .groupBy(flowRuns.status, flowRuns.exitReason)
    .all();
  const stats = {
    window_days: STATS_WINDOW_DAYS,
    enrolled: 0,
    active: 0,
    completed: 0,
    exited: 0,
    exited_on_purchase: 0,
    skipped_reentry: 0,
    nodes: {} as Record<string, NodeStats>,
  };
  const skips = await db
    .select({ n: sql<number>`coalesce(sum(${flowReentrySkips.count}), 0)`.mapWith(Number) })
    .from(flowReentrySkips)
    .where(
      and(
        eq(flowReentrySkips.workspaceId, workspaceId),
        eq(flowReentrySkips.flowId, flow.id),
        gte(flowReentrySkips.day, utcDay(since)),
      ),
    )
    .get();
  stats.skipped_reentry = Number(skips?.n ?? 0);
  for (const row of byStatus) {
    const n = Number(row.n);
    stats.enrolled += n;
    if (row.status === "active") stats.active += n;
    else if (row.status === "completed") stats.completed += n;
    else if (row.status === "exited") {
      stats.exited += n;
      if (row.reason === "purchase") stats.exited_on_purchase += n;
    }
  }
  const failedMessage = sql`${messages.status} IN ('FAILED', 'UNDELIVERED')`;
  const nodes = await db
    .select({
      nodeId: flowSteps.nodeId,
      type: flowSteps.nodeType,
      entered: sql<number>`count(*)`.mapWith(Number),
      completed: sql<number>`count(${flowSteps.finishedAt})`.mapWith(Number),
      sent: countWhere(sql`${flowSteps.outcome} = 'sent'`),
      skipped: countWhere(sql`${flowSteps.outcome} = 'skipped'`),
      waiting: countWhere(sql`${flowSteps.finishedAt} IS NULL`),
      failed: countWhere(
        sql`${flowSteps.outcome} = 'failed' OR (${flowSteps.messageId} IS NOT NULL AND EXISTS (SELECT 1 FROM ${messages} WHERE ${messages.id} = ${flowSteps.messageId} AND ${failedMessage}))`,
      ),
    })
    .from(flowSteps)
    .where(and(eq(flowSteps.flowId, flow.id), gte(flowSteps.enteredAt, since)))
    .groupBy(flowSteps.nodeId, flowSteps.nodeType)
    .all();
  for (const row of nodes)
    stats.nodes[row.nodeId] = {
      type: row.type,
      entered: Number(row.entered),
      completed: Number(row.completed),
      sent: Number(row.sent ?? 0),
      failed: Number(row.failed ?? 0),
      waiting: Number(row.waiting ?? 0),
      skipped: Number(row.skipped ?? 0),
    };
  return stats;
}

/** `GET /v1/flows/{id}/runs`: newest first, filtered by status. */
export async function listRuns(
  db: DbOrTx,
  workspaceId: string,
  id: string,
  filters: { status?: string },
  page: { limit: number; offset: number },
) {
  const flow = await findFlow(db, workspaceId, id);
  const conditions = [eq(flowRuns.flowId, flow.id)];
  if (filters.status !== undefined) {
    if (!(RUN_STATUSES as readonly string[]).includes(filters.status))
      throw invalid(`status must be one of ${RUN_STATUSES.join(", ")}`);
    conditions.push(eq(flowRuns.status, filters.status));
  }
  const where = and(...conditions);
  const { rows, total } = await newestFirstPage(db, flowRuns, where, [flowRuns.startedAt, flowRuns.id], page);
  return { runs: rows.map(runJson), total, limit: page.limit, offset: page.offset };
}

export type { FlowRunRow };
