import { describe, expect, test } from "bun:test";
import type { AgentJson } from "../src/domain/agents/agents";
import { cutToLength, decideTurn, quietWindowEnd, WRAP_UP_LINE } from "../src/domain/agents/policy";
import type { EngineAnswer } from "../src/engines/llm";

/** The agent rules around an engine's answer (API.md §6.3), as plain data in and out. */

const agent = (
  patch: { sms?: Partial<AgentJson["sms"]>; inbox?: Partial<AgentJson["inbox"]> } & Partial<
    Omit<AgentJson, "sms" | "inbox">
  > = {},
): AgentJson => {
  const { sms, inbox, ...rest } = patch;
  return {
    id: "a",
    name: "Maya",
    system_prompt: "x",
    channel: "sms",
    status: "active",
    goal: null,
    greeting: null,
    max_turns: null,
    handoff_keywords: [],
    voice_id: null,
    language: "en-US",
    model_tier: "balanced",
    sms: {
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
      quiet_start_hour: 21,
      quiet_end_hour: 8,
      quiet_tz: "America/New_York",
      ...sms,
    },
    voice: {} as AgentJson["voice"],
    inbox: { mode: "auto", intent_threshold: "medium", suppress_keywords: [], ...inbox },
    voice_sync: null,
    created_at: "",
    updated_at: "",
    ...rest,
  };
};

const answer = (patch: Partial<EngineAnswer> = {}): EngineAnswer => ({
  reply: "We open at 9am.",
  intent: "none",
  sentiment: "neutral",
  confidence: 0.9,
  goal_reached: false,
  captured: {},
  handoff: null,
  ...patch,
});

const fresh = { turns: 0, goalReached: false };

describe("decideTurn", () => {
  const cases: {
    name: string;
    agent: AgentJson;
    state?: { turns: number; goalReached: boolean };
    text?: string;
    answer: EngineAnswer | null;
    expect: Partial<ReturnType<typeof decideTurn>>;
  }[] = [
    {
      name: "auto mode sends the reply",
      agent: agent(),
      answer: answer(),
      expect: { send: "We open at 9am.", draft: null, handoff: null, needsAttention: false },
    },
    {
      name: "assist mode drafts and flags, sending nothing",
      agent: agent({ inbox: { mode: "assist" } }),
      answer: answer(),
      expect: { send: null, draft: "We open at 9am.", needsAttention: true, handoff: null },
    },
    {
      name: "manual mode only classifies",
      agent: agent({ inbox: { mode: "manual" } }),
      answer: answer({ intent: "low" }),
      expect: { send: null, draft: null, intent: "low", needsAttention: false },
    },
    {
      name: "intent at the threshold flags the thread and still replies",
      agent: agent(),
      answer: answer({ intent: "medium" }),
      expect: { send: "We open at 9am.", needsAttention: true },
    },
    {
      name: "intent below the threshold does not flag",
      agent: agent({ inbox: { intent_threshold: "high" } }),
      answer: answer({ intent: "medium" }),
      expect: { needsAttention: false },
    },
    {
      name: "a suppress keyword keeps a hot intent from flagging",
      agent: agent({ inbox: { suppress_keywords: ["just browsing"] } }),
      text: "Just browsing, how much?",
      answer: answer({ intent: "high" }),
      expect: { needsAttention: false },
    },
    {
      name: "a handoff keyword anywhere, any case, hands off with the handoff message",
      agent: agent({ handoff_keywords: ["lawyer"], sms: { handoff_message: "A teammate will call." } }),
      text: "my LAWYER will hear about this",
      answer: answer(),
      expect: { handoff: { reason: "keyword" }, send: "A teammate will call.", needsAttention: true },
    },
    {
      name: "an unavailable engine hands off and nothing of it reaches the contact",
      agent: agent(),
      answer: null,
      expect: { handoff: { reason: "llm_unavailable" }, send: null, text: "" },
    },
    {
      name: "negative sentiment hands off when handoff_on_negative",
      agent: agent(),
      answer: answer({ sentiment: "negative" }),
      expect: { handoff: { reason: "negative" }, send: null },
    },
    {
      name: "negative sentiment is answered when handoff_on_negative is off",
      agent: agent({ sms: { handoff_on_negative: false } }),
      answer: answer({ sentiment: "negative" }),
      expect: { handoff: null, send: "We open at 9am." },
    },
    {
      name: "low confidence hands off only when asked to",
      agent: agent({ sms: { handoff_on_low_confidence: true } }),
      answer: answer({ confidence: 0.2 }),
      expect: { handoff: { reason: "low_confidence" } },
    },
    {
      name: "low confidence is answered by default",
      agent: agent(),
      answer: answer({ confidence: 0.2 }),
      expect: { handoff: null },
    },
    {
      name: "the engine asking for a person hands off",
      agent: agent(),
      answer: answer({ handoff: { reason: "wants a person" } }),
      expect: { handoff: { reason: "requested" } },
    },
    {
      name: "handoff_after_turns without the goal",
      agent: agent({ sms: { handoff_after_turns: 3 } }),
      state: { turns: 3, goalReached: false },
      answer: answer(),
      expect: { handoff: { reason: "turns" } },
    },
    {
      name: "handoff_after_turns does not apply once the goal is reached",
      agent: agent({ sms: { handoff_after_turns: 3 } }),
      state: { turns: 3, goalReached: true },
      answer: answer(),
      expect: { handoff: null },
    },
    {
      name: "max_turns wraps up and hands off",
      agent: agent({ max_turns: 2 }),
      state: { turns: 1, goalReached: false },
      answer: answer(),
      expect: { handoff: { reason: "max_turns" }, send: WRAP_UP_LINE },
    },
    {
      name: "a conversion keyword records a conversion",
      agent: agent({ sms: { conversion_keywords: ["Sign me up"] } }),
      text: "ok sign me up!",
      answer: answer(),
      expect: { conversion: { source: "keyword", keyword: "Sign me up" } },
    },
    {
      name: "the goal reached records a conversion with conversion_on_agent_goal",
      agent: agent({ sms: { conversion_on_agent_goal: true } }),
      answer: answer({ goal_reached: true }),
      expect: { conversion: { source: "goal" }, goalReached: true },
    },
    {
      name: "the goal already reached is not converted twice",
      agent: agent({ sms: { conversion_on_agent_goal: true } }),
      state: { turns: 2, goalReached: true },
      answer: answer({ goal_reached: true }),
      expect: { conversion: null },
    },
    {
      name: "only the capture fields asked for are kept",
      agent: agent({ sms: { capture_fields: ["email"] } }),
      answer: answer({ captured: { email: "a@b.co", zip: "94110" } }),
      expect: { captured: { email: "a@b.co" } },
    },
    {
      name: "the reply is cut to max_length at a sentence end",
      agent: agent({ sms: { max_length: 20 } }),
      answer: answer({ reply: "We open at 9. We close at 5 every day." }),
      expect: { send: "We open at 9." },
    },
  ];
  for (const c of cases)
    test(c.name, () => {
      expect(decideTurn(c.agent, c.state ?? fresh, c.text ?? "hello", c.answer)).toMatchObject(c.expect);
    });
});

describe("cutToLength", () => {
  const cases: [string, number, string][] = [
    ["Short.", 20, "Short."],
    ["One. Two three four.", 12, "One."],
    ["no sentence end here at all", 12, "no sentence"],
    ["Ends exactly.", 13, "Ends exactly."],
  ];
  for (const [text, max, expected] of cases)
    test(`${JSON.stringify(text)} to ${max}`, () => {
      expect(cutToLength(text, max)).toBe(expected);
    });
});

describe("quietWindowEnd", () => {
  const zone = "America/New_York";
  // 2026-07-01 is in EDT (UTC-4).
  const at = (hourUtc: number, minute = 0) => Date.UTC(2026, 6, 1, hourUtc, minute);
  const cases: [string, { start: number; end: number }, number, number | null][] = [
    [
      "22:30 local is inside 21 → 8, ends 8:00 next day",
      { start: 21, end: 8 },
      at(26, 30),
      Date.UTC(2026, 6, 2, 12),
    ],
    ["12:00 local is outside 21 → 8", { start: 21, end: 8 }, at(16), null],
    [
      "07:59 local is inside 21 → 8, ends at 8:00 the same day",
      { start: 21, end: 8 },
      at(11, 59),
      Date.UTC(2026, 6, 1, 12),
    ],
    ["equal hours: no quiet window", { start: 0, end: 0 }, at(3), null],
    [
      "a daytime window 12 → 14 at 13:00 ends at 14:00",
      { start: 12, end: 14 },
      at(17),
      Date.UTC(2026, 6, 1, 18),
    ],
  ];
  for (const [name, window, when, expected] of cases)
    test(name, () => {
      expect(quietWindowEnd({ ...window, zone }, when)).toBe(expected);
    });
});
