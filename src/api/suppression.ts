import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import {
  createSuppression,
  deleteSuppression,
  getSuppression,
  listSuppressions,
  suppressionJson,
} from "../domain/audience/suppression";
import { workspaceOf } from "../http/context";
import { paginationQuery, parsePagination } from "../http/pagination";
import {
  Body,
  Enum,
  listEnvelope,
  Ok,
  Query,
  READ_ERRORS,
  responses,
  Timestamp,
  WRITE_ERRORS,
} from "../http/schemas";
import { invalid } from "../lib/errors";
import { DeletedEnvelope } from "./audience-schemas";

const Reason = Enum(
  ["manual", "opt_out", "carrier", "complaint"],
  "Why the number is kept off sends (default `manual`)",
);

export const SuppressionSchema = t.Object(
  {
    id: t.String({ description: "Suppression id (UUID)" }),
    phone_number: t.String({ description: "E.164 number kept off every send", examples: ["+12025550123"] }),
    reason: t.String({ description: "manual | opt_out | carrier | complaint" }),
    source: t.Union([t.String(), t.Null()], { description: "Who added it: api, inbound, carrier, ..." }),
    created_at: Timestamp("When the number was suppressed"),
  },
  { description: "A suppressed number" },
);

const Envelope = t.Object({ ok: Ok, suppression: SuppressionSchema });
const ListEnvelope = listEnvelope("suppressions", SuppressionSchema, "Suppressed numbers, newest first");
const IdParams = t.Object({ id: t.String({ description: "Suppression id" }) });
const REASONS = ["manual", "opt_out", "carrier", "complaint"];

// /v1/suppression – numbers no send of any kind reaches (checked by canSendTo on every send path).
export function suppressionRoutes(deps: AppDeps) {
  return new Elysia({ name: "suppression" })
    .get(
      "/v1/suppression",
      ({ request, query }) => {
        const page = parsePagination(query);
        if (query.reason !== undefined && !REASONS.includes(query.reason))
          throw invalid(`reason must be one of ${REASONS.join(", ")}`);
        const { rows, total } = listSuppressions(deps.db, workspaceOf(request), {
          q: query.q,
          reason: query.reason,
          ...page,
        });
        return { ok: true as const, suppressions: rows.map(suppressionJson), total, ...page };
      },
      {
        query: Query({
          ...paginationQuery,
          q: t.Optional(t.String({ description: "Matches digits of the phone number" })),
          reason: t.Optional(t.String({ description: "manual | opt_out | carrier | complaint" })),
        }),
        detail: { tags: ["Suppression"], summary: "List suppressed numbers (newest first)" },
        response: responses(ListEnvelope, [...READ_ERRORS, 422]),
      },
    )
    .post(
      "/v1/suppression",
      ({ request, body }) => ({
        ok: true as const,
        suppression: suppressionJson(
          createSuppression(deps.db, workspaceOf(request), body, deps.clock.now()),
        ),
      }),
      {
        body: Body(
          {
            phone_number: t.String({
              description: "E.164, 10- or 11-digit US number",
              examples: ["+12025550123"],
            }),
            reason: t.Optional(Reason),
            source: t.Optional(t.String({ maxLength: 200, description: "Free-form origin (default `api`)" })),
          },
          { description: "A number to keep off every send" },
        ),
        detail: {
          tags: ["Suppression"],
          summary: "Suppress a number",
          description:
            "No send of any kind (one-off, campaign, flow, agent, reply, call) reaches a suppressed number. 409 `phone_number is already suppressed` when it is.",
        },
        response: responses(Envelope, [...WRITE_ERRORS, 409]),
      },
    )
    .get(
      "/v1/suppression/:id",
      ({ request, params }) => ({
        ok: true as const,
        suppression: suppressionJson(getSuppression(deps.db, workspaceOf(request), params.id)),
      }),
      {
        params: IdParams,
        detail: { tags: ["Suppression"], summary: "Get a suppression entry" },
        response: responses(Envelope, [...READ_ERRORS, 404]),
      },
    )
    .delete(
      "/v1/suppression/:id",
      ({ request, params }) => {
        deleteSuppression(deps.db, workspaceOf(request), params.id);
        return { ok: true as const, deleted: true as const };
      },
      {
        params: IdParams,
        detail: {
          tags: ["Suppression"],
          summary: "Remove a suppression entry",
          description: "The number can receive sends again (unless its contact has opted_in=false).",
        },
        response: responses(DeletedEnvelope, [...WRITE_ERRORS, 404]),
      },
    );
}
