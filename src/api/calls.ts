import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { createCall, getCall, listCalls, MAX_SAY_LENGTH } from "../domain/calls/calls";
import { workspaceOf } from "../http/context";
import { keptWithEffect } from "../http/idempotency";
import { paginationQuery, parsePagination } from "../http/pagination";
import {
  Body,
  dailyBudget429,
  Enum,
  Int,
  listEnvelope,
  NullableTimestamp,
  Ok,
  Query,
  READ_ERRORS,
  responses,
  Timestamp,
  Uuid,
  WRITE_ERRORS,
} from "../http/schemas";
import { CALL_STATUSES } from "../voice/provider";

const Nullable = (description: string) => t.Union([t.String(), t.Null()], { description });

export const CallSchema = t.Object(
  {
    id: Uuid("Call id"),
    direction: Enum(["outbound", "inbound"], "outbound: placed by the workspace"),
    from: t.String({ description: "Calling number (E.164)", examples: ["+14155550100"] }),
    to: t.String({ description: "Called number (E.164)", examples: ["+14155550123"] }),
    status: Enum(
      CALL_STATUSES,
      "QUEUED → RINGING → IN_PROGRESS → COMPLETED | BUSY | NO_ANSWER | FAILED | VOICEMAIL",
    ),
    agent_id: Nullable("The voice agent that talks (agent calls)"),
    say: Nullable("The text spoken (say calls)"),
    contact_id: Nullable("The contact called"),
    conversation_id: Nullable("The contact's thread: the finished call adds one entry to it"),
    campaign_id: Nullable("The voice campaign that placed it, if any"),
    duration_sec: t.Union([Int({ minimum: 0 }), t.Null()], { description: "Talk time in seconds" }),
    transcript: t.Array(
      t.Object(
        {
          role: Enum(["agent", "contact"], "Who spoke"),
          text: t.String({ description: "What was said" }),
          at: t.String({ description: "When (ISO 8601)" }),
        },
        { description: "One line" },
      ),
      { description: "What was said, in order (empty until the call ends)" },
    ),
    recording_url: Nullable("Recording, when the provider made one"),
    summary: Nullable("What the call was about (agent calls)"),
    sentiment: Nullable("The contact's sentiment: positive, neutral or negative"),
    ended_reason: Nullable(
      "Why it ended, as the provider said (e.g. user_hangup, dial_busy, voicemail_reached), or why it was never placed (opted_out, suppressed, invalid_number, provider_unavailable, agent_deleted)",
    ),
    created_at: Timestamp("When the call was accepted"),
    started_at: NullableTimestamp("When it was answered"),
    ended_at: NullableTimestamp("When it ended"),
  },
  { description: "A voice call" },
);

const CallBody = Body(
  {
    to: t.String({
      maxLength: 64,
      description: "Number to call: E.164, or 10/11-digit US",
      examples: ["+14155550123"],
    }),
    from: t.Optional(
      t.Union([t.String({ maxLength: 64 }), t.Null()], {
        description:
          "A voice-capable number of this workspace; default: settings.default_number_id, else the oldest active number",
      }),
    ),
    agent_id: t.Optional(
      t.Union([t.String({ maxLength: 64 }), t.Null()], {
        description: "A voice agent that holds the conversation (exactly one of agent_id and say)",
      }),
    ),
    say: t.Optional(
      t.Union([t.String({ maxLength: MAX_SAY_LENGTH + 1000 }), t.Null()], {
        description: `Text spoken to whoever answers, 1–${MAX_SAY_LENGTH} characters (exactly one of agent_id and say)`,
      }),
    ),
  },
  { description: "One call to place now" },
);

// POST /v1/calls – place one call; GET /v1/calls, GET /v1/calls/{id} – read them.
export function callsRoutes(deps: AppDeps) {
  return new Elysia({ name: "calls" })
    .post(
      "/v1/calls",
      async ({ request, body }) => {
        const answerOf = (call: Awaited<ReturnType<typeof createCall>>) => ({ ok: true as const, call });
        return answerOf(
          await keptWithEffect(request, answerOf, () =>
            createCall(deps.db, workspaceOf(request), body, deps.clock.now()),
          ),
        );
      },
      {
        body: CallBody,
        detail: {
          tags: ["Calls"],
          operationId: "createCall",
          summary: "Place one call",
          description:
            "An agent call (`agent_id`, a voice agent) goes through the voice provider; a `say` call through the carrier (Twilio: Calls API with TwiML `<Say>`). The call is recorded QUEUED and placed by a durable job: a crash never places it twice, and an outage keeps it QUEUED and retries it (then FAILED with `ended_reason: provider_unavailable`). Opt-out and suppression are checked now and again when it is placed. Creates the contact and its thread when new; the finished call adds one entry to the thread and emits `call.completed`. 422: `agent_id or say is required`, `agent_id and say cannot both be given: choose one`, `say must not be empty`, `say is too long (max 2000)`, `agent_id does not exist`, `agent_id must be a voice agent (this one is an SMS agent)`, `agent_id is paused`, `to must be a valid phone number`, `from is not a number of this workspace`, `from cannot place calls: the number has no voice capability`, `No sending number: order one with POST /v1/numbers`, `Recipient has opted out`, `Recipient is suppressed`. Counts against the workspace's `one_off_daily_limit` (with POST /v1/messages).",
        },
        response: responses(
          t.Object({ ok: Ok, call: CallSchema }),
          WRITE_ERRORS,
          dailyBudget429("one_off_daily_limit", 5000),
        ),
      },
    )
    .get(
      "/v1/calls",
      async ({ request, query }) => ({
        ok: true as const,
        ...(await listCalls(deps.db, workspaceOf(request), { ...query, ...parsePagination(query) })),
      }),
      {
        query: Query({
          ...paginationQuery,
          status: t.Optional(t.String({ description: CALL_STATUSES.join(" | ") })),
          contact_id: t.Optional(t.String({ description: "Only this contact's calls" })),
          campaign_id: t.Optional(t.String({ description: "Only this campaign's calls" })),
          agent_id: t.Optional(t.String({ description: "Only this agent's calls" })),
        }),
        detail: {
          tags: ["Calls"],
          operationId: "listCalls",
          summary: "List calls",
          description: "Newest first. A bad `status` → 422 naming the values.",
        },
        response: responses(listEnvelope("calls", CallSchema, "Calls, newest first"), [...READ_ERRORS, 422]),
      },
    )
    .get(
      "/v1/calls/:id",
      async ({ request, params }) => ({
        ok: true as const,
        call: await getCall(deps.db, workspaceOf(request), params.id),
      }),
      {
        params: t.Object({ id: t.String({ description: "Call id" }) }),
        detail: {
          tags: ["Calls"],
          operationId: "getCall",
          summary: "Get a call",
          description:
            "One call with its transcript, summary, sentiment, recording and `ended_reason`. 404 for an id of another workspace.",
        },
        response: responses(t.Object({ ok: Ok, call: CallSchema }), [...READ_ERRORS, 404]),
      },
    );
}
