import {
  decodeIdToken,
  GitHub,
  Google,
  generateCodeVerifier,
  generateState,
  type OAuth2Tokens,
} from "arctic";
import type { OAuthConfig } from "../config";
import { normalizeEmail } from "./users";

/**
 * OAuth sign-in to the dashboard (API.md §6.7, optional): GitHub and Google through `arctic`, each
 * when its client is configured. A provider only ever answers who the person is — their verified
 * e-mail addresses — and sign-in then looks for an existing user with one of them: OAuth never
 * creates users.
 */
export const OAUTH_PROVIDERS = ["github", "google"] as const;
export type OAuthProviderName = (typeof OAUTH_PROVIDERS)[number];

export interface OAuthProvider {
  name: OAuthProviderName;
  /** Where to send the browser; `state` and `codeVerifier` are kept in a short-lived cookie. */
  authorizationUrl(state: string, codeVerifier: string): URL;
  /** The account's verified e-mail addresses (lower-cased), after trading the code for a token. */
  verifiedEmails(code: string, codeVerifier: string): Promise<string[]>;
}

export { generateCodeVerifier, generateState };

/** The callback a provider returns the browser to: `<PUBLIC_URL>/auth/oauth/<provider>/callback`. */
export function callbackUrl(publicUrl: string, name: OAuthProviderName): string {
  return `${publicUrl.replace(/\/+$/, "")}/auth/oauth/${name}/callback`;
}

function github(clientId: string, clientSecret: string, publicUrl: string): OAuthProvider {
  const client = new GitHub(clientId, clientSecret, callbackUrl(publicUrl, "github"));
  return {
    name: "github",
    authorizationUrl: (state) => client.createAuthorizationURL(state, ["user:email"]),
    async verifiedEmails(code) {
      const tokens = await client.validateAuthorizationCode(code);
      // GitHub's profile e-mail may be unverified or hidden: only its list says which are verified.
      const response = await fetch("https://api.github.com/user/emails", {
        headers: {
          authorization: `Bearer ${tokens.accessToken()}`,
          accept: "application/vnd.github+json",
          "user-agent": "outreach",
        },
        signal: AbortSignal.timeout(10_000),
      });
      if (!response.ok) throw new Error(`GitHub answered ${response.status} for the account's e-mails`);
      const emails = (await response.json()) as { email?: unknown; verified?: unknown; primary?: unknown }[];
      if (!Array.isArray(emails)) return [];
      return emails
        .filter((e) => e.verified === true && typeof e.email === "string")
        .sort((a, b) => Number(b.primary === true) - Number(a.primary === true))
        .map((e) => normalizeEmail(e.email as string));
    },
  };
}

function google(clientId: string, clientSecret: string, publicUrl: string): OAuthProvider {
  const client = new Google(clientId, clientSecret, callbackUrl(publicUrl, "google"));
  return {
    name: "google",
    authorizationUrl: (state, codeVerifier) =>
      client.createAuthorizationURL(state, codeVerifier, ["openid", "email"]),
    async verifiedEmails(code, codeVerifier) {
      const tokens: OAuth2Tokens = await client.validateAuthorizationCode(code, codeVerifier);
      // The ID token comes straight from Google's token endpoint over TLS, so its claims are
      // trusted without checking its signature (OpenID Connect Core §3.1.3.7).
      const claims = decodeIdToken(tokens.idToken()) as { email?: unknown; email_verified?: unknown };
      return claims.email_verified === true && typeof claims.email === "string"
        ? [normalizeEmail(claims.email)]
        : [];
    },
  };
}

/** The configured providers by name (none when no OAUTH_* client is set). */
export function createOAuthProviders(
  config: OAuthConfig,
  publicUrl: string,
): Map<OAuthProviderName, OAuthProvider> {
  const providers = new Map<OAuthProviderName, OAuthProvider>();
  if (config.github)
    providers.set("github", github(config.github.clientId, config.github.clientSecret, publicUrl));
  if (config.google)
    providers.set("google", google(config.google.clientId, config.google.clientSecret, publicUrl));
  return providers;
}
