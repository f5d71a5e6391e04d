import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import {
  createdAtColumn,
  idColumn,
  jsonColumn,
  timestampColumn,
  updatedAtColumn,
  workspaceIdColumn,
} from "./columns";

/** One line of a call's transcript as stored (`at` ISO 8601). */
export interface StoredTranscriptTurn {
  role: "agent" | "contact";
  text: string;
  at: string;
}

/**
 * Voice calls (API.md §3 Calls, §6.4). status: QUEUED → RINGING → IN_PROGRESS → COMPLETED | BUSY |
 * NO_ANSWER | FAILED | VOICEMAIL. An agent call goes through the voice provider (`via` voice), a
 * `say` call through the carrier (`via` carrier). Placed by the durable job `calls.place`.
 */
export const calls = sqliteTable(
  "calls",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    /** outbound (inbound calls are not taken yet). */
    direction: text("direction").notNull(),
    fromNumber: text("from_number").notNull(),
    toNumber: text("to_number").notNull(),
    numberId: text("number_id"),
    status: text("status").notNull(),
    agentId: text("agent_id"),
    say: text("say"),
    contactId: text("contact_id"),
    conversationId: text("conversation_id"),
    campaignId: text("campaign_id"),
    /**
     * The flow whose `call` node placed it. With `campaign_id`, what makes a call a marketing send
     * the frequency cap counts (API.md §6.1); one-off `POST /v1/calls` calls have neither.
     */
    flowId: text("flow_id"),
    /** voice (the voice provider, agent calls) | carrier (say calls). */
    via: text("via").notNull(),
    providerCallId: text("provider_call_id"),
    durationSec: integer("duration_sec"),
    transcript: jsonColumn<StoredTranscriptTurn[]>("transcript").notNull(),
    recordingUrl: text("recording_url"),
    summary: text("summary"),
    sentiment: text("sentiment"),
    endedReason: text("ended_reason"),
    /**
     * Set (and committed) right before the hand-off to the provider. A job that finds it set from an
     * earlier attempt asks the provider for the call by our id instead of placing it again.
     */
    handoffStartedAt: timestampColumn("handoff_started_at"),
    createdAt: createdAtColumn(),
    startedAt: timestampColumn("started_at"),
    endedAt: timestampColumn("ended_at"),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    index("calls_workspace_created_idx").on(t.workspaceId, t.createdAt, t.id),
    index("calls_workspace_status_idx").on(t.workspaceId, t.status, t.createdAt),
    index("calls_workspace_contact_idx").on(t.workspaceId, t.contactId, t.createdAt),
    index("calls_workspace_campaign_idx").on(t.workspaceId, t.campaignId, t.status),
    // A voice campaign places one call per recipient (only its dispatch step writes campaign_id).
    uniqueIndex("calls_campaign_contact_idx")
      .on(t.campaignId, t.contactId)
      .where(sql`campaign_id IS NOT NULL`),
    index("calls_provider_id_idx").on(t.providerCallId).where(sql`provider_call_id IS NOT NULL`),
  ],
);

export type CallRow = typeof calls.$inferSelect;

/**
 * The simulated call line's ledger (simulated voice provider and simulated carrier): one row per
 * call placed (a duplicate placement is two rows), with the outcome it will report and when, so
 * tests and benchmarks can count placements from outside and pending reports survive a restart.
 */
export const sandboxCalls = sqliteTable(
  "sandbox_calls",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    /** Our call id, as handed over. */
    callId: text("call_id").notNull(),
    /** voice | carrier: which simulated line took it (each reports its own). */
    line: text("line").notNull(),
    from: text("from_number").notNull(),
    to: text("to_number").notNull(),
    providerCallId: text("provider_call_id").notNull(),
    acceptedAt: timestampColumn("accepted_at").notNull(),
    /** When the final report is due. */
    reportAt: timestampColumn("report_at").notNull(),
    /** The final report (a CallReport without callId), as JSON. */
    outcome: jsonColumn<Record<string, unknown>>("outcome").notNull(),
    /** When the final report was made; null while pending. */
    reportedAt: timestampColumn("reported_at"),
  },
  (t) => [
    index("sandbox_calls_workspace_accepted_idx").on(t.workspaceId, t.acceptedAt),
    index("sandbox_calls_call_idx").on(t.callId),
    index("sandbox_calls_pending_idx").on(t.line, t.reportAt).where(sql`reported_at IS NULL`),
  ],
);

export type SandboxCallRow = typeof sandboxCalls.$inferSelect;

/**
 * Signatures of provider webhooks already accepted (Retell's `x-retell-signature`), kept for the
 * signature's tolerance window so a replayed request is refused by every server sharing the database.
 */
export const webhookReceipts = sqliteTable(
  "webhook_receipts",
  {
    signature: text("signature").primaryKey(),
    receivedAt: timestampColumn("received_at").notNull(),
  },
  (t) => [index("webhook_receipts_received_idx").on(t.receivedAt)],
);
