import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { isSimulated, listSandboxSends } from "../carriers";
import { checkSandboxInbound, findInboundByCarrierId } from "../domain/messaging/inbound";
import { messageJson } from "../domain/messaging/message-json";
import { workspaceOf } from "../http/context";
import { paginationQuery, parsePagination } from "../http/pagination";
import {
  Body,
  listEnvelope,
  Ok,
  Query,
  READ_ERRORS,
  responses,
  Timestamp,
  Uuid,
  WRITE_ERRORS,
} from "../http/schemas";
import { AppError, notFound } from "../lib/errors";
import { listSandboxCalls } from "../voice/simulated";
import { MessageSchema } from "./messages";

const SandboxSend = t.Object(
  {
    message_id: Uuid("Our message id, as handed to the carrier"),
    from: t.String({ description: "Sending number" }),
    to: t.String({ description: "Recipient" }),
    body: t.String({ description: "Text handed off" }),
    accepted_at: Timestamp("When the simulated carrier accepted the first hand-off"),
    handoffs: t.Integer({
      minimum: 1,
      description: "Times the message was handed over; above 1 is a duplicate hand-off, sent once",
      examples: [1],
    }),
  },
  { description: "One message the simulated carrier accepted" },
);

const SandboxCallSchema = t.Object(
  {
    call_id: t.String({ description: "Our call id" }),
    line: t.String({ description: "voice (agent calls) or carrier (say calls)" }),
    from: t.String({ description: "Calling number" }),
    to: t.String({ description: "Called number" }),
    status: t.String({ description: "The final status the line reports (or reported)" }),
    accepted_at: t.String({ description: "When the line took the call" }),
    reported_at: t.Union([t.String(), t.Null()], {
      description: "When the final status was reported; null while pending",
    }),
  },
  { description: "One placement on a simulated line" },
);

// POST /v1/sandbox/inbound – inject an inbound SMS; GET /v1/sandbox/outbox – the simulated
// carrier's ledger. Both exist only while CARRIER=simulated (otherwise 404 Not found).
export function sandboxRoutes(deps: AppDeps) {
  const { carrier } = deps;
  const simulatedOnly = () => {
    if (!isSimulated(carrier)) throw notFound();
    return carrier;
  };
  return (
    new Elysia({ name: "sandbox" })
      // Before validation: with another carrier these routes do not exist, whatever the body.
      .onTransform({ as: "local" }, () => {
        simulatedOnly();
      })
      .post(
        "/v1/sandbox/inbound",
        async ({ request, body }) => {
          const simulated = simulatedOnly();
          const workspaceId = workspaceOf(request);
          const sms = await checkSandboxInbound(deps.db, workspaceId, body);
          const injected = await simulated.injectInbound({ ...sms, body: body.body });
          const stored = await findInboundByCarrierId(deps.db, workspaceId, injected.carrierMessageId);
          if (!stored) throw new AppError("internal", "Internal error");
          return { ok: true as const, message: messageJson(stored) };
        },
        {
          body: Body({
            from: t.String({
              maxLength: 64,
              description: "The handset's number",
              examples: ["+14155550123"],
            }),
            to: t.String({
              maxLength: 64,
              description: "A number of this workspace",
              examples: ["+14155550100"],
            }),
            body: t.String({ maxLength: 1600, description: "Text of the message", examples: ["STOP"] }),
          }),
          detail: {
            tags: ["Sandbox"],
            operationId: "simulateInboundMessage",
            summary: "Inject an inbound SMS (simulated carrier only)",
            description:
              "Runs the real inbound path: threading, needs_attention, CTIA keywords, events. 422 `to is not a number of this workspace`.",
          },
          response: responses(t.Object({ ok: Ok, message: MessageSchema }), [...WRITE_ERRORS, 404]),
        },
      )
      .get(
        "/v1/sandbox/outbox",
        async ({ request, query }) => {
          simulatedOnly();
          const page = parsePagination(query);
          const { sends, total } = await listSandboxSends(deps.db, workspaceOf(request), page);
          return { ok: true as const, sends, total, ...page };
        },
        {
          query: Query({ ...paginationQuery }),
          detail: {
            tags: ["Sandbox"],
            operationId: "listSandboxOutbox",
            summary: "Messages the simulated carrier accepted",
            description:
              "One row per message, newest first; a duplicate hand-off is sent once and counted in `handoffs`. Survives restarts.",
          },
          response: responses(
            listEnvelope("sends", SandboxSend, "Messages the simulated carrier accepted, newest first"),
            [...READ_ERRORS, 404, 422],
          ),
        },
      )
      .get(
        "/v1/sandbox/calls",
        async ({ request, query }) => {
          simulatedOnly();
          const page = parsePagination(query);
          const { calls, total } = await listSandboxCalls(deps.db, workspaceOf(request), page);
          return { ok: true as const, calls, total, ...page };
        },
        {
          query: Query({ ...paginationQuery }),
          detail: {
            tags: ["Sandbox"],
            operationId: "listSandboxCalls",
            summary: "Calls the simulated lines placed",
            description:
              "One row per placement (a call placed twice shows twice), newest first, from the simulated voice provider (`line: voice`, agent calls) and the simulated carrier (`line: carrier`, say calls), with the outcome each will report or has reported; survives restarts.",
          },
          response: responses(
            listEnvelope("calls", SandboxCallSchema, "Placements on the simulated lines, newest first"),
            [...READ_ERRORS, 404, 422],
          ),
        },
      )
  );
}
