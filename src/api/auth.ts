import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { changePassword, completeSetup, type SignedIn, signIn } from "../auth/accounts";
import { clearedSessionCookie, sessionCookie, sessionTokenOf, wantsSecureCookie } from "../auth/cookies";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from "../auth/passwords";
import { type AuthenticatedSession, createSessionAuthenticator, revokeSession } from "../auth/sessions";
import { MAX_EMAIL_LENGTH, MAX_NAME_LENGTH } from "../auth/users";
import { stateOf } from "../http/context";
import { Body, Ok, responses } from "../http/schemas";
import { AppError } from "../lib/errors";
import { SessionUserSchema } from "./me";

export const NOT_SIGNED_IN = "Not signed in";

const TAG = "Account";

const WorkspaceRef = t.Object(
  {
    id: t.String({ description: "Workspace id (UUID)" }),
    name: t.String({ description: "Workspace name", examples: ["Default"] }),
  },
  { description: "The workspace the session acts in" },
);

/** What sign-in, setup and `GET /auth/session` answer. */
const SignedInSchema = t.Object({
  ok: Ok,
  user: SessionUserSchema,
  workspace: WorkspaceRef,
  role: t.String({ description: "The user's role in the workspace: admin | agent", examples: ["admin"] }),
});

const Password = (description: string) =>
  t.String({ maxLength: MAX_PASSWORD_LENGTH, description, examples: ["correct horse battery staple"] });

const LoginBody = Body(
  {
    email: t.String({
      maxLength: MAX_EMAIL_LENGTH,
      description: "E-mail address",
      examples: ["ada@example.com"],
    }),
    password: Password("Password"),
    workspace_id: t.Optional(
      t.String({
        maxLength: 64,
        description: "Workspace to act in (the user must be a member); default: the user's first workspace",
      }),
    ),
  },
  { description: "Credentials" },
);

const SetupBody = Body(
  {
    token: t.String({ maxLength: 200, description: "The `token` of the setup link (`/setup?token=…`)" }),
    name: t.Optional(
      t.String({
        maxLength: MAX_NAME_LENGTH,
        description: "Display name (max 200); required when the link creates a new user",
        examples: ["Ada Lovelace"],
      }),
    ),
    email: t.Optional(
      t.String({
        maxLength: MAX_EMAIL_LENGTH,
        description:
          "E-mail address; used only when the link names no user and no e-mail (the first admin's link)",
        examples: ["ada@example.com"],
      }),
    ),
    password: Password(`New password (${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters)`),
  },
  { description: "What a setup link completes" },
);

const PasswordBody = Body(
  {
    current_password: Password("The password in use"),
    new_password: Password(`The new password (${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters)`),
  },
  { description: "A password change" },
);

const COOKIE_NOTE =
  "Sets the session cookie `outreach_session` (HttpOnly, SameSite=Lax, `Secure` over https, 30 days, extended as it is used).";

// /auth/* – the dashboard's sign-in: login, logout, the current session, setup links, password change.
// Writes here are refused 403 `Cross-site request refused` from other sites (src/http/front-door.ts).
export function authRoutes(deps: AppDeps) {
  const authenticateSession = createSessionAuthenticator(deps.db);
  const secure = (request: Request) => wantsSecureCookie(request.url, deps.config.publicUrl);
  const addressOf = (request: Request) => stateOf(request)?.address ?? "unknown";

  /** The live session of the request's cookie; 401 `Not signed in` for none, a tampered, expired or revoked one. */
  async function sessionOf(
    request: Request,
  ): Promise<{ session: AuthenticatedSession; token: string; extended: boolean }> {
    const token = sessionTokenOf(request.headers.get("cookie"));
    const resolved = token ? await authenticateSession(token, deps.clock.now()) : null;
    if (!token || !resolved) throw new AppError("unauthorized", NOT_SIGNED_IN);
    return { ...resolved, token };
  }

  const signedIn = (result: SignedIn) => ({
    ok: true as const,
    user: result.user,
    workspace: result.workspace,
    role: result.user.role,
  });

  return new Elysia({ name: "auth" })
    .post(
      "/auth/login",
      async ({ request, body, set }) => {
        const result = await signIn(deps.db, {
          email: body.email,
          password: body.password,
          workspaceId: body.workspace_id,
          address: addressOf(request),
          now: deps.clock.now(),
        });
        set.headers["set-cookie"] = sessionCookie(result.token, secure(request));
        return signedIn(result);
      },
      {
        body: LoginBody,
        detail: {
          tags: [TAG],
          operationId: "login",
          summary: "Sign in",
          description: `Signs in with e-mail and password. ${COOKIE_NOTE} A wrong password and an unknown e-mail both answer 401 \`Invalid email or password\`. Each attempt is counted before its password is checked (a right one gives its place back), so at most 10 passwords are checked per address and per e-mail in 15 minutes, however concurrently they arrive; further attempts are refused with 429 \`Too many sign-in attempts: try again later\` (with \`retry_after\`). A body over 64 KiB answers 413. 403 for a request from another site, or an account that belongs to no workspace.`,
          security: [],
        },
        response: responses(SignedInSchema, [400, 401, 403, 408, 413, 422, 429], {
          401: "Wrong e-mail or password (`Invalid email or password`)",
          403: "From another site (`Cross-site request refused`), or the account belongs to no workspace",
          429: "Too many failed sign-ins (`Too many sign-in attempts: try again later`, with `retry_after`)",
        }),
      },
    )
    .post(
      "/auth/logout",
      async ({ request, set }) => {
        const token = sessionTokenOf(request.headers.get("cookie"));
        if (token) await revokeSession(deps.db, token);
        set.headers["set-cookie"] = clearedSessionCookie(secure(request));
        return { ok: true as const };
      },
      {
        detail: {
          tags: [TAG],
          operationId: "logout",
          summary: "Sign out",
          description:
            "Ends the session of the cookie (its row is deleted) and clears the cookie. Answers 200 with or without a session.",
          security: [{ session: [] }],
        },
        response: responses(t.Object({ ok: Ok }), [403, 429], {
          403: "From another site (`Cross-site request refused`)",
        }),
      },
    )
    .get(
      "/auth/session",
      async ({ request, set }) => {
        const { session, token, extended } = await sessionOf(request);
        if (extended) set.headers["set-cookie"] = sessionCookie(token, secure(request));
        return {
          ok: true as const,
          user: session.user,
          workspace: { id: session.workspaceId, name: session.workspaceName },
          role: session.user.role,
        };
      },
      {
        detail: {
          tags: [TAG],
          operationId: "getSession",
          summary: "The current session",
          description:
            "The signed-in user, the workspace the session acts in and the role there. 401 `Not signed in` without a live session (none, expired, revoked or tampered with).",
          security: [{ session: [] }],
        },
        response: responses(SignedInSchema, [401, 429], { 401: "No live session (`Not signed in`)" }),
      },
    )
    .post(
      "/auth/setup",
      async ({ request, body, set }) => {
        const result = await completeSetup(deps.db, {
          token: body.token,
          name: body.name,
          email: body.email,
          password: body.password,
          now: () => deps.clock.now(),
        });
        set.headers["set-cookie"] = sessionCookie(result.token, secure(request));
        return signedIn(result);
      },
      {
        body: SetupBody,
        detail: {
          tags: [TAG],
          operationId: "completeSetup",
          summary: "Follow a setup link",
          description: `Spends a one-time setup link (24 h): sets the password of the user it was made for, or creates the user it invites (the first admin's link, printed by \`outreach serve\` on an empty database, takes \`email\` and \`name\` from the body). Then signs in, like \`POST /auth/login\`. ${COOKIE_NOTE} An unknown, expired or used link answers 410 \`This setup link has expired or was already used\`; a password shorter than ${MIN_PASSWORD_LENGTH} characters 422 \`password must be at least ${MIN_PASSWORD_LENGTH} characters\`.`,
          security: [],
        },
        response: responses(SignedInSchema, [400, 403, 408, 409, 410, 413, 422, 429], {
          403: "From another site (`Cross-site request refused`)",
          409: "A new user's e-mail belongs to another user (`A user with this email already exists`)",
          410: "Unknown, expired or used link (`This setup link has expired or was already used`)",
        }),
      },
    )
    .post(
      "/auth/password",
      async ({ request, body }) => {
        const { session, token } = await sessionOf(request);
        await changePassword(deps.db, {
          session,
          sessionToken: token,
          currentPassword: body.current_password,
          newPassword: body.new_password,
          address: addressOf(request),
          now: () => deps.clock.now(),
        });
        return { ok: true as const };
      },
      {
        body: PasswordBody,
        detail: {
          tags: [TAG],
          operationId: "changePassword",
          summary: "Change the password",
          description: `Changes the signed-in user's password and ends every other session of theirs; this one stays. A wrong \`current_password\` answers 422 \`current_password is incorrect\` and counts as a failed sign-in (429 after 10 in 15 minutes).`,
          security: [{ session: [] }],
        },
        response: responses(t.Object({ ok: Ok }), [400, 401, 403, 408, 413, 422, 429], {
          401: "No live session (`Not signed in`)",
          403: "From another site (`Cross-site request refused`)",
          429: "Too many failed attempts (`Too many sign-in attempts: try again later`, with `retry_after`)",
        }),
      },
    );
}
