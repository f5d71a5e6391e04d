import { Elysia, t } from "elysia";
import { authOf } from "../http/context";
import { Enum, Ok, READ_ERRORS, responses } from "../http/schemas";

const WorkspaceRef = t.Object(
  {
    id: t.String({ description: "Workspace id (UUID)" }),
    name: t.String({ description: "Workspace name", examples: ["Default"] }),
  },
  { description: "The workspace the key acts in" },
);

const KeyRef = t.Object(
  {
    id: t.String({ description: "Key id" }),
    name: t.String({ description: "Key name" }),
    prefix: t.String({ description: "First 8 characters after `opk_`, for display" }),
  },
  { description: "The key used; null for a session (the dashboard)" },
);

/** The signed-in user of a session (the dashboard), as `/v1/me` and `/auth/*` show them. */
export const SessionUserSchema = t.Object(
  {
    id: t.String({ description: "User id (UUID)" }),
    email: t.String({ description: "E-mail address, lower-cased", examples: ["ada@example.com"] }),
    name: t.String({ description: "Display name", examples: ["Ada Lovelace"] }),
    role: Enum(
      ["admin", "agent"],
      "Role in the workspace: `admin` (everything) or `agent` (reads all but settings, API keys and users; writes conversations only)",
    ),
  },
  { description: "The signed-in user" },
);

// GET /v1/me – resolve the key (or session) to its workspace and scopes; also a health check.
// GET /api/public/me – the legacy health check.
export function meRoutes() {
  return new Elysia({ name: "me" })
    .get(
      "/v1/me",
      ({ request }) => {
        const auth = authOf(request);
        const workspace = { id: auth.workspaceId, name: auth.workspaceName };
        // A key answers as it always has (no `user`); a session names its user and no key.
        if (auth.kind === "session")
          return { ok: true as const, workspace, scopes: auth.scopes, key: null, user: auth.user };
        return {
          ok: true as const,
          workspace,
          scopes: auth.scopes,
          key: { id: auth.keyId, name: auth.keyName, prefix: auth.prefix },
        };
      },
      {
        detail: {
          tags: ["Auth"],
          operationId: "getMe",
          summary: "Who am I",
          description:
            "Resolves the bearer key (or the dashboard's session cookie) to its workspace and scopes. With a key: `key` names it and `user` is absent. With a session: `key` is null and `user` is the signed-in user with their role (an admin's scopes are `read` and `write`, an agent's `read`).",
        },
        response: responses(
          t.Object({
            ok: Ok,
            workspace: WorkspaceRef,
            scopes: t.Array(t.Union([t.Literal("read"), t.Literal("write")]), {
              description: "Scopes of the key, or of the session's role",
            }),
            key: t.Union([KeyRef, t.Null()], { description: "The key used; null for a session" }),
            user: t.Optional(SessionUserSchema),
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
