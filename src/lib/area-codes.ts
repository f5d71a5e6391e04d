import { AREA_CODE_ZONES_DATA } from "./area-codes.data";

let table: Map<string, string> | null = null;

function load(): Map<string, string> {
  if (table) return table;
  table = new Map();
  for (const line of AREA_CODE_ZONES_DATA.split("\n")) {
    const [code, zone] = line.trim().split(/\s+/);
    if (code && zone) table.set(code, zone);
  }
  return table;
}

/** IANA time zone of a US/CA (NANP) area code, or null when unknown. */
export function timezoneForAreaCode(areaCode: string): string | null {
  return load().get(areaCode) ?? null;
}

/** IANA time zone of an E.164 NANP number from its area code, or null. */
export function timezoneForPhone(e164: string): string | null {
  if (!e164.startsWith("+1") || e164.length !== 12) return null;
  return timezoneForAreaCode(e164.slice(2, 5));
}

/** Every area code of the table with its main zone (e.g. for an SQL CASE over area codes). */
export function areaCodeMainZones(): [areaCode: string, zone: string][] {
  return [...load()];
}
