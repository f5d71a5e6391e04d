/**
 * Wall-clock arithmetic in IANA zones, fast enough to be asked per recipient.
 *
 * `Intl.DateTimeFormat` is the only source of zone rules; building one costs tens of µs and
 * `formatToParts` a few µs, so formatters are cached per zone and UTC offsets per zone and
 * 15-minute bucket (every transition of a current zone falls on a quarter hour in UTC, so an
 * offset is constant within a bucket). Wall times are handled as "local milliseconds": the instant
 * plus the zone's offset, read with UTC arithmetic.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
const BUCKET_MS = 15 * MINUTE_MS;
const OFFSET_CACHE_LIMIT = 20_000;

const formatters = new Map<string, Intl.DateTimeFormat | null>();
const offsets = new Map<string, Map<number, number>>();

function formatterFor(zone: string): Intl.DateTimeFormat | null {
  let formatter = formatters.get(zone);
  if (formatter !== undefined) return formatter;
  try {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
  } catch {
    formatter = null;
  }
  formatters.set(zone, formatter);
  return formatter;
}

/** True when the runtime knows `zone` (an IANA name such as "America/Chicago"). */
export function isKnownZone(zone: string): boolean {
  return formatterFor(zone) !== null;
}

function computeOffset(formatter: Intl.DateTimeFormat, at: number): number {
  let year = 0;
  let month = 0;
  let day = 0;
  let hour = 0;
  let minute = 0;
  let second = 0;
  for (const part of formatter.formatToParts(at)) {
    switch (part.type) {
      case "year":
        year = Number(part.value);
        break;
      case "month":
        month = Number(part.value);
        break;
      case "day":
        day = Number(part.value);
        break;
      case "hour":
        hour = Number(part.value);
        break;
      case "minute":
        minute = Number(part.value);
        break;
      case "second":
        second = Number(part.value);
        break;
    }
  }
  return Date.UTC(year, month - 1, day, hour, minute, second) - (at - (((at % 1000) + 1000) % 1000));
}

/** The zone's UTC offset in milliseconds at instant `at` (local = at + offset). Zone must be known. */
export function zoneOffset(zone: string, at: number): number {
  const bucket = Math.floor(at / BUCKET_MS);
  let cache = offsets.get(zone);
  if (!cache) {
    cache = new Map();
    offsets.set(zone, cache);
  }
  let offset = cache.get(bucket);
  if (offset === undefined) {
    const formatter = formatterFor(zone);
    if (!formatter) throw new Error(`Unknown time zone ${zone}`);
    offset = computeOffset(formatter, bucket * BUCKET_MS);
    if (cache.size >= OFFSET_CACHE_LIMIT) cache.clear();
    cache.set(bucket, offset);
  }
  return offset;
}

/** Local milliseconds (wall time read as UTC) of instant `at` in `zone`. */
export function wallTime(zone: string, at: number): number {
  return at + zoneOffset(zone, at);
}

/**
 * The earliest instant, not before `notBefore`, at which the wall clock of `zone` reads `wall`.
 * A wall time inside a spring-forward gap does not exist: the answer is then the end of the gap
 * (the first instant whose wall time is past `wall`). A repeated wall time (fall back) gives its
 * first occurrence that is not before `notBefore`.
 */
export function instantOfWallTime(zone: string, wall: number, notBefore: number): number {
  // Zone transitions are months apart: one day either side brackets at most one of them.
  const offsetBefore = zoneOffset(zone, wall - DAY_MS);
  const offsetAfter = zoneOffset(zone, wall + DAY_MS);
  let best = Number.POSITIVE_INFINITY;
  for (const offset of offsetBefore === offsetAfter ? [offsetBefore] : [offsetBefore, offsetAfter]) {
    const at = wall - offset;
    if (zoneOffset(zone, at) === offset && at >= notBefore && at < best) best = at;
  }
  if (best !== Number.POSITIVE_INFINITY) return best;
  if (offsetAfter > offsetBefore) {
    // Gap: the transition lies between the two readings; find it to the minute.
    let low = wall - offsetAfter; // still on the old offset
    let high = wall - offsetBefore; // already on the new offset
    while (high - low > MINUTE_MS) {
      const middle = low + Math.floor((high - low) / 2 / MINUTE_MS) * MINUTE_MS;
      if (zoneOffset(zone, middle) === offsetAfter) high = middle;
      else low = middle;
    }
    return Math.max(high, notBefore);
  }
  // Every occurrence is before notBefore: the wall clock is already past `wall`.
  return notBefore;
}

/** Calendar date of a day number (days since 1970-01-01), proleptic Gregorian. */
export function dateOfDay(dayNumber: number): { year: number; month: number; day: number } {
  // Howard Hinnant's civil_from_days.
  const z = dayNumber + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** Day number (days since 1970-01-01) of a calendar date; month 1–12. */
export function dayOfDate(year: number, month: number, day: number): number {
  return Math.floor(Date.UTC(year, month - 1, day) / DAY_MS);
}

/** Day of the week of a day number, 0 = Sunday … 6 = Saturday. */
export function weekdayOfDay(dayNumber: number): number {
  return (((dayNumber + 4) % 7) + 7) % 7; // 1970-01-01 was a Thursday
}
