// The send-time compliance module (src/compliance): scenario tables over the pure core, clock passed in.
import { describe, expect, it } from "bun:test";
import {
  capLookbackMs,
  decideSend,
  HolidayCalendar,
  holidayIn,
  lintContent,
  localTimeFor,
  NANP_FALLBACK_ZONES,
  nextAllowedAt,
  type SendDecision,
  type SendInput,
  SKIP_REASONS,
  STATE_RULES,
  usFederalHolidays,
} from "../src/compliance";
import { isoDateOfDay, stateLegalHolidays } from "../src/compliance/holidays";
import { dayOfDate } from "../src/compliance/zone-clock";
import { areaCodesWithRegion, regionOfAreaCode } from "../src/lib/area-code-regions";
import { AREA_CODE_ZONES_DATA } from "../src/lib/area-codes.data";

const HOUR = 3_600_000;
const MINUTE = 60_000;

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

/** UTC offset (ms) of `zone` at `at`, straight from Intl (independent of the module's cache). */
function offsetOf(zone: string, at: number): number {
  let formatter = offsetFormatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" });
    offsetFormatters.set(zone, formatter);
  }
  const name = formatter.formatToParts(at).find((part) => part.type === "timeZoneName")!.value;
  const match = name.match(/GMT([+-])(\d\d):(\d\d)/);
  if (!match) return 0;
  return (match[1] === "-" ? -1 : 1) * (Number(match[2]) * HOUR + Number(match[3]) * MINUTE);
}

/** The instant a wall clock in `zone` reads `local` ("2026-06-17T08:00"); not for DST-gap times. */
function at(local: string, zone = "UTC"): number {
  const wall = Date.parse(`${local}Z`);
  const guess = wall - offsetOf(zone, wall);
  return wall - offsetOf(zone, guess);
}

const iso = (ms: number) => new Date(ms).toISOString();

type Shown =
  | { action: "send" }
  | { action: "defer"; until: string; reasons: string[] }
  | { action: "skip"; reason: string };

/** A decision with `until` as ISO text, so tables compare readably. */
function show(decision: SendDecision): Shown {
  return decision.action === "defer" ? { ...decision, until: iso(decision.until) } : decision;
}

const base: SendInput = {
  channel: "sms",
  kind: "marketing",
  phone: "+12125550100",
  timezone: null,
  suppressed: false,
  opted_out: false,
};
const decide = (input: Partial<SendInput>, now: number) => show(decideSend({ ...base, ...input }, now));

// Numbers whose area code lies in one zone only (split area codes are tested on their own).
const NY = "+12125550100";
const FL = "+13055550100";
const LA = "+15045550100";
const AL = "+12055550100";
const UT = "+18015550100";
const TX = "+12145550100";
const MS = "+16015550100";
const GA = "+14045550100";
const HI = "+18085550100";
const ON = "+14165550100";
const UNKNOWN_AREA = "+15335550100"; // 533: a non-geographic NANP code, not in the area code tables

// Wednesday 2026-06-17 (summer time everywhere that keeps it); Sunday is 2026-06-21.
const WEDNESDAY = "2026-06-17";
const THURSDAY = "2026-06-18";
const SUNDAY = "2026-06-21";
const MONDAY = "2026-06-22";

describe("decideSend: every state row on a weekday, both sides of each edge (default quiet hours 21 → 8)", () => {
  // state, a number there, its zone, the window that results (quiet hours 8–21 ∩ the state's hours)
  const rows: [string, string, string, number, number][] = [
    ["FL", "+13055550100", "America/New_York", 8, 20],
    ["OK", "+14055550100", "America/Chicago", 8, 20],
    ["MD", "+14105550100", "America/New_York", 8, 20],
    ["OR", "+15035550100", "America/Los_Angeles", 8, 20],
    ["CT", "+12035550100", "America/New_York", 9, 20],
    ["TX", "+12145550100", "America/Chicago", 9, 21],
    ["VA", "+18045550100", "America/New_York", 8, 21],
    ["LA", "+15045550100", "America/Chicago", 8, 20],
    ["AL", "+12055550100", "America/Chicago", 8, 20],
    ["MS", "+16015550100", "America/Chicago", 9, 20], // 8:00 CST is 9:00 CDT in June
    ["NJ", "+12015550100", "America/New_York", 8, 21],
    ["UT", "+18015550100", "America/Denver", 8, 21],
    ["WA", "+12065550100", "America/Los_Angeles", 8, 20],
    ["RI", "+14015550100", "America/New_York", 9, 18],
    ["KY", "+15025550100", "America/New_York", 10, 21],
    ["MA", "+16175550100", "America/New_York", 8, 20],
    ["MI", "+13135550100", "America/New_York", 9, 21],
    ["MN", "+16125550100", "America/Chicago", 9, 21],
    ["GA", "+14045550100", "America/New_York", 8, 21], // GA's row is voice only: quiet hours decide texts
    ["NV", "+17025550100", "America/Los_Angeles", 8, 21], // NV's row is voice only too
    ["NY", "+12125550100", "America/New_York", 8, 21], // no row
  ];
  const hh = (hour: number, minute = 0) =>
    `${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}`;

  for (const [state, phone, zone, open, close] of rows) {
    const opening = at(`${WEDNESDAY}T${hh(open)}`, zone);
    const closing = at(`${WEDNESDAY}T${hh(close)}`, zone);
    const nextOpening = at(`${THURSDAY}T${hh(open)}`, zone);
    const hasRow = state !== "GA" && state !== "NV" && state !== "NY";

    it(`${state}: defers one minute before ${open}:00 to ${open}:00 and sends at ${open}:00`, () => {
      const reasons = [...(open === 8 ? ["quiet_hours"] : []), ...(hasRow ? [`state_hours:${state}`] : [])];
      expect(decide({ phone }, opening - MINUTE)).toEqual({ action: "defer", until: iso(opening), reasons });
      expect(decide({ phone }, opening)).toEqual({ action: "send" });
    });

    it(`${state}: sends at ${close - 1}:59 and defers at ${close}:00 to the next day's ${open}:00`, () => {
      expect(decide({ phone }, closing - MINUTE)).toEqual({ action: "send" });
      const after = decide({ phone }, closing);
      expect(after).toEqual({ action: "defer", until: iso(nextOpening), reasons: expect.any(Array) });
      const reasons = (after as { reasons: string[] }).reasons;
      expect(reasons[0]).toBe(close === 21 ? "quiet_hours" : `state_hours:${state}`);
    });

    it(`${state}: a contact in the middle of its night is deferred, not sent`, () => {
      const threeAm = at(`${WEDNESDAY}T03:00`, zone);
      expect(decide({ phone }, threeAm)).toMatchObject({ action: "defer", until: iso(opening) });
    });
  }
});

describe("decideSend: Sundays and holidays", () => {
  const cases: [name: string, input: Partial<SendInput>, now: number, expected: Shown][] = [
    [
      "LA on Sunday noon waits for Monday 8:00",
      { phone: LA },
      at(`${SUNDAY}T12:00`, "America/Chicago"),
      { action: "defer", until: iso(at(`${MONDAY}T08:00`, "America/Chicago")), reasons: ["sunday:LA"] },
    ],
    [
      "AL on Saturday 20:30 waits through Sunday",
      { phone: AL },
      at("2026-06-20T20:30", "America/Chicago"),
      {
        action: "defer",
        until: iso(at(`${MONDAY}T08:00`, "America/Chicago")),
        reasons: ["state_hours:AL", "sunday:AL"],
      },
    ],
    [
      "MS on Sunday waits for Monday (9:00 CDT: 8:00 Central Standard Time)",
      { phone: MS },
      at(`${SUNDAY}T15:00`, "America/Chicago"),
      { action: "defer", until: iso(at(`${MONDAY}T09:00`, "America/Chicago")), reasons: ["sunday:MS"] },
    ],
    [
      "UT on Sunday waits for Monday",
      { phone: UT },
      at(`${SUNDAY}T10:00`, "America/Denver"),
      { action: "defer", until: iso(at(`${MONDAY}T08:00`, "America/Denver")), reasons: ["sunday:UT"] },
    ],
    ["FL on Sunday noon sends", { phone: FL }, at(`${SUNDAY}T12:00`, "America/New_York"), { action: "send" }],
    [
      "TX on Sunday 11:59 waits for 12:00",
      { phone: TX },
      at(`${SUNDAY}T11:59`, "America/Chicago"),
      { action: "defer", until: iso(at(`${SUNDAY}T12:00`, "America/Chicago")), reasons: ["state_hours:TX"] },
    ],
    ["TX on Sunday 12:00 sends", { phone: TX }, at(`${SUNDAY}T12:00`, "America/Chicago"), { action: "send" }],
    ["TX on Sunday 20:59 sends", { phone: TX }, at(`${SUNDAY}T20:59`, "America/Chicago"), { action: "send" }],
    [
      "TX on Sunday 21:00 waits for Monday 9:00",
      { phone: TX },
      at(`${SUNDAY}T21:00`, "America/Chicago"),
      {
        action: "defer",
        until: iso(at(`${MONDAY}T09:00`, "America/Chicago")),
        reasons: ["quiet_hours", "state_hours:TX"],
      },
    ],
    [
      "TX on Saturday 9:00 sends (Sunday hours are Sunday only)",
      { phone: TX },
      at("2026-06-20T09:00", "America/Chicago"),
      { action: "send" },
    ],
    [
      "AL on Christmas (Friday 2026-12-25) waits for Saturday",
      { phone: AL },
      at("2026-12-25T10:00", "America/Chicago"),
      { action: "defer", until: iso(at("2026-12-26T08:00", "America/Chicago")), reasons: ["holiday:AL"] },
    ],
    [
      "AL on Juneteenth (Friday 2026-06-19) waits for Saturday",
      { phone: AL },
      at("2026-06-19T10:00", "America/Chicago"),
      { action: "defer", until: iso(at("2026-06-20T08:00", "America/Chicago")), reasons: ["holiday:AL"] },
    ],
    [
      "AL on Thanksgiving evening waits for Friday 8:00",
      { phone: AL },
      at("2026-11-26T19:00", "America/Chicago"),
      {
        action: "defer",
        until: iso(at("2026-11-27T08:00", "America/Chicago")),
        reasons: ["holiday:AL"],
      },
    ],
    [
      "LA on Mardi Gras (2026-02-17) waits for Wednesday",
      { phone: LA },
      at("2026-02-17T09:00", "America/Chicago"),
      { action: "defer", until: iso(at("2026-02-18T08:00", "America/Chicago")), reasons: ["holiday:LA"] },
    ],
    [
      "LA on Good Friday (2026-04-03) waits for Saturday",
      { phone: LA },
      at("2026-04-03T09:00", "America/Chicago"),
      {
        action: "defer",
        until: iso(at("2026-04-04T08:00", "America/Chicago")),
        reasons: ["holiday:LA"],
      },
    ],
    [
      "UT on Friday 2026-07-03 (Independence Day observed), Saturday the 4th and Sunday: Monday",
      { phone: UT },
      at("2026-07-03T12:00", "America/Denver"),
      {
        action: "defer",
        until: iso(at("2026-07-06T08:00", "America/Denver")),
        reasons: ["holiday:UT", "sunday:UT"],
      },
    ],
    [
      "UT on Pioneer Day (Friday 2026-07-24) waits for Saturday",
      { phone: UT },
      at("2026-07-24T12:00", "America/Denver"),
      { action: "defer", until: iso(at("2026-07-25T08:00", "America/Denver")), reasons: ["holiday:UT"] },
    ],
    [
      "UT on Friday 2027-07-23 (Pioneer Day falls on Saturday: kept on Friday) waits for Monday",
      { phone: UT },
      at("2027-07-23T12:00", "America/Denver"),
      {
        action: "defer",
        until: iso(at("2027-07-26T08:00", "America/Denver")),
        reasons: ["holiday:UT", "sunday:UT"],
      },
    ],
    [
      "UT on Monday 2026-06-15 (Juneteenth kept on the Monday of its week) waits for Tuesday",
      { phone: UT },
      at("2026-06-15T12:00", "America/Denver"),
      { action: "defer", until: iso(at("2026-06-16T08:00", "America/Denver")), reasons: ["holiday:UT"] },
    ],
    [
      "UT on Monday 2027-06-21 (Juneteenth on a Saturday: the Monday after) waits for Tuesday",
      { phone: UT },
      at("2027-06-21T12:00", "America/Denver"),
      { action: "defer", until: iso(at("2027-06-22T08:00", "America/Denver")), reasons: ["holiday:UT"] },
    ],
    [
      "UT on Wednesday 2026-06-17 sends",
      { phone: UT },
      at("2026-06-17T12:00", "America/Denver"),
      { action: "send" },
    ],
    ["FL on Christmas sends", { phone: FL }, at("2026-12-25T12:00", "America/New_York"), { action: "send" }],
  ];
  for (const [name, input, now, expected] of cases) {
    it(name, () => expect(decide(input, now)).toEqual(expected));
  }
});

describe("decideSend: DST changes, midnight, zones", () => {
  const cases: [name: string, input: Partial<SendInput>, now: string, expected: Shown][] = [
    [
      "spring forward (2026-03-08 New York): 1:30 EST waits for 8:00 EDT (12:00Z, not 13:00Z)",
      { phone: NY },
      "2026-03-08T06:30:00.000Z",
      { action: "defer", until: "2026-03-08T12:00:00.000Z", reasons: ["quiet_hours"] },
    ],
    [
      "fall back (2026-11-01 New York): 1:30 EDT waits for 8:00 EST (13:00Z)",
      { phone: NY },
      "2026-11-01T05:30:00.000Z",
      { action: "defer", until: "2026-11-01T13:00:00.000Z", reasons: ["quiet_hours"] },
    ],
    [
      "fall back, second 1:30 (EST): still 8:00 EST",
      { phone: NY },
      "2026-11-01T06:30:00.000Z",
      { action: "defer", until: "2026-11-01T13:00:00.000Z", reasons: ["quiet_hours"] },
    ],
    [
      "quiet hours ending at 2:00 on spring-forward night open at 3:00 EDT (the gap's end)",
      { phone: NY, quiet_hours: { enabled: true, start_hour: 22, end_hour: 2 } },
      "2026-03-08T06:30:00.000Z",
      { action: "defer", until: "2026-03-08T07:00:00.000Z", reasons: ["quiet_hours"] },
    ],
    [
      "quiet hours ending at 1:00 on fall-back night open at the first 1:00 (EDT)",
      { phone: NY, quiet_hours: { enabled: true, start_hour: 22, end_hour: 1 } },
      "2026-11-01T04:30:00.000Z",
      { action: "defer", until: "2026-11-01T05:00:00.000Z", reasons: ["quiet_hours"] },
    ],
    [
      "FL on spring-forward Sunday evening: 20:00 EDT closes",
      { phone: FL },
      "2026-03-09T00:00:00.000Z",
      { action: "defer", until: "2026-03-09T12:00:00.000Z", reasons: ["state_hours:FL"] },
    ],
    [
      "quiet hours across midnight the other way (quiet 1 → 6): 0:30 sends",
      { phone: NY, quiet_hours: { enabled: true, start_hour: 1, end_hour: 6 } },
      "2026-06-17T04:30:00.000Z",
      { action: "send" },
    ],
    [
      "quiet hours 1 → 6: 1:00 waits for 6:00",
      { phone: NY, quiet_hours: { enabled: true, start_hour: 1, end_hour: 6 } },
      "2026-06-17T05:00:00.000Z",
      { action: "defer", until: "2026-06-17T10:00:00.000Z", reasons: ["quiet_hours"] },
    ],
    [
      "22:30 waits past midnight to 8:00 the next day",
      { phone: NY },
      "2026-06-18T02:30:00.000Z",
      { action: "defer", until: "2026-06-18T12:00:00.000Z", reasons: ["quiet_hours"] },
    ],
    [
      "noon in New York is 6:00 in Honolulu: a Hawaii number waits",
      { phone: HI },
      "2026-06-17T16:00:00.000Z",
      { action: "defer", until: "2026-06-17T18:00:00.000Z", reasons: ["quiet_hours"] },
    ],
    [
      "the contact's own zone wins over the area code (a New York number living in Tokyo)",
      { phone: NY, timezone: "Asia/Tokyo" },
      "2026-06-17T16:00:00.000Z",
      { action: "defer", until: "2026-06-17T23:00:00.000Z", reasons: ["quiet_hours"] },
    ],
    [
      "an unknown contact zone falls back to the area code",
      { phone: NY, timezone: "Mars/Olympus_Mons" },
      "2026-06-17T16:00:00.000Z",
      { action: "send" },
    ],
    [
      "Mississippi is read on Central Standard Time even for a contact in New York's zone",
      { phone: MS, timezone: "America/New_York" },
      "2026-06-17T12:30:00.000Z", // 8:30 EDT, 7:30 CDT, 6:30 CST
      { action: "defer", until: "2026-06-17T14:00:00.000Z", reasons: ["state_hours:MS"] },
    ],
    [
      "Mississippi in summer: 8:30 CDT is 7:30 Central Standard Time, before the statute's 8:00",
      { phone: MS },
      "2026-06-17T13:30:00.000Z",
      { action: "defer", until: "2026-06-17T14:00:00.000Z", reasons: ["state_hours:MS"] },
    ],
    ["Mississippi in summer: 19:59 CDT sends", { phone: MS }, "2026-06-18T00:59:00.000Z", { action: "send" }],
    ["Mississippi in winter: 8:00 CST sends", { phone: MS }, "2026-12-02T14:00:00.000Z", { action: "send" }],
    [
      "Mississippi in winter: 20:00 CST waits for 8:00 CST",
      { phone: MS },
      "2026-12-03T02:00:00.000Z",
      { action: "defer", until: "2026-12-03T14:00:00.000Z", reasons: ["state_hours:MS"] },
    ],
    [
      "Mississippi on Central time for a contact in Denver's zone: 19:30 MDT is 20:30 CDT, closed;" +
        " it opens at 8:00 CDT, but that is 7:00 in the contact's quiet hours",
      { phone: MS, timezone: "America/Denver" },
      "2026-06-18T01:30:00.000Z",
      { action: "defer", until: "2026-06-18T14:00:00.000Z", reasons: ["state_hours:MS", "quiet_hours"] },
    ],
    [
      "a split area code (850, Eastern and Central) waits for 8:00 Central",
      { phone: "+18505550100" },
      "2026-06-17T12:30:00.000Z", // 8:30 EDT, 7:30 CDT
      { action: "defer", until: "2026-06-17T13:00:00.000Z", reasons: ["quiet_hours", "state_hours:FL"] },
    ],
    [
      "a split area code (850) stops at 20:00 Eastern (FL)",
      { phone: "+18505550100" },
      "2026-06-18T00:00:00.000Z",
      { action: "defer", until: "2026-06-18T13:00:00.000Z", reasons: ["state_hours:FL", "quiet_hours"] },
    ],
    [
      "a Canadian number (Toronto) has quiet hours, no state rule",
      { phone: ON },
      "2026-06-18T00:30:00.000Z", // 20:30 EDT
      { action: "send" },
    ],
    [
      "a UK number is read on London time",
      { phone: "+442071838750" },
      "2026-06-17T06:30:00.000Z", // 7:30 BST
      { action: "defer", until: "2026-06-17T07:00:00.000Z", reasons: ["quiet_hours"] },
    ],
  ];
  for (const [name, input, now, expected] of cases) {
    it(name, () => expect(decide(input, Date.parse(now))).toEqual(expected));
  }
});

describe("decideSend: a deferral ends on the first allowed minute (random cases)", () => {
  it("is open at `until` and closed at every minute before it", () => {
    let seed = 20260617;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
    const areaCodes = [
      "212",
      "305",
      "504",
      "205",
      "214",
      "601",
      "503",
      "860",
      "808",
      "416",
      "850",
      "801",
      "533",
      "709",
    ];
    const zones = [
      null,
      null,
      "America/New_York",
      "Asia/Tokyo",
      "America/St_Johns",
      "Australia/Lord_Howe",
      "Asia/Kathmandu",
    ];
    const from = Date.parse("2026-01-01T00:00:00Z");
    let deferrals = 0;
    for (let i = 0; i < 200; i++) {
      const input: SendInput = {
        ...base,
        channel: pick(["sms", "voice"] as const),
        kind: pick(["marketing", "marketing", "reply"] as const),
        phone: `+1${pick(areaCodes)}5550100`,
        timezone: pick(zones),
        quiet_hours:
          random() < 0.5
            ? { enabled: true, start_hour: 21, end_hour: 8 }
            : { enabled: true, start_hour: Math.floor(random() * 24), end_hour: Math.floor(random() * 24) },
        state_rules: random() < 0.8,
      };
      const now = from + Math.floor(random() * 730 * 24 * 60) * MINUTE + Math.floor(random() * MINUTE);
      const decision = decideSend(input, now);
      if (decision.action !== "defer" || decision.reasons.includes("no_window")) continue;
      deferrals++;
      expect(decideSend(input, decision.until)).toEqual({ action: "send" });
      for (let t = now; t < decision.until; t = Math.floor(t / MINUTE) * MINUTE + MINUTE) {
        if (decideSend(input, t).action === "send")
          throw new Error(`open at ${iso(t)} before ${iso(decision.until)}`);
      }
    }
    expect(deferrals).toBeGreaterThan(40);
  });
});

describe("decideSend: fail closed when the zone or the state is unknown", () => {
  it("an unknown +1 area code: quiet hours in every zone from Newfoundland to Samoa, each state row in its state's zones", () => {
    // Summer: quiet hours open 8:00 in Samoa (19:00Z); Rhode Island's 9:00–18:00 EDT closes at 22:00Z.
    const cases: [string, Shown][] = [
      [
        "2026-06-17T18:59:00.000Z",
        { action: "defer", until: "2026-06-17T19:00:00.000Z", reasons: ["quiet_hours"] },
      ],
      ["2026-06-17T19:00:00.000Z", { action: "send" }],
      ["2026-06-17T21:59:00.000Z", { action: "send" }],
      [
        "2026-06-17T22:00:00.000Z",
        {
          action: "defer",
          until: "2026-06-18T19:00:00.000Z",
          reasons: ["state_hours:unknown", "quiet_hours"],
        },
      ],
    ];
    for (const [now, expected] of cases)
      expect(decide({ phone: UNKNOWN_AREA }, Date.parse(now))).toEqual(expected);
  });

  it("an unknown state keeps every state's Sundays and holidays", () => {
    // Sunday afternoon in the Americas: waits for Monday's shared window.
    expect(decide({ phone: UNKNOWN_AREA }, Date.parse("2026-06-21T20:30:00.000Z"))).toEqual({
      action: "defer",
      until: "2026-06-22T19:00:00.000Z",
      reasons: ["sunday:unknown", "quiet_hours", "state_hours:unknown"],
    });
    // Christmas 2026 is a Friday: Saturday's window, in every zone.
    expect(decide({ phone: UNKNOWN_AREA }, Date.parse("2026-12-25T20:30:00.000Z"))).toEqual({
      action: "defer",
      until: "2026-12-26T19:00:00.000Z",
      reasons: ["holiday:unknown", "quiet_hours", "state_hours:unknown"],
    });
  });

  it("an unknown area code with state rules off still needs quiet hours in every zone", () => {
    // Newfoundland 8:00–21:00 NDT = 10:30–23:30Z; Samoa 8:00–21:00 = 19:00–08:00Z.
    const input = { phone: UNKNOWN_AREA, state_rules: false };
    expect(decide(input, Date.parse("2026-06-17T18:59:00.000Z"))).toMatchObject({
      action: "defer",
      until: "2026-06-17T19:00:00.000Z",
    });
    expect(decide(input, Date.parse("2026-06-17T19:00:00.000Z"))).toEqual({ action: "send" });
    expect(decide(input, Date.parse("2026-06-17T23:29:00.000Z"))).toEqual({ action: "send" });
  });

  it("the NANP fallback leaves a window within four days from any moment of the year", () => {
    for (let day = 0; day < 365; day += 1) {
      const from = Date.parse("2026-01-01T00:00:00.000Z") + day * 24 * HOUR + (day % 24) * HOUR;
      const { at: next } = nextAllowedAt(
        { channel: "sms", kind: "marketing", phone: UNKNOWN_AREA, timezone: null },
        from,
      );
      expect(next).not.toBeNull();
      expect(next! - from).toBeLessThan(4 * 24 * HOUR);
    }
  });

  it("an unknown area code caps at the strictest state cap", () => {
    const now = Date.parse("2026-06-17T21:00:00.000Z");
    const recent = [now - HOUR, now - 2 * HOUR, now - 3 * HOUR];
    expect(decide({ phone: UNKNOWN_AREA, recent_sends: recent }, now)).toEqual({
      action: "skip",
      reason: "frequency_cap",
    });
    expect(decide({ phone: UNKNOWN_AREA, recent_sends: recent.slice(1) }, now)).toEqual({ action: "send" });
  });

  it("a number with no known country (+800) has no local time: it waits, never sent blind", () => {
    const now = Date.parse("2026-06-17T16:00:00.000Z");
    expect(decide({ phone: "+80012345678" }, now)).toEqual({
      action: "defer",
      until: iso(now + 14 * 24 * HOUR),
      reasons: ["quiet_hours", "no_window"],
    });
    // With the contact's zone it is an ordinary send.
    expect(decide({ phone: "+80012345678", timezone: "Europe/Paris" }, now)).toEqual({ action: "send" });
  });

  it("rules that leave no window defer to the search horizon with no_window", () => {
    // Quiet 9 → 8 leaves only 8:00–8:59; Connecticut opens at 9:00.
    const now = Date.parse("2026-06-17T16:00:00.000Z");
    const decision = decide(
      { phone: "+12035550100", quiet_hours: { enabled: true, start_hour: 9, end_hour: 8 } },
      now,
    );
    expect(decision).toMatchObject({ action: "defer", until: iso(now + 14 * 24 * HOUR) });
    expect((decision as { reasons: string[] }).reasons).toContain("no_window");
  });
});

describe("decideSend: frequency caps", () => {
  const now = at(`${WEDNESDAY}T12:00`, "America/New_York");
  const sends = (...hoursAgo: number[]) => hoursAgo.map((h) => now - h * HOUR);
  const cases: [name: string, input: Partial<SendInput>, expected: Shown][] = [
    ["FL, 2 sends in 24 h: send", { phone: FL, recent_sends: sends(1, 5) }, { action: "send" }],
    [
      "FL, 3 sends in 24 h: skip",
      { phone: FL, recent_sends: sends(1, 5, 23) },
      { action: "skip", reason: "frequency_cap" },
    ],
    [
      "FL, 4 sends in 24 h: skip",
      { phone: FL, recent_sends: sends(1, 2, 3, 4) },
      { action: "skip", reason: "frequency_cap" },
    ],
    [
      "FL, the third send exactly 24 h ago has aged out: send",
      { phone: FL, recent_sends: sends(1, 5, 24) },
      { action: "send" },
    ],
    [
      "FL, the third send 24 h minus 1 ms ago still counts: skip",
      { phone: FL, recent_sends: [...sends(1, 5), now - 24 * HOUR + 1] },
      { action: "skip", reason: "frequency_cap" },
    ],
    ["FL, older sends do not count", { phone: FL, recent_sends: sends(1, 25, 30, 48) }, { action: "send" }],
    ...(["+14055550100", "+14105550100", "+15035550100"] as const).map(
      (phone): [string, Partial<SendInput>, Shown] => [
        `${regionOfAreaCode(phone.slice(2, 5))!.regions[0]} is capped too`,
        { phone, recent_sends: sends(1, 2, 3), timezone: "America/New_York" },
        { action: "skip", reason: "frequency_cap" },
      ],
    ),
    ["NY is not a capped state", { phone: NY, recent_sends: sends(1, 2, 3, 4, 5) }, { action: "send" }],
    [
      "apply_to_all caps NY too",
      {
        phone: NY,
        recent_sends: sends(1, 2, 3),
        frequency_cap: { enabled: true, max_messages: 3, window_hours: 24, apply_to_all: true },
      },
      { action: "skip", reason: "frequency_cap" },
    ],
    [
      "apply_to_all with a 48 h window counts sends 30 h ago",
      {
        phone: NY,
        recent_sends: sends(30, 31, 40),
        frequency_cap: { enabled: true, max_messages: 3, window_hours: 48, apply_to_all: true },
      },
      { action: "skip", reason: "frequency_cap" },
    ],
    [
      "a stricter workspace cap (1 per 24 h) applies to FL",
      {
        phone: FL,
        recent_sends: sends(2),
        frequency_cap: { enabled: true, max_messages: 1, window_hours: 24, apply_to_all: false },
      },
      { action: "skip", reason: "frequency_cap" },
    ],
    [
      "a stricter workspace cap without apply_to_all leaves NY alone",
      {
        phone: NY,
        recent_sends: sends(2),
        frequency_cap: { enabled: true, max_messages: 1, window_hours: 24, apply_to_all: false },
      },
      { action: "send" },
    ],
    [
      "a looser workspace cap does not lift FL's own cap",
      {
        phone: FL,
        recent_sends: sends(1, 2, 3),
        frequency_cap: { enabled: true, max_messages: 10, window_hours: 24, apply_to_all: false },
      },
      { action: "skip", reason: "frequency_cap" },
    ],
    [
      "the workspace cap disabled: FL's own cap still applies while state rules are on",
      {
        phone: FL,
        recent_sends: sends(1, 2, 3),
        frequency_cap: { enabled: false, max_messages: 3, window_hours: 24, apply_to_all: true },
      },
      { action: "skip", reason: "frequency_cap" },
    ],
    [
      "state rules off: FL is not capped",
      { phone: FL, state_rules: false, recent_sends: sends(1, 2, 3, 4) },
      { action: "send" },
    ],
    [
      "state rules off, apply_to_all: everyone is capped",
      {
        phone: FL,
        state_rules: false,
        recent_sends: sends(1, 2, 3),
        frequency_cap: { enabled: true, max_messages: 3, window_hours: 24, apply_to_all: true },
      },
      { action: "skip", reason: "frequency_cap" },
    ],
    [
      "transactional sends are not capped",
      { phone: FL, kind: "transactional", recent_sends: sends(1, 2, 3, 4) },
      { action: "send" },
    ],
    [
      "replies are not capped",
      { phone: FL, kind: "reply", recent_sends: sends(1, 2, 3, 4) },
      { action: "send" },
    ],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => expect(decide(input, now)).toEqual(expected));
  }

  it("is counted when the send would go: a deferral past the oldest send's 24 h is not capped", () => {
    const night = at(`${WEDNESDAY}T22:00`, "America/New_York");
    const morning = at(`${THURSDAY}T08:00`, "America/New_York");
    const recent = [
      at(`${WEDNESDAY}T07:00`, "America/New_York"),
      at(`${WEDNESDAY}T10:00`, "America/New_York"),
      at(`${WEDNESDAY}T11:00`, "America/New_York"),
    ];
    expect(decide({ phone: FL, recent_sends: recent }, night)).toEqual({
      action: "defer",
      until: iso(morning),
      reasons: ["quiet_hours", "state_hours:FL"],
    });
    const stillInWindow = [at(`${WEDNESDAY}T09:00`, "America/New_York"), ...recent.slice(1)];
    expect(decide({ phone: FL, recent_sends: stillInWindow }, night)).toEqual({
      action: "skip",
      reason: "frequency_cap",
    });
  });

  it("capLookbackMs covers the longest window a cap can use", () => {
    expect(capLookbackMs({})).toBe(24 * HOUR);
    expect(
      capLookbackMs({
        frequency_cap: { enabled: true, max_messages: 3, window_hours: 72, apply_to_all: true },
      }),
    ).toBe(72 * HOUR);
  });
});

describe("decideSend: paused states", () => {
  const noon = at(`${WEDNESDAY}T12:00`, "America/Chicago");
  const cases: [name: string, input: Partial<SendInput>, expected: Shown][] = [
    [
      "LA paused: an LA contact is skipped",
      { phone: LA, paused_states: ["LA"] },
      { action: "skip", reason: "state_paused" },
    ],
    [
      "codes are matched case-insensitively",
      { phone: LA, paused_states: ["la"] },
      { action: "skip", reason: "state_paused" },
    ],
    ["LA paused: a Florida contact sends", { phone: FL, paused_states: ["LA"] }, { action: "send" }],
    [
      "LA paused with state rules off: still skipped (an operator's stop)",
      { phone: LA, paused_states: ["LA"], state_rules: false },
      { action: "skip", reason: "state_paused" },
    ],
    [
      "a province can be paused",
      { phone: ON, paused_states: ["ON"] },
      { action: "skip", reason: "state_paused" },
    ],
    [
      "an unknown area code is skipped while any state is paused",
      { phone: UNKNOWN_AREA, paused_states: ["LA"] },
      { action: "skip", reason: "state_paused" },
    ],
    [
      "a one-off send to a paused state goes",
      { phone: LA, paused_states: ["LA"], kind: "transactional" },
      { action: "send" },
    ],
    [
      "a reply in a paused state goes",
      { phone: LA, paused_states: ["LA"], kind: "reply" },
      { action: "send" },
    ],
    ["nothing paused: sends", { phone: LA, paused_states: [] }, { action: "send" }],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => expect(decide(input, noon)).toEqual(expected));
  }
});

describe("decideSend: kinds, quiet hours settings and overrides", () => {
  const floridaThreeAm = at(`${WEDNESDAY}T03:00`, "America/New_York");
  const floridaEight = at(`${WEDNESDAY}T08:00`, "America/New_York");
  const cases: [name: string, input: Partial<SendInput>, now: number, expected: Shown][] = [
    ["transactional at 3:00 sends", { phone: FL, kind: "transactional" }, floridaThreeAm, { action: "send" }],
    [
      "marketing at 3:00 waits",
      { phone: FL },
      floridaThreeAm,
      { action: "defer", until: iso(floridaEight), reasons: ["quiet_hours", "state_hours:FL"] },
    ],
    [
      "transactional to a suppressed contact is skipped",
      { phone: FL, kind: "transactional", suppressed: true },
      floridaThreeAm,
      { action: "skip", reason: "suppressed" },
    ],
    [
      "transactional to an opted-out contact is skipped",
      { phone: FL, kind: "transactional", opted_out: true },
      floridaThreeAm,
      { action: "skip", reason: "opted_out" },
    ],
    [
      "quiet hours disabled, no state row: 3:00 sends",
      { phone: NY, quiet_hours: { enabled: false, start_hour: 21, end_hour: 8 } },
      at(`${WEDNESDAY}T03:00`, "America/New_York"),
      { action: "send" },
    ],
    [
      "quiet hours disabled: Florida's own hours still hold",
      { phone: FL, quiet_hours: { enabled: false, start_hour: 21, end_hour: 8 } },
      floridaThreeAm,
      { action: "defer", until: iso(floridaEight), reasons: ["state_hours:FL"] },
    ],
    [
      "quiet hours disabled and state rules off: 3:00 sends",
      { phone: FL, quiet_hours: { enabled: false, start_hour: 21, end_hour: 8 }, state_rules: false },
      floridaThreeAm,
      { action: "send" },
    ],
    [
      "state rules off: Florida at 20:30 sends (quiet hours end at 21)",
      { phone: FL, state_rules: false },
      at(`${WEDNESDAY}T20:30`, "America/New_York"),
      { action: "send" },
    ],
    [
      "equal start and end hours mean no quiet hours",
      { phone: NY, quiet_hours: { enabled: true, start_hour: 8, end_hour: 8 } },
      at(`${WEDNESDAY}T03:00`, "America/New_York"),
      { action: "send" },
    ],
    [
      "a campaign override stricter than FL (sends 10–20) waits for 10:00",
      { phone: FL, quiet_hours: { enabled: true, start_hour: 20, end_hour: 10 } },
      at(`${WEDNESDAY}T09:00`, "America/New_York"),
      { action: "defer", until: iso(at(`${WEDNESDAY}T10:00`, "America/New_York")), reasons: ["quiet_hours"] },
    ],
    [
      "a campaign override looser than FL (sends 6–23): 7:00 waits for FL's 8:00",
      { phone: FL, quiet_hours: { enabled: true, start_hour: 23, end_hour: 6 } },
      at(`${WEDNESDAY}T07:00`, "America/New_York"),
      { action: "defer", until: iso(floridaEight), reasons: ["state_hours:FL"] },
    ],
    [
      "a campaign override looser than FL: 21:30 waits (FL closes at 20:00)",
      { phone: FL, quiet_hours: { enabled: true, start_hour: 23, end_hour: 6 } },
      at(`${WEDNESDAY}T21:30`, "America/New_York"),
      {
        action: "defer",
        until: iso(at(`${THURSDAY}T08:00`, "America/New_York")),
        reasons: ["state_hours:FL"],
      },
    ],
    [
      "a looser override for a state without a row is honoured (NY at 22:00)",
      { phone: NY, quiet_hours: { enabled: true, start_hour: 23, end_hour: 6 } },
      at(`${WEDNESDAY}T22:00`, "America/New_York"),
      { action: "send" },
    ],
    [
      "an agent reply inside the agent's quiet window (quiet_tz New York) waits for its end",
      {
        phone: "+14155550100",
        kind: "reply",
        quiet_hours: { enabled: true, start_hour: 21, end_hour: 8, timezone: "America/New_York" },
      },
      at(`${WEDNESDAY}T22:00`, "America/New_York"), // 19:00 in the contact's Pacific zone
      { action: "defer", until: iso(at(`${THURSDAY}T08:00`, "America/New_York")), reasons: ["quiet_hours"] },
    ],
    [
      "a quiet-hours zone the runtime does not know falls back to the contact's local time",
      {
        phone: "+14155550100",
        kind: "reply",
        quiet_hours: { enabled: true, start_hour: 21, end_hour: 8, timezone: "Nowhere/Else" },
      },
      at(`${WEDNESDAY}T22:00`, "America/New_York"), // 19:00 in Los Angeles
      { action: "send" },
    ],
    [
      "an agent reply ignores the state's stricter hours",
      { phone: FL, kind: "reply" },
      at(`${WEDNESDAY}T20:30`, "America/New_York"),
      { action: "send" },
    ],
    [
      "GA's row is voice only: a text at 21:30 waits for quiet hours only",
      { phone: GA, quiet_hours: { enabled: false, start_hour: 21, end_hour: 8 } },
      at(`${WEDNESDAY}T21:30`, "America/New_York"),
      { action: "send" },
    ],
    [
      "GA's row holds for calls",
      { phone: GA, channel: "voice", quiet_hours: { enabled: false, start_hour: 21, end_hour: 8 } },
      at(`${WEDNESDAY}T21:30`, "America/New_York"),
      {
        action: "defer",
        until: iso(at(`${THURSDAY}T08:00`, "America/New_York")),
        reasons: ["state_hours:GA"],
      },
    ],
    [
      "NV's row holds for calls: 8:30 Pacific waits for 9:00",
      { phone: "+17025550100", channel: "voice" },
      at(`${WEDNESDAY}T08:30`, "America/Los_Angeles"),
      {
        action: "defer",
        until: iso(at(`${WEDNESDAY}T09:00`, "America/Los_Angeles")),
        reasons: ["state_hours:NV"],
      },
    ],
    [
      "NV's row is voice only: a text at 8:30 Pacific sends",
      { phone: "+17025550100" },
      at(`${WEDNESDAY}T08:30`, "America/Los_Angeles"),
      { action: "send" },
    ],
  ];
  for (const [name, input, now, expected] of cases) {
    it(name, () => expect(decide(input, now)).toEqual(expected));
  }
});

describe("decideSend: phones and the order of skips", () => {
  const noon = at(`${WEDNESDAY}T12:00`, "America/New_York");
  const cases: [phone: string | null, expected: Shown][] = [
    [null, { action: "skip", reason: "no_phone" }],
    ["", { action: "skip", reason: "no_phone" }],
    ["   ", { action: "skip", reason: "no_phone" }],
    ["5551234", { action: "skip", reason: "invalid_phone" }],
    ["2125550100", { action: "skip", reason: "invalid_phone" }], // not E.164: callers normalise first
    ["+1 212 555 0100", { action: "skip", reason: "invalid_phone" }],
    ["+1555", { action: "skip", reason: "invalid_phone" }],
    ["+1212555010", { action: "skip", reason: "invalid_phone" }],
    ["+121255501000", { action: "skip", reason: "invalid_phone" }],
    ["+11125550100", { action: "skip", reason: "invalid_phone" }], // area codes never start with 1
    ["+10125550100", { action: "skip", reason: "invalid_phone" }], // ... or 0
    ["+0123456789", { action: "skip", reason: "invalid_phone" }],
    ["tel:+12125550100", { action: "skip", reason: "invalid_phone" }],
    ["+12125550100", { action: "send" }],
  ];
  for (const [phone, expected] of cases) {
    it(`${JSON.stringify(phone)} → ${expected.action === "skip" ? expected.reason : expected.action}`, () =>
      expect(decide({ phone }, noon)).toEqual(expected));
  }

  it("checks suppressed, then opted_out, then the phone, for every kind", () => {
    for (const kind of ["marketing", "transactional", "reply"] as const) {
      expect(decide({ kind, phone: null, suppressed: true, opted_out: true }, noon)).toEqual({
        action: "skip",
        reason: "suppressed",
      });
      expect(decide({ kind, phone: null, opted_out: true }, noon)).toEqual({
        action: "skip",
        reason: "opted_out",
      });
      expect(decide({ kind, phone: "+1555" }, noon)).toEqual({ action: "skip", reason: "invalid_phone" });
    }
  });

  it("a paused state is skipped before the cap is counted", () => {
    expect(
      decide(
        { phone: FL, paused_states: ["FL"], recent_sends: [noon - HOUR, noon - HOUR, noon - HOUR] },
        noon,
      ),
    ).toEqual({ action: "skip", reason: "state_paused" });
  });

  it("exports the closed set of skip reasons", () => {
    expect([...SKIP_REASONS]).toEqual([
      "suppressed",
      "opted_out",
      "no_phone",
      "invalid_phone",
      "frequency_cap",
      "state_paused",
      "duplicate",
      "unregistered_number",
    ]);
  });
});

describe("nextAllowedAt", () => {
  it("answers `from` when the window is open and the next allowed minute when not", () => {
    const input = { channel: "sms", kind: "marketing", phone: CT_PHONE, timezone: null } as const;
    const open = at(`${WEDNESDAY}T10:00`, "America/New_York");
    expect(nextAllowedAt(input, open)).toEqual({ at: open, reasons: [] });
    const early = at(`${WEDNESDAY}T08:30`, "America/New_York");
    expect(nextAllowedAt(input, early)).toEqual({
      at: at(`${WEDNESDAY}T09:00`, "America/New_York"),
      reasons: ["state_hours:CT"],
    });
  });

  it("ignores suppression, caps and pauses (it only answers when)", () => {
    const noon = at(`${WEDNESDAY}T12:00`, "America/New_York");
    expect(nextAllowedAt({ channel: "sms", kind: "transactional", phone: FL, timezone: null }, noon).at).toBe(
      noon,
    );
  });
});
const CT_PHONE = "+12035550100";

describe("localTimeFor", () => {
  const cases: [phone: string | null, timezone: string | null, expected: object][] = [
    [
      NY,
      "America/Chicago",
      { zone: "America/Chicago", zones: ["America/Chicago"], source: "contact", fallback: false },
    ],
    [
      NY,
      "Not/A_Zone",
      { zone: "America/New_York", zones: ["America/New_York"], source: "area_code", fallback: false },
    ],
    [
      NY,
      null,
      { zone: "America/New_York", zones: ["America/New_York"], source: "area_code", fallback: false },
    ],
    [
      "+18505550100",
      null,
      { zone: null, zones: ["America/New_York", "America/Chicago"], source: "area_code", fallback: true },
    ],
    [ON, null, { zone: "America/Toronto", zones: ["America/Toronto"], source: "area_code", fallback: false }],
    [UNKNOWN_AREA, null, { zone: null, zones: NANP_FALLBACK_ZONES, source: "country", fallback: true }],
    [
      "+33612345678",
      null,
      { zone: "Europe/Paris", zones: ["Europe/Paris"], source: "country", fallback: false },
    ],
    ["+80012345678", null, { zone: null, zones: [], source: "none", fallback: true }],
    [null, null, { zone: null, zones: [], source: "none", fallback: true }],
    [
      null,
      "Europe/Berlin",
      { zone: "Europe/Berlin", zones: ["Europe/Berlin"], source: "contact", fallback: false },
    ],
  ];
  for (const [phone, timezone, expected] of cases) {
    it(`${phone} / ${timezone}`, () => expect(localTimeFor(phone, timezone)).toEqual(expected as never));
  }

  it("a country with several zones is read in all of them (Russia)", () => {
    const local = localTimeFor("+79161234567", null);
    expect(local.source).toBe("country");
    expect(local.zones).toContain("Europe/Kaliningrad");
    expect(local.zones).toContain("Asia/Kamchatka");
  });
});

describe("US holidays", () => {
  const federal: [year: number, expected: [string, string, string][]][] = [
    [
      2026,
      [
        ["new_years_day", "2026-01-01", "2026-01-01"],
        ["mlk_day", "2026-01-19", "2026-01-19"],
        ["presidents_day", "2026-02-16", "2026-02-16"],
        ["memorial_day", "2026-05-25", "2026-05-25"],
        ["juneteenth", "2026-06-19", "2026-06-19"],
        ["independence_day", "2026-07-04", "2026-07-03"],
        ["labor_day", "2026-09-07", "2026-09-07"],
        ["columbus_day", "2026-10-12", "2026-10-12"],
        ["veterans_day", "2026-11-11", "2026-11-11"],
        ["thanksgiving", "2026-11-26", "2026-11-26"],
        ["christmas", "2026-12-25", "2026-12-25"],
      ],
    ],
    [
      2027,
      [
        ["new_years_day", "2027-01-01", "2027-01-01"],
        ["mlk_day", "2027-01-18", "2027-01-18"],
        ["presidents_day", "2027-02-15", "2027-02-15"],
        ["memorial_day", "2027-05-31", "2027-05-31"],
        ["juneteenth", "2027-06-19", "2027-06-18"],
        ["independence_day", "2027-07-04", "2027-07-05"],
        ["labor_day", "2027-09-06", "2027-09-06"],
        ["columbus_day", "2027-10-11", "2027-10-11"],
        ["veterans_day", "2027-11-11", "2027-11-11"],
        ["thanksgiving", "2027-11-25", "2027-11-25"],
        ["christmas", "2027-12-25", "2027-12-24"],
      ],
    ],
  ];
  for (const [year, expected] of federal) {
    it(`federal holidays of ${year} with observed dates`, () => {
      expect(usFederalHolidays(year).map((h) => [h.id, h.date, h.observed])).toEqual(expected);
    });
  }

  it("Juneteenth exists from 2021 on", () => {
    expect(usFederalHolidays(2020).map((h) => h.id)).not.toContain("juneteenth");
    expect(usFederalHolidays(2021).map((h) => h.id)).toContain("juneteenth");
  });

  it("New Year's Day on a Saturday is observed on December 31 of the year before", () => {
    const calendar = new HolidayCalendar(["new_years_day"]);
    expect(calendar.has(dayOfDate(2021, 12, 31))).toBe(true); // 2022-01-01 was a Saturday
    expect(calendar.has(dayOfDate(2022, 1, 1))).toBe(true);
    expect(calendar.has(dayOfDate(2022, 1, 3))).toBe(false);
    expect(calendar.namesOn(dayOfDate(2021, 12, 31))).toEqual(["New Year's Day (observed)"]);
  });

  it("moveable state holidays follow Easter", () => {
    const iso = (id: Parameters<typeof holidayIn>[0], year: number) =>
      new Date(holidayIn(id, year)!.day * 86_400_000).toISOString().slice(0, 10);
    expect(iso("mardi_gras", 2025)).toBe("2025-03-04");
    expect(iso("mardi_gras", 2026)).toBe("2026-02-17");
    expect(iso("good_friday", 2025)).toBe("2025-04-18");
    expect(iso("good_friday", 2026)).toBe("2026-04-03");
    expect(iso("confederate_memorial_day", 2026)).toBe("2026-04-27");
    expect(iso("jefferson_davis_birthday", 2026)).toBe("2026-06-01");
  });
});

describe("the state table", () => {
  it("has one row per state of the facts sheet, each with its source", () => {
    expect(STATE_RULES.map((rule) => rule.state)).toEqual([
      "FL",
      "OK",
      "MD",
      "OR",
      "CT",
      "TX",
      "VA",
      "LA",
      "AL",
      "MS",
      "RI",
      "KY",
      "MA",
      "MI",
      "MN",
      "NV",
      "NJ",
      "UT",
      "WA",
      "GA",
    ]);
    for (const rule of STATE_RULES) {
      expect(rule.source.length).toBeGreaterThan(5);
      expect(rule.hours).toHaveLength(7);
      for (const day of rule.hours)
        if (day)
          expect(
            day[0] < day[1] &&
              day[0] >= 0 &&
              day[1] <= 24 &&
              Number.isInteger(day[0] * 2) &&
              Number.isInteger(day[1] * 2),
          ).toBe(true);
      expect(areaCodesWithRegion().some((code) => regionOfAreaCode(code)!.regions.includes(rule.state))).toBe(
        true,
      );
    }
  });

  it("caps FL, OK, MD and OR at 3 per rolling 24 h, and nobody else", () => {
    expect(STATE_RULES.filter((rule) => rule.cap).map((rule) => [rule.state, rule.cap])).toEqual(
      ["FL", "OK", "MD", "OR"].map((state) => [state, { max_messages: 3, window_hours: 24 }]),
    );
  });
});

describe("NANP_FALLBACK_ZONES", () => {
  const zoneCodes = AREA_CODE_ZONES_DATA.trim()
    .split("\n")
    .map((line) => line.split(/\s+/));

  it("match every other NANP zone at every instant (Guam and Saipan aside)", () => {
    const zones = new Set([
      ...zoneCodes.map(([, zone]) => zone),
      ...areaCodesWithRegion().flatMap((code) => regionOfAreaCode(code)!.otherZones),
    ]);
    zones.delete("Pacific/Guam");
    zones.delete("Pacific/Saipan");
    // Every hour around the 2026 transitions, every 6 hours the rest of 2026–2027.
    const instants: number[] = [];
    for (const [from, to] of [
      ["2026-03-01", "2026-04-10"],
      ["2026-10-20", "2026-11-10"],
    ]) {
      for (let t = Date.parse(`${from}T00:00:00Z`); t < Date.parse(`${to}T00:00:00Z`); t += HOUR)
        instants.push(t);
    }
    for (let t = Date.parse("2026-01-01T00:00:00Z"); t < Date.parse("2028-01-01T00:00:00Z"); t += 6 * HOUR) {
      instants.push(t);
    }
    const missing: string[] = [];
    for (const t of instants) {
      const offsets = new Set(NANP_FALLBACK_ZONES.map((zone) => offsetOf(zone, t)));
      for (const zone of zones) if (!offsets.has(offsetOf(zone, t))) missing.push(`${zone} at ${iso(t)}`);
    }
    expect(missing.slice(0, 5)).toEqual([]);
  });
});

describe("lintContent", () => {
  const codes = (body: string, options = {}): string[] =>
    lintContent(body, options).map((warning) => warning.code);
  const cases: [name: string, body: string, options: object, expected: string[]][] = [
    ["a clean message", "Hi {{first_name|there}}, 20% off today at acme.com. Reply STOP to opt out", {}, []],
    [
      "a first marketing message without STOP wording",
      "Hi, 20% off today",
      { firstMarketingMessage: true },
      ["no_opt_out_language"],
    ],
    ["STOP wording", "20% off. Reply STOP to end", { firstMarketingMessage: true }, []],
    ["unsubscribe wording", "20% off. Text UNSUBSCRIBE to leave", { firstMarketingMessage: true }, []],
    ["opt-out wording", "20% off. Opt-out: reply END", { firstMarketingMessage: true }, []],
    ["not the first message: no opt-out needed", "Hi, 20% off today", { firstMarketingMessage: false }, []],
    ["bit.ly", "Deal: https://bit.ly/3abc", {}, ["public_url_shortener"]],
    ["tinyurl without a scheme", "See tinyurl.com/xyz now", {}, ["public_url_shortener"]],
    ["t.co at the end of a sentence", "Follow t.co.", {}, ["public_url_shortener"]],
    ["t.com is not t.co", "Visit t.com/deals", {}, []],
    ["a host that merely ends like one", "Visit rabbit.ly/x and notbit.ly", {}, []],
    [
      "two shorteners, one warning each",
      "goo.gl/a ow.ly/b goo.gl/c",
      {},
      ["public_url_shortener", "public_url_shortener"],
    ],
    [
      "is.gd, buff.ly, rebrand.ly",
      "is.gd/a buff.ly/b rebrand.ly/c",
      {},
      Array(3).fill("public_url_shortener"),
    ],
    ["an unknown merge field", "Hi {{favourite_color}}", {}, ["unknown_merge_field"]],
    [
      "known fields, a fallback and a custom field",
      "{{ first_name }} {{last_name|}} {{fields.plan}} {{offer_url}}",
      {},
      [],
    ],
    [
      "caller-given fields",
      "{{first_name}} {{coupon}}",
      { knownMergeFields: ["coupon"] },
      ["unknown_merge_field"],
    ],
    ["many segments from the body", "x".repeat(160 * 3), {}, ["many_segments"]],
    ["three segments are fine", "x".repeat(153 * 3), {}, []],
    ["a given segment count", "short", { segmentCount: 4 }, ["many_segments"]],
    ["alcohol", "Two-for-one cocktails tonight", {}, ["shaft_content"]],
    ["firearms", "New rifles in stock", {}, ["shaft_content"]],
    ["firearms, another word", "Ammo sale this weekend", {}, ["shaft_content"]],
    ["a euphemism is missed (a hint, not a classifier)", "Range day: bring your piece", {}, []],
    ["tobacco", "Vape juice 2 for 1", {}, ["shaft_content"]],
    ["sex", "XXX videos", {}, ["shaft_content"]],
    ["hate", "white power rally", {}, ["shaft_content"]],
    ["words inside other words do not count", "Our gunmetal finish and beers-not-included ginger", {}, []],
  ];
  for (const [name, body, options, expected] of cases) {
    it(name, () => expect(codes(body, options)).toEqual(expected));
  }

  it("names what it found", () => {
    const [warning] = lintContent("Wine and cigars", {});
    expect(warning.code).toBe("shaft_content");
    expect(warning.message).toContain('alcohol ("Wine")');
    expect(warning.message).toContain('tobacco ("cigars")');
    expect(lintContent("Hi {{favourite_color}}")[0].message).toBe("Unknown merge field {{favourite_color}}.");
  });
});

describe("decideSend: Rhode Island, Canada's CRTC hours, a contact's own state (API.md §7.1)", () => {
  const RI = "+14015550100";
  // [case, input, now (local wall time, zone), expected]
  const cases: [string, Partial<SendInput>, string, string, Shown][] = [
    [
      "RI on a Saturday at 9:30 waits for 10:00",
      { phone: RI },
      "2026-06-20T09:30",
      "America/New_York",
      {
        action: "defer",
        until: iso(at("2026-06-20T10:00", "America/New_York")),
        reasons: ["state_hours:RI"],
      },
    ],
    [
      "RI on a Saturday at 16:59 sends",
      { phone: RI },
      "2026-06-20T16:59",
      "America/New_York",
      { action: "send" },
    ],
    [
      "RI on a Saturday at 17:00 waits for Monday 9:00 (no Sundays)",
      { phone: RI },
      "2026-06-20T17:00",
      "America/New_York",
      {
        action: "defer",
        until: iso(at("2026-06-22T09:00", "America/New_York")),
        reasons: ["state_hours:RI", "sunday:RI"],
      },
    ],
    // Victory Day (second Monday of August) is a Rhode Island legal holiday (date-holidays, US-RI).
    [
      "RI on Victory Day 2026 waits for Tuesday",
      { phone: RI },
      "2026-08-10T12:00",
      "America/New_York",
      {
        action: "defer",
        until: iso(at("2026-08-11T09:00", "America/New_York")),
        reasons: ["holiday:RI"],
      },
    ],
    [
      "RI on the day after Thanksgiving sends (not a holiday there)",
      { phone: RI },
      "2026-11-27T12:00",
      "America/New_York",
      {
        action: "send",
      },
    ],
    // A Toronto number: texts keep quiet hours only; calls keep the CRTC's hours.
    [
      "a text to Canada at 21:15 on a weekday: quiet hours",
      { phone: ON },
      "2026-06-17T20:30",
      "America/Toronto",
      { action: "send" },
    ],
    [
      "a call to Canada on a Saturday at 18:30 waits for Sunday 10:00",
      { phone: ON, channel: "voice" },
      "2026-06-20T18:30",
      "America/Toronto",
      {
        action: "defer",
        until: iso(at("2026-06-21T10:00", "America/Toronto")),
        reasons: ["state_hours:CA-CRTC"],
      },
    ],
    [
      "a call to Canada on a Sunday at 9:30 waits for 10:00",
      { phone: ON, channel: "voice" },
      "2026-06-21T09:30",
      "America/Toronto",
      {
        action: "defer",
        until: iso(at("2026-06-21T10:00", "America/Toronto")),
        reasons: ["state_hours:CA-CRTC"],
      },
    ],
    [
      "a call to a Canadian number whose contact gave a US state (NY) keeps the CRTC's Sunday 10:00",
      { phone: ON, channel: "voice", state: "NY" },
      "2026-06-21T09:30",
      "America/Toronto",
      {
        action: "defer",
        until: iso(at("2026-06-21T10:00", "America/Toronto")),
        reasons: ["state_hours:CA-CRTC"],
      },
    ],
    [
      "a call to a Canadian number whose contact gave FL: Florida's 20:00 and the CRTC's weekend 18:00",
      { phone: ON, channel: "voice", state: "FL" },
      "2026-06-20T18:30",
      "America/Toronto",
      {
        action: "defer",
        until: iso(at("2026-06-21T10:00", "America/Toronto")),
        reasons: ["state_hours:CA-CRTC"],
      },
    ],
    [
      "a call to Canada on a weekday at 20:59 sends",
      { phone: ON, channel: "voice" },
      "2026-06-17T20:59",
      "America/Toronto",
      { action: "send" },
    ],
    [
      "a call to Canada on a weekday at 21:15 with quiet hours off sends (the CRTC allows until 21:30)",
      { phone: ON, channel: "voice", quiet_hours: { enabled: false, start_hour: 21, end_hour: 8 } },
      "2026-06-17T21:15",
      "America/Toronto",
      { action: "send" },
    ],
    [
      "a call to Canada on a weekday at 21:30 with quiet hours off waits for 9:00",
      { phone: ON, channel: "voice", quiet_hours: { enabled: false, start_hour: 21, end_hour: 8 } },
      "2026-06-17T21:30",
      "America/Toronto",
      {
        action: "defer",
        until: iso(at("2026-06-18T09:00", "America/Toronto")),
        reasons: ["state_hours:CA-CRTC"],
      },
    ],
    [
      "a call to Canada on a Friday at 21:15 with quiet hours 22 → 8 sends",
      { phone: ON, channel: "voice", quiet_hours: { enabled: true, start_hour: 22, end_hour: 8 } },
      "2026-06-19T21:15",
      "America/Toronto",
      { action: "send" },
    ],
    [
      "a call to Canada on a weekday at 21:15 keeps the default quiet hours (21:00)",
      { phone: ON, channel: "voice" },
      "2026-06-17T21:15",
      "America/Toronto",
      {
        action: "defer",
        until: iso(at("2026-06-18T09:00", "America/Toronto")),
        reasons: ["quiet_hours", "state_hours:CA-CRTC"],
      },
    ],
    [
      "a call to Canada on a weekday at 8:30 waits for 9:00",
      { phone: ON, channel: "voice" },
      "2026-06-17T08:30",
      "America/Toronto",
      {
        action: "defer",
        until: iso(at("2026-06-17T09:00", "America/Toronto")),
        reasons: ["state_hours:CA-CRTC"],
      },
    ],
    // A New York number whose contact lives in Florida: Florida's 20:00 end applies.
    [
      "a contact's state (FL) before its area code's (NY)",
      { phone: NY, state: "FL" },
      "2026-06-17T20:30",
      "America/New_York",
      {
        action: "defer",
        until: iso(at("2026-06-18T08:00", "America/New_York")),
        reasons: ["state_hours:FL"],
      },
    ],
    [
      "a contact's state in lower case",
      { phone: NY, state: "fl" },
      "2026-06-17T20:30",
      "America/New_York",
      {
        action: "defer",
        until: iso(at("2026-06-18T08:00", "America/New_York")),
        reasons: ["state_hours:FL"],
      },
    ],
    [
      "a contact's state (NY) lifts its area code's (FL) stricter hours",
      { phone: FL, state: "NY" },
      "2026-06-17T20:30",
      "America/New_York",
      {
        action: "send",
      },
    ],
    [
      "an unreadable state leaves the area code's",
      { phone: FL, state: "Atlantis" },
      "2026-06-17T20:30",
      "America/New_York",
      {
        action: "defer",
        until: iso(at("2026-06-18T08:00", "America/New_York")),
        reasons: ["state_hours:FL"],
      },
    ],
    [
      "a contact's state pauses like the area code's",
      { phone: NY, state: "LA", paused_states: ["LA"] },
      "2026-06-17T12:00",
      "America/New_York",
      {
        action: "skip",
        reason: "state_paused",
      },
    ],
  ];
  for (const [name, input, local, zone, expected] of cases) {
    it(name, () => {
      expect({ name, decision: decide(input, at(local, zone)) }).toEqual({ name, decision: expected });
    });
  }
});

describe("decideSend: the zones of a contact whose zone comes from its area code", () => {
  // [case, phone, timezone given, local time, zone of that time, expected action]
  const cases: [string, string, string | null, string, string, "send" | "defer"][] = [
    [
      "850 at 7:30 Central (8:30 Eastern): Pensacola is outside hours",
      "+18505550100",
      null,
      "2026-06-17T07:30",
      "America/Chicago",
      "defer",
    ],
    [
      "850 at 8:00 Central: allowed in both zones",
      "+18505550100",
      null,
      "2026-06-17T08:00",
      "America/Chicago",
      "send",
    ],
    [
      "850 given Eastern at 7:30 Central: the given zone alone",
      "+18505550100",
      "America/New_York",
      "2026-06-17T07:30",
      "America/Chicago",
      "send",
    ],
    [
      "448 at 19:30 Central (20:30 Eastern): Florida's 20:00 in Tallahassee",
      "+14485550100",
      null,
      "2026-06-17T19:30",
      "America/Chicago",
      "defer",
    ],
    [
      "423 at 20:30 Central (21:30 Eastern)",
      "+14235550100",
      null,
      "2026-06-17T20:30",
      "America/Chicago",
      "defer",
    ],
    ["423 at 20:30 Eastern", "+14235550100", null, "2026-06-17T20:30", "America/New_York", "send"],
    [
      "324 (new, Jacksonville) at 12:00 Eastern on a Wednesday",
      "+13245550100",
      null,
      "2026-06-17T12:00",
      "America/New_York",
      "send",
    ],
    [
      "975 (new, Kansas City) at 7:30 Central",
      "+19755550100",
      null,
      "2026-06-17T07:30",
      "America/Chicago",
      "defer",
    ],
  ];
  for (const [name, phone, timezone, local, zone, action] of cases) {
    it(name, () => {
      expect({ name, action: decide({ phone, timezone }, at(local, zone)).action }).toEqual({ name, action });
    });
  }
});

describe("holidays: the federal table agrees with date-holidays", () => {
  it("has every federal holiday and observed day date-holidays (US) has, and no other but Veterans Day observed, 2001–2059", () => {
    const ours = new Set<string>();
    const library = new Set<string>();
    for (let year = 2000; year <= 2060; year++) {
      for (const h of usFederalHolidays(year)) ours.add(h.date).add(h.observed);
      for (const h of stateLegalHolidays("", year)) library.add(isoDateOfDay(h.day));
    }
    const inRange = (day: string) => day >= "2001-01-01" && day <= "2059-12-31";
    // date-holidays does not list Veterans Day's observed Friday/Monday (5 U.S.C. 6103(b) does): the
    // only days the federal table closes beyond it (failing closed).
    const veteransDayObserved = (day: string) => /-11-1[02]$/.test(day);
    const differences = [
      ...[...ours]
        .filter((day) => inRange(day) && !library.has(day) && !veteransDayObserved(day))
        .map((day) => `only ours: ${day}`),
      ...[...library]
        .filter((day) => inRange(day) && !ours.has(day))
        .map((day) => `only date-holidays: ${day}`),
    ];
    expect(differences).toEqual([]);
  });
});
