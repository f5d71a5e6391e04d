import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import {
  createSuppression,
  deleteSuppression,
  getSuppression,
  listSuppressions,
  suppressionJson,
} from "../domain/audience/suppression";
import { Body, Enum, listEnvelope, Ok, Timestamp } from "../http/schemas";
import { invalid } from "../lib/errors";
import { resourceRoutes } from "./resource-routes";

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

const _Envelope = t.Object({ ok: Ok, suppression: SuppressionSchema });
const _ListEnvelope = listEnvelope("suppressions", SuppressionSchema, "Suppressed numbers, newest first");
const _IdParams = t.Object({ id: t.String({ description: "Suppression id" }) });
const REASONS = ["manual", "opt_out", "carrier", "complaint"];

// /v1/suppression – numbers no send of any kind reaches (checked by canSendTo on every send path).
export function suppressionRoutes(deps: AppDeps) {
  return new Elysia({ name: "suppression" }).use(
    resourceRoutes(
      deps,
      {
        path: "/v1/suppression",
        tag: "Suppression",
        one: "suppression",
        many: "suppressions",
        item: SuppressionSchema,
        idDescription: "Suppression id",
      },
      {
        list: {
          summary: "List suppressed numbers (newest first)",
          description:
            "`q` matches digits of the phone number; `reason` keeps one reason (another value is 422 naming the allowed ones).",
          query: {
            q: t.Optional(t.String({ description: "Matches digits of the phone number" })),
            reason: t.Optional(t.String({ description: "manual | opt_out | carrier | complaint" })),
          },
          itemsDescription: "Suppressed numbers, newest first",
          run: async (workspaceId, query, page) => {
            if (query.reason !== undefined && !REASONS.includes(query.reason))
              throw invalid(`reason must be one of ${REASONS.join(", ")}`);
            const { rows, total } = await listSuppressions(deps.db, workspaceId, {
              q: query.q,
              reason: query.reason,
              ...page,
            });
            return { items: rows.map(suppressionJson), total };
          },
        },
        create: {
          summary: "Suppress a number",
          description:
            "No send of any kind (one-off, campaign, flow, agent, reply, call) reaches a suppressed number. 409 `phone_number is already suppressed` when it is.",
          errors: [409],
          body: Body(
            {
              phone_number: t.String({
                description: "E.164, 10- or 11-digit US number",
                examples: ["+12025550123"],
              }),
              reason: t.Optional(Reason),
              source: t.Optional(
                t.String({ maxLength: 200, description: "Free-form origin (default `api`)" }),
              ),
            },
            { description: "A number to keep off every send" },
          ),
          run: async (workspaceId, body, now) =>
            suppressionJson(await createSuppression(deps.db, workspaceId, body, now)),
        },
        get: {
          summary: "Get a suppression entry",
          description: "The suppressed number, why (`reason`) and where the entry came from (`source`).",
          run: async (workspaceId, id) => suppressionJson(await getSuppression(deps.db, workspaceId, id)),
        },
        delete: {
          summary: "Remove a suppression entry",
          description: "The number can receive sends again (unless its contact has opted_in=false).",
          run: async (workspaceId, id) => await deleteSuppression(deps.db, workspaceId, id),
        },
      },
    ),
  );
}
