import type { Answer } from "../../api";

type AmbientSound = Answer<"/v1/agents/{id}">["agent"]["voice"]["ambient_sound"];

/**
 * The background sounds a voice agent takes, in the order the form lists them. The set is the
 * OpenAPI document's: `satisfies` fails the type check when a value is missing here or not in the API.
 */
const AMBIENT_SOUNDS = {
  none: true,
  "coffee-shop": true,
  "convention-hall": true,
  "summer-outdoor": true,
  "mountain-outdoor": true,
  "static-noise": true,
  "call-center": true,
} satisfies Record<AmbientSound, true>;

/**
 * The agent form's copy: every setting of an agent (API.md §3 Agents, the `sms`, `voice` and
 * `inbox` objects) grouped by purpose, labelled in words, with help text and, for the closed value
 * sets, the choices in words.
 */
export type FieldKind = "text" | "long" | "number" | "bool" | "list" | "select" | "hour";

export interface FieldCopy {
  /** `name`, or `sms.tone`, `voice.speed`, `inbox.mode`… */
  path: string;
  label: string;
  help?: string;
  kind: FieldKind;
  options?: { value: string; label: string }[];
  min?: number;
  max?: number;
  step?: number;
  /** Empty input means null (optional values). */
  nullable?: boolean;
}

export interface GroupCopy {
  id: string;
  title: string;
  intro: string;
  /** Only for voice agents / only for SMS agents. */
  only?: "voice" | "sms";
  fields: FieldCopy[];
}

const hours = Array.from({ length: 24 }, (_, h) => ({
  value: String(h),
  label: `${String(h).padStart(2, "0")}:00`,
}));

export const GROUPS: GroupCopy[] = [
  {
    id: "persona",
    title: "Persona",
    intro: "Who the agent is and what it knows.",
    fields: [
      {
        path: "name",
        label: "Name",
        kind: "text",
        help: "Shown to your team; the agent may introduce itself with it.",
      },
      {
        path: "status",
        label: "Status",
        kind: "select",
        options: [
          { value: "draft", label: "Draft: does nothing yet" },
          { value: "active", label: "Active: answers its threads" },
          { value: "paused", label: "Paused: stays quiet" },
        ],
      },
      {
        path: "system_prompt",
        label: "Instructions",
        kind: "long",
        help: "Who the agent is, what it sells, how it talks. The offline engine answers from this and the goal too.",
      },
      {
        path: "goal",
        label: "Goal",
        kind: "text",
        nullable: true,
        help: "What a successful conversation achieves, e.g. “book a test ride”.",
      },
      {
        path: "sms.knowledge",
        label: "Knowledge",
        kind: "long",
        help: "Facts, prices, hours and answers to common questions. The agent answers from these.",
      },
      {
        path: "sms.tone",
        label: "Tone",
        kind: "select",
        options: ["friendly", "professional", "casual", "empathetic", "direct"].map((v) => ({
          value: v,
          label: v[0]?.toUpperCase() + v.slice(1),
        })),
      },
      {
        path: "sms.guardrails",
        label: "Never do or say",
        kind: "list",
        help: "One rule a line, e.g. “promise delivery dates”.",
      },
      {
        path: "model_tier",
        label: "Model",
        kind: "select",
        options: [
          { value: "fast", label: "Fast: quickest and cheapest" },
          { value: "balanced", label: "Balanced" },
          { value: "smart", label: "Smart: best answers, slower" },
        ],
      },
      {
        path: "sms.creativity",
        label: "Creativity",
        kind: "select",
        options: [
          { value: "low", label: "Low: sticks to the facts" },
          { value: "balanced", label: "Balanced" },
          { value: "high", label: "High: more varied wording" },
        ],
      },
    ],
  },
  {
    id: "conversation",
    title: "Conversation",
    intro: "How the agent opens, how long it writes, and what it picks up from the contact.",
    fields: [
      {
        path: "greeting",
        label: "Opening message",
        kind: "text",
        nullable: true,
        help: "Empty: the agent waits for the contact.",
      },
      {
        path: "sms.max_length",
        label: "Longest reply (characters)",
        kind: "number",
        min: 1,
        max: 1600,
        help: "Replies are cut at a sentence end. 160 fits one SMS segment.",
      },
      {
        path: "max_turns",
        label: "Wrap up after this many turns",
        kind: "number",
        min: 1,
        nullable: true,
        help: "Empty: no limit.",
      },
      {
        path: "sms.capture_fields",
        label: "Details to capture",
        kind: "list",
        help: "One a line: first_name, last_name, email, or your own (zip, appointment_time…). Saved on the contact.",
      },
      {
        path: "sms.conversion_keywords",
        label: "Words that mean a lead",
        kind: "list",
        help: "A contact message containing one records a “lead” conversion.",
      },
      { path: "sms.conversion_on_agent_goal", label: "Record a lead when the goal is reached", kind: "bool" },
    ],
  },
  {
    id: "handoff",
    title: "Handing off to a person",
    intro: "When the agent stops and flags the thread for your team.",
    fields: [
      {
        path: "handoff_keywords",
        label: "Phrases that hand off",
        kind: "list",
        help: "One a line, e.g. “talk to a person”, “manager”.",
      },
      { path: "sms.handoff_on_low_confidence", label: "Hand off when unsure of the answer", kind: "bool" },
      { path: "sms.handoff_on_negative", label: "Hand off when the contact is upset", kind: "bool" },
      {
        path: "sms.handoff_after_turns",
        label: "Hand off after this many turns without reaching the goal",
        kind: "number",
        min: 0,
        help: "0: never.",
      },
      {
        path: "sms.handoff_message",
        label: "Message when handing off",
        kind: "text",
        nullable: true,
        help: "Empty: nothing is sent.",
      },
      {
        path: "inbox.mode",
        label: "What the agent does with a message",
        kind: "select",
        options: [
          { value: "auto", label: "Replies by itself" },
          { value: "assist", label: "Drafts a reply for a person to send" },
          { value: "manual", label: "Only reads it (intent, sentiment)" },
        ],
      },
      {
        path: "inbox.intent_threshold",
        label: "Flag the thread for a person at buying intent",
        kind: "select",
        options: [
          { value: "low", label: "Low or above" },
          { value: "medium", label: "Medium or above" },
          { value: "high", label: "High only" },
        ],
      },
      {
        path: "inbox.suppress_keywords",
        label: "Never flag messages containing",
        kind: "list",
        help: "One a line.",
      },
    ],
  },
  {
    id: "timing",
    title: "Timing",
    intro: "How fast and how often the agent answers, and when it stays quiet.",
    only: "sms",
    fields: [
      {
        path: "sms.reply_delay_min_sec",
        label: "Wait at least (seconds) before replying",
        kind: "number",
        min: 0,
      },
      { path: "sms.reply_delay_max_sec", label: "Wait at most (seconds)", kind: "number", min: 0 },
      { path: "sms.max_replies_per_day", label: "Most replies a day in one thread", kind: "number", min: 0 },
      { path: "sms.quiet_start_hour", label: "Quiet from", kind: "hour", options: hours },
      {
        path: "sms.quiet_end_hour",
        label: "Quiet until",
        kind: "hour",
        options: hours,
        help: "The same hour twice: never quiet.",
      },
      {
        path: "sms.quiet_tz",
        label: "Time zone of the quiet hours",
        kind: "text",
        help: "e.g. America/New_York",
      },
    ],
  },
  {
    id: "followups",
    title: "Follow-ups",
    intro: "Nudges when the contact goes quiet. They count as marketing: the sending rules apply.",
    only: "sms",
    fields: [
      { path: "sms.followup_enabled", label: "Follow up when the contact goes quiet", kind: "bool" },
      { path: "sms.followup_delay_hours", label: "After this many hours of silence", kind: "number", min: 0 },
      { path: "sms.followup_count", label: "At most this many follow-ups", kind: "number", min: 0 },
    ],
  },
  {
    id: "voice",
    title: "Voice",
    intro: "How the agent sounds and behaves on a call.",
    only: "voice",
    fields: [
      {
        path: "voice.voice_id",
        label: "Voice",
        kind: "text",
        nullable: true,
        help: "A voice id from the voices list.",
      },
      { path: "voice.language", label: "Language", kind: "text", help: "e.g. en-US" },
      { path: "voice.speed", label: "Speaking speed", kind: "number", min: 0.5, max: 2, step: 0.1 },
      { path: "voice.volume", label: "Volume", kind: "number", min: 0, max: 2, step: 0.1 },
      { path: "voice.temperature", label: "Voice variability", kind: "number", min: 0, max: 2, step: 0.1 },
      {
        path: "voice.responsiveness",
        label: "How fast it answers",
        kind: "number",
        min: 0,
        max: 1,
        step: 0.05,
      },
      {
        path: "voice.interruption_sensitivity",
        label: "How easily the caller interrupts",
        kind: "number",
        min: 0,
        max: 1,
        step: 0.05,
      },
      { path: "voice.enable_backchannel", label: "Say “mhm” while listening", kind: "bool" },
      { path: "voice.backchannel_frequency", label: "How often", kind: "number", min: 0, max: 1, step: 0.05 },
      { path: "voice.end_call", label: "May end the call itself", kind: "bool" },
      {
        path: "voice.reminder_trigger_ms",
        label: "Prompt the caller after silence (ms)",
        kind: "number",
        min: 0,
      },
      {
        path: "voice.end_call_after_silence_ms",
        label: "Hang up after silence (ms)",
        kind: "number",
        min: 0,
      },
      { path: "voice.max_call_duration_ms", label: "Longest call (ms)", kind: "number", min: 0 },
      {
        path: "voice.ambient_sound",
        label: "Background sound",
        kind: "select",
        options: (Object.keys(AMBIENT_SOUNDS) as AmbientSound[]).map((v) => ({
          value: v,
          label: v.replace("-", " "),
        })),
      },
      {
        path: "voice.boosted_keywords",
        label: "Words to listen for",
        kind: "list",
        help: "Names, products; one a line.",
      },
      {
        path: "voice.model_temperature",
        label: "Model temperature",
        kind: "number",
        min: 0,
        max: 1,
        step: 0.05,
      },
      {
        path: "voice.voicemail_message",
        label: "Voicemail message",
        kind: "text",
        nullable: true,
        help: "Empty: hang up on voicemail.",
      },
    ],
  },
];
