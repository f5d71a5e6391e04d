/**
 * Retell AI over its REST API, with `fetch`: JSON bodies, Bearer auth with the API key. Requests
 * follow Retell's published OpenAPI document (tests run them against a Prism mock of it,
 * `test/fixtures/vendor/retell_openapi.yaml`).
 *
 * A voice agent of ours is two Retell objects (API.md §6.4): a retell-llm (the prompt, greeting,
 * model temperature and the end-call tool) and an agent that speaks with it (voice, language,
 * timing, voicemail). Their ids are our `ProviderAgentRef`; a later sync PATCHes both, and creates
 * them anew when Retell answers 404 (deleted on Retell's side). Edits land on the agent's latest
 * (draft) version; nothing is published.
 *
 * Calls are placed with `override_agent_id` and carry our call id in `metadata.call_id`, which is
 * how webhooks and `lookupCall` find our call. Retell's `registered` (call id issued, dialling) is
 * reported as RINGING: our QUEUED means "not yet handed to the provider" (the retry state).
 *
 * Webhooks: Retell posts `{event, call}` to the account's webhook URL (set it to
 * `<PUBLIC_URL>/carriers/retell/webhook` in Retell's dashboard: the adapter sets no per-agent URL),
 * signed with `x-retell-signature: v=<ms>,d=<hex HMAC-SHA256(api key, body + ms)>`.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { log } from "../lib/log";
import {
  type CallLookup,
  type CallPlacement,
  type CallReport,
  CallSinkSlot,
  type CallStatus,
  isFinalCallStatus,
  type OutboundCall,
  type ProviderAgentRef,
  type TranscriptTurn,
  type Voice,
  type VoiceAgentSpec,
  type VoiceProvider,
  type VoiceSettings,
  VoiceUnavailableError,
  type VoiceWebhook,
} from "./provider";

export interface RetellOptions {
  apiKey: string;
  /** https://api.retellai.com, or a mock's address in tests. */
  apiBase: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

export const RETELL_SIGNATURE_HEADER = "x-retell-signature";
/** A webhook signed further than this from `now` (either way) is refused. */
const SIGNATURE_TOLERANCE_MS = 5 * 60_000;
const VOICES_TTL_MS = 10 * 60_000;
/** Spoken with when an agent names no voice (create-agent requires one); the document's own example. */
export const RETELL_DEFAULT_VOICE_ID = "retell-Cimo";

/** Retell's `DisconnectionReason` enum, each mapped to how the call ended for us. */
const DISCONNECTION_OUTCOMES = new Map<string, CallStatus>(
  Object.entries({
    // Normal endings: someone spoke with the agent.
    user_hangup: "COMPLETED",
    agent_hangup: "COMPLETED",
    call_transfer: "COMPLETED",
    transfer_bridged: "COMPLETED",
    transfer_cancelled: "COMPLETED",
    inactivity: "COMPLETED",
    max_duration_reached: "COMPLETED",
    voicemail_reached: "VOICEMAIL",
    dial_busy: "BUSY",
    dial_no_answer: "NO_ANSWER",
    user_declined: "NO_ANSWER",
    // A phone menu answered, not a person.
    ivr_reached: "NO_ANSWER",
    dial_failed: "FAILED",
    invalid_destination: "FAILED",
    concurrency_limit_reached: "FAILED",
    no_valid_payment: "FAILED",
    scam_detected: "FAILED",
    marked_as_spam: "FAILED",
    sip_routing_error: "FAILED",
    telephony_provider_permission_denied: "FAILED",
    telephony_provider_unavailable: "FAILED",
    registered_call_timeout: "FAILED",
    error_llm_websocket_open: "FAILED",
    error_llm_websocket_lost_connection: "FAILED",
    error_llm_websocket_runtime: "FAILED",
    error_llm_websocket_corrupt_payload: "FAILED",
    error_no_audio_received: "FAILED",
    error_asr: "FAILED",
    error_retell: "FAILED",
    error_unknown: "FAILED",
    error_user_not_joined: "FAILED",
  } satisfies Record<string, CallStatus>),
);

/**
 * Retell's call_status (and, once the call is over, its disconnection_reason and call_analysis.
 * in_voicemail) mapped to our status. `registered` → RINGING (see the header). An ended call with
 * a reason this table does not know yet counts as COMPLETED; a not_connected or error one as FAILED.
 */
export function mapRetellCall(
  callStatus: string,
  disconnectionReason?: string | null,
  inVoicemail?: boolean | null,
): CallStatus {
  switch (callStatus) {
    case "registered":
      return "RINGING";
    case "ongoing":
      return "IN_PROGRESS";
  }
  if (inVoicemail === true) return "VOICEMAIL";
  const byReason = disconnectionReason ? DISCONNECTION_OUTCOMES.get(disconnectionReason) : undefined;
  if (byReason) return byReason;
  if (callStatus === "ended") return "COMPLETED";
  if (callStatus === "not_connected" || callStatus === "error" || disconnectionReason) return "FAILED";
  // A status this adapter does not know, with no reason: the call exists and has not ended.
  return "RINGING";
}

/** hex(HMAC-SHA256(apiKey, rawBody + timestamp)), Retell's webhook signature. */
export function retellSignature(apiKey: string, rawBody: string, timestampMs: number | string): string {
  return createHmac("sha256", apiKey)
    .update(rawBody + String(timestampMs), "utf8")
    .digest("hex");
}

/**
 * `v=<ms>,d=<hex>` → its parts; null when malformed. However the header is spelled — parts in any
 * order, names in any case, spaces around them, `;` for `,` — the same signature parses the same
 * (replays are recognised by these parts, not by the header's text). A part given twice with
 * different values is malformed.
 */
function parseSignatureHeader(header: string | null): { timestamp: string; digest: string } | null {
  if (!header) return null;
  const parts = new Map<string, string>();
  for (const part of header.split(/[,;]/)) {
    const at = part.indexOf("=");
    if (at < 0) {
      if (part.trim() !== "") return null;
      continue;
    }
    const name = part.slice(0, at).trim().toLowerCase();
    const value = part
      .slice(at + 1)
      .trim()
      .toLowerCase();
    const seen = parts.get(name);
    if (seen !== undefined && seen !== value) return null;
    parts.set(name, value);
  }
  const timestamp = (parts.get("v") ?? "").replace(/^0+(?=\d)/, "");
  const digest = parts.get("d") ?? "";
  if (!/^\d{1,16}$/.test(timestamp) || !/^[0-9a-f]{64}$/.test(digest)) return null;
  return { timestamp, digest };
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Retell's `language` enum (AgentRequest): the languages speech recognition runs in. */
// biome-ignore format: a table
const RETELL_LANGUAGES = new Set([
  "en-US", "en-IN", "en-GB", "en-AU", "en-NZ", "de-DE", "es-ES", "es-419", "hi-IN", "fr-FR", "fr-CA",
  "ja-JP", "pt-PT", "pt-BR", "zh-CN", "ru-RU", "it-IT", "ko-KR", "nl-NL", "nl-BE", "pl-PL", "tr-TR",
  "vi-VN", "ro-RO", "bg-BG", "ca-ES", "th-TH", "da-DK", "fi-FI", "el-GR", "hu-HU", "id-ID", "no-NO",
  "sk-SK", "sv-SE", "lt-LT", "lv-LV", "cs-CZ", "ms-MY", "af-ZA", "ar-SA", "az-AZ", "bs-BA", "cy-GB",
  "fa-IR", "fil-PH", "gl-ES", "he-IL", "hr-HR", "hy-AM", "is-IS", "kk-KZ", "kn-IN", "mk-MK", "mr-IN",
  "ne-NP", "sl-SI", "sr-RS", "sw-KE", "ta-IN", "ur-IN", "yue-CN", "uk-UA", "multi",
]);

/**
 * Our language (BCP 47, e.g. es-MX) as one Retell accepts: itself when listed, Latin-American
 * Spanish for Spanish outside Spain, else the first listed dialect of the same language, else
 * `multi` (multilingual recognition).
 */
export function retellLanguage(language: string): string {
  if (RETELL_LANGUAGES.has(language)) return language;
  const [primary, region] = language.split(/[-_]/);
  const lower = primary?.toLowerCase() ?? "";
  if (lower === "es" && region?.toUpperCase() !== "ES") return "es-419";
  for (const known of RETELL_LANGUAGES) if (known.split("-")[0] === lower) return known;
  return "multi";
}

/** The retell-llm's prompt: ours, then the goal, the tone, the rules and the knowledge. */
export function retellGeneralPrompt(spec: VoiceAgentSpec): string {
  const sections = [spec.systemPrompt.trim()];
  if (spec.goal?.trim()) sections.push(`Goal: ${spec.goal.trim()}`);
  if (spec.tone.trim()) sections.push(`Tone: ${spec.tone.trim()}`);
  const rules = spec.guardrails.map((rule) => rule.trim()).filter(Boolean);
  if (rules.length) sections.push(`Rules:\n${rules.map((rule) => `- ${rule}`).join("\n")}`);
  if (spec.knowledge.trim()) sections.push(`Knowledge:\n${spec.knowledge.trim()}`);
  return sections.filter(Boolean).join("\n\n");
}

/** The create/update-retell-llm body (RetellLlmRequest). */
function retellLlmBody(spec: VoiceAgentSpec): Record<string, unknown> {
  return {
    general_prompt: retellGeneralPrompt(spec),
    // Null lets the model open the call itself.
    begin_message: spec.greeting?.trim() ? spec.greeting : null,
    // Outbound calls: the agent speaks first.
    start_speaker: "agent",
    model_temperature: spec.voice.model_temperature,
    // `end_call`: the agent may hang up. An empty list removes the tool on update.
    general_tools: spec.voice.end_call
      ? [{ type: "end_call", name: "end_call", description: "End the call when the conversation is over." }]
      : [],
  };
}

/** The create/update-agent body (AgentRequest): our voice settings 1:1. */
function retellAgentBody(spec: VoiceAgentSpec, llmId: string): Record<string, unknown> {
  const voice: VoiceSettings = spec.voice;
  return {
    response_engine: { type: "retell-llm", llm_id: llmId },
    agent_name: spec.name,
    voice_id: voice.voice_id ?? RETELL_DEFAULT_VOICE_ID,
    language: retellLanguage(voice.language),
    voice_speed: voice.speed,
    voice_temperature: voice.temperature,
    volume: voice.volume,
    responsiveness: voice.responsiveness,
    interruption_sensitivity: voice.interruption_sensitivity,
    enable_backchannel: voice.enable_backchannel,
    backchannel_frequency: voice.backchannel_frequency,
    reminder_trigger_ms: voice.reminder_trigger_ms,
    end_call_after_silence_ms: voice.end_call_after_silence_ms,
    max_call_duration_ms: voice.max_call_duration_ms,
    // null removes a sound set earlier (an omitted field would keep it on update).
    ambient_sound: voice.ambient_sound === "none" ? null : voice.ambient_sound,
    boosted_keywords: voice.boosted_keywords,
    // Our voicemail_message: the text left, or null to hang up (API: "null hangs up").
    voicemail_option: {
      action:
        voice.voicemail_message === null
          ? { type: "hangup" }
          : { type: "static_text", text: voice.voicemail_message },
    },
  };
}

/** Retell's VoiceResponse, as far as we read it. */
interface RetellVoiceRecord {
  voice_id?: string;
  voice_name?: string;
  provider?: string;
  accent?: string;
  gender?: string;
}

/** Retell has no language per voice: its accent annotation stands in (API.md §6.4), else en-US. */
function voiceOf(record: RetellVoiceRecord): Voice {
  return {
    voice_id: String(record.voice_id),
    name: record.voice_name ?? String(record.voice_id),
    provider: record.provider || "retell",
    language: record.accent || "en-US",
    gender: record.gender ?? "",
  };
}

/** One line of Retell's `transcript_object`. */
interface RetellUtterance {
  role?: string;
  content?: string;
  words?: { word?: string; start?: number; end?: number }[];
}

/** Retell's call object (V2CallBase with V2PhoneCallResponse), as far as we read it. */
interface RetellCall {
  call_id?: string;
  call_status?: string;
  metadata?: Record<string, unknown> | null;
  start_timestamp?: number;
  end_timestamp?: number;
  duration_ms?: number;
  transcript_object?: RetellUtterance[];
  recording_url?: string | null;
  disconnection_reason?: string | null;
  call_analysis?: { call_summary?: string; in_voicemail?: boolean; user_sentiment?: string } | null;
}

const finite = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
const stringOrNull = (value: unknown): string | null => (typeof value === "string" ? value : null);

/** Positive/Negative/Neutral → lower case; Unknown (or anything else) → null. */
function sentimentOf(userSentiment: unknown): string | null {
  const lower = typeof userSentiment === "string" ? userSentiment.toLowerCase() : "";
  return lower === "positive" || lower === "negative" || lower === "neutral" ? lower : null;
}

/**
 * Agent and user lines (a transfer target's lines are neither: left out). `at` = call start + the
 * first word's offset, when known.
 */
function transcriptOf(call: RetellCall): TranscriptTurn[] {
  const base = finite(call.start_timestamp)
    ? call.start_timestamp
    : finite(call.end_timestamp) && finite(call.duration_ms)
      ? call.end_timestamp - call.duration_ms
      : finite(call.end_timestamp)
        ? call.end_timestamp
        : Date.now();
  const turns: TranscriptTurn[] = [];
  for (const utterance of call.transcript_object ?? []) {
    if (utterance?.role !== "agent" && utterance?.role !== "user") continue;
    const offset = utterance.words?.[0]?.start;
    turns.push({
      role: utterance.role === "agent" ? "agent" : "contact",
      text: String(utterance.content ?? ""),
      at: new Date(base + (finite(offset) ? Math.round(offset * 1000) : 0)).toISOString(),
    });
  }
  return turns;
}

function durationOf(call: RetellCall): number | undefined {
  if (finite(call.duration_ms)) return Math.round(call.duration_ms / 1000);
  if (finite(call.start_timestamp) && finite(call.end_timestamp))
    return Math.round((call.end_timestamp - call.start_timestamp) / 1000);
  return undefined;
}

/** The report of a call that is over; only what the payload carries is filled in. */
function finalReportOf(call: RetellCall): CallReport {
  const analysis =
    call.call_analysis && typeof call.call_analysis === "object" ? call.call_analysis : undefined;
  const reason = stringOrNull(call.disconnection_reason);
  let status = mapRetellCall(call.call_status ?? "ended", reason, analysis?.in_voicemail);
  // The event says the call is over, whatever the status field says.
  if (!isFinalCallStatus(status)) status = mapRetellCall("ended", reason, analysis?.in_voicemail);
  const report: CallReport = { status };
  if (call.disconnection_reason !== undefined) report.endedReason = reason;
  const duration = durationOf(call);
  if (duration !== undefined) report.durationSec = duration;
  if (Array.isArray(call.transcript_object)) report.transcript = transcriptOf(call);
  if (call.recording_url !== undefined) report.recordingUrl = stringOrNull(call.recording_url);
  if (analysis && "call_summary" in analysis) report.summary = stringOrNull(analysis.call_summary);
  if (analysis && "user_sentiment" in analysis) report.sentiment = sentimentOf(analysis.user_sentiment);
  if (finite(call.start_timestamp)) report.startedAt = call.start_timestamp;
  if (finite(call.end_timestamp)) report.endedAt = call.end_timestamp;
  return report;
}

/** Retell's `{event, call}` webhook as our report; null for other events or a body that is not one. */
function reportOfWebhook(rawBody: string): CallReport | null {
  const payload = JSON.parse(rawBody) as { event?: unknown; call?: RetellCall };
  const call = payload?.call;
  if (!call || typeof call !== "object") return null;
  let report: CallReport;
  switch (payload.event) {
    case "call_started":
      report = { status: "IN_PROGRESS" };
      if (finite(call.start_timestamp)) report.startedAt = call.start_timestamp;
      break;
    case "call_ended":
    case "call_analyzed":
      report = finalReportOf(call);
      break;
    default:
      return null;
  }
  const callId = call.metadata?.call_id;
  if (typeof callId === "string" && callId) report.callId = callId;
  if (typeof call.call_id === "string" && call.call_id) report.providerCallId = call.call_id;
  if (!report.callId && !report.providerCallId) return null;
  return report;
}

/** Seconds or an HTTP date → milliseconds; undefined when absent or unreadable. */
function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds > 0 ? seconds * 1000 : undefined;
  const at = Date.parse(header);
  return Number.isFinite(at) && at > Date.now() ? at - Date.now() : undefined;
}

type Answer<T> = { ok: true; status: number; data: T } | { ok: false; status: number; message: string };

export class RetellVoice implements VoiceProvider {
  readonly name = "retell" as const;
  readonly sinks = new CallSinkSlot();
  private readonly fetcher: typeof fetch;
  private voices: { list: Voice[]; until: number } | null = null;
  private voicesLoading: Promise<Voice[]> | null = null;

  constructor(private readonly options: RetellOptions) {
    this.fetcher = options.fetch ?? fetch;
  }

  start() {}

  async stop() {}

  /**
   * One REST call. Network errors, timeouts, 429 and 5xx → VoiceUnavailableError; so are 401,
   * 402 and 403 (an operator problem: logged, and the call stays queued rather than refused).
   */
  private async request<T>(
    method: "GET" | "POST" | "PATCH",
    path: string,
    body?: unknown,
  ): Promise<Answer<T>> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      accept: "application/json",
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await this.fetcher(this.options.apiBase + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (error) {
      throw new VoiceUnavailableError(`Retell unreachable: ${(error as Error).message}`);
    }
    if (response.status === 401 || response.status === 402 || response.status === 403) {
      await response.body?.cancel();
      log.error(
        response.status === 402
          ? "Retell refused the request for payment (check the Retell account's billing)"
          : "Retell refused the API key (check RETELL_API_KEY)",
        { status: response.status, path },
      );
      throw new VoiceUnavailableError(
        `Retell answered ${response.status}: ${response.statusText || "refused"}`,
      );
    }
    if (response.status === 429 || response.status >= 500) {
      const retryAfter = retryAfterMs(response.headers.get("retry-after"));
      await response.body?.cancel();
      throw new VoiceUnavailableError(`Retell answered ${response.status}`, retryAfter);
    }
    const text = await response.text().catch(() => "");
    let data: unknown = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (response.ok) return { ok: true, status: response.status, data: data as T };
    const message = (data as { message?: unknown } | null)?.message;
    return {
      ok: false,
      status: response.status,
      message: typeof message === "string" && message ? message : `HTTP ${response.status}`,
    };
  }

  /** GET /list-voices, kept for ten minutes (a failure is not kept). */
  async listVoices(): Promise<Voice[]> {
    if (this.voices && this.voices.until > Date.now()) return [...this.voices.list];
    this.voicesLoading ??= this.loadVoices().finally(() => {
      this.voicesLoading = null;
    });
    return [...(await this.voicesLoading)];
  }

  private async loadVoices(): Promise<Voice[]> {
    const answer = await this.request<RetellVoiceRecord[]>("GET", "/list-voices");
    if (!answer.ok) throw new VoiceUnavailableError(`Retell refused the voice list: ${answer.message}`);
    const list = (Array.isArray(answer.data) ? answer.data : [])
      .filter((record) => typeof record?.voice_id === "string" && record.voice_id)
      .map(voiceOf);
    this.voices = { list, until: Date.now() + VOICES_TTL_MS };
    return list;
  }

  /** The retell-llm, then the agent speaking with it; each updated when `spec.ref` names it. */
  async syncAgent(spec: VoiceAgentSpec): Promise<ProviderAgentRef> {
    const llmId = await this.upsert("retell-llm", "llm_id", spec.ref?.llm_id, retellLlmBody(spec));
    const agentId = await this.upsert("agent", "agent_id", spec.ref?.agent_id, retellAgentBody(spec, llmId));
    return { llm_id: llmId, agent_id: agentId };
  }

  /** PATCH /update-<kind>/<id> when there is an id, POST /create-<kind> when not (or on 404). */
  private async upsert(
    kind: "retell-llm" | "agent",
    idField: "llm_id" | "agent_id",
    existingId: string | undefined,
    body: Record<string, unknown>,
  ): Promise<string> {
    if (existingId) {
      const updated = await this.request("PATCH", `/update-${kind}/${encodeURIComponent(existingId)}`, body);
      if (updated.ok) return existingId;
      // 404: deleted on Retell's side; anything else is a refusal of this sync.
      if (updated.status !== 404)
        throw new VoiceUnavailableError(`Retell refused the ${kind} update: ${updated.message}`);
    }
    const created = await this.request<Record<string, unknown>>("POST", `/create-${kind}`, body);
    if (!created.ok) throw new VoiceUnavailableError(`Retell refused the new ${kind}: ${created.message}`);
    const id = created.data?.[idField];
    if (typeof id !== "string" || !id)
      throw new VoiceUnavailableError(`Retell created a ${kind} without ${idField}`);
    return id;
  }

  async placeCall(call: OutboundCall): Promise<CallPlacement> {
    const agentId = call.agent?.ref?.agent_id;
    if (!agentId) {
      return {
        accepted: false,
        errorCode: "agent_not_synced",
        errorMessage: "The voice agent has not been synced to Retell",
      };
    }
    const answer = await this.request<RetellCall>("POST", "/v2/create-phone-call", {
      from_number: call.from,
      to_number: call.to,
      override_agent_id: agentId,
      metadata: { call_id: call.callId, workspace_id: call.workspaceId },
    });
    if (!answer.ok)
      return { accepted: false, errorCode: String(answer.status), errorMessage: answer.message };
    const providerCallId = answer.data?.call_id;
    // Taken but unnamed: retrying finds it by lookupCall (metadata.call_id).
    if (typeof providerCallId !== "string" || !providerCallId)
      throw new VoiceUnavailableError("Retell accepted the call without a call_id");
    return { accepted: true, providerCallId, status: this.statusOf(answer.data) };
  }

  private statusOf(call: RetellCall): CallStatus {
    return mapRetellCall(
      call.call_status ?? "registered",
      call.disconnection_reason,
      call.call_analysis?.in_voicemail,
    );
  }

  /**
   * POST /v2/list-calls filtered by the numbers and `metadata.call_id`, matched on
   * `metadata.call_id`. The document gives the metadata filter two shapes (nested under
   * `filter_criteria.metadata` in the schema, flat in an example); should Retell read ours
   * otherwise and find nothing, the latest calls between the two numbers are searched too, since
   * a missed call means calling someone twice. `since` is not sent: a registered call has no
   * start_timestamp yet, and our call id alone identifies the call.
   */
  async lookupCall(call: OutboundCall, _since: number): Promise<CallLookup> {
    const numbers = { from_number: [call.from], to_number: [call.to] };
    const filters = [{ ...numbers, metadata: { "metadata.call_id": [call.callId] } }, numbers];
    for (const filter_criteria of filters) {
      const answer = await this.request<RetellCall[]>("POST", "/v2/list-calls", {
        filter_criteria,
        sort_order: "descending",
        limit: 50,
      });
      // A refusal is not an answer: "not found" would place the call a second time.
      if (!answer.ok) throw new VoiceUnavailableError(`Retell refused the call search: ${answer.message}`);
      const match = (Array.isArray(answer.data) ? answer.data : []).find(
        (found) => found?.metadata?.call_id === call.callId && typeof found.call_id === "string",
      );
      if (match?.call_id) return { found: true, providerCallId: match.call_id, status: this.statusOf(match) };
    }
    return { found: false };
  }

  verifyWebhook(webhook: VoiceWebhook, now: number): boolean {
    const signature = parseSignatureHeader(webhook.headers.get(RETELL_SIGNATURE_HEADER));
    if (!signature) return false;
    if (Math.abs(now - Number(signature.timestamp)) > SIGNATURE_TOLERANCE_MS) return false;
    return safeEqual(
      signature.digest,
      retellSignature(this.options.apiKey, webhook.rawBody, signature.timestamp),
    );
  }

  /** The parsed timestamp and digest, one spelling whatever the header's: a replay's key. */
  webhookReplayKey(webhook: VoiceWebhook): string | null {
    const signature = parseSignatureHeader(webhook.headers.get(RETELL_SIGNATURE_HEADER));
    return signature ? `retell:v=${signature.timestamp},d=${signature.digest}` : null;
  }

  /** Never throws: a body that is not a call event is null. */
  parseWebhook(webhook: VoiceWebhook): CallReport | null {
    try {
      return reportOfWebhook(webhook.rawBody);
    } catch {
      return null;
    }
  }
}
