import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { inviteMember } from "../auth/accounts";
import { ROLES } from "../auth/roles";
import {
  getMember,
  listMembers,
  MAX_EMAIL_LENGTH,
  MAX_NAME_LENGTH,
  removeMember,
  updateMemberRole,
} from "../auth/users";
import { workspaceOf } from "../http/context";
import type { RouteConventions } from "../http/route-conventions";
import { Body, Enum, Ok, responses, Timestamp, Uuid, WRITE_ERRORS } from "../http/schemas";
import { resourceRoutes } from "./resource-routes";

const Role = Enum(
  ROLES,
  "admin (everything) | agent (reads all but settings, API keys and users; writes conversations)",
);

export const UserSchema = t.Object(
  {
    id: Uuid("User id"),
    email: t.String({ description: "E-mail address, lower-cased", examples: ["ada@example.com"] }),
    name: t.String({ description: "Display name", examples: ["Ada Lovelace"] }),
    role: Role,
    setup_pending: t.Boolean({
      description: "True until the user has set a password with a setup link",
    }),
    created_at: Timestamp("When the user was created"),
  },
  { description: "A member of the workspace" },
);

const InviteBody = Body(
  {
    email: t.String({
      minLength: 1,
      maxLength: MAX_EMAIL_LENGTH,
      description: "E-mail address (stored lower-cased)",
      examples: ["ada@example.com"],
    }),
    name: t.String({
      minLength: 1,
      maxLength: MAX_NAME_LENGTH,
      description: "Display name (max 200); kept as it is for someone who already has an account",
      examples: ["Ada Lovelace"],
    }),
    role: Role,
  },
  { description: "Someone to add to the workspace" },
);

const PatchBody = Body(
  { role: t.Optional(Role) },
  { description: "What changes (partial): the member's role. Their name and e-mail are their own." },
);

// /v1/users – who may sign in to this workspace's dashboard, and as what.
export function usersRoutes(deps: AppDeps, conventions: RouteConventions) {
  // The answer holds a secret shown once: never kept for Idempotency-Key replay.
  conventions.registerSecretAnswer("/v1/users");
  return new Elysia({ name: "users" })
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/users",
          tag: "Users",
          one: "user",
          many: "users",
          item: UserSchema,
          idDescription: "User id",
        },
        {
          list: {
            summary: "List the workspace's users",
            description:
              "Members of the workspace with their role, most recently added first. Needs the `write` scope (an admin's session, or a key with `write`).",
            itemsDescription: "Members, most recently added first",
            errors: [403],
            run: async (workspaceId, _query, page) => {
              const { users, total } = await listMembers(deps.db, workspaceId, page);
              return { items: users, total };
            },
          },
          get: {
            summary: "Get a user",
            description: "A member of the workspace; 404 for anyone else.",
            errors: [403],
            run: async (workspaceId, id) => await getMember(deps.db, workspaceId, id),
          },
          update: {
            summary: "Change a user's role",
            description:
              "Takes effect on the member's next request. Demoting the workspace's last admin: 409 `The last admin of a workspace cannot be removed or demoted`.",
            body: PatchBody,
            errors: [409],
            run: async (workspaceId, id, body, now) =>
              body.role === undefined
                ? await getMember(deps.db, workspaceId, id)
                : await updateMemberRole(deps.db, workspaceId, id, body.role, now),
          },
          delete: {
            summary: "Remove a user from the workspace",
            description:
              "Removes the membership, ends the user's sessions in this workspace at once and voids their unused setup links for it; the account itself stays (for other workspaces). The last admin: 409 `The last admin of a workspace cannot be removed or demoted`.",
            errors: [409],
            run: async (workspaceId, id) => await removeMember(deps.db, workspaceId, id),
          },
        },
      ),
    )
    .post(
      "/v1/users",
      async ({ request, body }) => ({
        ok: true as const,
        ...(await inviteMember(deps.db, {
          workspaceId: workspaceOf(request),
          email: body.email,
          name: body.name,
          role: body.role,
          publicUrl: deps.config.publicUrl,
          now: deps.clock.now(),
        })),
      }),
      {
        body: InviteBody,
        detail: {
          tags: ["Users"],
          operationId: "createUser",
          summary: "Invite a user",
          description:
            "Adds a person to the workspace with a role: a new account for an unknown e-mail, else the existing account. Someone without a password yet gets `setup_url`, a one-time link (24 h, built from PUBLIC_URL) to set one and sign in; someone who has one signs in as before (`setup_url` null). The link is never stored (a repeated `Idempotency-Key` answers 409 rather than the link). Already a member: 409 `This user is already a member of this workspace`; an e-mail that is not one: 422 `email must be a valid email address`.",
        },
        response: responses(
          t.Object({
            ok: Ok,
            user: UserSchema,
            setup_url: t.Union([t.String(), t.Null()], {
              description:
                "One-time link (`<PUBLIC_URL>/setup?token=…`, 24 h) that sets the user's password and signs them in; null when the user already has a password",
              examples: ["https://outreach.example.com/setup?token=q3x..."],
            }),
          }),
          [...WRITE_ERRORS, 409],
        ),
      },
    );
}
