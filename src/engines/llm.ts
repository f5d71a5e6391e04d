/**
 * The agent engine: one interface for whatever writes an SMS agent's next message (API.md §6.3).
 * Two adapters, like the carriers: the OpenAI-compatible chat-completions client
 * (src/engines/openai-compatible.ts, when LLM_BASE_URL is set) and the built-in offline engine
 * (src/engines/offline.ts, the default). Engines see plain data only: no database, no clock of
 * their own, so the live reply loop and the test chat ask them the same way.
 */

export const INTENTS = ["none", "low", "medium", "high"] as const;
export type Intent = (typeof INTENTS)[number];
export const SENTIMENTS = ["positive", "neutral", "negative"] as const;
export type Sentiment = (typeof SENTIMENTS)[number];
export const TONES = ["friendly", "professional", "casual", "empathetic", "direct"] as const;
export type Tone = (typeof TONES)[number];
export const CREATIVITY = ["low", "balanced", "high"] as const;
export type Creativity = (typeof CREATIVITY)[number];
export const MODEL_TIERS = ["fast", "balanced", "smart"] as const;
export type ModelTier = (typeof MODEL_TIERS)[number];

/** What of the agent's configuration an engine reads. */
export interface EngineAgent {
  name: string;
  systemPrompt: string;
  goal: string | null;
  greeting: string | null;
  tone: Tone;
  creativity: Creativity;
  guardrails: string[];
  /** Free text the agent answers from (≤ 20,000 characters). */
  knowledge: string;
  /** Longest reply in characters; the caller cuts longer replies at a sentence end. */
  maxLength: number;
  modelTier: ModelTier;
  /** Fields to look for in the contact's messages (`email`, `first_name`, `zip`, `appointment_time`, …). */
  captureFields: string[];
}

/** One message of the thread, oldest first. */
export interface EngineTurn {
  role: "contact" | "agent";
  text: string;
}

export interface EngineInput {
  agent: EngineAgent;
  /**
   * The conversation so far, oldest first. The contact's messages after the agent's last one are
   * what the reply answers; an empty thread (or `opening`) asks for the opening message.
   */
  thread: EngineTurn[];
  /** What is already known of the contact (captured earlier or on the contact record). */
  known: Record<string, string>;
  /** True when the agent speaks first (a campaign or flow handed it a contact with no thread). */
  opening?: boolean;
}

/** The engine's answer: one JSON object, the same for every engine. */
export interface EngineAnswer {
  /** The message to send (may be empty when the engine has nothing to say). */
  reply: string;
  /** How ready the contact is to buy or meet: flags the thread for a human at the agent's threshold. */
  intent: Intent;
  sentiment: Sentiment;
  /** 0..1: how sure the engine is that the reply answers the contact. */
  confidence: number;
  /** The agent's goal is reached (e.g. the appointment is booked). */
  goal_reached: boolean;
  /** Fields found in the contact's latest messages, by capture field name. */
  captured: Record<string, string>;
  /** The engine asks for a human (the model judged it should), with why. */
  handoff: { reason: string } | null;
}

export interface AgentEngine {
  /** `offline` or `openai-compatible`: shown in logs and metrics. */
  readonly name: string;
  /** Throws EngineUnavailableError when no usable answer could be had (after the adapter's retries). */
  answer(input: EngineInput): Promise<EngineAnswer>;
}

/** The engine could not answer (timeout, refusal, garbage, server down): the thread goes to a human. */
export class EngineUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EngineUnavailableError";
  }
}

/** Temperature for a creativity level (API.md §6.3). */
export const CREATIVITY_TEMPERATURE: Record<Creativity, number> = { low: 0.2, balanced: 0.6, high: 0.9 };
