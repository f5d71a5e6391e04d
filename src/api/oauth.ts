import { timingSafeEqual } from "node:crypto";
import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { signInWithVerifiedEmail } from "../auth/accounts";
import { sessionCookie, wantsSecureCookie } from "../auth/cookies";
import {
  createOAuthProviders,
  generateCodeVerifier,
  generateState,
  OAUTH_PROVIDERS,
  type OAuthProviderName,
} from "../auth/oauth";
import { Ok, Query, responses } from "../http/schemas";
import { notFound } from "../lib/errors";
import { errorText, log } from "../lib/log";

/** Holds `<state>.<code verifier>` between the redirect to the provider and its callback. */
const STATE_COOKIE = "outreach_oauth";
const STATE_MAX_AGE = 600;

/** Why a callback did not sign in, as `/?oauth_error=<reason>` tells the dashboard. */
type Failure = "state" | "denied" | "provider" | "no_account";

function stateCookieOf(cookieHeader: string | null): string | null {
  for (const part of (cookieHeader ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq !== -1 && part.slice(0, eq).trim() === STATE_COOKIE) return part.slice(eq + 1).trim();
  }
  return null;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const Provider = t.Object({
  provider: t.String({ description: "github | google (only configured ones answer)", examples: ["github"] }),
});

// /auth/providers, /auth/oauth/{provider}[/callback] – OAuth sign-in (GitHub, Google) of existing users.
export function oauthRoutes(deps: AppDeps) {
  const providers = createOAuthProviders(deps.config.oauth, deps.config.publicUrl);
  const providerOf = (name: string) => {
    const provider = providers.get(name as OAuthProviderName);
    if (!provider) throw notFound();
    return provider;
  };
  const attributes = (request: Request, maxAge: number) =>
    `HttpOnly; SameSite=Lax; Path=/auth/oauth; Max-Age=${maxAge}${wantsSecureCookie(request.url, deps.config.publicUrl) ? "; Secure" : ""}`;
  const redirect = (location: string, cookies: string[]) => {
    const headers = new Headers({ location, "cache-control": "no-store", "referrer-policy": "no-referrer" });
    for (const cookie of cookies) headers.append("set-cookie", cookie);
    return new Response(null, { status: 302, headers });
  };

  return new Elysia({ name: "oauth" })
    .get(
      "/auth/providers",
      () => ({ ok: true as const, providers: OAUTH_PROVIDERS.filter((name) => providers.has(name)) }),
      {
        detail: {
          tags: ["Account"],
          operationId: "listSignInProviders",
          summary: "OAuth providers to sign in with",
          description:
            "The providers configured on this server (`OAUTH_GITHUB_CLIENT_ID`/`_SECRET`, `OAUTH_GOOGLE_CLIENT_ID`/`_SECRET`), for the sign-in page's buttons; empty when none is.",
          security: [],
        },
        response: responses(
          t.Object({
            ok: Ok,
            providers: t.Array(t.String({ description: "github | google" }), {
              description: "Configured providers",
              examples: [["github"]],
            }),
          }),
          [429],
        ),
      },
    )
    .get(
      "/auth/oauth/:provider",
      ({ request, params }) => {
        const provider = providerOf(params.provider);
        const state = generateState();
        const verifier = generateCodeVerifier();
        return redirect(provider.authorizationUrl(state, verifier).toString(), [
          `${STATE_COOKIE}=${state}.${verifier}; ${attributes(request, STATE_MAX_AGE)}`,
        ]);
      },
      {
        params: Provider,
        detail: {
          tags: ["Account"],
          operationId: "startOAuthSignIn",
          summary: "Sign in with GitHub or Google",
          description:
            "Sends the browser to the provider (302) with a `state` that a short-lived cookie binds to this browser. An unconfigured provider answers 404.",
          security: [],
          responses: {
            302: { description: "Redirect to the provider's consent page" },
            404: { description: "No such provider is configured (`Not found`)" },
            429: { description: "Rate limited (per address)" },
          },
        },
      },
    )
    .get(
      "/auth/oauth/:provider/callback",
      async ({ request, params, query }) => {
        const provider = providerOf(params.provider);
        const clearState = `${STATE_COOKIE}=; ${attributes(request, 0)}`;
        const fail = (reason: Failure) => redirect(`/?oauth_error=${reason}`, [clearState]);
        // 1. The state must be the one this browser was sent away with (no sign-in forced on it).
        const saved = stateCookieOf(request.headers.get("cookie"));
        const [state, verifier] = saved?.split(".") ?? [];
        if (!state || !verifier || typeof query.state !== "string" || !sameText(state, query.state))
          return fail("state");
        if (typeof query.code !== "string" || query.code === "") return fail("denied");
        // 2. Who the provider says this is: its verified e-mail addresses.
        let emails: string[];
        try {
          emails = await provider.verifiedEmails(query.code, verifier);
        } catch (error) {
          log.warn("oauth sign-in failed at the provider", {
            provider: provider.name,
            error: errorText(error),
          });
          return fail("provider");
        }
        // 3. An existing user with one of them, or nobody: OAuth never creates users.
        try {
          const result = await signInWithVerifiedEmail(deps.db, emails, deps.clock.now());
          return redirect("/", [
            clearState,
            sessionCookie(result.token, wantsSecureCookie(request.url, deps.config.publicUrl)),
          ]);
        } catch {
          return fail("no_account");
        }
      },
      {
        params: Provider,
        query: Query({
          code: t.Optional(t.String({ description: "The provider's authorization code" })),
          state: t.Optional(t.String({ description: "The state sent to the provider" })),
          error: t.Optional(t.String({ description: "The provider's error, when the person declined" })),
        }),
        detail: {
          tags: ["Account"],
          operationId: "finishOAuthSignIn",
          summary: "Come back from GitHub or Google",
          description:
            "Where the provider returns the browser (`<PUBLIC_URL>/auth/oauth/<provider>/callback`, to register with the provider). With the matching state and a verified e-mail address of an existing user, signs that user in (the session cookie, as `POST /auth/login` sets it) and redirects to `/`; never creates a user. Otherwise redirects to `/?oauth_error=<reason>`: `state` (missing or mismatched state), `denied` (declined at the provider), `provider` (the provider failed) or `no_account` (no user has a verified e-mail address of the account).",
          security: [],
          responses: {
            302: { description: "Redirect to `/` signed in, or to `/?oauth_error=<reason>`" },
            404: { description: "No such provider is configured (`Not found`)" },
            429: { description: "Rate limited (per address)" },
          },
        },
      },
    );
}
