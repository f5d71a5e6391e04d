import { instantOfWallTime, wallTime } from "../../compliance/zone-clock";
import type { EngineAnswer, Intent } from "../../engines/llm";
import type { AgentJson } from "./agents";

/**
 * The agent's rules around an engine's answer (API.md §6.3), pure: plain data in, a decision out.
 * The live reply loop (runtime.ts) and the test chat (POST /v1/agents/{id}/test) both call
 * `decideTurn`, so what a user tests is what a contact gets.
 */

/** Why an agent stops and hands the thread to a person. `requested`: the engine said a person should answer. */
export type HandoffReason =
  | "keyword"
  | "turns"
  | "negative"
  | "low_confidence"
  | "max_turns"
  | "llm_unavailable"
  | "requested";

/** Below this confidence an answer counts as unsure (`handoff_on_low_confidence`). */
export const LOW_CONFIDENCE = 0.4;

/** What the agent says when `max_turns` is reached and it wraps up. */
export const WRAP_UP_LINE =
  "Thanks for chatting with me! Someone from our team will follow up with you from here.";

const INTENT_RANK: Record<Intent, number> = { none: 0, low: 1, medium: 2, high: 3 };

/** The thread as the rules see it before this turn. */
export interface TurnState {
  /** Turns the agent has answered on this thread. */
  turns: number;
  goalReached: boolean;
}

export interface TurnDecision {
  /** The text to send now (auto mode), already cut to `max_length`; null sends nothing. */
  send: string | null;
  /** Assist mode: the proposed answer, kept on the thread for a person. */
  draft: string | null;
  /** The text the agent would answer (what the test chat shows), whatever the mode. */
  text: string;
  intent: Intent;
  sentiment: EngineAnswer["sentiment"];
  confidence: number;
  goalReached: boolean;
  captured: Record<string, string>;
  /** A person should look (a hot lead, an assist draft, or a handoff). */
  needsAttention: boolean;
  handoff: { reason: HandoffReason } | null;
  /** A conversion to record once: the keyword found, or `goal`. */
  conversion: { source: "keyword"; keyword: string } | { source: "goal" } | null;
}

const lower = (s: string) => s.toLowerCase();

/** The first of `keywords` found anywhere in `text`, case-insensitively. */
export function keywordIn(text: string, keywords: readonly string[]): string | null {
  const haystack = lower(text);
  for (const keyword of keywords) if (keyword && haystack.includes(lower(keyword))) return keyword;
  return null;
}

/** Cuts a reply to `max` characters at the last sentence end that fits, else at a word boundary. */
export function cutToLength(text: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  const head = trimmed.slice(0, max);
  const sentenceEnd = Math.max(head.lastIndexOf(". "), head.lastIndexOf("! "), head.lastIndexOf("? "));
  if (/[.!?]$/.test(head)) return head;
  if (sentenceEnd > 0) return head.slice(0, sentenceEnd + 1);
  const space = head.lastIndexOf(" ");
  return (space > 0 ? head.slice(0, space) : head).trim();
}

/**
 * A handoff keyword in the contact's messages hands off before any engine is asked (the live loop
 * checks it as the message arrives).
 */
export function keywordHandoff(agent: AgentJson, contactText: string): boolean {
  return keywordIn(contactText, agent.handoff_keywords) !== null;
}

/**
 * One turn: the contact's new messages (`contactText`) and the engine's answer (null when the
 * engine was unavailable) under the agent's configuration and the thread's state.
 */
export function decideTurn(
  agent: AgentJson,
  state: TurnState,
  contactText: string,
  answer: EngineAnswer | null,
): TurnDecision {
  const base: TurnDecision = {
    send: null,
    draft: null,
    text: "",
    intent: answer?.intent ?? "none",
    sentiment: answer?.sentiment ?? "neutral",
    confidence: answer?.confidence ?? 0,
    goalReached: state.goalReached || (answer?.goal_reached ?? false),
    captured: answer ? capturedOf(agent, answer) : {},
    needsAttention: false,
    handoff: null,
    conversion: null,
  };
  const auto = agent.inbox.mode === "auto";
  const handoff = (reason: HandoffReason, text = agent.sms.handoff_message ?? ""): TurnDecision => ({
    ...base,
    text,
    send: auto && text.trim() ? cutToLength(text, agent.sms.max_length) : null,
    needsAttention: true,
    handoff: { reason },
  });

  // Intent at or above the threshold flags the thread for a person, unless a suppress keyword says not to.
  if (
    answer &&
    INTENT_RANK[answer.intent] >= INTENT_RANK[agent.inbox.intent_threshold] &&
    keywordIn(contactText, agent.inbox.suppress_keywords) === null
  )
    base.needsAttention = true;
  const keyword = keywordIn(contactText, agent.sms.conversion_keywords);
  if (keyword) base.conversion = { source: "keyword", keyword };
  else if (answer?.goal_reached && !state.goalReached && agent.sms.conversion_on_agent_goal)
    base.conversion = { source: "goal" };

  if (keywordHandoff(agent, contactText)) return handoff("keyword");
  if (!answer) return { ...handoff("llm_unavailable"), intent: "none" };
  if (agent.sms.handoff_on_negative && answer.sentiment === "negative") return handoff("negative");
  if (answer.handoff) return handoff("requested");
  if (agent.sms.handoff_on_low_confidence && answer.confidence < LOW_CONFIDENCE)
    return handoff("low_confidence");
  const turns = agent.sms.handoff_after_turns;
  if (turns > 0 && state.turns >= turns && !base.goalReached) return handoff("turns");
  if (agent.max_turns !== null && state.turns + 1 >= agent.max_turns)
    return handoff("max_turns", agent.sms.handoff_message ?? WRAP_UP_LINE);

  const text = cutToLength(answer.reply, agent.sms.max_length);
  if (agent.inbox.mode === "auto") return { ...base, text, send: text.trim() ? text : null };
  if (agent.inbox.mode === "assist") return { ...base, text, draft: text, needsAttention: true };
  return { ...base, text };
}

/** Only the capture fields the agent asked for, as strings. */
function capturedOf(agent: AgentJson, answer: EngineAnswer): Record<string, string> {
  const wanted = new Set(agent.sms.capture_fields);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(answer.captured ?? {}))
    if (wanted.has(key) && typeof value === "string" && value.trim()) out[key] = value.trim();
  return out;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * The agent's quiet window (`quiet_start_hour` → `quiet_end_hour` local in `quiet_tz`, e.g. 21 → 8):
 * null when `at` is outside it, else the instant it ends. Equal hours mean no quiet window.
 */
export function quietWindowEnd(
  window: { start: number; end: number; zone: string },
  at: number,
): number | null {
  const { start, end, zone } = window;
  if (start === end) return null;
  const wall = wallTime(zone, at);
  const hour = Math.floor((((wall % DAY_MS) + DAY_MS) % DAY_MS) / HOUR_MS);
  const inside = start > end ? hour >= start || hour < end : hour >= start && hour < end;
  if (!inside) return null;
  const dayStart = Math.floor(wall / DAY_MS) * DAY_MS;
  let endWall = dayStart + end * HOUR_MS;
  if (endWall <= wall) endWall += DAY_MS;
  return instantOfWallTime(zone, endWall, at);
}

/** The local day (YYYY-MM-DD) of `at` in `zone`, for the per-day reply cap. */
export function localDayOf(zone: string, at: number): string {
  return new Date(wallTime(zone, at)).toISOString().slice(0, 10);
}
