/**
 * The flow runner (API.md §3 Flows, §6.6): moves one run through its flow's nodes at `now`, in the
 * caller's transaction, until it waits (a wait, a reply, a send held by the send-time rules) or
 * ends. Every node visit is written as a step (flow_steps) with its outcome; the simulator runs the
 * very same code inside a transaction it rolls back, on a virtual clock, collecting a trace.
 *
 * Sends and calls ask the compliance module at the moment they are made, exactly like campaigns:
 * suppressed or opted-out contacts are skipped (the run continues), a send outside the allowed
 * window keeps the run waiting at that node until the next allowed minute, and the message is
 * written when it may go (through queueOutboundMessage, so its hand-off is the durable send job).
 */
import { and, asc, eq, lte } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { nullsFirst } from "../../db/dialect";
import { preparedPerConnection, rowPlaceholders } from "../../db/prepared";
import {
  type ContactRow,
  contacts,
  type FlowRow,
  type FlowRunRow,
  flowRuns,
  flowSteps,
  listMembers,
  lists,
  type NumberRow,
  offers,
  RUN_IS_ACTIVE,
} from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { enqueueJob } from "../../jobs/queue";
import { AppError } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { toIso } from "../../lib/time";
import { handContactToAgent } from "../agents/runtime";
import { brandTrackedLinks } from "../attribution/link-domains";
import { createRecipientLink, newRecipientLink, workspaceLinkBase } from "../attribution/offers";
import { mergeFields } from "../audience/contacts";
import { contactMatches } from "../audience/segments";
import { callSender, queueCall } from "../calls/calls";
import { mergeBody } from "../campaigns/merge";
import {
  complianceDecision,
  type RecipientFacts,
  recipientFacts,
  type SendRules,
  workspaceSendRules,
} from "../campaigns/send-plan";
import { emitEvent } from "../events";
import { threadForContact } from "../messaging/conversations";
import { defaultSender, nextLocalMidnight, reserveDailySend } from "../messaging/numbers";
import { queueOutboundMessage } from "../messaging/outbound";
import { pickSender } from "../messaging/senders";
import { senderSkip } from "../registration/sender-check";
import type { FlowDefinition, FlowNode } from "./types";

/** The most nodes one run goes through in one step (validation refuses loops without a wait). */
const MAX_NODES_PER_STEP = 250;
/** How long a send waits when the workspace has no number to send from. */
const NO_SENDER_RETRY_MS = 15 * 60_000;

export interface FlowSettings {
  exit_on_purchase: boolean;
  allow_reentry: boolean;
  webhook_secret: string;
}

/** A flow's definition indexed for running: nodes by id, and where each handle leads. */
export interface FlowGraph {
  byId: Map<string, FlowNode>;
  next: Map<string, Map<string, string>>;
  trigger: FlowNode | undefined;
}

export function graphOf(definition: FlowDefinition): FlowGraph {
  const byId = new Map(definition.nodes.map((node) => [node.id, node]));
  const next = new Map<string, Map<string, string>>();
  for (const edge of definition.edges) {
    const handles = next.get(edge.source) ?? new Map<string, string>();
    handles.set(edge.sourceHandle ?? "out", edge.target);
    next.set(edge.source, handles);
  }
  return { byId, next, trigger: definition.nodes.find((node) => node.type === "trigger") };
}

const graphs = new Map<string, { updatedAt: number; graph: FlowGraph }>();

/** The graph of a flow row, cached by (id, updated_at). */
export function flowGraph(flow: FlowRow): FlowGraph {
  const cached = graphs.get(flow.id);
  if (cached && cached.updatedAt === flow.updatedAt) return cached.graph;
  const graph = graphOf(flow.definition as unknown as FlowDefinition);
  if (graphs.size > 1000) graphs.clear();
  graphs.set(flow.id, { updatedAt: flow.updatedAt, graph });
  return graph;
}

/** One line of what a run did: the simulator's trace, and what the real run writes as steps. */
export interface TraceEntry {
  at: number;
  node_id: string;
  type: string;
  action: string;
  detail: string | null;
}

/** What a batch of runs shares: the workspace's send-time rules (read once), and a trace sink. */
export class RunEnv {
  private rules: SendRules | null = null;
  private facts: Map<string, RecipientFacts> | null = null;
  constructor(readonly trace: TraceEntry[] | null = null) {}
  async sendRules(tx: DbOrTx, workspaceId: string): Promise<SendRules> {
    this.rules ??= await workspaceSendRules(tx, workspaceId, null);
    return this.rules;
  }
  /** Reads the batch's contacts' suppression and recent marketing sends in two queries, not two per send. */
  async prefetchFacts(tx: DbOrTx, workspaceId: string, batch: readonly ContactRow[], now: number) {
    // "" is no campaign: every recent marketing send of the contact counts.
    this.facts = await recipientFacts(tx, workspaceId, "", batch, await this.sendRules(tx, workspaceId), now);
  }
  async factsFor(tx: DbOrTx, workspaceId: string, contact: ContactRow, now: number): Promise<RecipientFacts> {
    const known = this.facts?.get(contact.id);
    if (known) return known;
    const read = (
      await recipientFacts(tx, workspaceId, "", [contact], await this.sendRules(tx, workspaceId), now)
    ).get(contact.id) ?? { suppression: null, recentSends: [] };
    this.facts?.set(contact.id, read);
    return read;
  }
}

type Outcome = "completed" | "sent" | "skipped" | "failed";

/** What a node did: go on by a handle, or wait at the node until a time. */
type NodeResult =
  | {
      go: string;
      outcome: Outcome;
      action: string;
      detail?: string | null;
      messageId?: string;
      callId?: string;
    }
  | { wait: number; kind: "wait" | "reply" | "defer"; action: string; detail?: string | null }
  | { end: true; action: string };

const minutesOf = (data: Record<string, unknown>) =>
  Number(data.minutes ?? 0) + Number(data.hours ?? 0) * 60 + Number(data.days ?? 0) * 1440;

/**
 * Runs `run` from its current node until it waits or ends, writing its steps and its row. The
 * caller has checked the flow is active (or is simulating).
 */
export async function advanceRun(
  tx: DbOrTx,
  flow: FlowRow,
  run: FlowRunRow,
  contact: ContactRow | undefined,
  now: number,
  env: RunEnv,
) {
  const graph = flowGraph(flow);
  let state: FlowRunRow = { ...run };
  for (let i = 0; i < MAX_NODES_PER_STEP && state.status === "active"; i++) {
    const node = state.currentNodeId ? graph.byId.get(state.currentNodeId) : undefined;
    if (!node) {
      state = await finishRun(tx, flow, state, "completed", null, now);
      break;
    }
    const arriving = state.currentStepId === null;
    const stepId = state.currentStepId ?? newId();
    const result = await runNode(tx, flow, state, node, contact, arriving, now, env);
    const detail = "detail" in result ? (result.detail ?? null) : null;
    note(env, now, node, result.action, detail);
    // The visit is written once when it finishes on arrival (most nodes), else opened and finished later.
    const finished =
      "wait" in result
        ? null
        : {
            outcome: ("end" in result ? "completed" : result.outcome) as Outcome,
            detail,
            messageId: "messageId" in result ? (result.messageId ?? null) : null,
            callId: "callId" in result ? (result.callId ?? null) : null,
            finishedAt: now,
          };
    if (arriving)
      await insertStep(tx).run({
        id: stepId,
        workspaceId: flow.workspaceId,
        flowId: flow.id,
        runId: state.id,
        nodeId: node.id,
        nodeType: node.type,
        outcome: finished?.outcome ?? null,
        detail,
        messageId: finished?.messageId ?? null,
        callId: finished?.callId ?? null,
        enteredAt: now,
        finishedAt: finished?.finishedAt ?? null,
      });
    else if (finished) await tx.update(flowSteps).set(finished).where(eq(flowSteps.id, stepId)).run();
    else if (detail) await tx.update(flowSteps).set({ detail }).where(eq(flowSteps.id, stepId)).run();
    if ("wait" in result) {
      state = {
        ...state,
        currentStepId: stepId,
        waitingUntil: result.wait,
        waitKind: result.kind,
        repliedAt: arriving && result.kind === "reply" ? null : state.repliedAt,
        updatedAt: now,
      };
      break;
    }
    const target = "end" in result ? undefined : graph.next.get(node.id)?.get(result.go);
    if (!target) {
      state = await finishRun(tx, flow, { ...state, currentStepId: null }, "completed", null, now);
      break;
    }
    state = {
      ...state,
      currentNodeId: target,
      currentStepId: null,
      waitingUntil: now,
      waitKind: null,
      repliedAt: null,
      updatedAt: now,
    };
  }
  if (state.status === "active") await writeRun(tx, state);
  return state;
}

const insertStep = preparedPerConnection((db: DbOrTx) =>
  db.insert(flowSteps).values(rowPlaceholders(flowSteps)).prepare(),
);

function note(env: RunEnv, at: number, node: FlowNode, action: string, detail: string | null) {
  env.trace?.push({ at, node_id: node.id, type: node.type, action, detail });
}

async function writeRun(tx: DbOrTx, run: FlowRunRow) {
  await tx
    .update(flowRuns)
    .set({
      status: run.status,
      currentNodeId: run.currentNodeId,
      currentStepId: run.currentStepId,
      waitingUntil: run.waitingUntil,
      waitKind: run.waitKind,
      repliedAt: run.repliedAt,
      exitReason: run.exitReason,
      endedAt: run.endedAt,
      updatedAt: run.updatedAt,
    })
    .where(eq(flowRuns.id, run.id))
    .run();
}

/** The Run record (`GET /v1/flows/{id}/runs`); also inside `flow.completed`. */
export function runJson(row: FlowRunRow) {
  return {
    id: row.id,
    flow_id: row.flowId,
    contact_id: row.contactId,
    status: row.status,
    current_node_id: row.currentNodeId,
    waiting_until: toIso(row.waitingUntil),
    exit_reason: row.exitReason,
    started_at: toIso(row.startedAt) as string,
    ended_at: toIso(row.endedAt),
  };
}

/**
 * Ends a run: completed (it reached an end, or a node with nowhere to go) or exited (a purchase,
 * the flow deleted). An open step is closed as `exited`. `flow.completed` for completed runs.
 */
export async function finishRun(
  tx: DbOrTx,
  flow: Pick<FlowRow, "id" | "workspaceId">,
  run: FlowRunRow,
  status: "completed" | "exited",
  reason: string | null,
  now: number,
): Promise<FlowRunRow> {
  if (run.currentStepId)
    await tx
      .update(flowSteps)
      .set({ outcome: "exited", finishedAt: now })
      .where(eq(flowSteps.id, run.currentStepId))
      .run();
  const ended: FlowRunRow = {
    ...run,
    status,
    exitReason: reason,
    currentStepId: null,
    waitingUntil: null,
    waitKind: null,
    endedAt: now,
    updatedAt: now,
  };
  await writeRun(tx, ended);
  if (status === "completed") await emitEvent(tx, flow.workspaceId, "flow.completed", runJson(ended), now);
  return ended;
}

// ---------------------------------------------------------------------------------------------
// Nodes.

async function runNode(
  tx: DbOrTx,
  flow: FlowRow,
  run: FlowRunRow,
  node: FlowNode,
  contact: ContactRow | undefined,
  arriving: boolean,
  now: number,
  env: RunEnv,
): Promise<NodeResult> {
  const data = node.data ?? {};
  switch (node.type) {
    case "trigger":
      return { go: "out", outcome: "completed", action: "enrolled" };
    case "wait": {
      if (arriving) {
        const until = now + minutesOf(data) * 60_000;
        return { wait: until, kind: "wait", action: "waiting", detail: `until ${toIso(until)}` };
      }
      if ((run.waitingUntil ?? 0) > now)
        return { wait: run.waitingUntil as number, kind: "wait", action: "waiting" };
      return { go: "out", outcome: "completed", action: "waited" };
    }
    case "wait_for_reply": {
      if (arriving) {
        const until = now + Number(data.timeout_hours) * 3_600_000;
        return { wait: until, kind: "reply", action: "waiting_for_reply", detail: `until ${toIso(until)}` };
      }
      if (run.repliedAt !== null) return { go: "replied", outcome: "completed", action: "replied" };
      if ((run.waitingUntil ?? 0) > now)
        return { wait: run.waitingUntil as number, kind: "reply", action: "waiting_for_reply" };
      return { go: "timeout", outcome: "completed", action: "timeout" };
    }
    case "condition": {
      const matched = contact
        ? await contactMatches(tx, flow.workspaceId, contact.id, data.rules, now)
        : false;
      return { go: matched ? "true" : "false", outcome: "completed", action: matched ? "true" : "false" };
    }
    case "send_sms":
      return await sendNode(tx, flow, node, contact, now, env);
    case "call":
      return await callNode(tx, flow, node, contact, now, env);
    case "agent": {
      if (!contact) return { go: "out", outcome: "skipped", action: "skipped", detail: "no_contact" };
      const agentId = String(data.agent_id);
      const conversation = await handContactToAgent(tx, {
        workspaceId: flow.workspaceId,
        contact,
        agentId,
        now,
        greet: true,
      });
      return { go: "out", outcome: "completed", action: "handed_to_agent", detail: conversation.id };
    }
    case "add_to_list": {
      if (!contact) return { go: "out", outcome: "skipped", action: "skipped", detail: "no_contact" };
      const listId = String(data.list_id);
      // The list may have been deleted since the flow was saved: the run goes on without it.
      if (!(await workspaceRow(tx, lists, flow.workspaceId, listId)))
        return { go: "out", outcome: "skipped", action: "skipped", detail: "list_deleted" };
      const added = (await tx
        .insert(listMembers)
        .values({ listId, contactId: contact.id, workspaceId: flow.workspaceId, createdAt: now })
        .onConflictDoNothing()
        .run()) as unknown as { changes: number };
      if (added.changes > 0)
        for (const hook of listHooks) await hook(tx, flow.workspaceId, listId, [contact.id], now);
      return { go: "out", outcome: "completed", action: "added_to_list", detail: listId };
    }
    case "remove_from_list": {
      if (!contact) return { go: "out", outcome: "skipped", action: "skipped", detail: "no_contact" };
      const listId = String(data.list_id);
      await tx
        .delete(listMembers)
        .where(and(eq(listMembers.listId, listId), eq(listMembers.contactId, contact.id)))
        .run();
      return { go: "out", outcome: "completed", action: "removed_from_list", detail: listId };
    }
    case "update_contact": {
      if (!contact) return { go: "out", outcome: "skipped", action: "skipped", detail: "no_contact" };
      await applyContactUpdate(tx, contact, (data.fields ?? {}) as Record<string, unknown>, now);
      return {
        go: "out",
        outcome: "completed",
        action: "updated_contact",
        detail: Object.keys((data.fields ?? {}) as object).join(","),
      };
    }
    case "webhook": {
      await enqueueJob(
        tx,
        "flows.webhook",
        { flow_id: flow.id, run_id: run.id, node_id: node.id, retry: 0 },
        { workspaceId: flow.workspaceId, now },
      );
      return { go: "out", outcome: "completed", action: "webhook_queued", detail: String(data.url) };
    }
    case "end":
      return { end: true, action: "completed" };
    default:
      return { go: "out", outcome: "skipped", action: "skipped", detail: `unknown node type ${node.type}` };
  }
}

/** Subscribers to list additions made by flows (the flows' own added_to_list trigger). */
type ListHook = (
  tx: DbOrTx,
  workspaceId: string,
  listId: string,
  contactIds: string[],
  now: number,
) => Promise<void> | void;
const listHooks: ListHook[] = [];
export function onFlowAddedToList(hook: ListHook) {
  listHooks.push(hook);
}

async function applyContactUpdate(
  tx: DbOrTx,
  contact: ContactRow,
  fields: Record<string, unknown>,
  now: number,
) {
  const changes: Partial<ContactRow> = { updatedAt: now };
  const text = (v: unknown) => (v === null || v === undefined || String(v).trim() === "" ? null : String(v));
  if ("first_name" in fields) changes.firstName = text(fields.first_name);
  if ("last_name" in fields) changes.lastName = text(fields.last_name);
  if ("email" in fields) changes.email = text(fields.email);
  if ("external_id" in fields) changes.externalId = text(fields.external_id);
  if (typeof fields.timezone === "string") changes.timezone = fields.timezone;
  if (fields.fields && typeof fields.fields === "object")
    changes.fields = mergeFields(contact.fields ?? {}, fields.fields as Record<string, unknown>);
  await tx.update(contacts).set(changes).where(eq(contacts.id, contact.id)).run();
  Object.assign(contact, changes);
}

/**
 * The compliance module's answer for one flow send (a marketing send: API.md §6.1), with the
 * contact's suppression and recent marketing sends read now.
 */
async function decide(
  tx: DbOrTx,
  flow: FlowRow,
  contact: ContactRow,
  now: number,
  env: RunEnv,
  channel: "sms" | "voice",
) {
  const rules = await env.sendRules(tx, flow.workspaceId);
  const facts = await env.factsFor(tx, flow.workspaceId, contact, now);
  const decision = complianceDecision(contact, facts, rules, now, channel);
  // A send or a call made now counts for the contact's next one in the same batch (frequency cap).
  if (decision.action === "send") facts.recentSends.push(now);
  return decision;
}

/** A send or call the compliance module does not let go now: skipped past, or held until it may. */
function complianceHold(decision: Awaited<ReturnType<typeof decide>>): NodeResult | null {
  if (decision.action === "skip")
    return { go: "out", outcome: "skipped", action: "skipped", detail: decision.reason };
  if (decision.action === "defer")
    return {
      wait: decision.until,
      kind: "defer",
      action: "deferred",
      detail: decision.reasons.join(",") || "no_window",
    };
  return null;
}

async function sendNode(
  tx: DbOrTx,
  flow: FlowRow,
  node: FlowNode,
  contact: ContactRow | undefined,
  now: number,
  env: RunEnv,
): Promise<NodeResult> {
  if (!contact) return { go: "out", outcome: "skipped", action: "skipped", detail: "no_contact" };
  const held = complianceHold(await decide(tx, flow, contact, now, env, "sms"));
  if (held) return held;
  const data = node.data ?? {};
  let sender: NumberRow | null = null;
  if (typeof data.pool_id === "string" && data.pool_id) {
    const picked = await pickSender(tx, flow.workspaceId, data.pool_id, contact, now);
    const unregistered = picked.sender
      ? senderSkip((await env.sendRules(tx, flow.workspaceId)).registered, picked.sender)
      : null;
    if (unregistered) return { go: "out", outcome: "skipped", action: "skipped", detail: unregistered };
    if (!picked.sender)
      return picked.retryAt === null
        ? { wait: now + NO_SENDER_RETRY_MS, kind: "defer", action: "deferred", detail: "no_sending_number" }
        : { wait: picked.retryAt, kind: "defer", action: "deferred", detail: "daily_limit" };
    sender = picked.sender;
  } else {
    const fixed = await defaultSender(tx, flow.workspaceId);
    if (!fixed)
      return {
        wait: now + NO_SENDER_RETRY_MS,
        kind: "defer",
        action: "deferred",
        detail: "no_sending_number",
      };
    const unregistered = senderSkip((await env.sendRules(tx, flow.workspaceId)).registered, fixed);
    if (unregistered) return { go: "out", outcome: "skipped", action: "skipped", detail: unregistered };
    if (!(await reserveDailySend(tx, fixed, now)))
      return {
        wait: nextLocalMidnight(fixed.timezone, now),
        kind: "defer",
        action: "deferred",
        detail: "daily_limit",
      };
    sender = fixed;
  }
  const conversation = await threadForContact(tx, flow.workspaceId, contact.id, { reopen: false, now });
  const link = await flowOfferLink(tx, flow.workspaceId, data);
  const merged = mergeBody(String(data.body ?? ""), contact, link ? { offerUrl: link.url } : {});
  const message = await queueOutboundMessage(tx, {
    workspaceId: flow.workspaceId,
    contact,
    conversationId: conversation.id,
    thread: conversation,
    numberId: sender.id,
    from: sender.number,
    body: await onFlowLinkDomain(tx, flow.workspaceId, merged, data.link_domain_id),
    sender: "flow",
    now,
  });
  if (link)
    await createRecipientLink(
      tx,
      {
        workspaceId: flow.workspaceId,
        offerId: link.offerId,
        contactId: contact.id,
        campaignId: null,
        messageId: message.id,
        numberId: sender.id,
        code: link.code,
      },
      now,
    );
  return { go: "out", outcome: "sent", action: "sent", detail: message.body, messageId: message.id };
}

/**
 * The workspace's tracked links in a flow's text (an offer's `tracking_url`) go out on the node's
 * `link_domain_id`, else the default verified domain, else PUBLIC_URL (a domain deleted since the
 * flow was saved falls back the same way).
 */
/**
 * `{{offer_url}}` of a send_sms node with `offer_id`: a new link of the contact's own, on the node's
 * link domain, else the offer's, the default, PUBLIC_URL. Null when the node names no offer or its
 * offer was deleted since (the field then merges its fallback).
 */
async function flowOfferLink(
  tx: DbOrTx,
  workspaceId: string,
  data: Record<string, unknown>,
): Promise<{ offerId: string; code: string; url: string } | null> {
  if (typeof data.offer_id !== "string") return null;
  const offer = await workspaceRow(tx, offers, workspaceId, data.offer_id);
  if (!offer) return null;
  const named = typeof data.link_domain_id === "string" ? data.link_domain_id : null;
  const link = newRecipientLink(await workspaceLinkBase(tx, workspaceId, [named, offer.linkDomainId]));
  return { offerId: offer.id, ...link };
}

async function onFlowLinkDomain(
  tx: DbOrTx,
  workspaceId: string,
  body: string,
  named: unknown,
): Promise<string> {
  if (!body.includes("/r/")) return body;
  const base = await workspaceLinkBase(tx, workspaceId, [typeof named === "string" ? named : null]);
  return await brandTrackedLinks(tx, workspaceId, body, base);
}

async function callNode(
  tx: DbOrTx,
  flow: FlowRow,
  node: FlowNode,
  contact: ContactRow | undefined,
  now: number,
  env: RunEnv,
): Promise<NodeResult> {
  if (!contact) return { go: "out", outcome: "skipped", action: "skipped", detail: "no_contact" };
  const held = complianceHold(await decide(tx, flow, contact, now, env, "voice"));
  if (held) return held;
  const data = node.data ?? {};
  let sender: NumberRow;
  try {
    sender = await callSender(tx, flow.workspaceId, null);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { wait: now + NO_SENDER_RETRY_MS, kind: "defer", action: "deferred", detail: "no_voice_number" };
  }
  const conversation = await threadForContact(tx, flow.workspaceId, contact.id, { reopen: false, now });
  const agentId = typeof data.agent_id === "string" && data.agent_id ? data.agent_id : null;
  const call = await queueCall(tx, {
    workspaceId: flow.workspaceId,
    contact,
    conversationId: conversation.id,
    sender,
    agentId,
    say: agentId ? null : String(data.say ?? ""),
    flowId: flow.id,
    now,
  });
  return {
    go: "out",
    outcome: "sent",
    action: "call_queued",
    detail: agentId ?? String(data.say),
    callId: call.id,
  };
}

/** Active runs of a flow that are due at `now`, oldest due first. */
export async function dueRuns(tx: DbOrTx, flowId: string, now: number, limit: number): Promise<FlowRunRow[]> {
  return await tx
    .select()
    .from(flowRuns)
    .where(and(eq(flowRuns.flowId, flowId), RUN_IS_ACTIVE, lteNow(now)))
    .orderBy(nullsFirst(asc(flowRuns.waitingUntil)))
    .limit(limit)
    .all();
}

const lteNow = (now: number) => lte(flowRuns.waitingUntil, now);
