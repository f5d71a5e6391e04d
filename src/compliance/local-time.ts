/**
 * Whose clock a send is read on: the contact's own zone, else its area code's zone(s), else every
 * zone of its country (fail closed: the window must be open in all of them).
 */
import {
  type CountryCode,
  getCountries,
  getCountryCallingCode,
  parsePhoneNumberFromString,
} from "libphonenumber-js";
import { regionOfAreaCode } from "../lib/area-code-regions";
import { timezoneForAreaCode } from "../lib/area-codes";
import { isKnownZone } from "./zone-clock";

/** The zones a send is checked in, and where they came from. */
export interface LocalTime {
  /** The one zone used, or null when the answer is "every one of `zones`". */
  zone: string | null;
  /** Zones the window must be open in (one unless fallback; empty: no local time at all). */
  zones: readonly string[];
  /** contact: its timezone; area_code: its number's area code; country: its number's country; none: nothing known. */
  source: "contact" | "area_code" | "country" | "none";
  /** True when no single zone is known and the window must hold in several (or none is known). */
  fallback: boolean;
}

/**
 * Fallback for a +1 number whose area code is unknown (a new overlay, a non-geographic code):
 * every zone of area-codes.data.ts, each kept here by one zone with the same offsets all year,
 * from Newfoundland (UTC−3:30) to American Samoa (UTC−11). Guam and the Northern Mariana Islands
 * (UTC+10) are left out: on the other side of the date line their 9:00–20:00 shares no minute with
 * Newfoundland's, so keeping them would mean never sending. A test checks that every other zone of
 * the table matches one of these at every hour of two years.
 */
export const NANP_FALLBACK_ZONES: readonly string[] = [
  "America/St_Johns",
  "America/Halifax",
  "America/Puerto_Rico",
  "America/New_York",
  "America/Jamaica",
  "America/Chicago",
  "America/Regina",
  "America/Denver",
  "America/Phoenix",
  "America/Los_Angeles",
  "America/Anchorage",
  "America/Adak",
  "Pacific/Honolulu",
  "Pacific/Pago_Pago",
];

const NONE: LocalTime = Object.freeze({ zone: null, zones: [], source: "none", fallback: true });
const NANP_FALLBACK: LocalTime = Object.freeze({
  zone: null,
  zones: NANP_FALLBACK_ZONES,
  source: "country",
  fallback: true,
});

const byContactZone = new Map<string, LocalTime | null>();
const byAreaCode = new Map<string, LocalTime>();
const byCountry = new Map<string, LocalTime>();

function contactZone(zone: string): LocalTime | null {
  let local = byContactZone.get(zone);
  if (local !== undefined) return local;
  local = isKnownZone(zone)
    ? Object.freeze({ zone, zones: [zone], source: "contact", fallback: false })
    : null;
  if (byContactZone.size > 10_000) byContactZone.clear();
  byContactZone.set(zone, local);
  return local;
}

function areaCodeZones(areaCode: string): LocalTime {
  let local = byAreaCode.get(areaCode);
  if (local) return local;
  const primary = timezoneForAreaCode(areaCode);
  if (!primary) local = NANP_FALLBACK;
  else {
    const zones = [primary, ...(regionOfAreaCode(areaCode)?.otherZones ?? [])].filter(isKnownZone);
    local = Object.freeze({
      zone: zones.length === 1 ? primary : null,
      zones,
      source: "area_code",
      fallback: zones.length !== 1,
    });
  }
  byAreaCode.set(areaCode, local);
  return local;
}

/** Zones of a country (ISO 3166-1 code) from the runtime's ICU data; empty when unknown. */
function zonesOfCountry(country: string): string[] {
  try {
    const locale = new Intl.Locale(`und-${country}`) as Intl.Locale & { getTimeZones?: () => string[] };
    return (locale.getTimeZones?.() ?? []).filter(isKnownZone);
  } catch {
    return [];
  }
}

let countriesByCallingCode: Map<string, CountryCode[]> | null = null;

/** Every country that shares a calling code ("44": GB, GG, IM, JE). */
function countriesOfCallingCode(callingCode: string): CountryCode[] {
  if (!countriesByCallingCode) {
    countriesByCallingCode = new Map();
    for (const country of getCountries()) {
      const code = getCountryCallingCode(country);
      const list = countriesByCallingCode.get(code) ?? [];
      list.push(country);
      countriesByCallingCode.set(code, list);
    }
  }
  return countriesByCallingCode.get(callingCode) ?? [];
}

/** The zones of a country, or of every country sharing a calling code when the country is unclear. */
function countryZones(key: string, countries: readonly string[]): LocalTime {
  let local = byCountry.get(key);
  if (local) return local;
  const zones = [...new Set(countries.flatMap(zonesOfCountry))];
  local =
    zones.length === 0
      ? NONE
      : Object.freeze({
          zone: zones.length === 1 ? zones[0] : null,
          zones,
          source: "country",
          fallback: zones.length !== 1,
        });
  byCountry.set(key, local);
  return local;
}

/** A +1 number's three-digit area code, or null when `phone` is not a NANP number. */
export function nanpAreaCode(phone: string): string | null {
  return phone.length === 12 && phone.charCodeAt(1) === 49 /* "1" */ && phone.charCodeAt(0) === 43 /* "+" */
    ? phone.slice(2, 5)
    : null;
}

/**
 * The zone(s) to read a contact's local time in: `timezone` when it is a zone the runtime knows;
 * else, for a +1 number, its area code's zone plus any other zone the area code spans, or
 * NANP_FALLBACK_ZONES when the area code is unknown; else every zone of the number's country (of
 * every country sharing its calling code when the metadata cannot tell which); else none (no local
 * time, e.g. +800 numbers: a send that needs one waits).
 */
export function localTimeFor(
  phone: string | null | undefined,
  timezone: string | null | undefined,
): LocalTime {
  if (timezone) {
    const local = contactZone(timezone);
    if (local) return local;
  }
  if (!phone) return NONE;
  const areaCode = nanpAreaCode(phone);
  if (areaCode) return areaCodeZones(areaCode);
  if (phone.startsWith("+1")) return NANP_FALLBACK;
  const parsed = parsePhoneNumberFromString(phone);
  if (!parsed) return NONE;
  if (parsed.country) return countryZones(parsed.country, [parsed.country]);
  // A number of a shared calling code whose country the metadata cannot tell (or a range it
  // does not know): every country of the calling code. Non-geographic codes (+800) have none.
  const callingCode = parsed.countryCallingCode;
  return countryZones(`+${callingCode}`, countriesOfCallingCode(callingCode));
}
