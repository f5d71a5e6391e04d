import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import {
  addNumbersToPool,
  createPool,
  deletePool,
  getPool,
  listPools,
  removeNumbersFromPool,
  updatePool,
} from "../domain/messaging/pools";
import { workspaceOf } from "../http/context";
import { Body, Int, Ok, responses, Timestamp, WRITE_ERRORS } from "../http/schemas";
import { resourceRoutes } from "./resource-routes";

export const PoolSchema = t.Object(
  {
    id: t.String({ description: "Pool id (UUID)" }),
    name: t.String({ description: "Pool name", examples: ["East coast"] }),
    description: t.Union([t.String(), t.Null()], { description: "What the pool is for" }),
    numbers: Int({ description: "Count of active numbers in the pool" }),
    created_at: Timestamp("When the pool was created"),
  },
  { description: "A set of sending numbers bulk sends rotate across" },
);

const Description = t.Union([t.String({ maxLength: 2000 }), t.Null()], {
  description: "What the pool is for (max 2000)",
});

const CreateBody = Body(
  {
    name: t.String({
      minLength: 1,
      maxLength: 200,
      description: "Pool name (max 200)",
      examples: ["East coast"],
    }),
    description: t.Optional(Description),
  },
  { description: "A new pool" },
);

const PatchBody = Body(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "Pool name (max 200)" })),
    description: t.Optional(Description),
  },
  { description: "Fields to change; others stay as they are" },
);

const NumberIdsBody = Body(
  {
    number_ids: t.Array(t.String({ maxLength: 64 }), {
      maxItems: 1000,
      description: "Ids of numbers of this workspace (up to 1000)",
    }),
  },
  { description: "Numbers to move" },
);

const IdParams = t.Object({ id: t.String({ description: "Pool id" }) });

// /v1/pools – CRUD of number pools and their membership. Rotation happens in pickSender.
export function poolsRoutes(deps: AppDeps) {
  return new Elysia({ name: "pools" })
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/pools",
          tag: "Pools",
          one: "pool",
          many: "pools",
          item: PoolSchema,
          idDescription: "Pool id",
        },
        {
          list: {
            summary: "List pools (newest first)",
            description: "Each with its `numbers` count. Filter: `q` (name contains).",
            itemsDescription: "Pools, newest first, each with its `numbers` count",
            query: {
              q: t.Optional(
                t.String({
                  description: "Name contains (case-insensitive for ASCII letters: É and é differ)",
                }),
              ),
            },
            run: async (workspaceId, query, page) => {
              const { pools, total } = await listPools(deps.db, workspaceId, query, page);
              return { items: pools, total };
            },
          },
          create: {
            summary: "Create a pool",
            description: "An empty pool; move numbers into it with `POST /v1/pools/{id}/numbers`.",
            body: CreateBody,
            run: async (workspaceId, body, now) => await createPool(deps.db, workspaceId, body, now),
          },
          get: {
            summary: "Get a pool",
            description: "The pool with `numbers`, the count of its active numbers.",
            run: async (workspaceId, id) => await getPool(deps.db, workspaceId, id),
          },
          update: {
            summary: "Update a pool",
            description:
              "Partial update of the name and description; its numbers are changed with `/v1/pools/{id}/numbers`.",
            body: PatchBody,
            run: async (workspaceId, id, body, now) => await updatePool(deps.db, workspaceId, id, body, now),
          },
          delete: {
            summary: "Delete a pool",
            description: "Its numbers are not released: they stay in the workspace with no pool.",
            run: async (workspaceId, id, now) => await deletePool(deps.db, workspaceId, id, now),
          },
        },
      ),
    )
    .post(
      "/v1/pools/:id/numbers",
      async ({ request, params, body }) => ({
        ok: true as const,
        ...(await addNumbersToPool(
          deps.db,
          workspaceOf(request),
          params.id,
          body.number_ids,
          deps.clock.now(),
        )),
      }),
      {
        params: IdParams,
        body: NumberIdsBody,
        detail: {
          tags: ["Pools"],
          operationId: "addPoolNumbers",
          summary: "Add numbers to a pool",
          description:
            "Moves numbers into the pool (out of any other). Unknown, foreign or released ids and numbers already in the pool are counted in `skipped`.",
        },
        response: responses(
          t.Object({
            ok: Ok,
            added: Int({ description: "Numbers moved into the pool" }),
            skipped: Int({ description: "Ids not added (unknown, released, or already in the pool)" }),
          }),
          [...WRITE_ERRORS, 404],
        ),
      },
    )
    .delete(
      "/v1/pools/:id/numbers",
      async ({ request, params, body }) => ({
        ok: true as const,
        ...(await removeNumbersFromPool(
          deps.db,
          workspaceOf(request),
          params.id,
          body.number_ids,
          deps.clock.now(),
        )),
      }),
      {
        params: IdParams,
        body: NumberIdsBody,
        detail: {
          tags: ["Pools"],
          operationId: "removePoolNumbers",
          summary: "Remove numbers from a pool",
          description: "The numbers stay in the workspace with no pool.",
        },
        response: responses(
          t.Object({
            ok: Ok,
            removed: Int({ description: "Numbers taken out of the pool" }),
          }),
          [...WRITE_ERRORS, 404],
        ),
      },
    );
}
