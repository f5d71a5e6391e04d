/** Clock seam: everything that needs "now" asks here, so tests can move time without sleeping. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** ISO 8601 UTC with milliseconds, or null. */
export function toIso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

/**
 * True when `zone` is an IANA time zone name the runtime knows, spelled as the database spells it.
 * The runtime also takes offsets (`+05:00`) and any case (`est`, `america/new_york`); input does not.
 */
export function isTimeZone(zone: string): boolean {
  if (/^[+-]/.test(zone)) return false;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone === zone;
  } catch {
    return false;
  }
}

/** An ISO 8601 date (`2026-11-21`) or date-time (`2026-11-21T21:06`, seconds, fraction and zone optional). */
const ISO_DATE_OR_TIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Whether the calendar date a text starts with (`YYYY-MM-DD`) exists. `Date.parse` rolls
 * `2026-02-30` over to March 2 instead of refusing it. Text of another shape passes: its parser decides.
 */
function calendarDateExists(text: string): boolean {
  const found = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (!found) return true;
  const [year, month, day] = [Number(found[1]), Number(found[2]), Number(found[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * An ISO 8601 date or date-time as epoch milliseconds, or NaN for anything else, including a date
 * that does not exist (`2026-02-30`) and an hour past 24. A date alone is midnight UTC.
 */
export function parseIsoDate(text: string): number {
  if (!ISO_DATE_OR_TIME.test(text) || !calendarDateExists(text)) return Number.NaN;
  return Date.parse(text);
}
