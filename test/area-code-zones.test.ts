// src/lib/area-codes.data.ts + area-code-regions.data.ts against an independent public source: the +1
// entries of Google libphonenumber's time zone map, vendored in test/fixtures/area-code-zones/ with its
// licence (refresh: bun scripts/refresh-area-codes.ts). Every zone the source lists for an area code (or
// for any exchange under it) must be one the send-time engine checks; every zone we add beyond it is an
// exception below, with its reason (failing closed: an extra zone only delays a send).
import { describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decideSend, localTimeFor } from "../src/compliance";
import { timezoneForAreaCode } from "../src/lib/area-codes";
import { AREA_CODE_ZONES_DATA } from "../src/lib/area-codes.data";

const SOURCE = join(import.meta.dir, "fixtures/area-code-zones/libphonenumber-nanp-timezones.txt");

/** Area code → every zone the source lists for it or for an exchange under it. */
function sourceZones(): Map<string, Set<string>> {
  const zones = new Map<string, Set<string>>();
  for (const line of readFileSync(SOURCE, "utf8").split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const [prefix, list] = line.split("|") as [string, string];
    const code = prefix.slice(1, 4);
    const set = zones.get(code) ?? new Set<string>();
    for (const zone of list.split("&")) set.add(zone);
    zones.set(code, set);
  }
  return zones;
}

/** Area codes we know that the source does not (assigned after it was made), with NANPA's word. */
const NOT_IN_SOURCE: Record<string, string> = {
  "624": "NANPA: overlay of 716 (Buffalo, New York) since 2025: Eastern",
  "861": "NANPA: overlay of 815/779 (northern Illinois) since 2025: Central",
};

/** Zones we check beyond the source's (by offsets over the year), each with its reason. */
const EXTRA_ZONES: Record<string, string> = {
  "236": "overlay of 250/604: 250 spans the Kootenays (Mountain) and the Peace River (MST all year)",
  "250":
    "the Peace River region (Dawson Creek, Fort St. John) keeps MST all year (tzdata America/Dawson_Creek)",
  "257": "overlay of 250/604/778/236/672: as 250",
  "672": "overlay of 250/604/778/236: as 250",
  "306": "Lloydminster keeps Alberta time (tzdata America/Edmonton covers it)",
  "639": "overlay of 306: as 306",
  "474": "overlay of 306/639: as 306 (and the source's Central time with DST is kept too)",
  "334": "Phenix City and the Alabama side of Columbus, Georgia keep Eastern time by custom",
  "364": "overlay of 270 (western Kentucky), which spans Central and Eastern (49 CFR 71.5)",
  "930": "overlay of 812 (southern Indiana), which spans Central and Eastern",
  "931":
    "Middle Tennessee: 931 reaches counties on the Central/Eastern line of the Cumberland Plateau (49 CFR 71.6)",
  "432": "Culberson County (Van Horn), Texas, is in the Mountain zone (49 CFR 71.9)",
  "448":
    "overlay of 850 (Florida panhandle): Eastern and Central like 850, though the source lists Eastern only",
  "689": "overlay of 407/321 (Orlando, Eastern, as NANPA places it); the source's Central time is kept too",
  "458": "overlay of 541: Malheur County, Oregon, is Mountain",
  "367": "overlay of 418/581: the Magdalen Islands keep Atlantic time",
  "581": "overlay of 418: the Magdalen Islands keep Atlantic time",
  "879": "overlay of 709: Labrador's Atlantic-time part keeps DST (tzdata America/Goose_Bay ~ Halifax)",
};

/** The year the comparison runs over: every half hour. */
const FROM = Date.UTC(2026, 0, 1);
const HALF_HOUR = 30 * 60_000;
const STEPS = (365 * 24 * 60 * 60_000) / HALF_HOUR;

const offsetsCache = new Map<string, string>();
/** A zone's UTC offsets at every half hour of the year, as one string (equal strings: the same clock). */
function offsetsOf(zone: string): string {
  let offsets = offsetsCache.get(zone);
  if (offsets) return offsets;
  const format = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" });
  const parts: string[] = [];
  let last = "";
  for (let step = 0; step < STEPS; step += 2) {
    const name =
      format.formatToParts(FROM + step * HALF_HOUR).find((p) => p.type === "timeZoneName")?.value ?? "";
    if (name !== last) parts.push(`${step}:${name}`);
    last = name;
  }
  offsets = parts.join(",");
  offsetsCache.set(zone, offsets);
  return offsets;
}

const clocks = (zones: Iterable<string>) => new Set([...zones].map(offsetsOf));
const ourZones = (code: string) => localTimeFor(`+1${code}5550100`, null).zones;
const source = sourceZones();
const ours = AREA_CODE_ZONES_DATA.trim()
  .split("\n")
  .map((line) => line.split(/\s+/)[0] as string);

describe("area-code zones against libphonenumber's time zone map", () => {
  it("know every +1 area code of the source", () => {
    const missing = [...source.keys()].filter((code) => timezoneForAreaCode(code) === null);
    expect(missing).toEqual([]);
  });

  it("list the area codes the source does not know, with a reason", () => {
    const unknown = ours.filter((code) => !source.has(code)).sort();
    expect(unknown).toEqual(Object.keys(NOT_IN_SOURCE).sort());
  });

  it("check every zone the source lists for an area code or its exchanges", () => {
    const holes: string[] = [];
    for (const [code, zones] of source) {
      const checked = clocks(ourZones(code));
      for (const zone of zones) if (!checked.has(offsetsOf(zone))) holes.push(`${code}: ${zone}`);
    }
    expect(holes).toEqual([]);
  });

  it("add zones beyond the source only where an exception says why", () => {
    const extra: string[] = [];
    for (const [code, zones] of source) {
      const theirs = clocks(zones);
      if ([...clocks(ourZones(code))].some((clock) => !theirs.has(clock))) extra.push(code);
    }
    expect(extra.sort()).toEqual(Object.keys(EXTRA_ZONES).sort());
  });

  it("show the area code's main zone among the zones it checks", () => {
    const wrong = ours.filter((code) => !ourZones(code).includes(timezoneForAreaCode(code) as string));
    expect(wrong).toEqual([]);
  });

  it("span the zones the issue lists for the split US area codes (and 448 is Eastern and Central)", () => {
    const split =
      "208 219 270 308 334 364 423 432 448 458 541 574 605 606 620 701 775 785 812 850 906 907 928 930 931 986";
    const single = split.split(" ").filter((code) => clocks(ourZones(code)).size < 2);
    expect(single).toEqual([]);
    expect(clocks(ourZones("448"))).toEqual(clocks(["America/New_York", "America/Chicago"]));
  });

  it("never let the engine send while any of the source's zones is outside 8:00–21:00 (every 2 h of a year)", () => {
    const wrong: string[] = [];
    const hourIn = new Map<string, Intl.DateTimeFormat>();
    const localHour = (zone: string, at: number) => {
      let format = hourIn.get(zone);
      if (!format) {
        format = new Intl.DateTimeFormat("en-US", { timeZone: zone, hour: "numeric", hourCycle: "h23" });
        hourIn.set(zone, format);
      }
      return Number(format.format(at));
    };
    for (const [code, zones] of source) {
      for (let step = 0; step < STEPS && wrong.length < 5; step += 4) {
        const at = FROM + step * HALF_HOUR;
        const decision = decideSend(
          {
            channel: "sms",
            kind: "marketing",
            phone: `+1${code}5550100`,
            timezone: null,
            suppressed: false,
            opted_out: false,
            state_rules: false,
          },
          at,
        );
        const open = [...zones].every((zone) => {
          const hour = localHour(zone, at);
          return hour >= 8 && hour < 21;
        });
        if (decision.action === "send" && !open) wrong.push(`${code} at ${new Date(at).toISOString()}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 60_000);
});
