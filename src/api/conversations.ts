import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import {
  ATTENTION_REASONS,
  getConversation,
  listConversations,
  updateConversation,
} from "../domain/messaging/conversations";
import { MAX_BODY_LENGTH, replyToConversation } from "../domain/messaging/messages";
import { workspaceOf } from "../http/context";
import { paginationQuery, parsePagination } from "../http/pagination";
import {
  Body,
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

const ConversationFields = {
  id: Uuid("Conversation id"),
  contact_id: Uuid("The contact of the thread"),
  status: t.String({ description: "open | closed", examples: ["open"] }),
  needs_attention: t.Boolean({ description: "A human should look: an inbound message no agent owns" }),
  attention_reason: t.Union([...ATTENTION_REASONS.map((reason) => t.Literal(reason)), t.Null()], {
    description:
      "Why the thread needs a person; null when needs_attention is false. unanswered_message: no agent will " +
      "answer; possible_opt_out: a message longer than six words containing an opt-out keyword; " +
      "agent_handoff; agent_flagged (a hot lead or an assist draft); manual (set with PATCH)",
    examples: ["possible_opt_out"],
  }),
  assigned_to: t.Union([t.String(), t.Null()], { description: "Teammate the thread is assigned to" }),
  agent_id: t.Union([t.String(), t.Null()], { description: "AI agent that owns the thread" }),
  agent_paused: t.Boolean({
    description: "True once a human replied or the agent handed off: the agent stays quiet",
  }),
  agent_active: t.Boolean({
    description: "An agent owns the thread and is answering it (false after a handoff or a human reply)",
  }),
  draft_reply: t.Union([t.String(), t.Null()], {
    description: "An assist-mode agent's proposed answer, waiting for a person; null when none",
  }),
  intent: t.Union([t.String(), t.Null()], {
    description: "The latest inbound message's intent as the agent classified it: none | low | medium | high",
  }),
  last_message_at: NullableTimestamp("Time of the latest message"),
  created_at: Timestamp("When the thread started"),
};

export const ConversationSchema = t.Object(ConversationFields, { description: "An inbox thread" });

const ThreadMessage = t.Object(
  {
    id: Uuid("Message id"),
    direction: t.String({ description: "outbound | inbound" }),
    sender: t.String({
      description: "contact | agent | human | campaign | flow | system",
      examples: ["contact"],
    }),
    body: t.String({
      description: 'Message text; a call\'s entry says how the call went (its summary, or e.g. "No answer")',
    }),
    status: t.String({
      description: "Message status; `CALL` for a call's entry in the thread (see `call_id`)",
      examples: ["RECEIVED"],
    }),
    call_id: t.Union([t.String(), t.Null()], {
      description: "The call this entry reports (one entry per finished call); null for SMS",
    }),
    created_at: Timestamp("When it was sent or received"),
  },
  { description: "One message of the thread" },
);

const Id = t.Object({ id: t.String({ description: "Conversation id" }) });

// GET /v1/conversations, GET/PATCH/POST /v1/conversations/{id} – the inbox.
export function conversationsRoutes(deps: AppDeps) {
  return new Elysia({ name: "conversations" })
    .get(
      "/v1/conversations",
      ({ request, query }) => ({
        ok: true as const,
        ...listConversations(deps.db, workspaceOf(request), {
          filter: query.filter,
          q: query.q,
          ...parsePagination(query),
        }),
      }),
      {
        query: Query({
          ...paginationQuery,
          filter: t.Optional(
            t.String({
              description: "all (default) | open | closed | needs_attention | assigned | unassigned | agent",
              examples: ["needs_attention"],
            }),
          ),
          q: t.Optional(
            t.String({ maxLength: 200, description: "Searches contact name, phone and message text" }),
          ),
        }),
        detail: {
          tags: ["Conversations"],
          operationId: "listConversations",
          summary: "List inbox threads",
          description: "Most recently active first. Unknown `filter` → 422.",
        },
        response: responses(
          listEnvelope("conversations", ConversationSchema, "Threads, most recent activity first"),
          [...READ_ERRORS, 422],
        ),
      },
    )
    .get(
      "/v1/conversations/:id",
      ({ request, params }) => ({
        ok: true as const,
        conversation: getConversation(deps.db, workspaceOf(request), params.id),
      }),
      {
        params: Id,
        detail: {
          tags: ["Conversations"],
          operationId: "getConversation",
          summary: "Get a thread with all its messages",
          description: "Messages oldest first.",
        },
        response: responses(
          t.Object({
            ok: Ok,
            conversation: t.Object(
              { ...ConversationFields, messages: t.Array(ThreadMessage, { description: "The full thread" }) },
              { description: "The thread" },
            ),
          }),
          [...READ_ERRORS, 404],
        ),
      },
    )
    .post(
      "/v1/conversations/:id",
      ({ request, params, body }) => {
        replyToConversation(deps.db, workspaceOf(request), params.id, body.body, deps.clock.now());
        return { ok: true as const, sent: true as const };
      },
      {
        params: Id,
        body: Body({
          body: t.String({
            minLength: 1,
            maxLength: MAX_BODY_LENGTH,
            description: "Reply text (1–1600 characters)",
            examples: ["Thanks, a teammate will call you today."],
          }),
        }),
        detail: {
          tags: ["Conversations"],
          operationId: "replyToConversation",
          summary: "Reply as the team",
          description:
            "Sends from the number the thread last used (else the default), pauses the thread's agent and clears needs_attention. Opted-out or suppressed contact → 422.",
        },
        response: responses(
          t.Object({
            ok: Ok,
            sent: t.Literal(true, { description: "Always true: the reply was queued for sending" }),
          }),
          [...WRITE_ERRORS, 404],
        ),
      },
    )
    .patch(
      "/v1/conversations/:id",
      ({ request, params, body }) => {
        updateConversation(deps.db, workspaceOf(request), params.id, body, deps.clock.now());
        return { ok: true as const, updated: true as const };
      },
      {
        params: Id,
        body: Body({
          status: t.Optional(t.String({ description: "open | closed", examples: ["closed"] })),
          assigned_to: t.Optional(
            t.Union([t.String({ maxLength: 200 }), t.Null()], {
              description: "Teammate to assign; null unassigns",
            }),
          ),
          needs_attention: t.Optional(t.Boolean({ description: "Set or clear the attention flag" })),
          agent_id: t.Optional(
            t.Union([t.String({ maxLength: 64 }), t.Null()], {
              description:
                "Give the thread to an SMS agent of the workspace (it answers from the next inbound message); null takes it away",
            }),
          ),
        }),
        detail: {
          tags: ["Conversations"],
          operationId: "updateConversation",
          summary: "Triage a thread",
          description:
            "Partial update. An unknown `agent_id` → 422 `agent_id does not exist`; a voice agent → 422.",
        },
        response: responses(
          t.Object({
            ok: Ok,
            updated: t.Literal(true, { description: "Always true: the thread was updated" }),
          }),
          [...WRITE_ERRORS, 404],
        ),
      },
    );
}
