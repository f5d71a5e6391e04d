/**
 * The simulated voice line: no network. A call placed on it gets a deterministic outcome by the
 * number called (API.md §6.4), written to a ledger (`sandbox_calls`, one row per placement) with
 * the report it will make and when; a timer reports what is due to the call sink. Pending reports
 * survive a restart. Two lines share the ledger: `voice` (the simulated voice provider, agent
 * calls) and `carrier` (the simulated carrier's `say` calls); each reports only its own rows.
 *
 * Magic numbers (docs/calls.md, "Voice"):
 *   to +15005550004   BUSY
 *   to +15005550009   NO_ANSWER
 *   to +15005550007   VOICEMAIL (the agent's voicemail_message, or the `say` text, is left)
 *   to +15005550001   refused at placement: invalid number (FAILED)
 *   +15005550003      provider outage: placement throws VoiceUnavailableError (the call is retried)
 *   anything else     COMPLETED after the line's delay, with a transcript
 */
import { createHash } from "node:crypto";
import { and, asc, eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client";
import { newestFirstPage } from "../db/paging";
import { dueLedgerStatements, preparedPerConnection } from "../db/prepared";
import { type SandboxCallRow, sandboxCalls } from "../db/schema";
import type { EngineAgent, EngineTurn } from "../engines/llm";
import { offlineAnswer, sentimentOf } from "../engines/offline";
import { newId } from "../lib/ids";
import { errorText, log } from "../lib/log";
import type { Clock } from "../lib/time";
import { SIMULATED_VOICES } from "./catalogue";
import {
  type CallLookup,
  type CallPlacement,
  type CallReport,
  CallSinkSlot,
  type CallStatus,
  type OutboundCall,
  type ProviderAgentRef,
  type TranscriptTurn,
  type Voice,
  type VoiceAgentSpec,
  type VoiceProvider,
  VoiceUnavailableError,
  type VoiceWebhook,
} from "./provider";

export const SIMULATED_CALL_MAGIC = {
  busy: "+15005550004",
  noAnswer: "+15005550009",
  voicemail: "+15005550007",
  invalid: "+15005550001",
  outage: "+15005550003",
} as const;

export interface SimulatedLineOptions {
  /** Time from placement to the final report (a call's ring and talk). */
  callMs: number;
  /** How often due reports are flushed (default min(callMs, 100 ms), at least 5 ms). */
  tickMs?: number;
  /** Most reports made in one sink call. */
  batchSize?: number;
}

function digest(...parts: string[]): string {
  return createHash("sha256").update(parts.join("\u0000")).digest("hex");
}

/** The contact's lines in a simulated conversation, picked by the number called. */
const CONTACT_OPENERS = [
  "Hi, who is this?",
  "Hello? Yes, I can talk for a minute.",
  "Hi. What is this about?",
  "Hey, sure, go ahead.",
];
const CONTACT_QUESTIONS = [
  "What does it cost?",
  "What are your opening hours?",
  "How does it work?",
  "Can you tell me more?",
];
const CONTACT_CLOSER = "Okay, thanks. Bye.";

/** One call's script: its final report, without ids (the ledger adds them). */
type Script = Omit<CallReport, "callId" | "providerCallId">;

/** What a simulated call reports, by the number called and what was to be said. */
export function simulatedOutcome(call: OutboundCall, acceptedAt: number, callMs: number): Script {
  // The call runs from placement to its report: lines are spread over it, and its duration is it.
  const at = (offsetMs: number) => new Date(acceptedAt + Math.min(offsetMs, callMs)).toISOString();
  const ended = acceptedAt + callMs;
  const talked = Math.max(1, Math.round(callMs / 1000));
  switch (call.to) {
    case SIMULATED_CALL_MAGIC.busy:
      return { status: "BUSY", endedReason: "dial_busy", durationSec: 0, transcript: [], endedAt: ended };
    case SIMULATED_CALL_MAGIC.noAnswer:
      return {
        status: "NO_ANSWER",
        endedReason: "dial_no_answer",
        durationSec: 0,
        transcript: [],
        endedAt: ended,
      };
    case SIMULATED_CALL_MAGIC.voicemail: {
      const left = call.agent ? call.agent.voice.voicemail_message : (call.say ?? null);
      return {
        status: "VOICEMAIL",
        endedReason: "voicemail_reached",
        durationSec: left ? talked : 0,
        transcript: left ? [{ role: "agent", text: left, at: at(callMs / 2) }] : [],
        summary: left ? "Voicemail left." : "Reached voicemail; no message left.",
        startedAt: acceptedAt,
        endedAt: ended,
      };
    }
  }
  const transcript = call.agent
    ? agentConversation(call.agent, call.to, at, callMs)
    : sayConversation(call, at, callMs);
  const contactText = transcript
    .filter((turn) => turn.role === "contact")
    .map((turn) => turn.text)
    .join(" ");
  const question = transcript.find((turn) => turn.role === "contact" && turn.text.endsWith("?"));
  return {
    status: "COMPLETED",
    endedReason: call.agent ? "user_hangup" : "completed",
    durationSec: talked,
    transcript,
    summary: call.agent
      ? `The agent spoke with the contact${question ? `, who asked "${question.text}"` : ""}. The call ended normally.`
      : "The message was played to the contact.",
    sentiment: call.agent ? sentimentOf(contactText) : null,
    recordingUrl: call.agent
      ? `https://recordings.simulated.invalid/${digest("rec", call.callId).slice(0, 24)}.wav`
      : null,
    startedAt: acceptedAt,
    endedAt: ended,
  };
}

function engineAgent(spec: VoiceAgentSpec): EngineAgent {
  return {
    name: spec.name,
    systemPrompt: spec.systemPrompt,
    goal: spec.goal,
    greeting: spec.greeting,
    tone: (["friendly", "professional", "casual", "empathetic", "direct"].includes(spec.tone)
      ? spec.tone
      : "friendly") as EngineAgent["tone"],
    creativity: "balanced",
    guardrails: spec.guardrails,
    knowledge: spec.knowledge,
    maxLength: 320,
    modelTier: "fast",
    captureFields: [],
  };
}

/** Greeting, the contact's opener, a question answered by the offline engine, and goodbyes. */
function agentConversation(
  spec: VoiceAgentSpec,
  to: string,
  at: (ms: number) => string,
  callMs: number,
): TranscriptTurn[] {
  const agent = engineAgent(spec);
  const pick = Number.parseInt(digest("script", to).slice(0, 8), 16);
  const lines: EngineTurn[] = [];
  const say = (role: EngineTurn["role"], text: string) => {
    if (text.trim()) lines.push({ role, text: text.trim() });
  };
  say("agent", offlineAnswer({ agent, thread: [], known: {}, opening: true }).reply);
  say("contact", CONTACT_OPENERS[pick % CONTACT_OPENERS.length]);
  say("contact", CONTACT_QUESTIONS[(pick >>> 4) % CONTACT_QUESTIONS.length]);
  say("agent", offlineAnswer({ agent, thread: [...lines], known: {} }).reply);
  say("contact", CONTACT_CLOSER);
  say("agent", "Thanks for your time. Goodbye!");
  return lines.map((line, i) => ({
    role: line.role,
    text: line.text,
    at: at((callMs * (i + 1)) / (lines.length + 1)),
  }));
}

function sayConversation(call: OutboundCall, at: (ms: number) => string, callMs: number): TranscriptTurn[] {
  return call.say ? [{ role: "agent", text: call.say, at: at(callMs / 2) }] : [];
}

/** One simulated line over the shared ledger. */
export class SimulatedCallLine {
  readonly sinks = new CallSinkSlot();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<unknown> | null = null;
  private stopped = true;
  private readonly tickMs: number;
  private readonly batchSize: number;

  constructor(
    private readonly db: DbOrTx,
    private readonly clock: Clock,
    readonly line: "voice" | "carrier",
    readonly options: SimulatedLineOptions,
  ) {
    this.tickMs = options.tickMs ?? Math.max(5, Math.min(options.callMs, 100));
    this.batchSize = options.batchSize ?? 1000;
  }

  start() {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  async stop() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flushing;
  }

  private schedule() {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.flushing = this.flushDue()
        .catch((error) => log.warn("simulated call line: report failed", { error: errorText(error) }))
        .finally(() => {
          this.flushing = null;
          this.schedule();
        });
    }, this.tickMs);
  }

  /**
   * Reports every due call: claimed, the sink told, then the row marked. A crash in between
   * reports it again, here or on another server (sinks are idempotent): at once on PostgreSQL,
   * LEDGER_RETRY_MS later on SQLite (dueLedgerStatements).
   */
  async flushDue(): Promise<number> {
    if (!this.sinks.attached) return 0;
    let reported = 0;
    for (;;) {
      const now = this.clock.now();
      const count = await callLedgerStatements(this.db).reportDue(
        { line: this.line, now, limit: this.batchSize },
        async (due) => await this.sinks.onCallReports(due.map(reportOfLedgerRow)),
      );
      reported += count;
      if (count < this.batchSize || this.stopped) break;
    }
    return reported;
  }

  /** Places a call: the outcome by the number called, recorded in the ledger; RINGING now. */
  async place(call: OutboundCall): Promise<CallPlacement> {
    if (call.to === SIMULATED_CALL_MAGIC.outage || call.from === SIMULATED_CALL_MAGIC.outage)
      throw new VoiceUnavailableError("simulated voice outage");
    if (call.to === SIMULATED_CALL_MAGIC.invalid)
      return { accepted: false, errorCode: "invalid_number", errorMessage: "The number called is not valid" };
    const now = this.clock.now();
    const providerCallId = `${this.line === "voice" ? "simcall" : "CA"}_${digest("call", call.callId).slice(0, 30)}`;
    const outcome = simulatedOutcome(call, now, this.options.callMs);
    await this.db
      .insert(sandboxCalls)
      .values({
        id: newId(),
        workspaceId: call.workspaceId,
        callId: call.callId,
        line: this.line,
        from: call.from,
        to: call.to,
        providerCallId,
        acceptedAt: now,
        reportAt: now + this.options.callMs,
        outcome: outcome as Record<string, unknown>,
        reportedAt: null,
      })
      .run();
    return { accepted: true, providerCallId, status: "RINGING" };
  }

  async lookup(callId: string): Promise<CallLookup> {
    const row = await this.db
      .select()
      .from(sandboxCalls)
      .where(and(eq(sandboxCalls.callId, callId), eq(sandboxCalls.line, this.line)))
      .orderBy(asc(sandboxCalls.acceptedAt))
      .limit(1)
      .get();
    if (!row) return { found: false };
    const status: CallStatus =
      row.reportedAt === null ? "RINGING" : ((row.outcome as Script).status ?? "RINGING");
    return { found: true, providerCallId: row.providerCallId, status };
  }
}

function reportOfLedgerRow(row: SandboxCallRow): CallReport {
  return { ...(row.outcome as Script), callId: row.callId, providerCallId: row.providerCallId };
}

/** One ledger row as `GET /v1/sandbox/calls` shows it. */
export interface SandboxCall {
  call_id: string;
  line: string;
  from: string;
  to: string;
  status: string;
  accepted_at: string;
  reported_at: string | null;
}

/** The simulated lines' ledger for one workspace, newest first (one row per placement). */
export async function listSandboxCalls(
  db: DbOrTx,
  workspaceId: string,
  page: { limit: number; offset: number },
): Promise<{ calls: SandboxCall[]; total: number }> {
  const { rows, total } = await newestFirstPage(
    db,
    sandboxCalls,
    eq(sandboxCalls.workspaceId, workspaceId),
    [sandboxCalls.acceptedAt, sandboxCalls.id],
    page,
  );
  return {
    calls: rows.map((row) => ({
      call_id: row.callId,
      line: row.line,
      from: row.from,
      to: row.to,
      status: String((row.outcome as Script).status),
      accepted_at: new Date(row.acceptedAt).toISOString(),
      reported_at: row.reportedAt === null ? null : new Date(row.reportedAt).toISOString(),
    })),
    total,
  };
}

/**
 * The simulated voice provider (`VOICE=simulated`, the default): the fixed catalogue of voices,
 * agent sync that always succeeds with ids derived from ours, and calls on the simulated line.
 */
export class SimulatedVoice implements VoiceProvider {
  readonly name = "simulated" as const;
  private readonly lineImpl: SimulatedCallLine;

  constructor(db: DbOrTx, clock: Clock, options: SimulatedLineOptions) {
    this.lineImpl = new SimulatedCallLine(db, clock, "voice", options);
  }

  get sinks() {
    return this.lineImpl.sinks;
  }

  get line(): SimulatedCallLine {
    return this.lineImpl;
  }

  start() {
    this.lineImpl.start();
  }

  stop() {
    return this.lineImpl.stop();
  }

  async listVoices(): Promise<Voice[]> {
    return [...SIMULATED_VOICES];
  }

  async syncAgent(agent: VoiceAgentSpec): Promise<ProviderAgentRef> {
    return agent.ref ?? { llm_id: `sim_llm_${agent.id}`, agent_id: `sim_agent_${agent.id}` };
  }

  async placeCall(call: OutboundCall): Promise<CallPlacement> {
    return await this.lineImpl.place(call);
  }

  async lookupCall(call: OutboundCall): Promise<CallLookup> {
    return await this.lineImpl.lookup(call.callId);
  }

  /** The simulated provider makes no HTTP callbacks, so none is genuine. */
  verifyWebhook(_webhook: VoiceWebhook): boolean {
    return false;
  }

  webhookReplayKey(_webhook: VoiceWebhook): string | null {
    return null;
  }

  parseWebhook(): CallReport | null {
    return null;
  }
}

/** The call ledger's reports of one line, claimed by whichever server reports them (built once per connection). */
const callLedgerStatements = preparedPerConnection((db: DbOrTx) =>
  dueLedgerStatements(
    db,
    sandboxCalls,
    { due: "reportAt", done: "reportedAt" },
    eq(sandboxCalls.line, sql.placeholder("line")),
  ),
);
