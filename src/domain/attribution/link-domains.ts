import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import { and, eq, ne, or } from "drizzle-orm";
import { PUBLIC_URL_SHORTENERS } from "../../compliance/lint";
import type { DbOrTx } from "../../db/client";
import { inJsonList } from "../../db/dialect";
import { newestFirstPage } from "../../db/paging";
import {
  LINK_DOMAIN_IS_DEFAULT,
  LINK_DOMAIN_IS_VERIFIED,
  type LinkDomainRow,
  linkDomains,
  trackedLinks,
} from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { conflict, invalid, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { toIso } from "../../lib/time";
import { classifyAddress } from "../../webhooks/targets";
import { newLinkCode } from "./offers";

/**
 * Branded link domains (API.md §7.5): a host name of the workspace's own that points at this
 * server, so its tracked links go out as `https://<domain>/r/<code>` instead of on PUBLIC_URL.
 * A domain is added `pending`, checked by `verifyLinkDomain` (`verified` or `failed` with the
 * reason) and only a verified domain is ever used for a link.
 */

export const LINK_DOMAIN_STATUSES = ["pending", "verified", "failed"] as const;
export type LinkDomainStatus = (typeof LINK_DOMAIN_STATUSES)[number];

/** Where the server answers a domain's token, on any host it is reached by. */
export const WELL_KNOWN_PREFIX = "/.well-known/outreach/";

/** The Link domain as the API returns it. */
export interface LinkDomainJson {
  id: string;
  domain: string;
  status: LinkDomainStatus;
  is_default: boolean;
  verification: { method: "http"; url: string; token: string };
  failure_reason: string | null;
  verified_at: string | null;
  checked_at: string | null;
  created_at: string;
}

export function linkDomainJson(row: LinkDomainRow): LinkDomainJson {
  return {
    id: row.id,
    domain: row.domain,
    status: row.status as LinkDomainStatus,
    is_default: row.isDefault,
    verification: { method: "http", url: checkUrl(row.domain, row.token), token: row.token },
    failure_reason: row.failureReason,
    verified_at: toIso(row.verifiedAt),
    checked_at: toIso(row.checkedAt),
    created_at: toIso(row.createdAt) as string,
  };
}

/** The URL a check fetches: `https://<domain>/.well-known/outreach/<token>`. */
export function checkUrl(domain: string, token: string): string {
  return `https://${domain}${WELL_KNOWN_PREFIX}${token}`;
}

const MAX_DOMAIN_LENGTH = 253;
const LABEL_RE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A link domain as given → its stored form (lower case, no trailing dot, IDNs as punycode), or a
 * 422 naming why it cannot be one: not a host name (a scheme, a path, a port, spaces, one label,
 * too long, a bad label), an IP address, a public URL shortener, or this server's own host.
 */
export function normalizeLinkDomain(raw: string, publicUrl: string): string {
  const given = raw.trim();
  if (given === "") throw invalid("domain is required");
  if (/\s/.test(given)) throw invalid("domain must be a host name, without spaces");
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(given))
    throw invalid("domain must be a host name, without a scheme (like https://)");
  if (/[/?#]/.test(given)) throw invalid("domain must be a host name, without a path");
  if (given.includes("@")) throw invalid("domain must be a host name, without user information");
  const unbracketed = given.startsWith("[") && given.endsWith("]") ? given.slice(1, -1) : given;
  if (isIP(unbracketed) || isIP(unbracketed.replace(/\.$/, "")))
    throw invalid("domain must be a host name, not an IP address");
  if (given.includes(":")) throw invalid("domain must be a host name, without a port");
  let domain = given.toLowerCase().replace(/\.$/, "");
  if (domain.length > MAX_DOMAIN_LENGTH) throw invalid(`domain is too long (max ${MAX_DOMAIN_LENGTH})`);
  // Internationalised names are stored as their ASCII (punycode) form, as DNS knows them.
  if (/[^ -~]/.test(domain)) {
    const ascii = domainToASCII(domain);
    if (ascii === "") throw invalid("domain must be a valid host name");
    domain = ascii;
    if (domain.length > MAX_DOMAIN_LENGTH) throw invalid(`domain is too long (max ${MAX_DOMAIN_LENGTH})`);
  }
  const labels = domain.split(".");
  if (labels.length < 2)
    throw invalid(
      "domain must be a fully qualified host name with at least two labels (like go.example.com)",
    );
  for (const label of labels) {
    if (label === "") throw invalid("domain must not have an empty label");
    if (label.length > 63)
      throw invalid(`domain has a label longer than 63 characters (${label.slice(0, 20)}…)`);
    if (!LABEL_RE.test(label))
      throw invalid(`domain has an invalid label "${label}" (letters, digits and inner hyphens only)`);
  }
  if (/^\d+$/.test(labels[labels.length - 1])) throw invalid("domain must be a host name, not an IP address");
  const shortener = PUBLIC_URL_SHORTENERS.find((host) => domain === host || domain.endsWith(`.${host}`));
  if (shortener) throw invalid(`domain is a public URL shortener (${shortener}): carriers filter its links`);
  if (domain === publicHost(publicUrl))
    throw invalid("domain is this server's own PUBLIC_URL host: links use it without a link domain");
  return domain;
}

function publicHost(publicUrl: string): string | null {
  try {
    return new URL(publicUrl).hostname.toLowerCase().replace(/\.$/, "");
  } catch {
    return null;
  }
}

/** The workspace's link domain, or 404 (malformed, unknown or another workspace's id). */
export async function findLinkDomain(db: DbOrTx, workspaceId: string, id: string): Promise<LinkDomainRow> {
  const row = await workspaceRow(db, linkDomains, workspaceId, id);
  if (!row) throw notFound();
  return row;
}

export async function listLinkDomains(
  db: DbOrTx,
  workspaceId: string,
  filter: { status?: string },
  page: { limit: number; offset: number },
): Promise<{ linkDomains: LinkDomainJson[]; total: number }> {
  if (filter.status !== undefined && !(LINK_DOMAIN_STATUSES as readonly string[]).includes(filter.status))
    throw invalid(`status must be one of ${LINK_DOMAIN_STATUSES.join(", ")}`);
  const where = and(
    eq(linkDomains.workspaceId, workspaceId),
    filter.status ? eq(linkDomains.status, filter.status) : undefined,
  );
  const { rows, total } = await newestFirstPage(
    db,
    linkDomains,
    where,
    [linkDomains.createdAt, linkDomains.id],
    page,
  );
  return { linkDomains: rows.map(linkDomainJson), total };
}

/**
 * Adds a domain, `pending` until checked. A domain belongs to one workspace of the server: one
 * already added (here or in another workspace) → 409.
 */
export async function createLinkDomain(
  db: DbOrTx,
  workspaceId: string,
  input: { domain: string },
  publicUrl: string,
  now = Date.now(),
): Promise<LinkDomainJson> {
  const domain = normalizeLinkDomain(input.domain, publicUrl);
  return await db.transaction(async (tx) => {
    const taken = await tx
      .select({ workspaceId: linkDomains.workspaceId })
      .from(linkDomains)
      .where(eq(linkDomains.domain, domain))
      .get();
    if (taken)
      throw conflict(
        taken.workspaceId === workspaceId
          ? "domain is already a link domain of this workspace"
          : "domain is already used by another workspace",
      );
    const row: LinkDomainRow = {
      id: newId(),
      workspaceId,
      domain,
      status: "pending",
      isDefault: false,
      token: newLinkCode(32),
      verifiedAt: null,
      failureReason: null,
      checkedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await tx.insert(linkDomains).values(row).run();
    return linkDomainJson(row);
  });
}

/**
 * `is_default: true` makes a verified domain the one every link of the workspace uses unless it
 * names another (409 for a domain that is not verified); `false` leaves the workspace with no
 * default (links go out on PUBLIC_URL).
 */
export async function updateLinkDomain(
  db: DbOrTx,
  workspaceId: string,
  id: string,
  patch: { is_default?: boolean },
  now = Date.now(),
): Promise<LinkDomainJson> {
  return await db.transaction(async (tx) => {
    const row = await findLinkDomain(tx, workspaceId, id);
    if (patch.is_default === undefined || patch.is_default === row.isDefault) return linkDomainJson(row);
    if (patch.is_default) {
      if (row.status !== "verified")
        throw conflict("Link domain is not verified: verify it before making it the default");
      await tx
        .update(linkDomains)
        .set({ isDefault: false, updatedAt: now })
        .where(and(eq(linkDomains.workspaceId, workspaceId), eq(linkDomains.isDefault, true)))
        .run();
    }
    await tx
      .update(linkDomains)
      .set({ isDefault: patch.is_default, updatedAt: now })
      .where(eq(linkDomains.id, row.id))
      .run();
    return linkDomainJson({ ...row, isDefault: patch.is_default, updatedAt: now });
  });
}

/**
 * Removes a domain, also while campaigns, offers, agents or flows name it: they keep the id, and
 * their links fall back at send time to the workspace's default domain, else PUBLIC_URL (the
 * links already sent stop reaching this server once the domain no longer points here).
 */
export async function deleteLinkDomain(db: DbOrTx, workspaceId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await findLinkDomain(tx, workspaceId, id);
    await tx.delete(linkDomains).where(eq(linkDomains.id, row.id)).run();
  });
}

/** How a check is made: `base` replaces `https://<domain>` (the domain goes in `Host`). */
export interface LinkDomainCheckOptions {
  base?: string;
  timeoutMs: number;
}

/** At most this much of the check URL's answer is read: the token is 32 characters. */
const MAX_CHECK_BODY = 1024;

/**
 * Fetches the domain's check URL and answers null when it reached this server (200 with the
 * domain's own token), else the reason in words. Never throws: every failure is a reason.
 */
export async function checkLinkDomain(
  domain: string,
  token: string,
  options: LinkDomainCheckOptions,
): Promise<string | null> {
  const path = `${WELL_KNOWN_PREFIX}${token}`;
  const url = options.base ? `${options.base.replace(/\/+$/, "")}${path}` : `https://${domain}${path}`;
  const seconds = Math.round(options.timeoutMs / 100) / 10;
  const signal = AbortSignal.timeout(options.timeoutMs);
  if (!options.base) {
    const refused = await refusedAddress(domain, options.timeoutMs);
    if (refused) return refused;
  }
  let response: Response;
  try {
    response = await fetch(url, {
      headers: options.base ? { host: domain, accept: "text/plain" } : { accept: "text/plain" },
      redirect: "manual",
      signal,
    });
  } catch (error) {
    if (signal.aborted) return `the check URL did not answer within ${seconds} s`;
    const code = String((error as { code?: unknown }).code ?? "");
    if (/CERT|TLS|SSL/i.test(code)) return `the HTTPS certificate of ${domain} is not valid (${code})`;
    return "could not connect";
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => {});
    return `the check URL answered ${response.status}`;
  }
  try {
    const text = await readAtMost(response, MAX_CHECK_BODY);
    return text.trim() === token ? null : "the check URL answered another token";
  } catch {
    if (signal.aborted) return `the check URL did not answer within ${seconds} s`;
    return "could not connect";
  }
}

/**
 * The check is a request this server makes: a domain that resolves to a link-local or cloud
 * metadata address is never fetched (the webhook target rule). A name that does not resolve is
 * left to the fetch, which answers `could not connect`.
 */
async function refusedAddress(domain: string, timeoutMs: number): Promise<string | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
    });
    const addresses = await Promise.race([lookup(domain, { all: true }), timeout]);
    for (const { address } of addresses) {
      const kind = classifyAddress(address);
      if (kind === "link-local" || kind === "metadata")
        return `${domain} resolves to ${address}, a ${kind} address this server does not fetch`;
    }
    return null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

async function readAtMost(response: Response, max: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < max) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => {});
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes.subarray(0, max));
}

/**
 * Checks that the domain reaches this server and records the outcome: `verified` (the first
 * verified domain of a workspace becomes its default) or `failed` with the reason. The check runs
 * outside any transaction; the record is read again before it is written.
 */
export async function verifyLinkDomain(
  db: DbOrTx,
  workspaceId: string,
  id: string,
  options: LinkDomainCheckOptions,
  clock: () => number = Date.now,
): Promise<LinkDomainJson> {
  const before = await findLinkDomain(db, workspaceId, id);
  const failure = await checkLinkDomain(before.domain, before.token, options);
  const now = clock();
  return await db.transaction(async (tx) => {
    const row = await findLinkDomain(tx, workspaceId, id);
    const changes: Partial<LinkDomainRow> = {
      status: failure ? "failed" : "verified",
      failureReason: failure,
      verifiedAt: failure ? row.verifiedAt : now,
      checkedAt: now,
      updatedAt: now,
    };
    if (!failure && !row.isDefault) {
      const hasDefault = await tx
        .select({ id: linkDomains.id })
        .from(linkDomains)
        .where(
          and(
            eq(linkDomains.workspaceId, workspaceId),
            eq(linkDomains.isDefault, true),
            ne(linkDomains.id, row.id),
          ),
        )
        .get();
      if (!hasDefault) changes.isDefault = true;
    }
    await tx.update(linkDomains).set(changes).where(eq(linkDomains.id, row.id)).run();
    return linkDomainJson({ ...row, ...changes });
  });
}

/** True when `token` is a link domain's check token of this server (`/.well-known/outreach/<token>`). */
export async function isLinkDomainToken(db: DbOrTx, token: string): Promise<boolean> {
  if (!/^[0-9A-Za-z]{32}$/.test(token)) return false;
  return (
    (await db.select({ id: linkDomains.id }).from(linkDomains).where(eq(linkDomains.token, token)).get()) !==
    undefined
  );
}

/**
 * A `link_domain_id` given in a body: null, or a verified link domain of the workspace; anything
 * else (unknown, malformed, another workspace's, pending or failed) → 422
 * `<field> is not a verified link domain`.
 */
export async function checkLinkDomainReference(
  db: DbOrTx,
  workspaceId: string,
  id: string | null | undefined,
  field = "link_domain_id",
): Promise<void> {
  if (id === null || id === undefined) return;
  const row = typeof id === "string" ? await workspaceRow(db, linkDomains, workspaceId, id) : undefined;
  if (row?.status !== "verified") throw invalid(`${field} is not a verified link domain`);
}

/**
 * The base URL of a workspace's tracked links at this moment: the first of `named` that is a
 * verified domain of the workspace, else its verified default, else `fallback` (PUBLIC_URL). A
 * named domain that was deleted or failed a later check falls back the same way.
 */
export async function linkBaseUrl(
  db: DbOrTx,
  workspaceId: string,
  named: readonly (string | null | undefined)[],
  fallback: string,
): Promise<string> {
  const ids = named.filter((id): id is string => typeof id === "string" && id !== "");
  const rows = await db
    .select({ id: linkDomains.id, domain: linkDomains.domain, isDefault: linkDomains.isDefault })
    .from(linkDomains)
    .where(
      and(
        eq(linkDomains.workspaceId, workspaceId),
        LINK_DOMAIN_IS_VERIFIED,
        ids.length > 0 ? or(LINK_DOMAIN_IS_DEFAULT, inJsonList(linkDomains.id, ids)) : LINK_DOMAIN_IS_DEFAULT,
      ),
    )
    .all();
  for (const id of ids) {
    const row = rows.find((r) => r.id === id);
    if (row) return `https://${row.domain}`;
  }
  const fallbackRow = rows.find((r) => r.isDefault);
  return fallbackRow ? `https://${fallbackRow.domain}` : fallback;
}

/** `https://<any host>/r/<code>`: a tracked link as it may appear in a text an agent or flow sends. */
const TRACKED_LINK_RE = /\bhttps?:\/\/[a-z0-9.-]+(?::\d+)?\/r\/([0-9A-Za-z]{6,16})\b/gi;

/**
 * Puts the workspace's tracked links found in `body` (an offer's `tracking_url` in an agent's
 * knowledge or a flow's text, on whichever host it was copied from) on `base`, keeping their codes.
 * Links of other workspaces and other URLs are left as they are.
 */
export async function brandTrackedLinks(
  db: DbOrTx,
  workspaceId: string,
  body: string,
  base: string,
): Promise<string> {
  const codes = [...body.matchAll(TRACKED_LINK_RE)].map((m) => m[1]);
  if (codes.length === 0) return body;
  const own = new Set(
    (
      await db
        .select({ code: trackedLinks.code })
        .from(trackedLinks)
        .where(and(eq(trackedLinks.workspaceId, workspaceId), inJsonList(trackedLinks.code, codes)))
        .all()
    ).map((row) => row.code),
  );
  return body.replace(TRACKED_LINK_RE, (link, code: string) => (own.has(code) ? `${base}/r/${code}` : link));
}
