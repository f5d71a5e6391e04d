import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import {
  ATTENTION_REASONS,
  addNote,
  getConversation,
  type InboxViewer,
  LAST_MESSAGE_PREVIEW,
  listAssignees,
  listConversations,
  updateConversation,
} from "../domain/messaging/conversations";
import { MAX_BODY_LENGTH } from "../domain/messaging/message-json";
import { replyToConversation } from "../domain/messaging/one-off";
import { authOf, workspaceOf } from "../http/context";
import { paginationQuery, parsePagination } from "../http/pagination";
import {
  Body,
  dailyBudget429,
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
  assigned_to: t.Union([t.String(), t.Null()], {
    description: "Id of the workspace user the thread is assigned to; null when unassigned",
  }),
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

const Assignee = t.Object(
  {
    id: Uuid("User id"),
    email: t.String({ description: "The user's e-mail", examples: ["dana@acme.test"] }),
    name: t.String({ description: "The user's name", examples: ["Dana"] }),
  },
  { description: "A workspace user a thread can be assigned to" },
);

const InboxRowFields = {
  ...ConversationFields,
  contact: t.Union(
    [
      t.Object(
        {
          id: Uuid("Contact id"),
          first_name: t.Union([t.String(), t.Null()], { description: "First name" }),
          last_name: t.Union([t.String(), t.Null()], { description: "Last name" }),
          phone_number: t.String({ description: "E.164 phone number", examples: ["+14155550123"] }),
          opted_in: t.Boolean({ description: "False once the contact opted out: no reply can be sent" }),
        },
        { description: "The thread's contact" },
      ),
      t.Null(),
    ],
    { description: "The thread's contact; null if it was deleted" },
  ),
  last_message: t.Union(
    [
      t.Object(
        {
          body: t.String({ description: `The first ${LAST_MESSAGE_PREVIEW} characters of the text` }),
          direction: t.String({ description: "outbound | inbound" }),
          sender: t.String({ description: "contact | agent | human | campaign | flow | system" }),
          created_at: Timestamp("When it was sent or received"),
        },
        { description: "The thread's latest message (notes are not messages and never appear here)" },
      ),
      t.Null(),
    ],
    { description: "The latest message; null for a thread without one" },
  ),
  unread: t.Integer({
    minimum: 0,
    description:
      "Inbound messages since the signed-in user last opened the thread (GET /v1/conversations/{id} with their session). With an API key: since any workspace user last opened it.",
  }),
  assignee: t.Union([Assignee, t.Null()], {
    description: "The user `assigned_to` names, for display; null when unassigned",
  }),
};

const InboxRow = t.Object(InboxRowFields, {
  description: "An inbox thread with what its row shows: contact, latest message, unread count, assignee",
});

const NoteAuthor = t.Object(
  {
    user_id: t.Union([t.String(), t.Null()], {
      description: "The user who wrote it; null when written with an API key",
    }),
    name: t.String({ description: "The user's name, or the API key's name" }),
  },
  { description: "Who wrote the note" },
);

const NoteSchema = t.Object(
  {
    id: Uuid("Note id"),
    body: t.String({ description: "The note's text" }),
    author: NoteAuthor,
    created_at: Timestamp("When it was written"),
  },
  { description: "A private note of the team on a thread: never sent to the contact" },
);

/** Who reads: the session's user, or no one for an API key. */
function viewerOf(request: Request): InboxViewer {
  const auth = authOf(request);
  return { userId: auth.kind === "session" ? auth.user.id : null };
}

const ThreadMessage = t.Object(
  {
    id: Uuid("Message id"),
    direction: t.String({ description: "outbound | inbound" }),
    sender: t.String({
      description:
        "contact | agent | human | campaign | flow | system | note (a private note of the team: direction `internal`, status `NOTE`, never sent)",
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
    author: t.Optional(NoteAuthor),
  },
  { description: "One message of the thread, or a note of the team (`sender: note`, with `author`)" },
);

const Id = t.Object({ id: t.String({ description: "Conversation id" }) });

// GET /v1/conversations, GET/PATCH/POST /v1/conversations/{id}, POST /v1/conversations/{id}/notes,
// GET /v1/conversations/assignees – the inbox.
export function conversationsRoutes(deps: AppDeps) {
  return new Elysia({ name: "conversations" })
    .get(
      "/v1/conversations",
      async ({ request, query }) => ({
        ok: true as const,
        ...(await listConversations(
          deps.db,
          workspaceOf(request),
          { filter: query.filter, q: query.q, ...parsePagination(query) },
          viewerOf(request),
        )),
      }),
      {
        query: Query({
          ...paginationQuery,
          filter: t.Optional(
            t.String({
              description:
                "all (default) | open | closed | needs_attention | assigned | unassigned | agent | mine (assigned to the signed-in user; with an API key → 422)",
              examples: ["needs_attention"],
            }),
          ),
          q: t.Optional(
            t.String({
              maxLength: 200,
              description:
                "Searches contact name, phone (any digit suffix) and message text: every word a prefix, all required. Case and accents are ignored, and so are the letters PostgreSQL's unaccent folds (ø → o, ß → ss, æ → ae, ligatures, full-width letters): `strasse` finds `Straße` on both databases.",
            }),
          ),
        }),
        detail: {
          tags: ["Conversations"],
          operationId: "listConversations",
          summary: "List inbox threads",
          description:
            "Most recently active first. Each record carries what an inbox row shows (`contact`, `last_message`, `unread`, `assignee`), read in one query for the page. Unknown `filter` → 422; `filter=mine` with an API key (no user) → 422 `filter mine needs a signed-in user (an API key has none)`.",
        },
        response: responses(listEnvelope("conversations", InboxRow, "Threads, most recent activity first"), [
          ...READ_ERRORS,
          422,
        ]),
      },
    )
    .get(
      "/v1/conversations/assignees",
      async ({ request }) => ({
        ok: true as const,
        assignees: await listAssignees(deps.db, workspaceOf(request)),
      }),
      {
        detail: {
          tags: ["Conversations"],
          operationId: "listAssignees",
          summary: "List the users a thread can be assigned to",
          description:
            "Every member of the workspace (either role), by name: the inbox's assign picker. Readable by agent users, who cannot list /v1/users.",
        },
        response: responses(
          t.Object({ ok: Ok, assignees: t.Array(Assignee, { description: "Workspace users, by name" }) }),
          READ_ERRORS,
        ),
      },
    )
    .post(
      "/v1/conversations/:id/notes",
      async ({ request, params, body }) => {
        const auth = authOf(request);
        const author =
          auth.kind === "session"
            ? { userId: auth.user.id, name: auth.user.name || auth.user.email }
            : { userId: null, name: auth.keyName };
        return {
          ok: true as const,
          note: await addNote(deps.db, workspaceOf(request), params.id, body.body, author, deps.clock.now()),
        };
      },
      {
        params: Id,
        body: Body({
          body: t.String({
            minLength: 1,
            maxLength: 2000,
            description: "The note (1–2000 characters); seen by the team only",
            examples: ["Called her back; she wants the blue one in M."],
          }),
        }),
        detail: {
          tags: ["Conversations"],
          operationId: "addConversationNote",
          summary: "Add a private note to a thread",
          description:
            "The note appears in the thread with `sender: note` and is never sent: no message, no webhook `message.*` event, no analytics figure, and no agent reads it. It does not reopen the thread or move it in the inbox.",
        },
        response: responses(t.Object({ ok: Ok, note: NoteSchema }), [...WRITE_ERRORS, 404]),
      },
    )
    .get(
      "/v1/conversations/:id",
      async ({ request, params }) => ({
        ok: true as const,
        conversation: await getConversation(
          deps.db,
          workspaceOf(request),
          params.id,
          viewerOf(request),
          deps.clock.now(),
        ),
      }),
      {
        params: Id,
        detail: {
          tags: ["Conversations"],
          operationId: "getConversation",
          summary: "Get a thread with all its messages",
          description:
            "Messages and the team's notes (`sender: note`), oldest first. Opened with a user's session, it marks the thread read for that user (`unread` counts from now).",
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
      async ({ request, params, body }) => {
        await replyToConversation(deps.db, workspaceOf(request), params.id, body.body, deps.clock.now());
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
            "Sends from the number the thread last used (else the default), pauses the thread's agent and clears needs_attention. Opted-out or suppressed contact → 422. A reply is a one-off send: it counts against the workspace's `one_off_daily_limit` with `POST /v1/messages` and `POST /v1/calls`; past it, 429 `Daily limit reached: one_off_daily_limit is 5000` and nothing is sent.",
        },
        response: responses(
          t.Object({
            ok: Ok,
            sent: t.Literal(true, { description: "Always true: the reply was queued for sending" }),
          }),
          [...WRITE_ERRORS, 404],
          dailyBudget429("one_off_daily_limit", 5000),
        ),
      },
    )
    .patch(
      "/v1/conversations/:id",
      async ({ request, params, body }) => {
        await updateConversation(deps.db, workspaceOf(request), params.id, body, deps.clock.now());
        return { ok: true as const, updated: true as const };
      },
      {
        params: Id,
        body: Body({
          status: t.Optional(
            t.String({
              description:
                "open | closed. A contact has one open thread: reopening one while another is open → 409",
              examples: ["closed"],
            }),
          ),
          assigned_to: t.Optional(
            t.Union([t.String({ maxLength: 200 }), t.Null()], {
              description:
                "A workspace user's id or e-mail (stored as the id); null unassigns. Anyone else → 422 `assigned_to does not exist`",
              examples: ["dana@acme.test"],
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
          [...WRITE_ERRORS, 404, 409],
          {
            409: "Reopening a thread while the contact has another open one (`The contact has another open conversation`)",
          },
        ),
      },
    );
}
