// src/lib/area-code-regions: NANP area code → country, state or province, and the zones of split area codes.
import { describe, expect, it } from "bun:test";
import { areaCodesWithRegion, regionOfAreaCode } from "../src/lib/area-code-regions";
import { AREA_CODE_REGIONS_DATA } from "../src/lib/area-code-regions.data";
import { AREA_CODE_ZONES_DATA } from "../src/lib/area-codes.data";

const codesOf = (data: string) =>
  data
    .trim()
    .split("\n")
    .map((line) => line.split(/\s+/)[0]);

const US = new Set(
  "AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR VI GU MP AS".split(
    " ",
  ),
);
const CA = new Set("AB BC MB NB NL NS PE ON QC SK YT NT NU".split(" "));

describe("area code regions", () => {
  it("cover every area code of the zone table, once, and no other", () => {
    const regionCodes = codesOf(AREA_CODE_REGIONS_DATA);
    expect([...regionCodes].sort()).toEqual(codesOf(AREA_CODE_ZONES_DATA).sort());
    expect(new Set(regionCodes).size).toBe(regionCodes.length);
  });

  it("name real states, provinces and zones", () => {
    for (const code of areaCodesWithRegion()) {
      const region = regionOfAreaCode(code)!;
      if (region.country === "US") expect(region.regions.every((r) => US.has(r))).toBe(true);
      else if (region.country === "CA") expect(region.regions.every((r) => CA.has(r))).toBe(true);
      else expect(region.regions).toEqual([]);
      for (const zone of region.otherZones) {
        expect(() => new Intl.DateTimeFormat("en", { timeZone: zone })).not.toThrow();
      }
    }
  });

  it("reach every state (and DC) and every province", () => {
    const seen = new Set(areaCodesWithRegion().flatMap((code) => regionOfAreaCode(code)!.regions));
    for (const state of US) expect(seen.has(state)).toBe(true);
    for (const province of CA) expect(seen.has(province)).toBe(true);
  });

  const cases: [code: string, country: string, regions: string[], otherZones: string[]][] = [
    ["212", "US", ["NY"], []],
    ["305", "US", ["FL"], []],
    ["850", "US", ["FL"], ["America/Chicago"]],
    ["448", "US", ["FL"], ["America/Chicago"]],
    ["324", "US", ["FL"], []],
    ["975", "US", ["MO"], []],
    ["601", "US", ["MS"], []],
    ["202", "US", ["DC"], []],
    ["787", "US", ["PR"], []],
    ["671", "US", ["GU"], []],
    ["416", "CA", ["ON"], []],
    ["902", "CA", ["NS", "PE"], []],
    [
      "867",
      "CA",
      ["YT", "NT", "NU"],
      ["America/Edmonton", "America/Winnipeg", "America/Toronto", "America/Vancouver"],
    ],
    ["876", "JM", [], []],
    ["809", "DO", [], []],
  ];
  for (const [code, country, regions, otherZones] of cases) {
    it(`${code} → ${country} ${regions.join(",") || "-"}`, () => {
      expect(regionOfAreaCode(code)).toEqual({ country, regions, otherZones });
    });
  }

  it("answers null for an unknown or malformed area code", () => {
    for (const code of ["533", "000", "12", "", "2125"]) expect(regionOfAreaCode(code)).toBeNull();
  });
});
