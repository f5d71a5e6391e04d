/**
 * 10DLC and short-code registration (API.md §3 "10DLC", "Short codes"; compliance-rules.md
 * "Content"): input validation in the registry's terms, a preflight of what carriers reject before
 * a fee is paid, and the simulated registry's deterministic review. Pure: no database, no clock;
 * plain data in, plain data out. Validation throws `invalid` (422) naming the field by its path.
 */
import { createHash } from "node:crypto";
import { MAX_COUNT } from "../lib/counts";
import { invalid } from "../lib/errors";
import { normalizePhone } from "../lib/phone";
import { lintContent } from "./lint";

// ---------------------------------------------------------------------------------------------
// Value sets

export const ENTITY_TYPES = [
  "PRIVATE_PROFIT",
  "PUBLIC_PROFIT",
  "NON_PROFIT",
  "GOVERNMENT",
  "SOLE_PROPRIETOR",
] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/** The Campaign Registry's verticals. */
export const VERTICALS = [
  "AGRICULTURE",
  "COMMUNICATION",
  "CONSTRUCTION",
  "EDUCATION",
  "ENERGY",
  "ENTERTAINMENT",
  "FINANCIAL",
  "GAMBLING",
  "GOVERNMENT",
  "HEALTHCARE",
  "HOSPITALITY",
  "HUMAN_RESOURCES",
  "INSURANCE",
  "LEGAL",
  "MANUFACTURING",
  "NGO",
  "POLITICAL",
  "POSTAL",
  "PROFESSIONAL",
  "REAL_ESTATE",
  "RETAIL",
  "TECHNOLOGY",
  "TRANSPORTATION",
] as const;
export type Vertical = (typeof VERTICALS)[number];

export const USE_CASES = [
  "2FA",
  "ACCOUNT_NOTIFICATION",
  "CUSTOMER_CARE",
  "DELIVERY_NOTIFICATION",
  "FRAUD_ALERT",
  "HIGHER_EDUCATION",
  "LOW_VOLUME",
  "MARKETING",
  "MIXED",
  "POLLING_VOTING",
  "PUBLIC_SERVICE_ANNOUNCEMENT",
  "SECURITY_ALERT",
  "CHARITY",
  "POLITICAL",
  "SWEEPSTAKES",
  "AGENTS_FRANCHISES",
  "K12_EDUCATION",
  "SOCIAL",
] as const;
export type UseCase = (typeof USE_CASES)[number];

export const SHORT_CODE_TYPES = ["random", "vanity"] as const;
export type ShortCodeType = (typeof SHORT_CODE_TYPES)[number];

/** The 50 states, DC and the inhabited territories: the `address.state` a US brand may have. */
// biome-ignore format: a table
export const US_STATE_CODES: readonly string[] = [
  "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY",
  "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND",
  "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY", "DC",
  "PR", "VI", "GU", "AS", "MP",
];

/** Vanity codes the simulated registry treats as leased by someone else. */
export const LEASED_VANITY_CODES: readonly string[] = ["12345", "11111", "55555"];

// ---------------------------------------------------------------------------------------------
// Types

export interface BrandAddress {
  street: string;
  city: string;
  state: string;
  postal_code: string;
  country: "US";
}

export interface BrandInput {
  legal_name: string;
  /** "Doing business as": optional; preflight accepts it as the brand's name in samples. */
  dba_name?: string | null;
  /** `12-3456789`; null for a SOLE_PROPRIETOR brand. */
  ein: string | null;
  entity_type: EntityType;
  vertical: Vertical;
  website?: string | null;
  email: string;
  /** E.164 (+1…), normalised. */
  phone: string;
  address: BrandAddress;
}

export interface TendlcCampaignInput {
  brand_id: string;
  use_case: UseCase;
  description: string;
  message_flow: string;
  sample_messages: string[];
  help_message: string;
  optout_message: string;
  has_embedded_links: boolean;
  has_embedded_phone: boolean;
  number_ids: string[];
}

export interface ShortCodeRequestInput {
  type: ShortCodeType;
  vanity_code?: string | null;
  use_case: UseCase;
  monthly_volume: number;
  sample_messages: string[];
}

export interface PreflightIssue {
  /** Path of the field at fault: `sample_messages[1]`, `has_embedded_links`, `use_case`. */
  field: string;
  code: PreflightCode;
  message: string;
  severity: "error" | "warning";
}

export type PreflightCode =
  | "brand_name_missing"
  | "opt_out_missing"
  | "public_url_shortener"
  | "embedded_link_mismatch"
  | "embedded_phone_mismatch"
  | "shaft_content"
  | "use_case_mismatch";

export type BrandReviewStatus = "VERIFIED" | "UNVERIFIED" | "FAILED";

// ---------------------------------------------------------------------------------------------
// Field helpers

type Obj = Record<string, unknown>;

function asObject(input: unknown, field: string): Obj {
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    throw invalid(`${field} must be an object`);
  }
  return input as Obj;
}

const has = (o: Obj, key: string) => o[key] !== undefined;
const isBlank = (v: unknown) => v === undefined || v === null || (typeof v === "string" && v.trim() === "");

/** A required string, trimmed, `min`–`max` characters. */
function text(value: unknown, field: string, min = 1, max = 255): string {
  if (value === undefined || value === null) throw invalid(`${field} is required`);
  if (typeof value !== "string") throw invalid(`${field} must be a string`);
  const trimmed = value.trim();
  if (trimmed === "") throw invalid(`${field} is required`);
  if (trimmed.length < min) throw invalid(`${field} must be at least ${min} characters`);
  if (trimmed.length > max) throw invalid(`${field} is too long (max ${max})`);
  return trimmed;
}

function oneOf<T extends string>(value: unknown, field: string, set: readonly T[]): T {
  if (value === undefined || value === null || value === "") throw invalid(`${field} is required`);
  if (typeof value !== "string" || !(set as readonly string[]).includes(value)) {
    throw invalid(`${field} must be one of ${set.join(", ")}`);
  }
  return value as T;
}

function bool(value: unknown, field: string): boolean {
  if (value === undefined || value === null) throw invalid(`${field} is required`);
  if (typeof value !== "boolean") throw invalid(`${field} must be a boolean`);
  return value;
}

function stringArray(value: unknown, field: string): unknown[] {
  if (value === undefined || value === null) throw invalid(`${field} is required`);
  if (!Array.isArray(value)) throw invalid(`${field} must be an array of strings`);
  return value;
}

const EIN = /^\d{2}-\d{7}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const ZIP = /^\d{5}(?:-\d{4})?$/;

// ---------------------------------------------------------------------------------------------
// Brand

/**
 * Validates a brand (`POST /v1/10dlc/brands`) and returns it cleaned: strings trimmed, `phone`
 * E.164, `state`/`country` upper case, `ein` null for a sole proprietor. With `partial` (PATCH)
 * only the given fields are checked (each fully) and returned; the EIN/entity-type rule is checked
 * when both are given, so check the merged brand again (`checkBrand({...stored, ...patch})`).
 */
export function checkBrand(input: unknown, partial?: false): BrandInput;
export function checkBrand(input: unknown, partial: true): Partial<BrandInput>;
export function checkBrand(input: unknown, partial?: boolean): Partial<BrandInput>;
export function checkBrand(input: unknown, partial = false): Partial<BrandInput> {
  const o = asObject(input, "body");
  const out: Partial<BrandInput> = {};
  const want = (key: string) => !partial || has(o, key);

  if (want("legal_name")) out.legal_name = text(o.legal_name, "legal_name");
  if (has(o, "dba_name")) out.dba_name = isBlank(o.dba_name) ? null : text(o.dba_name, "dba_name");

  if (want("entity_type")) out.entity_type = oneOf(o.entity_type, "entity_type", ENTITY_TYPES);
  if (want("ein")) {
    const soleProprietor = out.entity_type === "SOLE_PROPRIETOR";
    if (isBlank(o.ein)) {
      // Sole proprietors have no EIN; for the others it is required (unknown type in a PATCH: later).
      if (!soleProprietor && (!partial || out.entity_type !== undefined)) throw invalid("ein is required");
      out.ein = null;
    } else {
      if (soleProprietor) throw invalid("ein must be empty for a SOLE_PROPRIETOR brand");
      if (typeof o.ein !== "string" || !EIN.test(o.ein.trim()))
        throw invalid("ein must look like 12-3456789");
      out.ein = o.ein.trim();
    }
  }

  if (want("vertical")) out.vertical = oneOf(o.vertical, "vertical", VERTICALS);

  if (has(o, "website")) out.website = isBlank(o.website) ? null : checkWebsite(o.website);

  if (want("email")) {
    const email = text(o.email, "email", 1, 254);
    if (!EMAIL.test(email)) throw invalid("email must be a valid email address");
    out.email = email;
  }

  if (want("phone")) {
    if (isBlank(o.phone)) throw invalid("phone is required");
    const e164 = normalizePhone(o.phone);
    if (!e164) throw invalid("phone must be a valid phone number");
    if (!/^\+1\d{10}$/.test(e164)) throw invalid("phone must be a US or Canadian phone number");
    out.phone = e164;
  }

  if (want("address")) out.address = checkAddress(o.address);
  return out;
}

function checkWebsite(value: unknown): string {
  const message = "website must be an absolute http(s) URL";
  if (typeof value !== "string") throw invalid(message);
  const trimmed = value.trim();
  if (trimmed.length > 2048) throw invalid("website is too long (max 2048)");
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw invalid(message);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname.includes(".")) {
    throw invalid(message);
  }
  return trimmed;
}

function checkAddress(value: unknown): BrandAddress {
  if (value === undefined || value === null) throw invalid("address is required");
  const a = asObject(value, "address");
  const street = text(a.street, "address.street");
  const city = text(a.city, "address.city", 1, 100);
  const state = text(a.state, "address.state").toUpperCase();
  if (!US_STATE_CODES.includes(state)) throw invalid("address.state must be a 2-letter US state code");
  const postal = text(a.postal_code, "address.postal_code");
  if (!ZIP.test(postal)) throw invalid("address.postal_code must be a US ZIP code");
  if (isBlank(a.country)) throw invalid("address.country is required");
  if (typeof a.country !== "string" || a.country.trim().toUpperCase() !== "US") {
    throw invalid("address.country must be US");
  }
  return { street, city, state, postal_code: postal, country: "US" };
}

// ---------------------------------------------------------------------------------------------
// 10DLC campaign

/** How consent is collected: opt-in, consent, sign up, subscribe, keyword, checkbox, form, "text JOIN to". */
const CONSENT =
  /\b(?:opt(?:s|ed|ing)?[\s-]?in|consent\w*|sign(?:s|ed|ing)?[\s-]?up|signup|subscrib\w*|keywords?|check[\s-]?box(?:es)?|check(?:s|ed|ing)? (?:a|the) box|forms?)\b|\btext(?:s|ed|ing)?\b[^.\n]{0,60}?\bto join\b/i;
/** "Text JOIN to 12345": a keyword in capitals (case-sensitive, so "text messages to" is not one). */
const CONSENT_KEYWORD = /\b(?:[Tt]ext|[Rr]eply|[Ss]end)(?:s|ed|ing)?\s+["'“]?[A-Z]{2,}["'”]?\s+to\b/;
const CONSENT_MESSAGE =
  'message_flow must describe how consent is collected (e.g. "Customers opt in by texting JOIN to ... or checking a box on ...")';
const HELP_CONTACT = /\b(?:help|support|contact|assistance)\b/i;

/**
 * Validates a 10DLC campaign (`POST /v1/10dlc/campaigns`) and returns it cleaned. `brand_id` and
 * `number_ids` are only shape-checked: their existence is the caller's business. With `partial`
 * (PATCH) only the given fields are checked (each fully) and returned.
 */
export function checkTendlcCampaign(input: unknown, partial?: false): TendlcCampaignInput;
export function checkTendlcCampaign(input: unknown, partial: true): Partial<TendlcCampaignInput>;
export function checkTendlcCampaign(input: unknown, partial?: boolean): Partial<TendlcCampaignInput>;
export function checkTendlcCampaign(input: unknown, partial = false): Partial<TendlcCampaignInput> {
  const o = asObject(input, "body");
  const out: Partial<TendlcCampaignInput> = {};
  const want = (key: string) => !partial || has(o, key);

  if (want("brand_id")) out.brand_id = text(o.brand_id, "brand_id");
  if (want("use_case")) out.use_case = oneOf(o.use_case, "use_case", USE_CASES);
  if (want("description")) out.description = text(o.description, "description", 40, 4096);
  if (want("message_flow")) {
    const flow = text(o.message_flow, "message_flow", 40, 2048);
    if (!CONSENT.test(flow) && !CONSENT_KEYWORD.test(flow)) throw invalid(CONSENT_MESSAGE);
    out.message_flow = flow;
  }
  if (want("sample_messages")) {
    const samples = stringArray(o.sample_messages, "sample_messages");
    if (samples.length < 2) throw invalid("sample_messages must have at least 2 messages");
    if (samples.length > 5) throw invalid("sample_messages must have at most 5 messages");
    out.sample_messages = samples.map((s, i) => text(s, `sample_messages[${i}]`, 20, 1024));
  }
  if (want("help_message")) {
    const help = text(o.help_message, "help_message", 20, 320);
    if (!HELP_CONTACT.test(help) && !PHONE.test(help) && !EMAIL_IN_TEXT.test(help) && !hasLink(help)) {
      throw invalid(
        "help_message must say how to get help (mention HELP, a phone number, an email or a URL)",
      );
    }
    out.help_message = help;
  }
  if (want("optout_message")) {
    const optout = text(o.optout_message, "optout_message", 1, 320);
    if (!/\bstop\b/i.test(optout)) throw invalid("optout_message must mention STOP");
    out.optout_message = optout;
  }
  if (want("has_embedded_links")) out.has_embedded_links = bool(o.has_embedded_links, "has_embedded_links");
  if (want("has_embedded_phone")) out.has_embedded_phone = bool(o.has_embedded_phone, "has_embedded_phone");
  if (want("number_ids")) {
    // Optional on create: no numbers yet is fine.
    const ids =
      o.number_ids === undefined || o.number_ids === null ? [] : stringArray(o.number_ids, "number_ids");
    const clean: string[] = [];
    ids.forEach((id, i) => {
      if (typeof id !== "string" || id.trim() === "") throw invalid(`number_ids[${i}] must be a string`);
      if (!clean.includes(id.trim())) clean.push(id.trim());
    });
    out.number_ids = clean;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Preflight

const EMAIL_IN_TEXT = /[^\s@]+@[^\s@]+\.[a-z]{2,}/i;
/**
 * A URL: http(s)://…, a bare domain (example.com, www.example.com/path: lower-case top-level domain,
 * so "shopping.Reply" is not one), or the `{{offer_url}}` merge field (a tracked link once sent).
 */
const LINKS = [
  /\bhttps?:\/\/\S+/i,
  /(?<![\w@.-])(?:www\.)?(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-z]{2,24}(?![\w-])(?:\/\S*)?/,
  /\{\{\s*offer_url\s*(?:\|[^{}]*)?\}\}/,
];
/** A phone number: 10+ digits, with or without +1 and punctuation ((555) 123-4567, +1 555.123.4567). */
const PHONE = /(?<![\d\w])(?:\+?1[\s.-]?)?\(?\d{3}\)?[\s.-]?\d{3}[\s.-]?\d{4,}(?!\d)/;
const PHONE_ALL = new RegExp(PHONE.source, "g");
const CODE = /(?<!\d)\d{4,8}(?!\d)/;
const MARKETING =
  /\b(?:sales?|discount(?:s|ed)?|deals?|promo(?:s|tion|tions|tional)?|coupons?|limited[\s-]time|buy now|free shipping)\b|\d+\s?% off\b/i;
const NON_MARKETING_USE_CASES: readonly string[] = [
  "2FA",
  "ACCOUNT_NOTIFICATION",
  "DELIVERY_NOTIFICATION",
  "FRAUD_ALERT",
  "SECURITY_ALERT",
  "CUSTOMER_CARE",
];
const COMPANY_SUFFIX = /(?:\s+(?:inc|incorporated|llc|ltd|limited|corp|corporation|co|company))+$/;

const EMAILS_ALL = new RegExp(EMAIL_IN_TEXT.source, "gi");

/** A link on one of `domains` (a workspace's verified link domains), with or without a scheme. */
function ownLinkPatterns(domains: readonly string[]): RegExp[] {
  return domains.map(
    (domain) =>
      new RegExp(
        `(?<![\\w@.-])(?:https?://)?${domain.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&")}(?![\\w-])(?:/\\S*)?`,
        "i",
      ),
  );
}

/**
 * The first link in `body` (email addresses are not links), or null. Links on the workspace's own
 * verified link domains (`ownDomains`) are found whatever their top-level label looks like.
 */
function linkIn(body: string, ownDomains: readonly string[] = []): string | null {
  const withoutEmails = body.replace(EMAILS_ALL, " ");
  for (const pattern of [...ownLinkPatterns(ownDomains), ...LINKS]) {
    const match = withoutEmails.match(pattern);
    if (match) return match[0].replace(/[.,;:!?)]+$/, "");
  }
  return null;
}

const hasLink = (body: string) => linkIn(body) !== null;

/** Lower case, apostrophes and dots dropped ("L.L.C." → "llc"), other punctuation → space. */
function normalizeName(value: string): string {
  return value
    .toLowerCase()
    .replace(/['’.]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** The names a sample may call the brand by: legal name without Inc/LLC/…, and the DBA. */
function brandNames(brand: { legal_name: string; dba_name?: string | null }): string[] {
  const names = new Set<string>();
  for (const name of [brand.legal_name, brand.dba_name]) {
    if (!name) continue;
    const normal = normalizeName(name);
    const bare = normal.replace(COMPANY_SUFFIX, "").trim();
    if (bare) names.add(bare);
    else if (normal) names.add(normal);
  }
  return [...names];
}

const sampleLabel = (i: number) => `Sample message ${i + 1}`;

/**
 * What carriers reject before a fee is paid, per CTIA and Twilio's campaign review (30893 brand
 * name and opt-out in samples, 30963 public shorteners, 30889 undeclared links or phone numbers,
 * SHAFT content, use case vs content). Ordered by field then code; deterministic. `linkDomains`:
 * the workspace's verified branded link domains (API.md §7.5): sample links on them are links the
 * campaign will send, checked against `has_embedded_links` like any other.
 */
export function preflight(
  campaign: Pick<TendlcCampaignInput, "sample_messages" | "has_embedded_links" | "has_embedded_phone"> & {
    use_case: string;
  },
  brand: { legal_name: string; dba_name?: string | null } | null,
  linkDomains: readonly string[] = [],
): PreflightIssue[] {
  const issues: PreflightIssue[] = [];
  const samples = campaign.sample_messages ?? [];
  const names = brand ? brandNames(brand) : [];
  const add = (field: string, code: PreflightCode, severity: PreflightIssue["severity"], message: string) =>
    issues.push({ field, code, message, severity });

  let anyOptOut = false;
  let anyLink = false;
  let anyPhone = false;
  samples.forEach((sample, i) => {
    const field = `sample_messages[${i}]`;
    const lint = lintContent(sample, { firstMarketingMessage: true });
    if (!lint.some((w) => w.code === "no_opt_out_language")) anyOptOut = true;

    if (brand && names.length > 0) {
      const normal = ` ${normalizeName(sample)} `;
      if (!names.some((name) => normal.includes(` ${name} `))) {
        const shown = [brand.legal_name, brand.dba_name].filter(Boolean).join('" or "');
        add(
          field,
          "brand_name_missing",
          "error",
          `${sampleLabel(i)} does not name the brand ("${shown}"): carriers reject samples without the brand name (Twilio 30893).`,
        );
      }
    }

    const shorteners = lint.filter((w) => w.code === "public_url_shortener");
    if (shorteners.length > 0) {
      add(
        field,
        "public_url_shortener",
        "error",
        `${sampleLabel(i)}: ${shorteners.map((w) => w.message).join(" ")} Twilio rejects campaigns that use them (30963).`,
      );
    }

    const shaft = lint.find((w) => w.code === "shaft_content");
    if (shaft) add(field, "shaft_content", "error", `${sampleLabel(i)}: ${shaft.message}`);

    const link = linkIn(sample, linkDomains);
    if (link) {
      anyLink = true;
      if (!campaign.has_embedded_links) {
        add(
          field,
          "embedded_link_mismatch",
          "error",
          `${sampleLabel(i)} contains a link (${link}) but has_embedded_links is false: undeclared links are blocked (Twilio 30889).`,
        );
      }
    }

    const phone = sample.match(PHONE)?.[0];
    if (phone) {
      anyPhone = true;
      if (!campaign.has_embedded_phone) {
        add(
          field,
          "embedded_phone_mismatch",
          "error",
          `${sampleLabel(i)} contains a phone number (${phone.trim()}) but has_embedded_phone is false: undeclared phone numbers are blocked (Twilio 30889).`,
        );
      }
    }
  });

  if (samples.length > 0 && !anyOptOut) {
    add(
      "sample_messages",
      "opt_out_missing",
      "error",
      'No sample message says how to opt out (e.g. "Reply STOP to opt out"): carriers reject campaigns without opt-out wording (Twilio 30893).',
    );
  }
  if (campaign.has_embedded_links && !anyLink) {
    add(
      "has_embedded_links",
      "embedded_link_mismatch",
      "warning",
      "has_embedded_links is true but no sample message contains a link: add one the campaign will send, or set it to false.",
    );
  }
  if (campaign.has_embedded_phone && !anyPhone) {
    add(
      "has_embedded_phone",
      "embedded_phone_mismatch",
      "warning",
      "has_embedded_phone is true but no sample message contains a phone number: add one the campaign will send, or set it to false.",
    );
  }

  if (NON_MARKETING_USE_CASES.includes(campaign.use_case)) {
    const marketing = samples.map((s) => s.match(MARKETING)?.[0]).find((m) => m !== undefined);
    if (marketing) {
      add(
        "use_case",
        "use_case_mismatch",
        "warning",
        `The sample messages read like marketing ("${marketing}") but use_case is ${campaign.use_case}: use MARKETING or MIXED.`,
      );
    }
  }
  if (campaign.use_case === "2FA" && samples.length > 0) {
    const withCode = samples.some((s) => CODE.test(s.replace(PHONE_ALL, " ")));
    if (!withCode) {
      add(
        "use_case",
        "use_case_mismatch",
        "warning",
        "use_case is 2FA but no sample message contains a code (a 4–8 digit number): show the message that carries the code.",
      );
    }
  }

  // Stable sort: by field (sample indexes numerically), then code; ties keep the order above.
  const key = (field: string) => field.replace(/\[(\d+)\]/g, (_, n: string) => `[${n.padStart(6, "0")}]`);
  return issues
    .map((issue, order) => ({ issue, order, field: key(issue.field) }))
    .sort((a, b) =>
      a.field !== b.field
        ? a.field < b.field
          ? -1
          : 1
        : a.issue.code !== b.issue.code
          ? a.issue.code < b.issue.code
            ? -1
            : 1
          : a.order - b.order,
    )
    .map((entry) => entry.issue);
}

/** True when no issue is an error (warnings do not stop a registration). */
export function preflightPassed(issues: readonly PreflightIssue[]): boolean {
  return !issues.some((issue) => issue.severity === "error");
}

// ---------------------------------------------------------------------------------------------
// Short-code requests

/**
 * Validates a short-code request (`POST /v1/short-codes/requests`) and returns it cleaned. With
 * `partial` only the given fields are checked; the type/vanity_code rule when both are given.
 */
export function checkShortCodeRequest(input: unknown, partial?: false): ShortCodeRequestInput;
export function checkShortCodeRequest(input: unknown, partial: true): Partial<ShortCodeRequestInput>;
export function checkShortCodeRequest(input: unknown, partial?: boolean): Partial<ShortCodeRequestInput>;
export function checkShortCodeRequest(input: unknown, partial = false): Partial<ShortCodeRequestInput> {
  const o = asObject(input, "body");
  const out: Partial<ShortCodeRequestInput> = {};
  const want = (key: string) => !partial || has(o, key);

  if (want("type")) out.type = oneOf(o.type, "type", SHORT_CODE_TYPES);
  if (want("vanity_code")) {
    if (isBlank(o.vanity_code)) {
      if (out.type === "vanity") throw invalid("vanity_code is required for a vanity short code");
      out.vanity_code = null;
    } else {
      if (out.type === "random") throw invalid("vanity_code must be empty for a random short code");
      const code = typeof o.vanity_code === "number" ? String(o.vanity_code) : o.vanity_code;
      if (typeof code !== "string" || !/^\d{5,6}$/.test(code.trim())) {
        throw invalid("vanity_code must be 5 or 6 digits");
      }
      out.vanity_code = code.trim();
    }
  }
  if (want("use_case")) out.use_case = oneOf(o.use_case, "use_case", USE_CASES);
  if (want("monthly_volume")) {
    const volume = o.monthly_volume;
    if (volume === undefined || volume === null) throw invalid("monthly_volume is required");
    if (typeof volume !== "number" || !Number.isSafeInteger(volume) || volume < 1 || volume > MAX_COUNT) {
      throw invalid(`monthly_volume must be an integer between 1 and ${MAX_COUNT}`);
    }
    out.monthly_volume = volume;
  }
  if (want("sample_messages")) {
    const samples = stringArray(o.sample_messages, "sample_messages");
    if (samples.length < 1) throw invalid("sample_messages must have at least 1 message");
    if (samples.length > 5) throw invalid("sample_messages must have at most 5 messages");
    out.sample_messages = samples.map((s, i) => text(s, `sample_messages[${i}]`, 1, 1024));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Simulated registry review

/**
 * The simulated registry's brand review. EIN 00-0000000 → FAILED; an EIN starting with 99 → the
 * IRS record does not match; "test" as a word in the legal name → looks like a test registration;
 * otherwise VERIFIED (a sole proprietor without EIN included).
 */
export function reviewBrandSimulated(brand: { legal_name: string; ein?: string | null }): {
  status: BrandReviewStatus;
  reasons: string[];
} {
  const ein = brand.ein?.trim() ?? "";
  if (ein === "00-0000000") return { status: "FAILED", reasons: ["EIN 00-0000000 is not an issued EIN"] };
  const reasons: string[] = [];
  if (ein.startsWith("99")) reasons.push("The legal name does not match the IRS record for this EIN");
  if (/\btest\b/i.test(brand.legal_name)) reasons.push("The brand looks like a test registration");
  return reasons.length > 0 ? { status: "UNVERIFIED", reasons } : { status: "VERIFIED", reasons: [] };
}

/**
 * The simulated registry's campaign review: only a VERIFIED brand may register campaigns, and any
 * preflight error rejects the campaign (reasons: the errors' messages, in preflight order).
 */
export function reviewCampaignSimulated(
  campaign: Parameters<typeof preflight>[0],
  brand: { status: string; legal_name: string; dba_name?: string | null },
): { status: "APPROVED" | "REJECTED"; reasons: string[] } {
  if (brand.status !== "VERIFIED") {
    return {
      status: "REJECTED",
      reasons: [`The brand is ${brand.status}: only verified brands can register campaigns`],
    };
  }
  const errors = preflight(campaign, brand).filter((issue) => issue.severity === "error");
  return errors.length > 0
    ? { status: "REJECTED", reasons: errors.map((issue) => issue.message) }
    : { status: "APPROVED", reasons: [] };
}

/**
 * The simulated carriers' short-code review: samples with a public shortener or SHAFT content are
 * refused, as is a vanity code in LEASED_VANITY_CODES; otherwise approved with the vanity code or,
 * for a random code, a 5-digit code derived from `seed` (first digit 2–9, never a leased one).
 */
export function reviewShortCodeSimulated(
  request: Pick<ShortCodeRequestInput, "type" | "sample_messages"> &
    Partial<Pick<ShortCodeRequestInput, "vanity_code" | "use_case" | "monthly_volume">>,
  seed: string,
): { status: "approved" | "rejected"; reasons: string[]; short_code?: string } {
  const reasons: string[] = [];
  (request.sample_messages ?? []).forEach((sample, i) => {
    for (const warning of lintContent(sample)) {
      if (warning.code === "public_url_shortener" || warning.code === "shaft_content") {
        reasons.push(`${sampleLabel(i)}: ${warning.message}`);
      }
    }
  });
  const vanity = request.type === "vanity" ? (request.vanity_code ?? "").trim() : "";
  if (vanity && LEASED_VANITY_CODES.includes(vanity)) reasons.push(`Vanity code ${vanity} is already leased`);
  if (reasons.length > 0) return { status: "rejected", reasons };
  return { status: "approved", reasons: [], short_code: vanity || randomShortCode(seed) };
}

/** A deterministic 5-digit short code for `seed`: SHA-256 → first digit 2–9, four more digits. */
export function randomShortCode(seed: string): string {
  for (let attempt = 0; ; attempt++) {
    const digest = createHash("sha256")
      .update(attempt === 0 ? seed : `${seed}#${attempt}`)
      .digest();
    const n = digest.readUInt32BE(0);
    const code = `${2 + (n % 8)}${String(Math.floor(n / 8) % 10_000).padStart(4, "0")}`;
    if (!LEASED_VANITY_CODES.includes(code)) return code;
  }
}
