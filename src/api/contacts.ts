import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
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
import { Body, listEnvelope, Ok, Query, READ_ERRORS, responses, WRITE_ERRORS } from "../http/schemas";
import { ContactSchema, DeletedEnvelope, FieldsInput, NullableText } from "./audience-schemas";
import { contactImportRoutes } from "./contact-import";

const ContactBody = {
  first_name: NullableText("First name (max 200)"),
  last_name: NullableText("Last name (max 200)"),
  email: NullableText("Email address"),
  external_id: NullableText("Your system's id for this person (max 200)"),
  opted_in: t.Optional(t.Boolean({ description: "Defaults to true; false blocks every send" })),
  timezone: NullableText("IANA zone; defaults from the phone number's area code"),
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

const IdParams = t.Object({ id: t.String({ description: "Contact id" }) });
const ContactEnvelope = t.Object({ ok: Ok, contact: ContactSchema });
const ContactsEnvelope = listEnvelope("contacts", ContactSchema, "Contacts, newest first");

// /v1/contacts – CRUD, search and import of the people a workspace reaches.
export function contactRoutes(deps: AppDeps) {
  return new Elysia({ name: "contacts" })
    .use(contactImportRoutes(deps))
    .get(
      "/v1/contacts",
      ({ request, query }) => {
        const page = parsePagination(query);
        const { rows, total } = listContacts(deps.db, workspaceOf(request), { q: query.q, ...page });
        return { ok: true as const, contacts: rows.map(contactJson), total, ...page };
      },
      {
        query: Query({
          ...paginationQuery,
          q: t.Optional(t.String({ description: "Matches first name, last name, phone number or email" })),
        }),
        detail: { tags: ["Contacts"], summary: "List contacts (newest first)" },
        response: responses(ContactsEnvelope, [...READ_ERRORS, 422]),
      },
    )
    .post(
      "/v1/contacts",
      ({ request, body }) => ({
        ok: true as const,
        contact: contactJson(createContact(deps.db, workspaceOf(request), body, "api", deps.clock.now())),
      }),
      {
        body: CreateBody,
        detail: {
          tags: ["Contacts"],
          summary: "Create a contact",
          description:
            "409 `Contact with this phone_number already exists` (with `contact_id`) when the number is taken. Emits `contact.created`.",
        },
        response: responses(ContactEnvelope, [...WRITE_ERRORS, 409]),
      },
    )
    .get(
      "/v1/contacts/:id",
      ({ request, params }) => ({
        ok: true as const,
        contact: contactJson(getContact(deps.db, workspaceOf(request), params.id)),
      }),
      {
        params: IdParams,
        detail: { tags: ["Contacts"], summary: "Get a contact" },
        response: responses(ContactEnvelope, [...READ_ERRORS, 404]),
      },
    )
    .patch(
      "/v1/contacts/:id",
      ({ request, params, body }) => ({
        ok: true as const,
        contact: contactJson(updateContact(deps.db, workspaceOf(request), params.id, body, deps.clock.now())),
      }),
      {
        params: IdParams,
        body: PatchBody,
        detail: {
          tags: ["Contacts"],
          summary: "Update a contact",
          description:
            "Partial update. `fields` merges (null removes a key). `opted_in: false` blocks every send to the contact.",
        },
        response: responses(ContactEnvelope, [...WRITE_ERRORS, 404, 409]),
      },
    )
    .delete(
      "/v1/contacts/:id",
      ({ request, params }) => {
        deleteContact(deps.db, workspaceOf(request), params.id);
        return { ok: true as const, deleted: true as const };
      },
      {
        params: IdParams,
        detail: {
          tags: ["Contacts"],
          summary: "Delete a contact",
          description:
            "Removes the contact and its list memberships. A suppression entry for its number stays.",
        },
        response: responses(DeletedEnvelope, [...WRITE_ERRORS, 404]),
      },
    );
}
