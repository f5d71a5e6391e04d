/**
 * The built-in US state send-time table: one row per state with a rule stricter than (or beside)
 * the federal 8:00–21:00 (47 CFR 64.1200(c)(1)). Data only: a correction to a rule touches this
 * file and nothing else. Not legal advice; a summary of public sources as of 2026.
 *
 * Every row is applied while `state_rules` is on, by the contact's own `state` when it has one, else
 * by the state of the recipient's area code. `sms`/`voice` say which channels a row reaches.
 * Rows whose reach to texts is unclear are applied to texts anyway (fail closed: a wrong deferral
 * costs a delay, a wrong send $500–$1,500). Hours are read in the recipient's local time unless
 * the row names a zone.
 */
import { FEDERAL_HOLIDAYS, type HolidaySource, legalHolidaysOf } from "./holidays";

/** Does the row reach this channel? `unclear` rows are applied like `yes`. */
export type Reach = "yes" | "unclear" | "no";

/** Allowed local hours of one weekday, [from, to) in hours on the hour or half hour (21.5: 21:30); null: no sends that day. */
export type DayHours = readonly [from: number, to: number] | null;

export interface StateRule {
  /** USPS code. */
  state: string;
  /** Allowed hours per weekday, Sunday first (7 entries). */
  hours: readonly DayHours[];
  /**
   * Holidays on which nothing is sent (dates and observed dates), in the rule's local time: ids of
   * HOLIDAY_DEFINITIONS, or a state's legal holidays from the `date-holidays` library.
   */
  holidays: readonly HolidaySource[];
  /** Most marketing messages per rolling window, or null. */
  cap: { max_messages: number; window_hours: number } | null;
  /** Reach to texts and to calls. */
  sms: Reach;
  voice: Reach;
  /**
   * Read the hours in these zones (open only when open in every one of them) instead of the
   * recipient's local time (Mississippi: Central time, and Central Standard Time as the statute says).
   */
  zones: readonly string[] | null;
  /** Where the rule comes from. */
  source: string;
  /** Specifics and what the table does not model. */
  note: string;
}

const daily = (from: number, to: number): DayHours[] => Array.from({ length: 7 }, () => [from, to] as const);
const exceptSunday = (from: number, to: number): DayHours[] => [null, ...daily(from, to).slice(1)];

/** The table. Order: as in the facts sheet (capped states first). */
export const STATE_RULES: readonly StateRule[] = [
  {
    state: "FL",
    hours: daily(8, 20),
    holidays: [],
    cap: { max_messages: 3, window_hours: 24 },
    sms: "yes",
    voice: "yes",
    zones: null,
    source:
      "Florida Telephone Solicitation Act, Fla. Stat. 501.059; hours and cap in 501.616 (flsenate.gov Bill 2021/1120)",
    note: "Cap: 3 messages on the same subject per rolling 24 h; every marketing send is counted (the subject is not known).",
  },
  {
    state: "OK",
    hours: daily(8, 20),
    holidays: [],
    cap: { max_messages: 3, window_hours: 24 },
    sms: "yes",
    voice: "yes",
    zones: null,
    source: "Oklahoma Telephone Solicitation Act (2022)",
    note: "Cap: 3 per rolling 24 h on the same subject; every marketing send is counted.",
  },
  {
    state: "MD",
    hours: daily(8, 20),
    holidays: [],
    cap: { max_messages: 3, window_hours: 24 },
    sms: "yes",
    voice: "yes",
    zones: null,
    source: "Maryland Stop the Spam Calls Act (texts since 2024-01-01)",
    note: "Cap: 3 per rolling 24 h on the same subject; every marketing send is counted.",
  },
  {
    state: "OR",
    hours: daily(8, 20),
    holidays: [],
    cap: { max_messages: 3, window_hours: 24 },
    sms: "yes",
    voice: "yes",
    zones: null,
    source: "Oregon HB 3865 (texts since 2026-01-01)",
    note: "Cap: 3 per rolling 24 h unless the recipient bought in the last 18 months; the exemption is not modelled (fail closed).",
  },
  {
    state: "CT",
    hours: daily(9, 20),
    holidays: [],
    cap: null,
    sms: "yes",
    voice: "yes",
    zones: null,
    source: "Connecticut SB 1058 (texts since 2023-10-01)",
    note: "",
  },
  {
    state: "TX",
    hours: [[12, 21], ...daily(9, 21).slice(1)],
    holidays: [],
    cap: null,
    sms: "yes",
    voice: "yes",
    zones: null,
    source: "Texas SB 140 (in force 2025-09-01)",
    note: "9:00–21:00 Monday to Saturday, 12:00–21:00 on Sunday.",
  },
  {
    state: "VA",
    hours: daily(8, 21),
    holidays: [],
    cap: null,
    sms: "yes",
    voice: "yes",
    zones: null,
    source: "Va. Code 59.1-514; SB 1339",
    note: "A STOP is honoured for 10 years from 2026: that is the caller's suppression, not a send-time rule.",
  },
  {
    state: "LA",
    hours: exceptSunday(8, 20),
    holidays: [
      ...FEDERAL_HOLIDAYS,
      legalHolidaysOf("LA"),
      "battle_of_new_orleans",
      "mardi_gras",
      "good_friday",
      "huey_p_long_day",
      "all_saints_day",
    ],
    cap: null,
    sms: "unclear",
    voice: "yes",
    zones: null,
    source: "La. R.S. 45:811 (hours, Sundays, holidays); holidays of La. R.S. 1:55",
    note:
      "Texts: unclear (the statute speaks of dialers and operators), applied. Holidays: the federal ones, " +
      "Louisiana's legal holidays as `date-holidays` knows them, and the statewide days of La. R.S. 1:55 it " +
      "leaves out (Battle of New Orleans, Huey P. Long Day, All Saints' Day); Baton Rouge's Inauguration Day is " +
      "not modelled. A governor-declared emergency bans " +
      "solicitations: stop the state with `paused_states`.",
  },
  {
    state: "AL",
    hours: exceptSunday(8, 20),
    holidays: [...FEDERAL_HOLIDAYS, "mardi_gras", "confederate_memorial_day", "jefferson_davis_birthday"],
    cap: null,
    sms: "unclear",
    voice: "yes",
    zones: null,
    source: "Ala. Admin. Code r. 770-X-5-.17; state holidays of Ala. Code 1-3-8",
    note:
      "Texts: unclear, applied. Holidays: federal and state (Ala. Code 1-3-8: Confederate Memorial Day, " +
      "Jefferson Davis' Birthday, Mardi Gras, which is a holiday in Baldwin and Mobile counties only: applied " +
      "statewide).",
  },
  {
    state: "MS",
    hours: exceptSunday(8, 20),
    holidays: [],
    cap: null,
    sms: "yes",
    voice: "yes",
    zones: ["America/Chicago", "Etc/GMT+6"],
    source: "Miss. Code 77-3-723",
    note:
      "The statute says Central Standard Time: the hours are read on Central time (America/Chicago) and, " +
      "literally, on Central Standard Time all year (UTC−6, Etc/GMT+6), whatever the contact's zone: " +
      "8:00–20:00 in winter, 9:00–20:00 CDT while daylight saving time is on (fail closed).",
  },
  {
    state: "RI",
    hours: [null, ...Array.from({ length: 5 }, () => [9, 18] as const), [10, 17]],
    holidays: [...FEDERAL_HOLIDAYS, legalHolidaysOf("RI")],
    cap: null,
    sms: "unclear",
    voice: "yes",
    zones: null,
    source:
      "R.I. Gen. Laws §5-61-2(2), §5-61-3.6; state holidays of R.I. Gen. Laws §25-1-1 (from `date-holidays`, US-RI)",
    note:
      "9:00–18:00 Monday to Friday, 10:00–17:00 on Saturday, no Sundays, no state or federal holidays (Victory " +
      "Day included). Texts: unclear (telephone solicitation), applied.",
  },
  {
    state: "KY",
    hours: daily(10, 21),
    holidays: [],
    cap: null,
    sms: "unclear",
    voice: "yes",
    zones: null,
    source: "KRS 367.46955(15)",
    note: "No telephone solicitation before 10:00 or after 21:00. Texts: unclear, applied.",
  },
  {
    state: "MA",
    hours: daily(8, 20),
    holidays: [],
    cap: null,
    sms: "unclear",
    voice: "yes",
    zones: null,
    source: "M.G.L. c. 159C; 201 CMR 12.02",
    note: "No unsolicited telephone sales calls before 8:00 or after 20:00. Texts: unclear, applied.",
  },
  {
    state: "MI",
    hours: daily(9, 21),
    holidays: [],
    cap: null,
    sms: "unclear",
    voice: "yes",
    zones: null,
    source: "MCL 445.111b (Home Solicitation Sales Act)",
    note: "No telephone solicitation between 21:00 and 9:00. Texts: unclear, applied.",
  },
  {
    state: "MN",
    hours: daily(9, 21),
    holidays: [],
    cap: null,
    sms: "unclear",
    voice: "yes",
    zones: null,
    source: "Minn. Stat. 325E.27",
    note: "No telephone solicitation before 9:00 or after 21:00. Texts: unclear, applied.",
  },
  {
    state: "NV",
    hours: daily(9, 21),
    holidays: [],
    cap: null,
    sms: "no",
    voice: "yes",
    zones: null,
    source: "NRS 597.814(2)(a)",
    note:
      "Calls by an automatic dialing and announcing device with a prerecorded message (a campaign's `say` call " +
      "is one) not between 21:00 and 9:00; applied to every call (fail closed). Texts: not reached. Vendors " +
      "list 9:00–20:00; no statute with a 20:00 end was found.",
  },
  {
    state: "NJ",
    hours: daily(8, 21),
    holidays: [],
    cap: null,
    sms: "unclear",
    voice: "yes",
    zones: null,
    source: "N.J.S.A. 56:8-128",
    note: "Texts: unclear, applied.",
  },
  {
    state: "UT",
    hours: exceptSunday(8, 21),
    holidays: [...FEDERAL_HOLIDAYS, legalHolidaysOf("UT"), "utah_juneteenth"],
    cap: null,
    sms: "unclear",
    voice: "yes",
    zones: null,
    source: "Utah Code 13-25a-103; legal holidays of Utah Code 63G-1-301 (from `date-holidays`, US-UT)",
    note:
      "No Sundays or legal holidays without the recipient's consent; consent is not modelled (fail closed). " +
      "A holiday on a Saturday is kept on the Friday before, on a Sunday the Monday after (63G-1-301(2)); " +
      "Juneteenth also on the Monday of its week (63G-1-301(2)(c)-(d), since 2025). " +
      "Texts: unclear, applied.",
  },
  {
    state: "WA",
    hours: daily(8, 20),
    holidays: [],
    cap: null,
    sms: "unclear",
    voice: "yes",
    zones: null,
    source: "RCW 80.36.390",
    note: "Texts: unclear, applied.",
  },
  {
    state: "GA",
    hours: daily(8, 21),
    holidays: [],
    cap: null,
    sms: "no",
    voice: "yes",
    zones: null,
    source: "O.C.G.A. 46-5-27",
    note: "Voice only.",
  },
];

/*
 * Listed by compliance vendors but not in the table: NM (9–21) and PA (weekend and holiday
 * limits). No statute text was at hand to confirm their hours and reach; the federal 8:00–21:00
 * still applies to them. Add a row with its citation once confirmed.
 */

/**
 * Canada (not a state row): the CRTC Unsolicited Telecommunications Rules (Part III, telemarketing
 * rules, s. 3) allow telemarketing calls 9:00–21:30 on weekdays and 10:00–18:00 on weekends,
 * recipient local time. Calls to Canadian numbers only (voice channel). Quiet hours still apply
 * on top (by default they end the day at 21:00; a campaign or workspace whose quiet hours allow
 * later calls reaches 21:30 on weekdays).
 */
export const CRTC_CALL_RULE: StateRule = {
  state: "CA-CRTC",
  hours: [[10, 18], ...Array.from({ length: 5 }, () => [9, 21.5] as const), [10, 18]],
  holidays: [],
  cap: null,
  sms: "no",
  voice: "yes",
  zones: null,
  source: "CRTC Unsolicited Telecommunications Rules, Part III (Telemarketing Rules), s. 3",
  note: "Weekdays 9:00–21:30, weekends 10:00–18:00, recipient local time; calls only.",
};
