import { AREA_CODE_REGIONS_DATA } from "./area-code-regions.data";

/** Where the numbers of one NANP area code are. */
export interface AreaCodeRegion {
  /** ISO 3166-1 alpha-2: US (territories included), CA, or the Caribbean/Atlantic country. */
  country: string;
  /** US state or territory / Canadian province or territory codes; empty for a country-wide code. */
  regions: readonly string[];
  /** Zones the area code spans besides its zone in area-codes.data.ts (see the data file). */
  otherZones: readonly string[];
}

let table: Map<string, AreaCodeRegion> | null = null;

function load(): Map<string, AreaCodeRegion> {
  if (table) return table;
  table = new Map();
  for (const line of AREA_CODE_REGIONS_DATA.split("\n")) {
    const [code, country, regions, ...otherZones] = line.trim().split(/\s+/);
    if (!code || !country || !regions) continue;
    table.set(code, {
      country,
      regions: regions === "-" ? [] : regions.split(","),
      otherZones,
    });
  }
  return table;
}

/** Country, state/province and extra zones of a NANP area code ("305"), or null when unknown. */
export function regionOfAreaCode(areaCode: string): AreaCodeRegion | null {
  return load().get(areaCode) ?? null;
}

/** Every area code the table knows (for coverage checks). */
export function areaCodesWithRegion(): string[] {
  return [...load().keys()];
}
