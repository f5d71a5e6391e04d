import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import {
  AGENT_CHANNELS,
  AGENT_STATUSES,
  AMBIENT_SOUNDS,
  askVoiceProvider,
  createAgent,
  deleteAgent,
  getAgent,
  INBOX_MODES,
  INTENT_THRESHOLDS,
  listAgents,
  updateAgent,
} from "../domain/agents/agents";
import { testChat } from "../domain/agents/test-chat";
import { CREATIVITY, INTENTS, MODEL_TIERS, SENTIMENTS, TONES } from "../engines/llm";
import { workspaceOf } from "../http/context";
import { Body, Enum, Int, Ok, responses, Timestamp, Uuid, WRITE_ERRORS } from "../http/schemas";
import { resourceRoutes } from "./resource-routes";

const MAX_PROMPT = 20_000;
const Str = (description: string, maxLength = 2000) =>
  t.String({ maxLength, description: `${description} (max ${maxLength})` });
const NullableStr = (description: string, maxLength = 2000) =>
  t.Union([t.String({ maxLength }), t.Null()], { description: `${description} (max ${maxLength})` });
const Strings = (description: string) =>
  t.Array(t.String({ maxLength: 2000 }), { maxItems: 200, description: `${description} (up to 200)` });
const Count = (description: string) => Int({ minimum: 0, maximum: 1_000_000, description });
const Millis = (description: string) =>
  Int({ minimum: 0, maximum: 86_400_000, description: `${description} (0–86,400,000)` });
const Hour = (description: string) => Int({ minimum: 0, maximum: 23, description });
const Range = (min: number, max: number, description: string) =>
  t.Number({ minimum: min, maximum: max, description: `${description} (${min}–${max})` });

const smsFields = {
  tone: Enum(TONES, "How the agent sounds"),
  creativity: Enum(CREATIVITY, "Temperature of the model: low 0.2, balanced 0.6, high 0.9"),
  guardrails: Strings("Things the agent must never do or say"),
  max_length: Int({
    minimum: 1,
    maximum: 1600,
    description: "Longest reply in characters, cut at a sentence end (1–1600)",
  }),
  knowledge: t.String({
    maxLength: MAX_PROMPT,
    description: `What the agent answers from: facts, prices, hours, FAQs (max ${MAX_PROMPT})`,
  }),
  handoff_on_low_confidence: t.Boolean({
    description: "Hand off when the engine is unsure (confidence < 0.4)",
  }),
  handoff_after_turns: Count("Hand off after this many turns without reaching the goal; 0 = never"),
  handoff_on_negative: t.Boolean({ description: "Hand off when the contact is negative" }),
  handoff_message: NullableStr("Sent to the contact when the agent hands off; null sends nothing", 1600),
  reply_delay_min_sec: Count("Shortest wait before replying, seconds"),
  reply_delay_max_sec: Count("Longest wait before replying, seconds (≥ reply_delay_min_sec)"),
  max_replies_per_day: Count("Most replies per thread per local day"),
  capture_fields: Strings(
    "Fields to capture from the contact's messages: first_name, last_name, email, or custom (zip, appointment_time …)",
  ),
  link_domain_id: NullableStr(
    "A verified link domain of the workspace (`/v1/link-domains`) for the tracked links the agent sends; null: the default verified domain, else PUBLIC_URL. Otherwise 422 `sms.link_domain_id is not a verified link domain`. A domain deleted or no longer verified later falls back the same way.",
    64,
  ),
  conversion_keywords: Strings("A contact message containing one records a `lead` conversion"),
  conversion_on_agent_goal: t.Boolean({ description: "Record a `lead` conversion when the goal is reached" }),
  followup_enabled: t.Boolean({ description: "Follow up when the contact goes quiet" }),
  followup_count: Count("Most follow-ups since the contact last wrote"),
  followup_delay_hours: Count("Hours of silence before a follow-up"),
  quiet_start_hour: Hour("The agent's quiet window starts at this local hour (0–23)"),
  quiet_end_hour: Hour("…and ends at this local hour (0–23); equal hours = no quiet window"),
  quiet_tz: Str("IANA zone of the quiet window", 64),
};

const voiceFields = {
  voice_id: NullableStr("Voice from GET /v1/voices", 200),
  language: Str("Voice language, e.g. en-US", 35),
  end_call: t.Boolean({ description: "The agent may end the call" }),
  speed: Range(0.5, 2, "Speaking speed"),
  temperature: Range(0, 2, "Voice variability"),
  volume: Range(0, 2, "Volume"),
  responsiveness: Range(0, 1, "How fast the agent answers"),
  interruption_sensitivity: Range(0, 1, "How easily the caller interrupts"),
  enable_backchannel: t.Boolean({ description: "Short acknowledgements (“mhm”) while listening" }),
  backchannel_frequency: Range(0, 1, "How often it backchannels"),
  reminder_trigger_ms: Millis("Silence before the agent prompts the caller, ms"),
  end_call_after_silence_ms: Millis("Silence before the call ends, ms"),
  max_call_duration_ms: Millis("Longest call, ms"),
  ambient_sound: Enum(AMBIENT_SOUNDS, "Background sound"),
  boosted_keywords: Strings("Words the speech recogniser should favour"),
  model_temperature: Range(0, 1, "Temperature of the voice model"),
  voicemail_message: NullableStr("Left on voicemail; null hangs up", 1600),
};

const inboxFields = {
  mode: Enum(INBOX_MODES, "auto: replies; assist: drafts for a person; manual: only classifies"),
  intent_threshold: Enum(INTENT_THRESHOLDS, "Intent at or above this flags the thread for a person"),
  suppress_keywords: Strings("Messages containing one of these are not flagged by intent"),
};

const partial = <T extends Record<string, import("@sinclair/typebox").TSchema>>(
  fields: T,
  description: string,
) =>
  t.Optional(
    t.Object(
      Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, t.Optional(v)])) as {
        [K in keyof T]: import("@sinclair/typebox").TOptional<T[K]>;
      },
      { description },
    ),
  );

const commonFields = {
  channel: t.Optional(Enum(AGENT_CHANNELS, "sms (default) or voice")),
  status: t.Optional(Enum(AGENT_STATUSES, "draft, active (default) or paused; only active agents act")),
  goal: t.Optional(NullableStr("What a successful conversation achieves")),
  greeting: t.Optional(
    NullableStr("Opening message when a campaign or flow hands the agent a new contact", 1600),
  ),
  max_turns: t.Optional(
    t.Union([Int({ minimum: 1, maximum: 1000 }), t.Null()], {
      description: "Turns before the agent wraps up and hands off; null = no limit",
    }),
  ),
  handoff_keywords: t.Optional(
    Strings("Contact phrases that hand the thread to a person (anywhere, any case)"),
  ),
  voice_id: t.Optional(NullableStr("Same as voice.voice_id; required for a voice agent", 200)),
  language: t.Optional(NullableStr("Same as voice.language", 35)),
  model_tier: t.Optional(
    Enum(MODEL_TIERS, "Which configured model answers: fast, balanced (default) or smart"),
  ),
  sms: partial(smsFields, "SMS behaviour; unset fields keep their value (defaults on create)"),
  voice: partial(voiceFields, "Voice build config; unset fields keep their value"),
  inbox: partial(inboxFields, "Inbox routing and human handoff"),
};

const CreateBody = Body(
  {
    name: t.String({ minLength: 1, maxLength: 200, description: "Agent name (max 200)", examples: ["Maya"] }),
    system_prompt: t.String({
      minLength: 1,
      maxLength: MAX_PROMPT,
      description: `Persona and instructions (max ${MAX_PROMPT})`,
      examples: ["You are Maya, the front desk of Sunny Dental."],
    }),
    ...commonFields,
  },
  { description: "A new agent (seed: Agent)" },
);

const PatchBody = Body(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "Agent name (max 200)" })),
    system_prompt: t.Optional(
      t.String({
        minLength: 1,
        maxLength: MAX_PROMPT,
        description: `Persona and instructions (max ${MAX_PROMPT})`,
      }),
    ),
    ...commonFields,
  },
  { description: "Fields to change; nested objects are merged field by field" },
);

export const AgentSchema = t.Object(
  {
    id: Uuid("Agent id"),
    name: t.String({ description: "Name" }),
    system_prompt: t.String({ description: "Persona and instructions" }),
    channel: Enum(AGENT_CHANNELS, "sms or voice"),
    status: Enum(AGENT_STATUSES, "draft | active | paused"),
    goal: t.Union([t.String(), t.Null()], { description: "What a successful conversation achieves" }),
    greeting: t.Union([t.String(), t.Null()], { description: "Opening message" }),
    max_turns: t.Union([Int(), t.Null()], { description: "Turns before wrapping up; null = no limit" }),
    handoff_keywords: t.Array(t.String(), { description: "Phrases that hand off" }),
    voice_id: t.Union([t.String(), t.Null()], { description: "Voice (voice agents)" }),
    language: t.String({ description: "Voice language" }),
    model_tier: Enum(MODEL_TIERS, "fast | balanced | smart"),
    sms: t.Object(smsFields, { description: "SMS behaviour, every field filled in" }),
    voice: t.Object(voiceFields, { description: "Voice build config, every field filled in" }),
    inbox: t.Object(inboxFields, { description: "Inbox routing, every field filled in" }),
    voice_sync: t.Union(
      [
        t.Object(
          {
            provider: t.String({ description: "simulated or retell" }),
            llm_id: t.String({ description: "The provider's LLM id (Retell: retell-llm)" }),
            agent_id: t.String({ description: "The provider's agent id" }),
            synced_at: Timestamp("When the agent was last synced"),
          },
          { description: "The voice provider's copy of this agent" },
        ),
        t.Null(),
      ],
      {
        description:
          "Voice agents: where the agent lives at the voice provider, synced on every create and update (a provider that is down answers 503 and nothing is written); null for SMS agents.",
      },
    ),
    created_at: Timestamp("When the agent was created"),
    updated_at: Timestamp("Last change"),
  },
  { description: "An AI agent (seed: Agent)" },
);

const TestBody = Body(
  {
    messages: t.Array(
      t.Object({
        role: Enum(["contact", "agent"], "Who wrote it"),
        text: t.String({ maxLength: 1600, description: "Message text (max 1600)" }),
      }),
      { minItems: 1, maxItems: 100, description: "The conversation so far, oldest first (1–100)" },
    ),
  },
  { description: "A conversation to answer" },
);

const TestReply = t.Object(
  {
    text: t.String({ description: "What the agent would send (empty when it would send nothing)" }),
    intent: Enum(INTENTS, "Intent of the contact's latest messages"),
    sentiment: Enum(SENTIMENTS, "Sentiment of the contact's latest messages"),
    confidence: t.Number({ description: "0..1: how sure the engine is" }),
    goal_reached: t.Boolean({ description: "The agent's goal is reached" }),
    captured: t.Record(t.String(), t.String(), { description: "Capture fields found, by name" }),
    handoff: t.Union([t.Object({ reason: t.String({ description: "Why" }) }), t.Null()], {
      description: "null, or the handoff the live agent would make",
    }),
  },
  { description: "The agent's answer, as the live reply loop would decide it" },
);

const Voice = t.Object(
  {
    voice_id: t.String({ description: "Id to put in voice_id" }),
    name: t.String({ description: "Display name" }),
    provider: t.String({ description: "Voice provider" }),
    language: t.String({ description: "Language, e.g. en-US" }),
    gender: t.String({ description: "female | male" }),
  },
  { description: "A voice" },
);

// /v1/agents (seed endpoint 4) and /v1/voices.
export function agentsRoutes(deps: AppDeps) {
  return new Elysia({ name: "agents" })
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/agents",
          tag: "Agents",
          one: "agent",
          many: "agents",
          item: AgentSchema,
          idDescription: "Agent id",
        },
        {
          list: {
            summary: "List agents (newest first)",
            description: "Filters: `status`, `channel`, and `q` (name contains).",
            query: {
              status: t.Optional(t.String({ description: "draft | active | paused" })),
              channel: t.Optional(t.String({ description: "sms | voice" })),
              q: t.Optional(
                t.String({
                  maxLength: 200,
                  description: "Name contains (case-insensitive for ASCII letters: É and é differ)",
                }),
              ),
            },
            itemsDescription: "Agents, newest first",
            run: async (workspaceId, query, page) => await listAgents(deps.db, workspaceId, query, page),
          },
          create: {
            summary: "Create an agent",
            description:
              "Seed endpoint 4. Defaults are filled in and returned (`sms`, `voice`, `inbox` whole). The quiet window starts as the workspace's quiet hours and zone. A voice agent needs `voice_id` (or `voice.voice_id`) from `GET /v1/voices`.",
            body: CreateBody,
            run: (workspaceId, body, now) => createAgent(deps.db, workspaceId, body, deps.voice, now),
          },
          get: {
            summary: "Get an agent",
            description: "The agent with its full `sms`, `voice` and `inbox` objects.",
            run: async (workspaceId, id) => await getAgent(deps.db, workspaceId, id),
          },
          update: {
            summary: "Update an agent",
            description: "Partial update; `sms`, `voice` and `inbox` are merged field by field.",
            body: PatchBody,
            run: (workspaceId, id, body, now) => updateAgent(deps.db, workspaceId, id, body, deps.voice, now),
          },
          delete: {
            summary: "Delete an agent",
            description:
              "Numbers and threads stop routing to it; threads keep their history. Replies it owed are not sent.",
            run: async (workspaceId, id, now) => await deleteAgent(deps.db, workspaceId, id, now),
          },
        },
      ),
    )
    .post(
      "/v1/agents/:id/test",
      async ({ request, params, body }) => ({
        ok: true as const,
        reply: await testChat(deps.db, workspaceOf(request), params.id, body.messages),
      }),
      {
        params: t.Object({ id: t.String({ description: "Agent id" }) }),
        body: TestBody,
        detail: {
          tags: ["Agents"],
          operationId: "testAgent",
          summary: "Test chat",
          description:
            "Answers a conversation exactly as the live reply loop would (same engine, same handoff, capture and intent rules), writing and sending nothing. Works on draft agents. As live, CTIA keywords (STOP, HELP, START...) are not the agent's to answer: when the contact's latest messages are only such keywords, or include a STOP, `text` is empty.",
        },
        response: responses(t.Object({ ok: Ok, reply: TestReply }), [...WRITE_ERRORS, 404]),
      },
    )
    .get(
      "/v1/voices",
      async () => ({
        ok: true as const,
        voices: await askVoiceProvider(async () => await deps.voice.listVoices()),
      }),
      {
        detail: {
          tags: ["Agents"],
          operationId: "listVoices",
          summary: "List voices",
          description:
            "Voices a voice agent may use, from the voice provider: the simulated provider's fixed catalogue (12 voices: en-US, en-GB, en-AU, en-IN, es-ES, es-MX, fr-FR, de-DE), or Retell's `/list-voices` with `VOICE=retell` (`voice_name` → `name`, `accent` → `language` when no language is given). 503 `Voice provider unavailable: try again later` when Retell cannot be reached.",
        },
        response: responses(
          t.Object({ ok: Ok, voices: t.Array(Voice, { description: "Voices" }) }),
          [401, 429, 503],
        ),
      },
    );
}
