import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { contactJson } from "../domain/audience/contacts";
import {
  createSegment,
  deleteSegment,
  getSegment,
  listSegments,
  matchContacts,
  parseRules,
  segmentJson,
  segmentRule,
  updateSegment,
} from "../domain/audience/segments";
import { workspaceOf } from "../http/context";
import { paginationQuery, parsePagination } from "../http/pagination";
import type { RouteConventions } from "../http/route-conventions";
import {
  Body,
  Int,
  listEnvelope,
  Ok,
  Query,
  READ_ERRORS,
  responses,
  Timestamp,
  WRITE_ERRORS,
} from "../http/schemas";
import { ContactSchema } from "./audience-schemas";
import { resourceRoutes } from "./resource-routes";

const RULES_DESCRIPTION = [
  "Rule tree, compiled into one SQL query.",
  'Groups `{"all":[...]}` / `{"any":[...]}`, negation `{"not": rule}`;',
  'conditions `{"field", "op", "value"}` on phone_number, first_name, last_name, email, external_id, source, timezone',
  "(as shown: the given zone, else the area code's main zone), state, opted_in, created_at, updated_at or `fields.<key>`;",
  "ops eq neq in not_in contains starts_with gt gte lt lte exists not_exists within_last_days before after",
  "(contains and starts_with ignore the case of ASCII letters: É and é differ);",
  'on `fields.<key>`, eq/in match a value\'s forms (3 and "3", true and "true"); gt/gte/lt/lte with a number read the field',
  'as a number (a JSON number, text that is a number literal such as "12", a boolean as 1/0); contains, starts_with,',
  "within_last_days (text starting with an ISO date) and comparisons with a text value (byte order) read only text;",
  "a field of another kind does not match the condition, and its `not` does: a condition and its negation split the contacts.",
  'membership `{"in_list": id}` / `{"not_in_list": id}`;',
  'activity `{"event": "inbound"|"outbound"|"clicked"|"conversion", "op": "any_within_days"|"none_within_days", "value": N}`',
  "(a message received or sent, a tracked link followed, a conversion recorded, in the last N days).",
  "At most 10 levels deep and 100 conditions. A malformed rule → 422 naming its path.",
].join(" ");

const Rules = t.Unknown({
  description: RULES_DESCRIPTION,
  examples: [
    {
      all: [
        { field: "opted_in", op: "eq", value: true },
        { any: [{ field: "fields.plan", op: "in", value: ["pro", "team"] }] },
        { not: { field: "created_at", op: "within_last_days", value: 7 } },
      ],
    },
  ],
});

const SegmentFields = {
  id: t.String({ description: "Segment id (UUID)" }),
  name: t.String({ description: "Segment name" }),
  description: t.String({ description: "Description (empty string when none)" }),
  rules: t.Unknown({ description: "The rule tree" }),
  created_at: Timestamp("When the segment was created"),
};
export const SegmentSchema = t.Object(SegmentFields, { description: "A live, rule-based audience" });
const SegmentWithCount = t.Object(
  { ...SegmentFields, count: Int({ description: "Contacts matching right now" }) },
  { description: "A segment with its live member count" },
);

const Name = t.String({ minLength: 1, maxLength: 200, description: "Segment name (1–200)" });
const Description = t.String({ maxLength: 2000, description: "Description (max 2000)" });
const IdParams = t.Object({ id: t.String({ description: "Segment id" }) });

const SAMPLE_SIZE = 10;

// /v1/segments – live audiences; members are computed on every read.
export function segmentRoutes(deps: AppDeps, conventions: RouteConventions) {
  conventions.registerReadOnlyPost("/v1/segments/preview");
  return new Elysia({ name: "segments" })
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/segments",
          tag: "Segments",
          one: "segment",
          many: "segments",
          item: SegmentSchema,
          idDescription: "Segment id",
        },
        {
          list: {
            summary: "List segments (newest first)",
            description:
              "`q` matches the name. Member counts are not computed here: get a segment for its live `count`.",
            query: { q: t.Optional(t.String({ description: "Matches the name" })) },
            itemsDescription: "Segments, newest first",
            run: async (workspaceId, query, page) => {
              const { rows, total } = await listSegments(deps.db, workspaceId, { q: query.q, ...page });
              return { items: rows.map((r) => segmentJson(r)), total };
            },
          },
          create: {
            summary: "Create a segment",
            description:
              "The rules are checked and compiled before anything is saved: a malformed rule is 422 naming its path, a list it names must exist. Members are never stored; every read computes them.",
            body: Body(
              { name: Name, description: t.Optional(Description), rules: Rules },
              { description: "A new segment" },
            ),
            run: async (workspaceId, body, now) =>
              segmentJson(await createSegment(deps.db, workspaceId, body, now)),
          },
          get: {
            summary: "Get a segment with its live count",
            description:
              "`count` is the number of contacts matching the rules right now, computed on this call.",
            item: SegmentWithCount,
            errors: [422],
            run: async (workspaceId, id, now) => await getSegment(deps.db, workspaceId, id, now),
          },
          update: {
            summary: "Update a segment",
            description:
              "Partial update. New `rules` are checked like on create and apply from the next read; there is no stored membership to rebuild.",
            body: Body(
              { name: t.Optional(Name), description: t.Optional(Description), rules: t.Optional(Rules) },
              { description: "Fields to change" },
            ),
            run: async (workspaceId, id, body, now) =>
              segmentJson(await updateSegment(deps.db, workspaceId, id, body, now)),
          },
          delete: {
            summary: "Delete a segment",
            description: "Removes the segment only; the contacts it matched are not touched.",
            run: async (workspaceId, id) => await deleteSegment(deps.db, workspaceId, id),
          },
        },
      ),
    )
    .post(
      "/v1/segments/preview",
      async ({ request, body }) => {
        const workspaceId = workspaceOf(request);
        const rule = await parseRules(deps.db, workspaceId, body.rules);
        const { rows, total } = await matchContacts(
          deps.db,
          workspaceId,
          rule,
          { limit: SAMPLE_SIZE, offset: 0 },
          deps.clock.now(),
        );
        return { ok: true as const, count: total, sample: rows.map(contactJson) };
      },
      {
        body: Body({ rules: Rules }, { description: "Rules to try without saving" }),
        detail: {
          tags: ["Segments"],
          operationId: "previewSegment",
          summary: "Preview rules",
          description: `How many contacts match, and the ${SAMPLE_SIZE} newest of them. A read-only key may call it.`,
        },
        response: responses(
          t.Object({
            ok: Ok,
            count: Int({ description: "Contacts matching" }),
            sample: t.Array(ContactSchema, {
              description: `Up to ${SAMPLE_SIZE} matching contacts, newest first`,
            }),
          }),
          WRITE_ERRORS,
        ),
      },
    )
    .get(
      "/v1/segments/:id/members",
      async ({ request, params, query }) => {
        const workspaceId = workspaceOf(request);
        const page = parsePagination(query);
        const { rule } = await segmentRule(deps.db, workspaceId, params.id);
        const { rows, total } = await matchContacts(deps.db, workspaceId, rule, page, deps.clock.now());
        return { ok: true as const, contacts: rows.map(contactJson), total, ...page };
      },
      {
        params: IdParams,
        query: Query(paginationQuery),
        detail: {
          tags: ["Segments"],
          operationId: "listSegmentMembers",
          summary: "The contacts matching a segment now",
          description: "Computed live on every call, newest contact first. `limit` default 50, max 200.",
        },
        response: responses(
          listEnvelope("contacts", ContactSchema, "Contacts matching the segment, newest first"),
          [...READ_ERRORS, 404, 422],
        ),
      },
    );
}
