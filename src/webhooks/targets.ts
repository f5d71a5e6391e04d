import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

/**
 * Which addresses a webhook may target (API.md §7.2). Private, loopback, link-local and other
 * non-public addresses are refused by default; `WEBHOOK_ALLOW_PRIVATE=true` allows private and
 * loopback ones (a receiver on the same network), never link-local or cloud metadata endpoints.
 * IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) are judged by that
 * IPv4 address. Checked on the URL when a subscription is saved, and on the resolved address before
 * every attempt, which then connects to that very address (src/webhooks/deliver.ts).
 */
export type AddressClass = "public" | "private" | "link-local" | "metadata";

/** The refusal of a private target while WEBHOOK_ALLOW_PRIVATE is off (after the field name). */
export const PRIVATE_TARGET =
  "points to a private address (an operator can allow this with WEBHOOK_ALLOW_PRIVATE=true)";
/** The refusal of a link-local or metadata target, which no setting allows. */
export const METADATA_TARGET = "must not point to a link-local or cloud metadata address";

const METADATA_HOSTS = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.internal",
]);

/** Well-known metadata addresses outside link-local space (AWS IPv6, Alibaba, Oracle). */
const METADATA_IPV4 = new Set(["100.100.100.200", "192.0.0.192"]);
const METADATA_IPV6 = new Set(["fd00:ec2:0:0:0:0:0:254"]);

/** A 32-bit IPv4 address's class. */
function classifyIpv4Number(n: number): AddressClass {
  const a = n >>> 24;
  const b = (n >>> 16) & 255;
  const c = (n >>> 8) & 255;
  const dotted = `${a}.${b}.${c}.${n & 255}`;
  if (METADATA_IPV4.has(dotted)) return "metadata";
  if (a === 169 && b === 254) return "link-local"; // 169.254/16, the cloud metadata address's home
  if (a === 0 || a === 10 || a === 127) return "private"; // "this network", private, loopback
  if (a === 100 && b >= 64 && b <= 127) return "private"; // 100.64/10 carrier-grade NAT
  if (a === 172 && b >= 16 && b <= 31) return "private";
  if (a === 192 && b === 168) return "private";
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return "private"; // IETF protocol, TEST-NET-1
  if (a === 198 && (b === 18 || b === 19)) return "private"; // benchmarking
  if (a === 198 && b === 51 && c === 100) return "private"; // TEST-NET-2
  if (a === 203 && b === 0 && c === 113) return "private"; // TEST-NET-3
  if (a >= 224) return "private"; // multicast, reserved, broadcast
  return "public";
}

function ipv4Number(ip: string): number {
  return ip.split(".").reduce((n, octet) => n * 256 + Number(octet), 0) >>> 0;
}

/** Eight 16-bit groups of a valid IPv6 address (handles `::`, a zone and a trailing dotted IPv4). */
function ipv6Groups(ip: string): number[] {
  let address = ip.toLowerCase().split("%")[0];
  const dotted = address.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    const n = ipv4Number(dotted[1]);
    address = `${address.slice(0, -dotted[1].length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = address.split("::");
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail !== undefined && tail !== "" ? tail.split(":") : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...(tail !== undefined ? Array(missing).fill("0") : []), ...tailGroups];
  return groups.map((group) => Number.parseInt(group, 16) || 0);
}

const joinIpv4 = (high: number, low: number) => ((high << 16) | low) >>> 0;

/** The IPv4 addresses an IPv6 address embeds (mapped, compatible, NAT64, 6to4, Teredo); empty if none. */
function embeddedIpv4(g: number[]): number[] {
  const zero = (from: number, to: number) => g.slice(from, to).every((n) => n === 0);
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (SIIT), ::a.b.c.d (compatible, not :: or ::1).
  if (zero(0, 5) && g[5] === 0xffff) return [joinIpv4(g[6], g[7])];
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return [joinIpv4(g[6], g[7])];
  if (zero(0, 6) && (g[6] !== 0 || g[7] > 1)) return [joinIpv4(g[6], g[7])];
  // 64:ff9b::/96 (NAT64 well-known) and 64:ff9b:1::/48 (local-use NAT64).
  if (g[0] === 0x64 && g[1] === 0xff9b) return [joinIpv4(g[6], g[7])];
  // 2002:AABB:CCDD::/48 (6to4).
  if (g[0] === 0x2002) return [joinIpv4(g[1], g[2])];
  // 2001:0000::/32 (Teredo): the server's IPv4 in clear, the client's inverted.
  if (g[0] === 0x2001 && g[1] === 0) return [joinIpv4(g[2], g[3]), joinIpv4(g[6] ^ 0xffff, g[7] ^ 0xffff)];
  return [];
}

/** The worse of two classes (metadata > link-local > private > public). */
function worse(a: AddressClass, b: AddressClass): AddressClass {
  const rank: Record<AddressClass, number> = { public: 0, private: 1, "link-local": 2, metadata: 3 };
  return rank[a] >= rank[b] ? a : b;
}

function classifyIpv6(ip: string): AddressClass {
  const g = ipv6Groups(ip);
  if (METADATA_IPV6.has(g.map((n) => n.toString(16)).join(":"))) return "metadata";
  const embedded = embeddedIpv4(g);
  if (embedded.length > 0) {
    // Local-use NAT64 is private whatever it embeds.
    let cls: AddressClass = g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1 ? "private" : "public";
    for (const n of embedded) cls = worse(cls, classifyIpv4Number(n));
    return cls;
  }
  if ((g[0] & 0xffc0) === 0xfe80) return "link-local"; // fe80::/10
  if (g.slice(0, 7).every((n) => n === 0) && g[7] <= 1) return "private"; // :: and ::1
  if ((g[0] & 0xfe00) === 0xfc00) return "private"; // fc00::/7 unique local
  if ((g[0] & 0xffc0) === 0xfec0) return "private"; // fec0::/10 site-local (deprecated)
  if ((g[0] & 0xff00) === 0xff00) return "private"; // multicast
  if (g[0] === 0x100 && g[1] === 0 && g[2] === 0 && g[3] === 0) return "private"; // 100::/64 discard
  if (g[0] === 0x2001 && g[1] === 0xdb8) return "private"; // documentation
  return "public";
}

/** The class of an IP address (v4 or v6). */
export function classifyAddress(ip: string): AddressClass {
  return isIP(ip) === 4 ? classifyIpv4Number(ipv4Number(ip)) : classifyIpv6(ip);
}

/** The reason `cls` may not be targeted, or null when it may. */
function refusal(cls: AddressClass, allowPrivate: boolean): string | null {
  if (cls === "public") return null;
  if (!allowPrivate) return PRIVATE_TARGET;
  if (cls === "link-local" || cls === "metadata") return METADATA_TARGET;
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
 * The URL parser has already turned every IPv4 spelling (decimal, octal, hex, short) into dotted
 * form. Host names are resolved only at delivery time.
 */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be a valid URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http or https URL";
  const host = hostOf(url);
  if (!host) return "must be a valid URL";
  // The address first: `http://example.com@127.0.0.1/` is refused for where it points.
  const where = METADATA_HOSTS.has(host)
    ? refusal("metadata", allowPrivate)
    : isIP(host)
      ? refusal(classifyAddress(host), allowPrivate)
      : host === "localhost" || host.endsWith(".localhost")
        ? refusal("private", allowPrivate)
        : null;
  if (where) return where;
  if (url.username || url.password) return "must not contain credentials";
  return null;
}

/** Resolves a host name to its addresses (node:dns by default; tests pass their own). */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;
const systemResolver: Resolver = (host) => lookup(host, { all: true });

/** Where a delivery may connect: the one address it checked, or why it may not be sent. */
export type ResolvedTarget =
  | { ok: true; url: URL; host: string; address: string; family: 4 | 6 }
  | { ok: false; error: string };

/**
 * Resolves the URL's host once and checks every address it resolves to; the delivery then connects
 * to the address returned here and no other (no second lookup: no rebinding window).
 */
export async function resolveTarget(
  raw: string,
  allowPrivate: boolean,
  timeoutMs = 5_000,
  resolve: Resolver = systemResolver,
): Promise<ResolvedTarget> {
  const written = checkWebhookUrl(raw, allowPrivate);
  if (written) return { ok: false, error: `url ${written}` };
  const url = new URL(raw);
  const host = hostOf(url);
  const literal = isIP(host);
  if (literal) return { ok: true, url, host, address: host, family: literal as 4 | 6 };
  let addresses: { address: string; family: number }[];
  try {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error("timeout"), { code: "timed out" })), timeoutMs);
    });
    addresses = await Promise.race([resolve(host), timeout]).finally(() => clearTimeout(timer));
  } catch (error) {
    return {
      ok: false,
      error: `could not resolve ${host}: ${(error as { code?: string }).code ?? (error as Error).message}`,
    };
  }
  const usable = addresses.filter((a) => isIP(a.address));
  if (usable.length === 0) return { ok: false, error: `could not resolve ${host}: no address` };
  for (const { address } of usable) {
    const cls = classifyAddress(address);
    if (refusal(cls, allowPrivate)) {
      const reason =
        cls === "private"
          ? "a private address (an operator can allow this with WEBHOOK_ALLOW_PRIVATE=true)"
          : `a ${cls} address webhooks may not target`;
      return { ok: false, error: `${host} resolves to ${address}, ${reason}: nothing was sent` };
    }
  }
  const chosen = usable[0];
  return { ok: true, url, host, address: chosen.address, family: isIP(chosen.address) as 4 | 6 };
}
