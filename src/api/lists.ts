import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { contactJson } from "../domain/audience/contacts";
import {
  addMembers,
  createList,
  deleteList,
  getList,
  listLists,
  listMemberContacts,
  removeMembers,
  updateList,
} from "../domain/audience/lists";
import { workspaceOf } from "../http/context";
import { paginationQuery, parsePagination } from "../http/pagination";
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

export const ListSchema = t.Object(
  {
    id: t.String({ description: "List id (UUID)" }),
    name: t.String({ description: "List name" }),
    description: t.String({ description: "Description (empty string when none)" }),
    contacts: Int({ description: "Member count" }),
    created_at: Timestamp("When the list was created"),
  },
  { description: "A static group of contacts" },
);

const _ListEnvelope = t.Object({ ok: Ok, list: ListSchema });
const _ListsEnvelope = listEnvelope("lists", ListSchema, "Lists, newest first");
const MembersEnvelope = listEnvelope("contacts", ContactSchema, "Members of the list, newest contact first");
const IdParams = t.Object({ id: t.String({ description: "List id" }) });

const Name = t.String({ minLength: 1, maxLength: 200, description: "List name (1–200)" });
const Description = t.String({ maxLength: 2000, description: "Description (max 2000)" });

const MembershipBody = Body(
  {
    contact_ids: t.Optional(
      t.Array(t.String({ description: "Contact id" }), {
        maxItems: 10000,
        description: "Contact ids (max 10,000)",
      }),
    ),
    phone_numbers: t.Optional(
      t.Array(t.String({ description: "Phone number" }), {
        maxItems: 10000,
        description: "Phone numbers (E.164, 10- or 11-digit US; max 10,000)",
      }),
    ),
  },
  { description: "Contacts by id and/or phone number" },
);

// /v1/lists – static groups of contacts and their membership.
export function listRoutes(deps: AppDeps) {
  return new Elysia({ name: "lists" })
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/lists",
          tag: "Lists",
          one: "list",
          many: "lists",
          item: ListSchema,
          idDescription: "List id",
        },
        {
          list: {
            summary: "List lists (newest first)",
            description:
              "Each list with its member count (`contacts`). `q` matches the name, case-insensitively for ASCII letters (É and é differ).",
            query: { q: t.Optional(t.String({ description: "Matches the list name" })) },
            itemsDescription: "Lists, newest first",
            run: async (workspaceId, query, page) => {
              const { lists, total } = await listLists(deps.db, workspaceId, { q: query.q, ...page });
              return { items: lists, total };
            },
          },
          create: {
            summary: "Create a list",
            description:
              "An empty list; fill it with `POST /v1/lists/{id}/contacts` (or the `list_id` of an import).",
            body: Body({ name: Name, description: t.Optional(Description) }, { description: "A new list" }),
            run: async (workspaceId, body, now) => await createList(deps.db, workspaceId, body, now),
          },
          get: {
            summary: "Get a list",
            description:
              "The list with its member count (`contacts`); its members are `GET /v1/lists/{id}/contacts`.",
            run: async (workspaceId, id) => await getList(deps.db, workspaceId, id),
          },
          update: {
            summary: "Rename or re-describe a list",
            description: "Renaming or re-describing a list leaves its membership unchanged.",
            body: Body(
              { name: t.Optional(Name), description: t.Optional(Description) },
              { description: "Both optional; membership is unchanged" },
            ),
            run: async (workspaceId, id, body, now) => await updateList(deps.db, workspaceId, id, body, now),
          },
          delete: {
            summary: "Delete a list",
            description: "Removes the list and its memberships; the contacts stay.",
            run: async (workspaceId, id) => await deleteList(deps.db, workspaceId, id),
          },
        },
      ),
    )
    .get(
      "/v1/lists/:id/contacts",
      async ({ request, params, query }) => {
        const page = parsePagination(query);
        const { rows, total } = await listMemberContacts(deps.db, workspaceOf(request), params.id, page);
        return { ok: true as const, contacts: rows.map(contactJson), total, ...page };
      },
      {
        params: IdParams,
        query: Query(paginationQuery),
        detail: {
          tags: ["Lists"],
          operationId: "listListContacts",
          summary: "List a list's contacts (newest contact first)",
          description:
            "The members of the list, paginated with `limit` and `offset`, as full contact records.",
        },
        response: responses(MembersEnvelope, [...READ_ERRORS, 404, 422]),
      },
    )
    .post(
      "/v1/lists/:id/contacts",
      async ({ request, params, body }) => ({
        ok: true as const,
        ...(await addMembers(deps.db, workspaceOf(request), params.id, body, deps.clock.now())),
      }),
      {
        params: IdParams,
        body: MembershipBody,
        detail: {
          tags: ["Lists"],
          operationId: "addListContacts",
          summary: "Add contacts to a list",
          description:
            "Unknown or foreign `contact_ids`, and contacts already in the list, count in `skipped`. A phone number with no contact yet creates it (source `api`).",
        },
        response: responses(
          t.Object({
            ok: Ok,
            added: Int({ description: "Contacts newly added" }),
            skipped: Int({ description: "Ids or numbers not added (unknown, or already members)" }),
          }),
          [...WRITE_ERRORS, 404],
        ),
      },
    )
    .delete(
      "/v1/lists/:id/contacts",
      async ({ request, params, body }) => ({
        ok: true as const,
        ...(await removeMembers(deps.db, workspaceOf(request), params.id, body ?? {})),
      }),
      {
        params: IdParams,
        body: MembershipBody,
        detail: {
          tags: ["Lists"],
          operationId: "removeListContacts",
          summary: "Remove contacts from a list",
          description:
            "Takes the contacts (by id or phone number) out of the list; `removed` counts the memberships that existed. The contacts themselves stay.",
        },
        response: responses(t.Object({ ok: Ok, removed: Int({ description: "Memberships removed" }) }), [
          ...WRITE_ERRORS,
          404,
        ]),
      },
    );
}
