/**
 * The voice interfaces: what the platform needs from a voice provider (agent calls) and from a
 * carrier's call API (`say` calls), API.md §4 and §6.4. Adapters map their own statuses and
 * errors to these types and never import domain code.
 */

/** Our call statuses (API.md §3 Calls). */
export const CALL_STATUSES = [
  "QUEUED",
  "RINGING",
  "IN_PROGRESS",
  "COMPLETED",
  "BUSY",
  "NO_ANSWER",
  "FAILED",
  "VOICEMAIL",
] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
export const FINAL_CALL_STATUSES: readonly CallStatus[] = [
  "COMPLETED",
  "BUSY",
  "NO_ANSWER",
  "FAILED",
  "VOICEMAIL",
];

export function isFinalCallStatus(status: string): boolean {
  return (FINAL_CALL_STATUSES as readonly string[]).includes(status);
}

/** One line of a call's transcript; `at` is ISO 8601. */
export interface TranscriptTurn {
  role: "agent" | "contact";
  text: string;
  at: string;
}

/**
 * What a provider or carrier reports about a call. Every field but `callId`/`status` is optional:
 * a report only fills what it knows (a ringing report has no transcript).
 */
export interface CallReport {
  /** Our call id (passed to the provider in metadata or the callback URL); absent → `providerCallId` finds it. */
  callId?: string;
  providerCallId?: string;
  status: CallStatus;
  durationSec?: number | null;
  transcript?: TranscriptTurn[];
  recordingUrl?: string | null;
  summary?: string | null;
  /** positive | neutral | negative */
  sentiment?: string | null;
  /** The provider's reason, e.g. Retell's disconnection_reason or Twilio's CallStatus. */
  endedReason?: string | null;
  /** Epoch ms. */
  startedAt?: number | null;
  endedAt?: number | null;
}

/** A temporary failure (network, 5xx, throttling): the call stays QUEUED and is retried. */
export class VoiceUnavailableError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "VoiceUnavailableError";
  }
}

/** Where reports go. The calls domain attaches it at boot; it must be idempotent. */
export interface CallSinks {
  onCallReports(reports: CallReport[]): Promise<void> | void;
}

/** Holds the call sink (see CarrierSinkSlot): until attached, reporting throws. */
export class CallSinkSlot implements CallSinks {
  private target: CallSinks | null = null;
  attach(sinks: CallSinks) {
    this.target = sinks;
  }
  get attached(): boolean {
    return this.target !== null;
  }
  async onCallReports(reports: CallReport[]) {
    if (!this.target) throw new Error("no call sink attached");
    if (reports.length) await this.target.onCallReports(reports);
  }
}

/** A catalogue voice (`GET /v1/voices`). */
export interface Voice {
  voice_id: string;
  name: string;
  provider: string;
  language: string;
  gender: string;
}

/** The voice `voice` object of an agent (seed: Agent, `voice`), every field filled in. */
export interface VoiceSettings {
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
  ambient_sound: string;
  boosted_keywords: string[];
  model_temperature: number;
  voicemail_message: string | null;
}

/** The provider's ids for one of our voice agents (stored on the agent after a sync). */
export interface ProviderAgentRef {
  llm_id: string;
  agent_id: string;
}

/** What a provider needs of a voice agent to create or update its copy. */
export interface VoiceAgentSpec {
  /** Our agent id. */
  id: string;
  name: string;
  systemPrompt: string;
  goal: string | null;
  greeting: string | null;
  guardrails: string[];
  knowledge: string;
  tone: string;
  voice: VoiceSettings;
  /** The ids of an earlier sync: update those instead of creating new ones. */
  ref: ProviderAgentRef | null;
}

/** One outbound call to place. */
export interface OutboundCall {
  /** Our call id: the adapter passes it along (metadata, callback URL) so reports find the call. */
  callId: string;
  workspaceId: string;
  from: string;
  to: string;
  /** Agent calls (voice provider): the agent and its provider ids. */
  agent?: VoiceAgentSpec;
  /** `say` calls (carrier): the text to speak. */
  say?: string;
}

/** The provider took the call (status usually QUEUED or RINGING), or refused it for good. */
export type CallPlacement =
  | { accepted: true; providerCallId: string; status: CallStatus }
  | { accepted: false; errorCode: string; errorMessage: string };

/** A call the provider already has, found by our call id (reconciliation after a crash). */
export type CallLookup = { found: true; providerCallId: string; status: CallStatus } | { found: false };

/** A provider webhook as received. */
export interface VoiceWebhook {
  rawBody: string;
  headers: Headers;
}

export interface VoiceProvider {
  readonly name: "simulated" | "retell";
  readonly sinks: CallSinkSlot;
  /** Starts background work (the simulated provider's report timer). */
  start(): void;
  stop(): Promise<void>;
  /** The voices agents may use. Throws VoiceUnavailableError when the provider cannot be reached. */
  listVoices(): Promise<Voice[]>;
  /** Creates or updates the provider's copy of a voice agent. Throws VoiceUnavailableError. */
  syncAgent(agent: VoiceAgentSpec): Promise<ProviderAgentRef>;
  /** Places one agent call. Throws VoiceUnavailableError for transient failures. */
  placeCall(call: OutboundCall): Promise<CallPlacement>;
  /** Finds an earlier placement of `call.callId` (made at or after `since`, epoch ms). */
  lookupCall(call: OutboundCall, since: number): Promise<CallLookup>;
  /** True when the webhook is genuine and fresh (signature and age checked at `now`). */
  verifyWebhook(webhook: VoiceWebhook, now: number): boolean;
  /**
   * What identifies a verified webhook for replay detection: its signature's parsed parts, so a
   * replay is recognised however its signature header is re-spelled. Null when there is none.
   */
  webhookReplayKey(webhook: VoiceWebhook): string | null;
  /** Parses a verified webhook; null when it is not about a call's state. */
  parseWebhook(webhook: VoiceWebhook): CallReport | null;
}
