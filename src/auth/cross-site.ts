/**
 * The cross-site check for writes authenticated by the session cookie, and for sign-in and setup
 * (API.md §6.7). A browser says where a request comes from: `Sec-Fetch-Site` when it sends it
 * (only `same-origin` and `none`, typed or bookmarked, pass), else `Origin`, which must name the
 * host the request was sent to (or the server's PUBLIC_URL). A request with neither comes from a
 * client that is not a browser (curl, a script), which no other site can make a user send: allowed.
 */
export function isCrossSite(headers: Headers, requestUrl: string, publicUrl?: string): boolean {
  const site = headers.get("sec-fetch-site");
  if (site !== null) {
    const value = site.trim().toLowerCase();
    return value !== "same-origin" && value !== "none";
  }
  const origin = headers.get("origin");
  if (origin === null) return false;
  let originHost: string;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    return true; // `Origin: null` (sandboxed frames, some redirects) or junk
  }
  const host = (headers.get("host") ?? hostOf(requestUrl))?.trim().toLowerCase();
  if (host && originHost === host) return false;
  if (publicUrl) {
    try {
      if (new URL(publicUrl).host.toLowerCase() === originHost) return false;
    } catch {
      // an unusable PUBLIC_URL matches nothing
    }
  }
  return true;
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
