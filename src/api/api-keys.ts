import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import {
  createApiKey,
  listApiKeyPage,
  revokeApiKey,
  SCOPES,
  toApiKeyRecord,
} from "../domain/workspace/api-keys";
import type { RouteConventions } from "../http/route-conventions";
import { Body, Enum, NullableTimestamp, Timestamp, Uuid } from "../http/schemas";
import { resourceRoutes } from "./resource-routes";

const ApiKeyFields = {
  id: Uuid("Key id"),
  name: t.String({ description: "Key name", examples: ["Zapier"] }),
  prefix: t.String({ description: "First 8 characters after `opk_`, for display", examples: ["3xAmPl3K"] }),
  scopes: t.Array(Enum(SCOPES, "A scope: read | write"), { description: "What the key may do" }),
  last_used_at: NullableTimestamp("Last request made with the key (to the minute); null if never used"),
  created_at: Timestamp("When the key was created"),
  revoked_at: NullableTimestamp("When the key was revoked; null while it works"),
};

export const ApiKeySchema = t.Object(ApiKeyFields, {
  description: "An API key as listed: never the key itself",
});

/** The answer of a create: the key, this once. */
const CreatedApiKeySchema = t.Object(
  {
    ...ApiKeyFields,
    key: t.String({
      description: "The key: shown only in this answer, store it now",
      examples: ["opk_3xAmPl3K000000000000000000000000abcd"],
    }),
  },
  { description: "The new key, with the key itself (shown once)" },
);

const CreateBody = Body(
  {
    name: t.String({ minLength: 1, maxLength: 200, description: "Key name (max 200)", examples: ["Zapier"] }),
    scopes: t.Optional(
      t.Array(Enum(SCOPES, "A scope: read | write"), {
        minItems: 1,
        maxItems: 2,
        description: "Scopes of the key; default read and write",
        examples: [["read"]],
      }),
    ),
  },
  { description: "A new key" },
);

// /v1/api-keys – the workspace's keys for the dashboard: list, create (shown once), revoke.
export function apiKeysRoutes(deps: AppDeps, conventions: RouteConventions) {
  // The answer holds a secret shown once: never kept for Idempotency-Key replay.
  conventions.registerSecretAnswer("/v1/api-keys");
  return new Elysia({ name: "api-keys" }).use(
    resourceRoutes(
      deps,
      {
        path: "/v1/api-keys",
        tag: "API keys",
        one: "api_key",
        many: "api_keys",
        item: ApiKeySchema,
        idDescription: "Key id",
      },
      {
        list: {
          summary: "List API keys (newest first)",
          description:
            "Every key of the workspace, revoked ones included, with its prefix, scopes and last use; never the key itself. Needs the `write` scope (403 `This API key cannot see API keys.` for a read-only key, `This account cannot see API keys.` for an agent).",
          itemsDescription: "Keys, newest first",
          errors: [403],
          run: async (workspaceId, _query, page) => {
            const { api_keys, total } = await listApiKeyPage(deps.db, workspaceId, page);
            return { items: api_keys, total };
          },
        },
        create: {
          summary: "Create an API key",
          description:
            "The answer's `key` is the only time the key is shown: only its SHA-256 is kept (a repeated `Idempotency-Key` answers 409 rather than the key). Scopes default to read and write.",
          body: CreateBody,
          item: CreatedApiKeySchema,
          run: async (workspaceId, body, now) => {
            const created = await createApiKey(deps.db, {
              workspaceId,
              name: body.name,
              scopes: body.scopes,
              now,
            });
            return {
              id: created.id,
              name: created.name,
              prefix: created.prefix,
              scopes: created.scopes,
              last_used_at: null,
              created_at: new Date(created.created_at).toISOString(),
              revoked_at: null,
              key: created.key,
            };
          },
        },
        delete: {
          summary: "Revoke an API key",
          description:
            "The key stops working on the very next request (in every process sharing the database); it stays listed with `revoked_at`. Revoking a revoked key answers it as it is.",
          answers: "item",
          run: async (workspaceId, id, now) =>
            toApiKeyRecord(await revokeApiKey(deps.db, id, workspaceId, now)),
        },
      },
    ),
  );
}
