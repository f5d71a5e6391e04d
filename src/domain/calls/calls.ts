/**
 * Calls (API.md §3 Calls, §6.4): one-off calls, the durable `calls.place` job, and what providers
 * report. An agent call goes through the voice provider (src/voice), a `say` call through the
 * carrier's call API. Placing is exactly once across crashes: a marker is committed before the
 * hand-off, and a job that finds it asks the provider for the call by our id before placing again.
 * A call's first final status writes one entry into the contact's thread (a message with status
 * CALL and `call_id`) and emits `call.completed`, in the transaction that records it.
 */
import { and, count, desc, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { Carrier } from "../../carriers/carrier";
import { CarrierUnavailableError } from "../../carriers/carrier";
import type { Db, DbOrTx } from "../../db/client";
import { countWhere, sqlFalse } from "../../db/dialect";
import { witnessed } from "../../db/group-commit";
import {
  type AgentRow,
  agents,
  type CallRow,
  type ContactRow,
  calls,
  contacts,
  messages,
  type NumberRow,
} from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import type { JobContext, JobPayloads } from "../../jobs/catalog";
import { RescheduleJob } from "../../jobs/catalog";
import { enqueueJob } from "../../jobs/queue";
import { invalid, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { log } from "../../lib/log";
import { normalizePhone } from "../../lib/phone";
import { toIso } from "../../lib/time";
import {
  CALL_STATUSES,
  type CallReport,
  type CallStatus,
  isFinalCallStatus,
  type OutboundCall,
  type VoiceAgentSpec,
  type VoiceProvider,
  VoiceUnavailableError,
} from "../../voice/provider";
import { type AgentJson, agentJson, voiceAgentSpec } from "../agents/agents";
import { ensureContact } from "../audience/contacts";
import { canSendTo } from "../audience/suppression";
import { handOffDecision } from "../campaigns/send-plan";
import { settleCallRecipient } from "../campaigns/stats";
import { emitEvent } from "../events";
import { threadForContact, touchConversation } from "../messaging/conversations";
import { activeNumberOf, defaultSender } from "../messaging/numbers";
import { spendDailyBudget } from "../workspace/daily-budgets";

export const MAX_SAY_LENGTH = 2000;

/** The Call record (API.md §6.4); also the data of `call.completed`. */
export interface CallJson {
  id: string;
  direction: string;
  from: string;
  to: string;
  status: string;
  agent_id: string | null;
  say: string | null;
  contact_id: string | null;
  conversation_id: string | null;
  campaign_id: string | null;
  duration_sec: number | null;
  transcript: { role: string; text: string; at: string }[];
  recording_url: string | null;
  summary: string | null;
  sentiment: string | null;
  ended_reason: string | null;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
}

export function callJson(row: CallRow): CallJson {
  return {
    id: row.id,
    direction: row.direction,
    from: row.fromNumber,
    to: row.toNumber,
    status: row.status,
    agent_id: row.agentId,
    say: row.say,
    contact_id: row.contactId,
    conversation_id: row.conversationId,
    campaign_id: row.campaignId,
    duration_sec: row.durationSec,
    transcript: row.transcript,
    recording_url: row.recordingUrl,
    summary: row.summary,
    sentiment: row.sentiment,
    ended_reason: row.endedReason,
    created_at: toIso(row.createdAt) as string,
    started_at: toIso(row.startedAt),
    ended_at: toIso(row.endedAt),
  };
}

// ---------------------------------------------------------------------------------------------
// Runtime: the providers each database's call jobs use.

interface CallsRuntime {
  carrier: Carrier;
  voice: VoiceProvider;
}
const runtimes = new WeakMap<Db, CallsRuntime>();

/** Wires calls at boot: jobs on `db` place calls on these providers; their reports land in `db`. */
export function startCalls(db: Db, carrier: Carrier, voice: VoiceProvider) {
  runtimes.set(db, { carrier, voice });
  const sink = { onCallReports: async (reports: CallReport[]) => void (await applyCallReports(db, reports)) };
  carrier.callSinks.attach(sink);
  voice.sinks.attach(sink);
}

/** The voice provider started for `db` (agent sync and the voices catalogue use it). */
export function voiceProviderOf(db: Db): VoiceProvider {
  const runtime = runtimes.get(db);
  if (!runtime) throw new Error("calls are not started on this database");
  return runtime.voice;
}

// ---------------------------------------------------------------------------------------------
// Accepting calls.

export interface CallInput {
  to?: string;
  from?: string | null;
  agent_id?: string | null;
  say?: string | null;
}

/** Checks `say` (1..2000 characters, not only blanks). */
export function checkSay(say: string, field = "say") {
  if (say.trim() === "") throw invalid(`${field} must not be empty`);
  if (say.length > MAX_SAY_LENGTH) throw invalid(`${field} is too long (max ${MAX_SAY_LENGTH})`);
}

/** The voice agent `agentId` names, or 422 naming `field` (another workspace's is "does not exist"). */
export async function voiceAgentFor(
  tx: DbOrTx,
  workspaceId: string,
  agentId: string,
  field = "agent_id",
): Promise<AgentRow> {
  const row = await workspaceRow(tx, agents, workspaceId, agentId);
  if (!row) throw invalid(`${field} does not exist`);
  if (row.channel !== "voice") throw invalid(`${field} must be a voice agent (this one is an SMS agent)`);
  if (row.status === "paused") throw invalid(`${field} is paused`);
  return row;
}

/**
 * The number a call goes from: `from` (an active number of the workspace), else the workspace's
 * default, else its oldest active number; it must be able to place calls (422 naming `from`).
 * SMS daily limits do not apply to calls.
 */
export async function callSender(
  tx: DbOrTx,
  workspaceId: string,
  from: string | null | undefined,
): Promise<NumberRow> {
  const row = from ? await activeNumberOf(tx, workspaceId, from) : await defaultSender(tx, workspaceId);
  if (!row)
    throw invalid(
      from ? "from is not a number of this workspace" : "No sending number: order one with POST /v1/numbers",
    );
  if (!row.voiceCapable) throw invalid("from cannot place calls: the number has no voice capability");
  return row;
}

/** Records a call QUEUED and its `calls.place` job, in the caller's transaction. */
export async function queueCall(
  tx: DbOrTx,
  input: {
    workspaceId: string;
    contact: ContactRow;
    conversationId: string | null;
    sender: NumberRow;
    agentId: string | null;
    say: string | null;
    campaignId?: string | null;
    /** The flow whose `call` node places it (a marketing call, counted by the frequency cap). */
    flowId?: string | null;
    now: number;
  },
): Promise<CallRow> {
  const row: CallRow = {
    id: newId(),
    workspaceId: input.workspaceId,
    direction: "outbound",
    fromNumber: input.sender.number,
    toNumber: input.contact.phoneNumber,
    numberId: input.sender.id,
    status: "QUEUED",
    agentId: input.agentId,
    say: input.agentId ? null : input.say,
    contactId: input.contact.id,
    conversationId: input.conversationId,
    campaignId: input.campaignId ?? null,
    flowId: input.flowId ?? null,
    via: input.agentId ? "voice" : "carrier",
    providerCallId: null,
    durationSec: null,
    transcript: [],
    recordingUrl: null,
    summary: null,
    sentiment: null,
    endedReason: null,
    handoffStartedAt: null,
    createdAt: input.now,
    startedAt: null,
    endedAt: null,
    updatedAt: input.now,
  };
  await tx.insert(calls).values(row).run();
  await enqueueJob(
    tx,
    "calls.place",
    { call_id: row.id },
    { workspaceId: input.workspaceId, now: input.now },
  );
  return row;
}

/**
 * POST /v1/calls: exactly one of `agent_id` (a voice agent) or `say`; `from` a voice-capable
 * number of the workspace (default sender rule otherwise); opt-out and suppression → 422 like a
 * message. Creates the contact and its thread when new. Spends one of the workspace's one-off
 * daily budget (429 past it). One transaction; nothing is written when a check fails.
 */
export async function createCall(
  db: Db,
  workspaceId: string,
  input: CallInput,
  now = Date.now(),
): Promise<CallJson> {
  const hasAgent = input.agent_id !== undefined && input.agent_id !== null;
  const hasSay = input.say !== undefined && input.say !== null;
  if (!hasAgent && !hasSay) throw invalid("agent_id or say is required");
  if (hasAgent && hasSay) throw invalid("agent_id and say cannot both be given: choose one");
  if (hasSay) checkSay(input.say as string);
  if (input.to === undefined || input.to === null) throw invalid("to is required");
  const to = normalizePhone(input.to);
  if (!to) throw invalid("to must be a valid phone number");
  let from: string | null = null;
  if (input.from !== undefined && input.from !== null) {
    from = normalizePhone(input.from);
    if (!from) throw invalid("from must be a valid phone number");
  }
  return await db.transaction(async (tx) => {
    await spendDailyBudget(tx, workspaceId, "one_off_daily_limit", 1, now);
    const agent = hasAgent ? await voiceAgentFor(tx, workspaceId, input.agent_id as string) : null;
    const sender = await callSender(tx, workspaceId, from);
    const permission = await canSendTo(tx, workspaceId, to);
    if (!permission.allowed) throw invalid(permission.message);
    const { contact, created } = await ensureContact(tx, workspaceId, to, "api", now);
    const conversation = await threadForContact(tx, workspaceId, contact.id, {
      reopen: false,
      now,
      newContact: created,
    });
    const row = await queueCall(tx, {
      workspaceId,
      contact,
      conversationId: conversation.id,
      sender,
      agentId: agent?.id ?? null,
      say: hasSay ? (input.say as string) : null,
      now,
    });
    // An Idempotency-Key's answer commits with the call (see keptWithEffect).
    return await witnessed(tx, callJson(row));
  });
}

// ---------------------------------------------------------------------------------------------
// Reading.

export async function getCall(db: DbOrTx, workspaceId: string, id: string): Promise<CallJson> {
  const row = await workspaceRow(db, calls, workspaceId, id);
  if (!row) throw notFound();
  return callJson(row);
}

export interface CallFilters {
  status?: string;
  contact_id?: string;
  campaign_id?: string;
  agent_id?: string;
  limit: number;
  offset: number;
}

/** Calls newest first, filtered by status, contact, campaign or agent. */
export async function listCalls(db: DbOrTx, workspaceId: string, filters: CallFilters) {
  const conditions: (SQL | undefined)[] = [eq(calls.workspaceId, workspaceId)];
  if (filters.status !== undefined) {
    if (!(CALL_STATUSES as readonly string[]).includes(filters.status))
      throw invalid(`status must be one of ${CALL_STATUSES.join(", ")}`);
    conditions.push(eq(calls.status, filters.status));
  }
  const idFilter = (
    value: string | undefined,
    column: typeof calls.contactId | typeof calls.campaignId | typeof calls.agentId,
  ) => {
    if (value === undefined) return;
    conditions.push(isUuid(value) ? eq(column, value) : sqlFalse());
  };
  idFilter(filters.contact_id, calls.contactId);
  idFilter(filters.campaign_id, calls.campaignId);
  idFilter(filters.agent_id, calls.agentId);
  const where = and(...conditions);
  const rows = await db
    .select()
    .from(calls)
    .where(where)
    .orderBy(desc(calls.createdAt), desc(calls.id))
    .limit(filters.limit)
    .offset(filters.offset)
    .all();
  const total = (await db.select({ n: count() }).from(calls).where(where).get())?.n ?? 0;
  return { calls: rows.map(callJson), total, limit: filters.limit, offset: filters.offset };
}

// ---------------------------------------------------------------------------------------------
// The place job.

/** How much earlier than our marker a provider's record of the call may be stamped (clock skew). */
const LOOKUP_SLACK_MS = 5 * 60_000;

async function loadCall(db: DbOrTx, id: string): Promise<CallRow | undefined> {
  return await db.select().from(calls).where(eq(calls.id, id)).get();
}

/** What the provider is handed for `row`: the agent's spec with its provider ids, or the text. */
async function outboundOf(db: DbOrTx, row: CallRow): Promise<OutboundCall | { missing: string }> {
  const call: OutboundCall = {
    callId: row.id,
    workspaceId: row.workspaceId,
    from: row.fromNumber,
    to: row.toNumber,
  };
  if (row.agentId) {
    const agent = await db.select().from(agents).where(eq(agents.id, row.agentId)).get();
    if (agent?.channel !== "voice") return { missing: "agent_deleted" };
    const spec: VoiceAgentSpec = voiceAgentSpec(agentJson(agent) as AgentJson, agent.voiceSync);
    call.agent = spec;
  } else {
    call.say = row.say ?? "";
  }
  return call;
}

/**
 * `calls.place`: hands one QUEUED call to its provider, exactly once.
 * 1. Skip calls past QUEUED (a duplicate or late job).
 * 2. Re-check opt-out and suppression now: blocked → FAILED, nothing is placed.
 * 3. If an earlier attempt started a hand-off and its outcome is unknown, ask the provider for the
 *    call by our id; only when it has none do we place it.
 * 4. Commit the marker, place, then record the provider's id and status and complete the job in
 *    one transaction. A refusal → FAILED with its reason.
 * A provider outage leaves the call QUEUED and retries with backoff; out of retries → FAILED
 * (`provider_unavailable`).
 */
export async function placeCallJob(payload: JobPayloads["calls.place"], ctx: JobContext) {
  const { db } = ctx;
  const runtime = runtimes.get(db);
  if (!runtime) throw new Error("calls are not started on this database");
  const row = await loadCall(db, payload.call_id);
  if (row?.status !== "QUEUED") return;
  const fail = async (reason: string) => {
    await ctx.completeWith(
      async (tx) => await applyReport(tx, row.id, { status: "FAILED", endedReason: reason }, ctx.clock.now()),
    );
  };

  const permission = await canSendTo(db, row.workspaceId, row.toNumber);
  if (!permission.allowed) return await fail(permission.reason);
  const call = await outboundOf(db, row);
  if ("missing" in call) return await fail(call.missing);
  const provider = row.via === "voice" ? runtime.voice : runtime.carrier;
  const placed = async (providerCallId: string, status: CallStatus) => {
    await ctx.completeWith(
      async (tx) => await applyReport(tx, row.id, { status, providerCallId }, ctx.clock.now()),
    );
  };
  try {
    if (row.handoffStartedAt !== null) {
      const found = await provider.lookupCall(call, row.handoffStartedAt - LOOKUP_SLACK_MS);
      if (found.found) return await placed(found.providerCallId, found.status);
    }
    // A campaign's or a flow's call is asked the send-time rules again: the job may run long after
    // the call was written (a retry, a restart), and a call never goes inside the window.
    if (row.campaignId !== null || row.flowId !== null) {
      const window = await handOffDecision(
        db,
        {
          channel: "voice",
          workspaceId: row.workspaceId,
          campaignId: row.campaignId,
          contactId: row.contactId,
          to: row.toNumber,
        },
        ctx.clock.now(),
      );
      if (window.action === "defer") throw new RescheduleJob(window.until);
      if (window.action === "skip") return await fail(window.reason);
    }
    await db
      .update(calls)
      .set({ handoffStartedAt: ctx.clock.now(), updatedAt: ctx.clock.now() })
      .where(and(eq(calls.id, row.id), eq(calls.status, "QUEUED")))
      .run();
    // A lease running out (a node frozen past it) leaves the call to the job's next holder, who
    // finds the marker and asks the provider first.
    if (!ctx.leaseHolds()) throw new RescheduleJob(ctx.clock.now());
    const result = await provider.placeCall(call);
    if (!result.accepted) return await fail(result.errorCode || "rejected");
    return await placed(result.providerCallId, result.status);
  } catch (error) {
    if (!(error instanceof VoiceUnavailableError) && !(error instanceof CarrierUnavailableError)) throw error;
    if (ctx.job.attempts >= ctx.job.maxAttempts) return await fail("provider_unavailable");
    log.warn("voice provider unavailable; the call will be retried", {
      call_id: row.id,
      error: error.message,
    });
    if (error.retryAfterMs) throw new RescheduleJob(ctx.clock.now() + error.retryAfterMs);
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Reports.

const RANK: Record<string, number> = { QUEUED: 0, RINGING: 1, IN_PROGRESS: 2 };
const rankOf = (status: string) => RANK[status] ?? 3;

/** What a call's thread entry says when there is no summary. */
const OUTCOME_TEXT: Record<string, string> = {
  COMPLETED: "Call completed",
  BUSY: "Busy",
  NO_ANSWER: "No answer",
  FAILED: "Call failed",
  VOICEMAIL: "Reached voicemail",
};

function threadEntryBody(row: CallRow): string {
  return row.summary ?? OUTCOME_TEXT[row.status] ?? row.status;
}

/**
 * Applies provider reports in one transaction; returns how many named no call of ours (those are
 * ignored). Idempotent: a status never moves back, and the thread entry and `call.completed` come
 * once, with the first final status. A later report on a finished call (Retell's call_analyzed
 * after call_ended) fills in what was missing: summary, sentiment, transcript, recording.
 */
export async function applyCallReports(
  db: Db,
  reports: CallReport[],
  now = Date.now(),
): Promise<{ unknown: number }> {
  let unknown = 0;
  if (reports.length === 0) return { unknown };
  await db.transaction(async (tx) => {
    for (const report of reports) {
      const id =
        report.callId && isUuid(report.callId)
          ? report.callId
          : await idByProviderId(tx, report.providerCallId);
      if (!id || !(await applyReport(tx, id, report, now))) unknown++;
    }
  });
  if (unknown) log.info("call reports about no call of ours were ignored", { unknown });
  return { unknown };
}

async function idByProviderId(tx: DbOrTx, providerCallId: string | undefined): Promise<string | undefined> {
  if (!providerCallId) return undefined;
  return (await tx.select({ id: calls.id }).from(calls).where(eq(calls.providerCallId, providerCallId)).get())
    ?.id;
}

/** One report applied to one call; false when there is no such call. */
async function applyReport(tx: DbOrTx, callId: string, report: CallReport, now: number): Promise<boolean> {
  const current = await loadCall(tx, callId);
  if (!current) return false;
  const wasFinal = isFinalCallStatus(current.status);
  const forward = rankOf(report.status) > rankOf(current.status);
  const next: CallRow = { ...current, updatedAt: now };
  if (report.providerCallId && !current.providerCallId) next.providerCallId = report.providerCallId;
  if (forward) next.status = report.status;
  // Details: taken when moving forward, and on a finished call only where still missing.
  const take = <K extends keyof CallRow>(key: K, value: CallRow[K] | undefined) => {
    if (value === undefined || value === null) return;
    const empty =
      current[key] === null || (Array.isArray(current[key]) && (current[key] as unknown[]).length === 0);
    if (forward || empty) next[key] = value;
  };
  take("durationSec", report.durationSec ?? undefined);
  if (report.transcript?.length) take("transcript", report.transcript);
  take("recordingUrl", report.recordingUrl ?? undefined);
  take("summary", report.summary ?? undefined);
  take("sentiment", report.sentiment ?? undefined);
  take("endedReason", report.endedReason ?? undefined);
  take("startedAt", report.startedAt ?? undefined);
  if (report.status === "IN_PROGRESS" && next.startedAt === null) next.startedAt = now;
  const becameFinal = !wasFinal && isFinalCallStatus(next.status);
  if (becameFinal) next.endedAt = report.endedAt ?? now;
  await tx
    .update(calls)
    .set({
      status: next.status,
      providerCallId: next.providerCallId,
      durationSec: next.durationSec,
      transcript: next.transcript,
      recordingUrl: next.recordingUrl,
      summary: next.summary,
      sentiment: next.sentiment,
      endedReason: next.endedReason,
      startedAt: next.startedAt,
      endedAt: next.endedAt,
      updatedAt: now,
    })
    .where(eq(calls.id, callId))
    .run();
  if (next.campaignId && next.contactId && forward) await settleCallRecipient(tx, next, now);
  if (becameFinal) {
    await writeThreadEntry(tx, next, now);
    await emitEvent(tx, next.workspaceId, "call.completed", callJson(next), now);
  } else if (wasFinal && next.summary !== current.summary) {
    // The analysis came after the end: the thread entry now says what the call was about.
    await tx
      .update(messages)
      .set({ body: threadEntryBody(next), updatedAt: now })
      .where(and(eq(messages.workspaceId, next.workspaceId), eq(messages.callId, next.id)))
      .run();
  }
  return true;
}

/** The call's one entry in the contact's thread: sender agent (agent calls) or system, status CALL. */
async function writeThreadEntry(tx: DbOrTx, call: CallRow, now: number) {
  if (!call.conversationId) return;
  const contact = call.contactId
    ? await tx.select({ id: contacts.id }).from(contacts).where(eq(contacts.id, call.contactId)).get()
    : undefined;
  await tx
    .insert(messages)
    .values({
      id: newId(),
      workspaceId: call.workspaceId,
      direction: "outbound",
      sender: call.agentId ? "agent" : "system",
      fromNumber: call.fromNumber,
      toNumber: call.toNumber,
      body: threadEntryBody(call),
      status: "CALL",
      segments: 0,
      encoding: "GSM-7",
      contactId: contact?.id ?? null,
      conversationId: call.conversationId,
      campaignId: call.campaignId,
      callId: call.id,
      followup: false,
      numberId: call.numberId,
      carrierMessageId: null,
      errorCode: null,
      errorMessage: null,
      handoffStartedAt: null,
      sendAt: null,
      createdAt: now,
      sentAt: null,
      deliveredAt: null,
      updatedAt: now,
    })
    .run();
  await touchConversation(tx, call.conversationId, now);
}

/**
 * How many of the counted calls were placed: a call is placed once its provider took it (it has
 * the provider's id); one refused before placement (opted out, suppressed) or by the provider is
 * failed, not placed. Campaign stats and the analytics overview count the same way.
 */
const placedCalls = sql<number>`count(${calls.providerCallId})`.mapWith(Number);

/** `stats.calls` of a voice campaign (API.md §6.4), one grouped count over its calls. */
export async function campaignCallStats(db: DbOrTx, workspaceId: string, campaignId: string) {
  const rows = await db
    .select({
      status: calls.status,
      n: sql<number>`count(*)`.mapWith(Number),
      placed: placedCalls,
    })
    .from(calls)
    .where(and(eq(calls.workspaceId, workspaceId), eq(calls.campaignId, campaignId)))
    .groupBy(calls.status)
    .all();
  const stats = { placed: 0, answered: 0, voicemail: 0, no_answer: 0, busy: 0, failed: 0 };
  for (const row of rows) {
    const n = Number(row.n);
    stats.placed += Number(row.placed);
    if (row.status === "COMPLETED") stats.answered += n;
    else if (row.status === "VOICEMAIL") stats.voicemail += n;
    else if (row.status === "NO_ANSWER") stats.no_answer += n;
    else if (row.status === "BUSY") stats.busy += n;
    else if (row.status === "FAILED") stats.failed += n;
  }
  return stats;
}

/**
 * The workspace's outbound calls created in [from, to) for `GET /v1/analytics/overview`: placed
 * (placedCalls) and completed (answered and ended).
 */
export async function callTotals(db: DbOrTx, workspaceId: string, from: number, to: number) {
  const row = await db
    .select({
      placed: placedCalls,
      completed: countWhere(sql`${calls.status} = 'COMPLETED'`),
    })
    .from(calls)
    .where(
      and(
        eq(calls.workspaceId, workspaceId),
        gte(calls.createdAt, from),
        lt(calls.createdAt, to),
        eq(calls.direction, "outbound"),
      ),
    )
    .get();
  return { placed: Number(row?.placed ?? 0), completed: Number(row?.completed ?? 0) };
}
