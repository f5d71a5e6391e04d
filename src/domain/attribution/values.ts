import { invalid } from "../../lib/errors";

/** The largest money value accepted (a conversion's or an offer's `value`). */
export const MAX_VALUE = 1_000_000_000;

/** A finite number between 0 and MAX_VALUE (NaN, Infinity, negative and huge are refused). */
export function checkValue(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_VALUE)
    throw invalid(`${field} must be a number between 0 and ${MAX_VALUE}`);
  return value;
}

/** Three letters (ISO 4217), answered upper-cased. */
export function checkCurrency(value: unknown, field: string): string {
  if (typeof value !== "string" || !/^[A-Za-z]{3}$/.test(value))
    throw invalid(`${field} must be a three-letter currency code (ISO 4217)`);
  return value.toUpperCase();
}

/** `purchase`, `lead`, `action`, or a custom name (API.md §6.5). */
export const EVENT_NAME_RE = /^[a-z][a-z0-9_.-]{0,63}$/;

export function checkEventName(value: unknown, field = "event"): string {
  if (typeof value !== "string" || !EVENT_NAME_RE.test(value))
    throw invalid(
      `${field} must be purchase, lead, action or a custom name of lowercase letters, digits and _ . - (max 64, starting with a letter)`,
    );
  return value;
}
