import { Elysia, t } from "elysia";
import { authOf } from "../http/context";
import { Ok, READ_ERRORS, responses } from "../http/schemas";

const WorkspaceRef = t.Object(
  {
    id: t.String({ description: "Workspace id (UUID)" }),
    name: t.String({ description: "Workspace name", examples: ["Default"] }),
  },
  { description: "The workspace the key acts in" },
);

// GET /v1/me – resolve the key to its workspace and scopes; also a health check.
// GET /api/public/me – the legacy health check.
export function meRoutes() {
  return new Elysia({ name: "me" })
    .get(
      "/v1/me",
      ({ request }) => {
        const auth = authOf(request);
        return {
          ok: true as const,
          workspace: { id: auth.workspaceId, name: auth.workspaceName },
          scopes: auth.scopes,
          key: { id: auth.keyId, name: auth.keyName, prefix: auth.prefix },
        };
      },
      {
        detail: {
          tags: ["Auth"],
          operationId: "getMe",
          summary: "Who am I",
          description: "Resolves the bearer key to its workspace and scopes.",
        },
        response: responses(
          t.Object({
            ok: Ok,
            workspace: WorkspaceRef,
            scopes: t.Array(t.Union([t.Literal("read"), t.Literal("write")]), {
              description: "Scopes of the key",
            }),
            key: t.Object(
              {
                id: t.String({ description: "Key id" }),
                name: t.String({ description: "Key name" }),
                prefix: t.String({ description: "First 8 characters after `opk_`, for display" }),
              },
              { description: "The key used" },
            ),
          }),
          READ_ERRORS,
        ),
      },
    )
    .get(
      "/api/public/me",
      ({ request }) => {
        const auth = authOf(request);
        return { ok: true as const, workspace: { id: auth.workspaceId, name: auth.workspaceName } };
      },
      {
        detail: {
          tags: ["Auth"],
          operationId: "getPublicMe",
          summary: "Legacy health check",
          description: "Same bearer header; answers the workspace only.",
        },
        response: responses(t.Object({ ok: Ok, workspace: WorkspaceRef }), [401]),
      },
    );
}
