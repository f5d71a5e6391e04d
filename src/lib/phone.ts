import { parsePhoneNumberFromString } from "libphonenumber-js";

/**
 * Normalises a phone number to E.164 (default region US, so 10- and 11-digit US numbers work).
 * Returns null when the input cannot be a phone number. Numbers of a plausible length are
 * accepted even if their area code is unassigned (555 test numbers are common in staging).
 */
export function normalizePhone(input: unknown): string | null {
  if (typeof input !== "string") return null;
  // Already E.164 with +1 and ten digits: libphonenumber answers the input itself (possible length,
  // no prefix to strip), so it is not parsed (test/phone.test.ts compares the two).
  if (NANP_E164.test(input)) return input;
  // Parsing costs tens of µs; the same numbers come back again and again (sends, inbound, imports).
  const known = normalized.get(input);
  if (known !== undefined) return known;
  const result = parsePhone(input);
  if (normalized.size >= NORMALIZED_CACHE_SIZE) normalized.clear();
  normalized.set(input, result);
  return result;
}

/**
 * Parsed numbers kept (emptied when full). Each entry is two short strings, ~150 bytes with the
 * map's own share: 10,000 is ~1.5 MB, enough for the numbers a busy minute sees again.
 */
export const NORMALIZED_CACHE_SIZE = 10_000;
const NANP_E164 = /^\+1\d{10}$/;
const normalized = new Map<string, string | null>();

function parsePhone(input: string): string | null {
  const trimmed = input.trim();
  if (!trimmed || trimmed.length > 32 || /[a-z]/i.test(trimmed.replace(/^tel:/i, ""))) return null;
  const parsed = parsePhoneNumberFromString(trimmed.replace(/^tel:/i, ""), "US");
  if (!parsed?.isPossible()) return null;
  return parsed.number;
}

/** The three-digit area code of a NANP (+1) number, or null. */
export function areaCodeOf(e164: string): string | null {
  return e164.startsWith("+1") && e164.length === 12 ? e164.slice(2, 5) : null;
}
