import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

/**
 * Which addresses a webhook may target. Loopback and private ranges are allowed by default (a
 * self-hosted receiver often lives there) unless `WEBHOOK_ALLOW_PRIVATE=false`; link-local and
 * cloud metadata endpoints are always refused. Checked on the URL when a subscription is saved and
 * on the resolved address before every attempt (DNS can change after the check).
 */
export type AddressClass = "public" | "private" | "link-local" | "metadata";

const METADATA_HOSTS = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.internal",
]);

/** Well-known metadata addresses outside link-local space (AWS IPv6, Alibaba, Oracle). */
const METADATA_ADDRESSES = new Set(["fd00:ec2:0:0:0:0:0:254", "100.100.100.200", "192.0.0.192"]);

function ipv4Octets(ip: string): number[] {
  return ip.split(".").map(Number);
}

function classifyIpv4(ip: string): AddressClass {
  if (METADATA_ADDRESSES.has(ip)) return "metadata";
  const [a, b] = ipv4Octets(ip);
  if (a === 169 && b === 254) return "link-local";
  if (a === 10 || a === 127 || a === 0) return "private";
  if (a === 172 && b >= 16 && b <= 31) return "private";
  if (a === 192 && b === 168) return "private";
  if (a === 100 && b >= 64 && b <= 127) return "private";
  return "public";
}

/** Eight 16-bit groups of an IPv6 address (handles `::` and a trailing dotted IPv4). */
function ipv6Groups(ip: string): number[] {
  let address = ip.toLowerCase().split("%")[0];
  const dotted = address.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    const [a, b, c, d] = ipv4Octets(dotted[1]);
    address = `${address.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = address.split("::");
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail !== undefined && tail !== "" ? tail.split(":") : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...(tail !== undefined ? Array(missing).fill("0") : []), ...tailGroups];
  return groups.map((group) => Number.parseInt(group, 16) || 0);
}

function classifyIpv6(ip: string): AddressClass {
  const g = ipv6Groups(ip);
  if (METADATA_ADDRESSES.has(g.map((n) => n.toString(16)).join(":"))) return "metadata";
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible addresses: judge the IPv4 inside.
  if (g.slice(0, 5).every((n) => n === 0) && (g[5] === 0xffff || g[5] === 0) && (g[6] || g[7])) {
    if (!(g[5] === 0 && g[6] === 0 && g[7] === 1)) {
      return classifyIpv4(`${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`);
    }
  }
  if ((g[0] & 0xffc0) === 0xfe80) return "link-local";
  if (g.every((n, i) => (i === 7 ? n === 1 || n === 0 : n === 0))) return "private"; // ::1 and ::
  if ((g[0] & 0xfe00) === 0xfc00) return "private"; // fc00::/7 unique local
  return "public";
}

/** The class of an IP address (v4 or v6). */
export function classifyAddress(ip: string): AddressClass {
  return isIP(ip) === 4 ? classifyIpv4(ip) : classifyIpv6(ip);
}

/** The reason `cls` may not be targeted, or null when it may. */
function refusal(cls: AddressClass, allowPrivate: boolean): string | null {
  if (cls === "link-local" || cls === "metadata")
    return "must not point to a link-local or cloud metadata address";
  if (cls === "private" && !allowPrivate) return "must not point to a private or loopback address";
  return null;
}

/** A URL's host without IPv6 brackets or a trailing dot. */
function hostOf(url: URL): string {
  return url.hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
}

/**
 * Checks a subscription URL as written. Returns the problem (to follow the field name) or null.
 * Host names are resolved only at delivery time.
 */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be a valid URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http or https URL";
  if (url.username || url.password) return "must not contain credentials";
  const host = hostOf(url);
  if (!host) return "must be a valid URL";
  if (METADATA_HOSTS.has(host)) return refusal("metadata", allowPrivate);
  if (isIP(host)) return refusal(classifyAddress(host), allowPrivate);
  if (host === "localhost" || host.endsWith(".localhost")) return refusal("private", allowPrivate);
  return null;
}

/**
 * Resolves the URL's host and refuses it when any address it resolves to may not be targeted.
 * Returns the problem or null.
 */
export async function checkResolvedTarget(
  raw: string,
  allowPrivate: boolean,
  timeoutMs = 5_000,
): Promise<string | null> {
  const url = new URL(raw);
  const host = hostOf(url);
  const written = checkWebhookUrl(raw, allowPrivate);
  if (written) return `url ${written}`;
  if (isIP(host)) return null;
  let addresses: { address: string }[];
  try {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error("timeout"), { code: "timed out" })), timeoutMs);
    });
    addresses = await Promise.race([lookup(host, { all: true }), timeout]).finally(() => clearTimeout(timer));
  } catch (error) {
    return `could not resolve ${host}: ${(error as { code?: string }).code ?? (error as Error).message}`;
  }
  for (const { address } of addresses) {
    const cls = classifyAddress(address);
    if (refusal(cls, allowPrivate))
      return `${host} resolves to ${address}, a ${cls} address webhooks may not target`;
  }
  return null;
}
