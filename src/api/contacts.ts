import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { ACTIVITY_TYPES, contactActivity } from "../domain/audience/activity";
import {
  contactJson,
  createContact,
  deleteContact,
  getContact,
  listContacts,
  updateContact,
} from "../domain/audience/contacts";
import { workspaceOf } from "../http/context";
import { paginationQuery, parsePagination } from "../http/pagination";
import type { RouteConventions } from "../http/route-conventions";
import { Body, listEnvelope, Query, READ_ERRORS, responses, Timestamp } from "../http/schemas";
import { ContactSchema, FieldsInput, NullableText } from "./audience-schemas";
import { contactImportRoutes } from "./contact-import";
import { resourceRoutes } from "./resource-routes";

const ContactBody = {
  first_name: NullableText("First name (max 200)"),
  last_name: NullableText("Last name (max 200)"),
  email: NullableText("Email address"),
  external_id: NullableText("Your system's id for this person (max 200)"),
  opted_in: t.Optional(t.Boolean({ description: "Defaults to true; false blocks every send" })),
  timezone: NullableText(
    "IANA zone: the contact's own (`timezone_source: given`), used alone by the send-time rules; null " +
      "(or left out on create): from the area code (`area_code`), every zone of which is checked",
  ),
  state: NullableText(
    "US state or Canadian province, two letters; the state rules use it before the area code's",
  ),
  fields: FieldsInput,
};

const CreateBody = Body(
  {
    phone_number: t.String({
      description: "E.164, 10-digit or 11-digit US number; stored as E.164",
      examples: ["+12025550123"],
    }),
    ...ContactBody,
  },
  { description: "A new contact" },
);

const PatchBody = Body(
  {
    phone_number: t.Optional(t.String({ description: "New phone number (must stay unique)" })),
    ...ContactBody,
  },
  { description: "Fields to change; others stay as they are" },
);

const Activity = t.Object(
  {
    type: t.String({ description: ACTIVITY_TYPES.join(" | "), examples: ["click"] }),
    at: Timestamp("When it happened"),
    summary: t.String({
      description: "What happened, in words",
      examples: ['Clicked the link of offer "Spring sale"'],
    }),
    ids: t.Record(t.String(), t.String(), {
      description:
        "Ids of what the entry concerns, by name (message_id, conversation_id, campaign_id, call_id, click_id, offer_id, conversion_id, flow_id, run_id, list_id, suppression_id, agent_id); absent ones are left out",
      examples: [
        {
          click_id: "01933b7e-0000-7000-8000-000000000001",
          offer_id: "01933b7e-0000-7000-8000-000000000002",
        },
      ],
    }),
  },
  { description: "One thing that happened to a contact" },
);

// /v1/contacts – CRUD, search and import of the people a workspace reaches;
// GET /v1/contacts/{id}/activity – what happened to one contact.
export function contactRoutes(deps: AppDeps, conventions: RouteConventions) {
  return new Elysia({ name: "contacts" })
    .use(contactImportRoutes(deps, conventions))
    .get(
      "/v1/contacts/:id/activity",
      async ({ request, params, query }) => ({
        ok: true as const,
        ...(await contactActivity(deps.db, workspaceOf(request), params.id, parsePagination(query))),
      }),
      {
        params: t.Object({ id: t.String({ description: "Contact id" }) }),
        query: Query({ ...paginationQuery }),
        detail: {
          tags: ["Contacts"],
          operationId: "getContactActivity",
          summary: "A contact's activity, newest first",
          description:
            "Messages, calls, clicks, conversions, flow entries and exits, list additions and opt-outs (suppressions of the contact's number) as `{type, at, summary, ids}`. Removals from lists are not recorded, so only current memberships appear. Another workspace's contact → 404.",
        },
        response: responses(listEnvelope("activity", Activity, "Entries, newest first"), [
          ...READ_ERRORS,
          404,
          422,
        ]),
      },
    )
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/contacts",
          tag: "Contacts",
          one: "contact",
          many: "contacts",
          item: ContactSchema,
          idDescription: "Contact id",
        },
        {
          list: {
            summary: "List contacts (newest first)",
            description:
              "`q` matches first name, last name, phone number or email, case-insensitively for ASCII letters (É and é differ, on SQLite and PostgreSQL alike); paginated with `limit` and `offset`.",
            query: {
              q: t.Optional(
                t.String({ description: "Matches first name, last name, phone number or email" }),
              ),
            },
            itemsDescription: "Contacts, newest first",
            run: async (workspaceId, query, page) => {
              const { rows, total } = await listContacts(deps.db, workspaceId, { q: query.q, ...page });
              return { items: rows.map(contactJson), total };
            },
          },
          create: {
            summary: "Create a contact",
            description:
              "409 `Contact with this phone_number already exists` (with `contact_id`) when the number is taken. Emits `contact.created`.",
            errors: [409],
            body: CreateBody,
            run: async (workspaceId, body, now) =>
              contactJson(await createContact(deps.db, workspaceId, body, "api", now)),
          },
          get: {
            summary: "Get a contact",
            description: "The contact with its consent (`opted_in`), timezone and custom `fields`.",
            run: async (workspaceId, id) => contactJson(await getContact(deps.db, workspaceId, id)),
          },
          update: {
            summary: "Update a contact",
            description:
              "Partial update. `fields` merges (null removes a key). `opted_in: false` blocks every send to the contact.",
            errors: [409],
            body: PatchBody,
            run: async (workspaceId, id, body, now) =>
              contactJson(await updateContact(deps.db, workspaceId, id, body, now)),
          },
          delete: {
            summary: "Delete a contact",
            description:
              "Removes the contact and its list memberships. A suppression entry for its number stays.",
            run: async (workspaceId, id) => await deleteContact(deps.db, workspaceId, id),
          },
        },
      ),
    );
}
