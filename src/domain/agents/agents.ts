import { and, eq } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import { containsText } from "../../db/dialect";
import { newestFirstPage } from "../../db/paging";
import {
  type AgentRow,
  agents,
  agentThreads,
  campaigns,
  conversations,
  numbers,
  workspaces,
} from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import type { EngineAgent, ModelTier, Tone } from "../../engines/llm";
import { AppError, invalid, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { isTimeZone, toIso } from "../../lib/time";
import {
  type ProviderAgentRef,
  type VoiceAgentSpec,
  type VoiceProvider,
  VoiceUnavailableError,
} from "../../voice/provider";
import { checkLinkDomainReference } from "../attribution/link-domains";

export const AGENT_STATUSES = ["draft", "active", "paused"] as const;
export const AGENT_CHANNELS = ["sms", "voice"] as const;
export const INBOX_MODES = ["auto", "assist", "manual"] as const;
export const INTENT_THRESHOLDS = ["low", "medium", "high"] as const;
export const AMBIENT_SOUNDS = [
  "none",
  "coffee-shop",
  "convention-hall",
  "summer-outdoor",
  "mountain-outdoor",
  "static-noise",
  "call-center",
] as const;

/** The `sms` object (seed: Agent, `sms`), every field filled in. */
export interface AgentSms {
  tone: Tone;
  creativity: "low" | "balanced" | "high";
  guardrails: string[];
  max_length: number;
  knowledge: string;
  handoff_on_low_confidence: boolean;
  handoff_after_turns: number;
  handoff_on_negative: boolean;
  handoff_message: string | null;
  reply_delay_min_sec: number;
  reply_delay_max_sec: number;
  max_replies_per_day: number;
  capture_fields: string[];
  link_domain_id: string | null;
  conversion_keywords: string[];
  conversion_on_agent_goal: boolean;
  followup_enabled: boolean;
  followup_count: number;
  followup_delay_hours: number;
  quiet_start_hour: number;
  quiet_end_hour: number;
  quiet_tz: string;
}

/** The `voice` object (seed: Agent, `voice`), every field filled in. */
export interface AgentVoice {
  voice_id: string | null;
  language: string;
  end_call: boolean;
  speed: number;
  temperature: number;
  volume: number;
  responsiveness: number;
  interruption_sensitivity: number;
  enable_backchannel: boolean;
  backchannel_frequency: number;
  reminder_trigger_ms: number;
  end_call_after_silence_ms: number;
  max_call_duration_ms: number;
  ambient_sound: (typeof AMBIENT_SOUNDS)[number];
  boosted_keywords: string[];
  model_temperature: number;
  voicemail_message: string | null;
}

export interface AgentInbox {
  mode: (typeof INBOX_MODES)[number];
  intent_threshold: (typeof INTENT_THRESHOLDS)[number];
  suppress_keywords: string[];
}

export interface AgentJson {
  id: string;
  name: string;
  system_prompt: string;
  channel: string;
  status: string;
  goal: string | null;
  greeting: string | null;
  max_turns: number | null;
  handoff_keywords: string[];
  voice_id: string | null;
  language: string;
  model_tier: ModelTier;
  sms: AgentSms;
  voice: AgentVoice;
  inbox: AgentInbox;
  /** Voice agents: the voice provider's copy, as last synced; null for SMS agents. */
  voice_sync: VoiceSync | null;
  created_at: string;
  updated_at: string;
}

/** Where a voice agent lives at the voice provider (API.md §6.4: synced on create and update). */
export interface VoiceSync {
  provider: string;
  llm_id: string;
  agent_id: string;
  synced_at: string;
}

/** Defaults of API.md §6.3 (and Retell's for the voice fields). Quiet hours come from the workspace. */
const SMS_DEFAULTS: Omit<AgentSms, "quiet_start_hour" | "quiet_end_hour" | "quiet_tz"> = {
  tone: "friendly",
  creativity: "balanced",
  guardrails: [],
  max_length: 320,
  knowledge: "",
  handoff_on_low_confidence: false,
  handoff_after_turns: 0,
  handoff_on_negative: true,
  handoff_message: null,
  reply_delay_min_sec: 20,
  reply_delay_max_sec: 90,
  max_replies_per_day: 20,
  capture_fields: [],
  link_domain_id: null,
  conversion_keywords: [],
  conversion_on_agent_goal: false,
  followup_enabled: false,
  followup_count: 1,
  followup_delay_hours: 24,
};

const VOICE_DEFAULTS: AgentVoice = {
  voice_id: null,
  language: "en-US",
  end_call: true,
  speed: 1,
  temperature: 1,
  volume: 1,
  responsiveness: 1,
  interruption_sensitivity: 1,
  enable_backchannel: false,
  backchannel_frequency: 0.8,
  reminder_trigger_ms: 10_000,
  end_call_after_silence_ms: 600_000,
  max_call_duration_ms: 3_600_000,
  ambient_sound: "none",
  boosted_keywords: [],
  model_temperature: 0,
  voicemail_message: null,
};

const INBOX_DEFAULTS: AgentInbox = { mode: "auto", intent_threshold: "medium", suppress_keywords: [] };

/** What a create or PATCH body may carry (the route's schema has checked types and ranges). */
export interface AgentInput {
  name?: string;
  system_prompt?: string;
  channel?: string;
  status?: string;
  goal?: string | null;
  greeting?: string | null;
  max_turns?: number | null;
  handoff_keywords?: string[];
  voice_id?: string | null;
  language?: string | null;
  model_tier?: string;
  sms?: Partial<AgentSms>;
  voice?: Partial<AgentVoice>;
  inbox?: Partial<AgentInbox>;
}

export function agentJson(row: AgentRow): AgentJson {
  const voice = row.voice as unknown as AgentVoice;
  return {
    id: row.id,
    name: row.name,
    system_prompt: row.systemPrompt,
    channel: row.channel,
    status: row.status,
    goal: row.goal,
    greeting: row.greeting,
    max_turns: row.maxTurns,
    handoff_keywords: row.handoffKeywords,
    voice_id: voice.voice_id,
    language: voice.language,
    model_tier: row.modelTier as ModelTier,
    sms: row.sms as unknown as AgentSms,
    voice,
    inbox: row.inbox as unknown as AgentInbox,
    voice_sync: row.channel === "voice" && row.voiceSync ? (row.voiceSync as unknown as VoiceSync) : null,
    created_at: toIso(row.createdAt) as string,
    updated_at: toIso(row.updatedAt) as string,
  };
}

/** What the engines read of an agent. */
export function engineAgentOf(agent: AgentJson): EngineAgent {
  return {
    name: agent.name,
    systemPrompt: agent.system_prompt,
    goal: agent.goal,
    greeting: agent.greeting,
    tone: agent.sms.tone,
    creativity: agent.sms.creativity,
    guardrails: agent.sms.guardrails,
    knowledge: agent.sms.knowledge,
    maxLength: agent.sms.max_length,
    modelTier: agent.model_tier,
    captureFields: agent.sms.capture_fields,
  };
}

/** What the voice provider needs of a voice agent, with the ids of its last sync. */
export function voiceAgentSpec(agent: AgentJson, sync: Record<string, unknown> | null): VoiceAgentSpec {
  const ref =
    sync && typeof sync.llm_id === "string" && typeof sync.agent_id === "string"
      ? { llm_id: sync.llm_id, agent_id: sync.agent_id }
      : null;
  return {
    id: agent.id,
    name: agent.name,
    systemPrompt: agent.system_prompt,
    goal: agent.goal,
    greeting: agent.greeting,
    guardrails: agent.sms.guardrails,
    knowledge: agent.sms.knowledge,
    tone: agent.sms.tone,
    voice: agent.voice,
    ref,
  };
}

/** Asks the voice provider; its outage becomes the contract's 503 (the caller has written nothing yet). */
export async function askVoiceProvider<T>(ask: () => Promise<T>): Promise<T> {
  try {
    return await ask();
  } catch (error) {
    if (error instanceof VoiceUnavailableError)
      throw new AppError("unavailable", "Voice provider unavailable: try again later");
    throw error;
  }
}

/** The provider's voice ids, when the body or the agent makes voice_id matter; 503 when it cannot answer. */
async function knownVoices(
  provider: VoiceProvider,
  input: AgentInput,
  currentChannel: string | null,
): Promise<ReadonlySet<string>> {
  const matters =
    input.channel === "voice" ||
    (input.channel === undefined && currentChannel === "voice") ||
    (input.voice_id !== undefined && input.voice_id !== null) ||
    (input.voice?.voice_id !== undefined && input.voice.voice_id !== null);
  if (!matters) return new Set();
  const voices = await askVoiceProvider(async () => await provider.listVoices());
  return new Set(voices.map((v) => v.voice_id));
}

/** Creates or updates the provider's copy of a voice agent; 503 (nothing written) when it is down. */
async function syncVoiceAgent(
  provider: VoiceProvider,
  json: AgentJson,
  previous: Record<string, unknown> | null,
  now: number,
): Promise<Record<string, unknown>> {
  const ref: ProviderAgentRef = await askVoiceProvider(
    async () =>
      await provider.syncAgent(voiceAgentSpec(json, previous?.provider === provider.name ? previous : null)),
  );
  const sync: VoiceSync = {
    provider: provider.name,
    llm_id: ref.llm_id,
    agent_id: ref.agent_id,
    synced_at: toIso(now) as string,
  };
  return sync as unknown as Record<string, unknown>;
}

/** The agent of the workspace, or 404. */
export async function findAgent(db: DbOrTx, workspaceId: string, id: string): Promise<AgentRow> {
  const row = await workspaceRow(db, agents, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

/** For body references (`agent_id` of a number, campaign, thread or flow node): 422 when unknown. */
export async function agentForReference(
  db: DbOrTx,
  workspaceId: string,
  id: string,
  field: string,
): Promise<AgentRow> {
  const row = await workspaceRow(db, agents, workspaceId, id);
  if (!row) throw invalid(`${field} does not exist`);
  return row;
}

/** Same, and the agent must answer by SMS. */
export async function smsAgentForReference(
  db: DbOrTx,
  workspaceId: string,
  id: string,
  field: string,
): Promise<AgentRow> {
  const row = await agentForReference(db, workspaceId, id, field);
  if (row.channel !== "sms") throw invalid(`${field} must be an SMS agent (this one is a voice agent)`);
  return row;
}

const trimmedList = (values: string[]) => values.map((v) => v.trim()).filter((v) => v !== "");

/**
 * Copies the fields of `patch` that `target` has (it has every field, filled in): an unknown field
 * is ignored, never stored (API.md §1).
 */
function mergeKnown(target: object, patch: object | undefined) {
  for (const [key, value] of Object.entries(patch ?? {}))
    if (value !== undefined && Object.hasOwn(target, key)) (target as Record<string, unknown>)[key] = value;
}

/**
 * Merges a body into the current configuration (nested objects field by field) and checks what the
 * schema cannot: reply delays in order, the quiet zone, and the voice rules.
 */
function mergeConfig(current: AgentJson, input: AgentInput, voices: ReadonlySet<string>): AgentJson {
  const next: AgentJson = {
    ...current,
    sms: { ...current.sms },
    voice: { ...current.voice },
    inbox: { ...current.inbox },
  };
  if (input.name !== undefined) {
    if (input.name.trim() === "") throw invalid("name is required");
    next.name = input.name;
  }
  if (input.system_prompt !== undefined) {
    if (input.system_prompt.trim() === "") throw invalid("system_prompt is required");
    next.system_prompt = input.system_prompt;
  }
  if (input.channel !== undefined) next.channel = input.channel;
  if (input.status !== undefined) next.status = input.status;
  if (input.goal !== undefined) next.goal = input.goal;
  if (input.greeting !== undefined) next.greeting = input.greeting;
  if (input.max_turns !== undefined) next.max_turns = input.max_turns;
  if (input.handoff_keywords !== undefined) next.handoff_keywords = trimmedList(input.handoff_keywords);
  if (input.model_tier !== undefined) next.model_tier = input.model_tier as ModelTier;
  mergeKnown(next.sms, input.sms);
  mergeKnown(next.voice, input.voice);
  mergeKnown(next.inbox, input.inbox);
  // Top-level voice_id and language are the same fields as voice.voice_id and voice.language.
  if (input.voice_id !== undefined) next.voice.voice_id = input.voice_id;
  if (input.language !== undefined && input.language !== null) next.voice.language = input.language;
  next.voice_id = next.voice.voice_id;
  next.language = next.voice.language;
  next.sms.guardrails = trimmedList(next.sms.guardrails);
  next.sms.capture_fields = trimmedList(next.sms.capture_fields);
  next.sms.conversion_keywords = trimmedList(next.sms.conversion_keywords);
  next.inbox.suppress_keywords = trimmedList(next.inbox.suppress_keywords);

  if (next.sms.reply_delay_min_sec > next.sms.reply_delay_max_sec)
    throw invalid("sms.reply_delay_min_sec must not be greater than sms.reply_delay_max_sec");
  if (!isTimeZone(next.sms.quiet_tz)) throw invalid("sms.quiet_tz must be a valid IANA time zone");
  if (next.channel === "voice") {
    if (!next.voice.voice_id) throw invalid("voice_id is required");
    if (!voices.has(next.voice.voice_id)) throw invalid("voice_id is not a known voice");
  } else if (
    next.voice.voice_id &&
    (input.voice_id || input.voice?.voice_id) &&
    !voices.has(next.voice.voice_id)
  ) {
    throw invalid("voice_id is not a known voice");
  }
  return next;
}

function rowOf(json: AgentJson, workspaceId: string, createdAt: number, now: number): AgentRow {
  return {
    id: json.id,
    workspaceId,
    name: json.name,
    systemPrompt: json.system_prompt,
    channel: json.channel,
    status: json.status,
    goal: json.goal,
    greeting: json.greeting,
    maxTurns: json.max_turns,
    handoffKeywords: json.handoff_keywords,
    voiceId: json.voice.voice_id,
    language: json.voice.language,
    modelTier: json.model_tier,
    sms: json.sms as unknown as Record<string, unknown>,
    voice: json.voice as unknown as Record<string, unknown>,
    inbox: json.inbox as unknown as Record<string, unknown>,
    voiceSync: null,
    createdAt,
    updatedAt: now,
  };
}

/**
 * Creates an agent. A voice agent is checked against the provider's voices and synced to it
 * first; the provider being down answers 503 and writes nothing.
 */
export async function createAgent(
  db: Db,
  workspaceId: string,
  input: AgentInput,
  voice: VoiceProvider,
  now = Date.now(),
): Promise<AgentJson> {
  if (input.name === undefined) throw invalid("name is required");
  if (input.system_prompt === undefined) throw invalid("system_prompt is required");
  const voices = await knownVoices(voice, input, null);
  const json = await db.transaction(async (tx) => {
    const ws = await tx.select().from(workspaces).where(eq(workspaces.id, workspaceId)).get();
    const blank: AgentJson = {
      id: newId(),
      name: "",
      system_prompt: "",
      channel: "sms",
      status: "active",
      goal: null,
      greeting: null,
      max_turns: null,
      handoff_keywords: [],
      voice_id: null,
      language: VOICE_DEFAULTS.language,
      model_tier: "balanced",
      sms: {
        ...SMS_DEFAULTS,
        // The agent's quiet window starts as the workspace's quiet hours, in its zone.
        quiet_start_hour: ws?.quietStartHour ?? 21,
        quiet_end_hour: ws?.quietEndHour ?? 8,
        quiet_tz: ws?.timezone ?? "America/New_York",
      },
      voice: { ...VOICE_DEFAULTS },
      inbox: { ...INBOX_DEFAULTS },
      voice_sync: null,
      created_at: "",
      updated_at: "",
    };
    const merged = mergeConfig(blank, input, voices);
    await checkLinkDomainReference(tx, workspaceId, merged.sms.link_domain_id, "sms.link_domain_id");
    return merged;
  });
  const sync = json.channel === "voice" ? await syncVoiceAgent(voice, json, null, now) : null;
  const row = { ...rowOf(json, workspaceId, now, now), voiceSync: sync };
  await db.insert(agents).values(row).run();
  return agentJson(row);
}

export async function getAgent(db: DbOrTx, workspaceId: string, id: string): Promise<AgentJson> {
  return agentJson(await findAgent(db, workspaceId, id));
}

export async function listAgents(
  db: DbOrTx,
  workspaceId: string,
  filters: { status?: string; channel?: string; q?: string },
  page: { limit: number; offset: number },
) {
  const conditions = [eq(agents.workspaceId, workspaceId), containsText(agents.name, filters.q)];
  if (filters.status !== undefined) {
    if (!(AGENT_STATUSES as readonly string[]).includes(filters.status))
      throw invalid(`status must be one of ${AGENT_STATUSES.join(", ")}`);
    conditions.push(eq(agents.status, filters.status));
  }
  if (filters.channel !== undefined) {
    if (!(AGENT_CHANNELS as readonly string[]).includes(filters.channel))
      throw invalid(`channel must be one of ${AGENT_CHANNELS.join(", ")}`);
    conditions.push(eq(agents.channel, filters.channel));
  }
  const where = and(...conditions);
  const { rows, total } = await newestFirstPage(db, agents, where, [agents.createdAt, agents.id], page);
  return { items: rows.map(agentJson), total };
}

/**
 * PATCH: merges the body into the agent. A voice agent is synced to the provider again before the
 * write; the provider being down answers 503 and changes nothing.
 */
export async function updateAgent(
  db: Db,
  workspaceId: string,
  id: string,
  input: AgentInput,
  voice: VoiceProvider,
  now = Date.now(),
): Promise<AgentJson> {
  const before = await findAgent(db, workspaceId, id);
  const voices = await knownVoices(voice, input, before.channel);
  const check = async () =>
    await db.transaction(async (tx) => {
      const current = await findAgent(tx, workspaceId, id);
      const json = mergeConfig(agentJson(current), input, voices);
      // Only a domain the body names is checked: one named earlier and deleted since falls back.
      if (input.sms?.link_domain_id !== undefined)
        await checkLinkDomainReference(tx, workspaceId, json.sms.link_domain_id, "sms.link_domain_id");
      // An agent answering on numbers or threads by SMS cannot become a voice agent under them.
      if (json.channel === "voice" && current.channel === "sms" && (await answersSms(tx, workspaceId, id)))
        throw invalid("channel cannot be voice while the agent answers SMS on numbers, campaigns or threads");
      return { current, json };
    });
  const { current, json } = await check();
  const sync = json.channel === "voice" ? await syncVoiceAgent(voice, json, current.voiceSync, now) : null;
  return await db.transaction(async (tx) => {
    // Deleted while the provider answered: nothing to update.
    await findAgent(tx, workspaceId, id);
    const row = { ...rowOf(json, workspaceId, current.createdAt, now), voiceSync: sync };
    await tx.update(agents).set(row).where(eq(agents.id, id)).run();
    return agentJson(row);
  });
}

async function answersSms(tx: DbOrTx, workspaceId: string, id: string): Promise<boolean> {
  const onNumber = await tx
    .select({ id: numbers.id })
    .from(numbers)
    .where(and(eq(numbers.workspaceId, workspaceId), eq(numbers.agentId, id)))
    .get();
  const onThread = await tx
    .select({ id: conversations.id })
    .from(conversations)
    .where(and(eq(conversations.workspaceId, workspaceId), eq(conversations.agentId, id)))
    .get();
  const onCampaign = await tx
    .select({ id: campaigns.id })
    .from(campaigns)
    .where(
      and(
        eq(campaigns.workspaceId, workspaceId),
        eq(campaigns.agentId, id),
        eq(campaigns.campaignType, "sms"),
      ),
    )
    .get();
  return Boolean(onNumber || onThread || onCampaign);
}

/**
 * Deletes the agent: numbers stop routing to it and its threads keep their history with no agent
 * (an owed reply or follow-up finds no agent and does nothing). Campaigns keep the id they were
 * configured with; a voice campaign naming a deleted agent is refused at launch.
 */
export async function deleteAgent(db: Db, workspaceId: string, id: string, now = Date.now()) {
  await db.transaction(async (tx) => {
    await findAgent(tx, workspaceId, id);
    await tx
      .update(numbers)
      .set({ agentId: null })
      .where(and(eq(numbers.workspaceId, workspaceId), eq(numbers.agentId, id)))
      .run();
    await tx
      .update(conversations)
      .set({ agentId: null, updatedAt: now })
      .where(and(eq(conversations.workspaceId, workspaceId), eq(conversations.agentId, id)))
      .run();
    await tx
      .update(agentThreads)
      .set({ replyDueAt: null, updatedAt: now })
      .where(and(eq(agentThreads.workspaceId, workspaceId), eq(agentThreads.agentId, id)))
      .run();
    await tx.delete(agents).where(eq(agents.id, id)).run();
  });
}
