/** The dashboard's session cookie (API.md §6.7). */
export const SESSION_COOKIE = "outreach_session";
/** 30 days, in seconds: the cookie lives as long as an unused session does. */
export const SESSION_COOKIE_MAX_AGE = 30 * 24 * 60 * 60;

/** The `outreach_session` value of a `Cookie` header, or null. */
export function sessionTokenOf(cookieHeader: string | null): string | null {
  if (!cookieHeader) return null;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

const attributes = (secure: boolean) => `HttpOnly; SameSite=Lax; Path=/${secure ? "; Secure" : ""}`;

/** `Set-Cookie` value that stores a session token in the browser for 30 days. */
export function sessionCookie(token: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; ${attributes(secure)}; Max-Age=${SESSION_COOKIE_MAX_AGE}`;
}

/** `Set-Cookie` value that removes the session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; ${attributes(secure)}; Max-Age=0`;
}

/** Secure cookies when the request came over https or the server's public URL is https. */
export function wantsSecureCookie(requestUrl: string, publicUrl: string | undefined): boolean {
  return requestUrl.startsWith("https:") || Boolean(publicUrl?.startsWith("https:"));
}
