import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { MAX_BODY_LENGTH } from "../domain/messaging/message-json";
import { getMessage, listMessages } from "../domain/messaging/message-reads";
import { submitOneOffMessage } from "../domain/messaging/one-off";
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

const Nullable = (description: string) => t.Union([t.String(), t.Null()], { description });

export const MessageSchema = t.Object(
  {
    id: Uuid("Message id"),
    direction: Enum(
      ["outbound", "inbound"],
      "outbound: sent by the workspace; inbound: received from the contact",
    ),
    from: t.String({ description: "Sending number (E.164)", examples: ["+14155550100"] }),
    to: t.String({ description: "Receiving number (E.164)", examples: ["+14155550123"] }),
    body: t.String({ description: "Message text" }),
    status: t.String({
      description:
        "PENDING → QUEUED → SENT → DELIVERED | UNDELIVERED | FAILED; inbound: RECEIVED. QUEUED: its hand-off started, or it waits (its send-time window, a carrier that was down); a message handed off at once in a send batch goes from PENDING to SENT",
      examples: ["DELIVERED"],
    }),
    segments: Int({ description: "SMS segments the body is billed as" }),
    encoding: Enum(
      ["GSM-7", "UCS-2"],
      "Character set the body needs: GSM-7 (160 chars a segment) or UCS-2 (70)",
    ),
    contact_id: Nullable("The contact messaged or messaging"),
    conversation_id: Nullable("The inbox thread"),
    campaign_id: Nullable("The campaign that sent it, if any"),
    error_code: Nullable("Why it failed (e.g. opted_out, suppressed, invalid_number, undelivered)"),
    error_message: Nullable("Human-readable failure reason"),
    created_at: Timestamp("When the message was accepted or received"),
    sent_at: NullableTimestamp("When the carrier accepted it"),
    delivered_at: NullableTimestamp("When the handset got it"),
    send_at: NullableTimestamp(
      "Deferred by the send-time rules (quiet hours, state rules, a sender's daily_limit) until this instant (API.md §6.1); null unless deferred. A deferred campaign send is written at once as a QUEUED message with send_at (the recipient's message_id); at send_at the rules are asked again: it goes (status moves on, send_at stays as when it was allowed to go), waits again (new send_at), or becomes FAILED with the skip reason as error_code (opted_out, frequency_cap, ...), or campaign_canceled",
    ),
  },
  { description: "An SMS message" },
);

const SendBody = Body(
  {
    to: t.String({
      maxLength: 64,
      description: "Destination number: E.164, or 10/11-digit US",
      examples: ["+14155550123"],
    }),
    body: t.String({
      minLength: 1,
      maxLength: MAX_BODY_LENGTH,
      description: "Message text (1–1600 characters; GSM-7 or UCS-2 is chosen automatically)",
      examples: ["Your order has shipped."],
    }),
    from: t.Optional(
      t.String({
        maxLength: 64,
        description:
          "A number of this workspace; default: settings.default_number_id, else the oldest active number",
        examples: ["+14155550100"],
      }),
    ),
  },
  { description: "One SMS to send now" },
);

// POST /v1/messages – send one SMS now; GET /v1/messages, GET /v1/messages/{id} – read them.
export function messagesRoutes(deps: AppDeps) {
  return new Elysia({ name: "messages" })
    .post(
      "/v1/messages",
      async ({ request, body }) => {
        // Group commit: the sends of one event-loop turn share a transaction (one savepoint each)
        // and are answered after it commits; an Idempotency-Key's answer commits with the send.
        const answerOf = (message: { id: string; status: string }) => ({ ok: true as const, message });
        return answerOf(
          await keptWithEffect(request, answerOf, () =>
            submitOneOffMessage(deps.db, workspaceOf(request), body, deps.clock.now()),
          ),
        );
      },
      {
        body: SendBody,
        detail: {
          tags: ["Messages"],
          operationId: "sendMessage",
          summary: "Send one SMS",
          description:
            "Validates, checks opt-out and suppression (again at send time), creates the contact and conversation if new, and queues a durable send. 422: `to must be a valid phone number`, `Recipient has opted out`, `Recipient is suppressed`, `No sending number: order one with POST /v1/numbers`, `from is not a number of this workspace`, `from has reached its daily_limit`. Counts against the workspace's `one_off_daily_limit` (with POST /v1/calls).",
        },
        response: responses(
          t.Object({
            ok: Ok,
            message: t.Object(
              {
                id: Uuid("Message id"),
                status: t.String({ description: "PENDING right after creation", examples: ["PENDING"] }),
              },
              { description: "The accepted message" },
            ),
          }),
          WRITE_ERRORS,
          dailyBudget429("one_off_daily_limit", 5000),
        ),
      },
    )
    .get(
      "/v1/messages",
      async ({ request, query }) => ({
        ok: true as const,
        ...(await listMessages(deps.db, workspaceOf(request), { ...query, ...parsePagination(query) })),
      }),
      {
        query: Query({
          ...paginationQuery,
          status: t.Optional(
            t.String({
              description: "PENDING | QUEUED | SENT | DELIVERED | UNDELIVERED | FAILED | RECEIVED",
            }),
          ),
          direction: t.Optional(t.String({ description: "outbound | inbound" })),
          contact_id: t.Optional(t.String({ description: "Only this contact's messages" })),
          campaign_id: t.Optional(t.String({ description: "Only this campaign's messages" })),
          conversation_id: t.Optional(t.String({ description: "Only this thread's messages" })),
        }),
        detail: {
          tags: ["Messages"],
          operationId: "listMessages",
          summary: "List messages",
          description: "Newest first.",
        },
        response: responses(listEnvelope("messages", MessageSchema, "Messages, newest first"), [
          ...READ_ERRORS,
          422,
        ]),
      },
    )
    .get(
      "/v1/messages/:id",
      async ({ request, params }) => ({
        ok: true as const,
        message: await getMessage(deps.db, workspaceOf(request), params.id),
      }),
      {
        params: t.Object({ id: t.String({ description: "Message id" }) }),
        detail: {
          tags: ["Messages"],
          operationId: "getMessage",
          summary: "Get a message",
          description:
            "One message of the workspace, outbound or inbound, with its current status and the carrier's error when it failed. 404 for an id of another workspace.",
        },
        response: responses(t.Object({ ok: Ok, message: MessageSchema }), [...READ_ERRORS, 404]),
      },
    );
}
