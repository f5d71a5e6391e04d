/**
 * Content lint for marketing messages (API.md §6.1): warnings, never blocking. Rules from the
 * CTIA Messaging Principles and Best Practices (2023) and carrier filtering practice.
 */
import { smsShape } from "../lib/sms-encoding";

export type LintCode =
  | "no_opt_out_language"
  | "public_url_shortener"
  | "unknown_merge_field"
  | "many_segments"
  | "shaft_content";

export interface LintWarning {
  code: LintCode;
  message: string;
}

export interface LintOptions {
  /** The body is the first marketing message a contact gets (it must carry opt-out wording). */
  firstMarketingMessage?: boolean;
  /** Segments the merged message takes; computed from the body when left out. */
  segmentCount?: number;
  /** Merge field names that exist; default DEFAULT_MERGE_FIELDS. `fields.<key>` is always accepted. */
  knownMergeFields?: readonly string[];
}

/** Contact columns and `offer_url`: the merge fields a campaign body may use besides `fields.<key>`. */
export const DEFAULT_MERGE_FIELDS: readonly string[] = [
  "first_name",
  "last_name",
  "email",
  "phone_number",
  "external_id",
  "offer_url",
];

/**
 * Public shorteners carriers filter (Twilio error 30963 for campaigns that use them): the content
 * lint warns of them, and a branded link domain may not be one (or under one).
 */
export const PUBLIC_URL_SHORTENERS: readonly string[] = [
  "bit.ly",
  "bitly.com",
  "j.mp",
  "tinyurl.com",
  "t.co",
  "goo.gl",
  "ow.ly",
  "is.gd",
  "buff.ly",
  "rebrand.ly",
  "cutt.ly",
  "shorturl.at",
  "tiny.cc",
  "rb.gy",
  "t.ly",
  "bl.ink",
  "short.io",
  "tr.im",
  "v.gd",
  "lnkd.in",
];

/**
 * SHAFT (sex, hate, alcohol, firearms, tobacco): a short list of plain words per category that
 * carriers' age-gating rules are about, matched as whole words. A hint for a person to look at,
 * not a classifier: it misses euphemisms and flags innocent uses ("wine-red dress").
 */
export const SHAFT_WORDS: Readonly<
  Record<"sex" | "hate" | "alcohol" | "firearms" | "tobacco", readonly string[]>
> = {
  sex: ["sex", "sexy", "porn", "xxx", "nude", "escort", "erotic", "adult content"],
  hate: ["nazi", "white power", "white supremacy", "kkk", "racial purity", "ethnic cleansing"],
  alcohol: [
    "alcohol",
    "beer",
    "wine",
    "vodka",
    "whiskey",
    "whisky",
    "tequila",
    "liquor",
    "cocktail",
    "rum",
    "gin",
  ],
  firearms: ["gun", "firearm", "rifle", "pistol", "handgun", "shotgun", "ammo", "ammunition"],
  tobacco: ["tobacco", "cigarette", "cigar", "vape", "vaping", "e-cig", "nicotine"],
};

const OPT_OUT_WORDING = /\b(stop|unsubscribe|opt[\s-]?out)\b/i;
const MERGE_FIELD = /\{\{\s*([^{}|]*?)\s*(?:\|[^{}]*)?\}\}/g;
const SHORTENER = new RegExp(
  `(?:^|[^\\w.-])(?:https?://)?(?:www\\.)?(${PUBLIC_URL_SHORTENERS.map((host) => host.replace(".", "\\.")).join("|")})(?=$|[/?#:\\s),!;'"]|\\.(?:\\s|$))`,
  "gi",
);
const SHAFT = Object.entries(SHAFT_WORDS).map(([category, words]) => ({
  category,
  pattern: new RegExp(
    // Whole words; a plural "s" is allowed ("cocktails", "rifles").
    `(?<![\\w-])((?:${words.map((w) => w.replace(/[-\s]/g, "[-\\s]")).join("|")})s?)(?![\\w-])`,
    "i",
  ),
}));

/** Warnings for a message body; an empty list when nothing is worth a look. */
export function lintContent(body: string, options: LintOptions = {}): LintWarning[] {
  const warnings: LintWarning[] = [];

  if (options.firstMarketingMessage && !OPT_OUT_WORDING.test(body)) {
    warnings.push({
      code: "no_opt_out_language",
      message:
        'The first marketing message to a contact should say how to opt out (e.g. "Reply STOP to opt out").',
    });
  }

  const shorteners = new Set<string>();
  for (const match of body.matchAll(SHORTENER)) shorteners.add(match[1].toLowerCase());
  for (const host of shorteners) {
    warnings.push({
      code: "public_url_shortener",
      message: `${host} is a public URL shortener; carriers filter messages that use them (use a branded domain or {{offer_url}}).`,
    });
  }

  const known = new Set(options.knownMergeFields ?? DEFAULT_MERGE_FIELDS);
  const unknown = new Set<string>();
  for (const match of body.matchAll(MERGE_FIELD)) {
    const name = match[1];
    if (known.has(name) || /^fields\.[^\s.]+$/.test(name)) continue;
    unknown.add(name);
  }
  for (const name of unknown) {
    warnings.push({ code: "unknown_merge_field", message: `Unknown merge field {{${name}}}.` });
  }

  const segments = options.segmentCount ?? smsShape(body).segments;
  if (segments > 3) {
    warnings.push({
      code: "many_segments",
      message: `The message takes ${segments} SMS segments (more than 3): each is billed, and long messages are filtered more often.`,
    });
  }

  const found = SHAFT.flatMap(({ category, pattern }) => {
    const match = body.match(pattern);
    return match ? [`${category} ("${match[1]}")`] : [];
  });
  if (found.length > 0) {
    warnings.push({
      code: "shaft_content",
      message: `Mentions ${found.join(", ")}: carriers refuse SHAFT content (sex, hate, alcohol, firearms, tobacco) without age gating.`,
    });
  }
  return warnings;
}
