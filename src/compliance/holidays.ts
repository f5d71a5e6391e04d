/**
 * US holidays for the state rules that forbid sends on them, computed per year (pure).
 *
 * Federal legal holidays are 5 U.S.C. 6103(a). A fixed-date holiday that falls on a Saturday is
 * observed the Friday before, on a Sunday the Monday after (5 U.S.C. 6103(b), Executive Order
 * 11582); New Year's Day on a Saturday is observed on December 31 of the year before. Fail closed:
 * a rule that forbids a holiday forbids both the date itself and the observed date.
 */
import Holidays from "date-holidays";
import { DAY_MS, dateOfDay, dayOfDate, weekdayOfDay } from "./zone-clock";

type HolidayDate =
  | { kind: "fixed"; month: number; day: number; observedShift: boolean }
  | { kind: "nth_weekday"; month: number; weekday: number; n: number } // n = -1: the last one
  | { kind: "easter"; offsetDays: number }
  /** Observed on a Monday: the one before when the date is a Tuesday–Friday, after it on a weekend. */
  | { kind: "monday_of"; month: number; day: number };

interface HolidayDefinition {
  name: string;
  date: HolidayDate;
  /** First year the holiday exists (Juneteenth: 2021). */
  since?: number;
}

const fixed = (month: number, day: number, observedShift = true): HolidayDate => ({
  kind: "fixed",
  month,
  day,
  observedShift,
});
const nth = (n: number, weekday: number, month: number): HolidayDate => ({
  kind: "nth_weekday",
  month,
  weekday,
  n,
});
const MONDAY = 1;
const THURSDAY = 4;

/** Every holiday a state rule can name. */
export const HOLIDAY_DEFINITIONS = {
  new_years_day: { name: "New Year's Day", date: fixed(1, 1) },
  mlk_day: { name: "Birthday of Martin Luther King, Jr.", date: nth(3, MONDAY, 1) },
  presidents_day: { name: "Washington's Birthday", date: nth(3, MONDAY, 2) },
  memorial_day: { name: "Memorial Day", date: nth(-1, MONDAY, 5) },
  juneteenth: { name: "Juneteenth National Independence Day", date: fixed(6, 19), since: 2021 },
  independence_day: { name: "Independence Day", date: fixed(7, 4) },
  labor_day: { name: "Labor Day", date: nth(1, MONDAY, 9) },
  columbus_day: { name: "Columbus Day", date: nth(2, MONDAY, 10) },
  veterans_day: { name: "Veterans Day", date: fixed(11, 11) },
  thanksgiving: { name: "Thanksgiving Day", date: nth(4, THURSDAY, 11) },
  christmas: { name: "Christmas Day", date: fixed(12, 25) },
  // State holidays (see the state rows that name them).
  mardi_gras: { name: "Mardi Gras", date: { kind: "easter", offsetDays: -47 } },
  good_friday: { name: "Good Friday", date: { kind: "easter", offsetDays: -2 } },
  battle_of_new_orleans: { name: "Battle of New Orleans", date: fixed(1, 8, false) },
  huey_p_long_day: { name: "Huey P. Long Day", date: fixed(8, 30, false) },
  all_saints_day: { name: "All Saints' Day", date: fixed(11, 1, false) },
  confederate_memorial_day: { name: "Confederate Memorial Day", date: nth(4, MONDAY, 4) },
  jefferson_davis_birthday: { name: "Jefferson Davis' Birthday", date: nth(1, MONDAY, 6) },
  // Utah Code 63G-1-301(2)(c)-(d) (2025): Juneteenth is kept on the Monday of its week, or the Monday
  // after when June 19 is a weekend day (date-holidays does not know this yet).
  utah_juneteenth: {
    name: "Juneteenth National Freedom Day (Utah)",
    date: { kind: "monday_of", month: 6, day: 19 },
    since: 2025,
  },
} satisfies Record<string, HolidayDefinition>;

export type HolidayId = keyof typeof HOLIDAY_DEFINITIONS;

/**
 * A state's legal (public) holidays as the `date-holidays` library knows them, observed days
 * included ("legal_holidays:RI"): state rows name these rather than a hand-written list.
 */
export type StateHolidays = `legal_holidays:${string}`;
/** What a state row may name: one holiday of HOLIDAY_DEFINITIONS, or a state's legal holidays. */
export type HolidaySource = HolidayId | StateHolidays;

export const legalHolidaysOf = (state: string): StateHolidays => `legal_holidays:${state}`;

const librariesByState = new Map<string, Holidays>();

/**
 * The public holidays of a US state in a year from `date-holidays` (federal and state days, with
 * the days they are observed on), as day numbers with names; state "" is the federal list.
 *
 * Fail closed: a day the library lists on a Saturday also closes the Friday before, on a Sunday the
 * Monday after, when the library gives it no substitute day of its own (it leaves some out: Utah's
 * Pioneer Day on Saturday 2027-07-24 is kept on Friday the 23rd, Utah Code 63G-1-301(2)(a)-(b), as
 * federal days are, 5 U.S.C. 6103(b)).
 */
export function stateLegalHolidays(state: string, year: number): { day: number; name: string }[] {
  let library = librariesByState.get(state);
  if (!library) {
    library = state ? new Holidays("US", state) : new Holidays("US");
    librariesByState.set(state, library);
  }
  const listed = library
    .getHolidays(year)
    .filter((holiday) => holiday.type === "public")
    .map((holiday) => {
      const [y, m, d] = holiday.date.slice(0, 10).split("-").map(Number) as [number, number, number];
      return { day: dayOfDate(y, m, d), name: holiday.name };
    });
  const days = [...listed];
  for (const { day, name } of listed) {
    const weekday = weekdayOfDay(day);
    if (weekday !== 0 && weekday !== 6) continue;
    if (listed.some((other) => other.name.startsWith(name) && other.day !== day)) continue; // has a substitute
    days.push({ day: weekday === 6 ? day - 1 : day + 1, name: `${name} (observed)` });
  }
  return days;
}

/** Every day (with its name) a holiday source closes in a year: a date and its observed date. */
function daysOf(source: HolidaySource, year: number): { day: number; name: string }[] {
  if (source.startsWith("legal_holidays:")) return stateLegalHolidays(source.slice(15), year);
  const occurrence = holidayIn(source as HolidayId, year);
  if (!occurrence) return [];
  const days = [{ day: occurrence.day, name: occurrence.name }];
  if (occurrence.observed !== occurrence.day)
    days.push({ day: occurrence.observed, name: `${occurrence.name} (observed)` });
  return days;
}

/** The eleven federal legal holidays. */
export const FEDERAL_HOLIDAYS: readonly HolidayId[] = [
  "new_years_day",
  "mlk_day",
  "presidents_day",
  "memorial_day",
  "juneteenth",
  "independence_day",
  "labor_day",
  "columbus_day",
  "veterans_day",
  "thanksgiving",
  "christmas",
];

/** Day number of Easter Sunday (Gregorian, anonymous algorithm of Meeus/Jones/Butcher). */
function easterDay(year: number): number {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return dayOfDate(year, month, day);
}

function nthWeekday(year: number, month: number, weekday: number, n: number): number {
  if (n > 0) {
    const first = dayOfDate(year, month, 1);
    return first + ((weekday - weekdayOfDay(first) + 7) % 7) + (n - 1) * 7;
  }
  const last = dayOfDate(year, month + 1, 1) - 1; // Date.UTC rolls month 13 into January
  return last - ((weekdayOfDay(last) - weekday + 7) % 7);
}

/** One holiday in one year: its date and, when it moves, the day it is observed (day numbers). */
export interface HolidayOccurrence {
  id: HolidayId;
  name: string;
  day: number;
  observed: number;
}

/** The holiday `id` in `year`, or null before the holiday existed. */
export function holidayIn(id: HolidayId, year: number): HolidayOccurrence | null {
  const definition: HolidayDefinition = HOLIDAY_DEFINITIONS[id];
  if (definition.since !== undefined && year < definition.since) return null;
  const date = definition.date;
  let day: number;
  let observed: number;
  switch (date.kind) {
    case "fixed": {
      day = dayOfDate(year, date.month, date.day);
      const weekday = weekdayOfDay(day);
      observed = !date.observedShift ? day : weekday === 6 ? day - 1 : weekday === 0 ? day + 1 : day;
      break;
    }
    case "nth_weekday":
      day = observed = nthWeekday(year, date.month, date.weekday, date.n);
      break;
    case "easter":
      day = observed = easterDay(year) + date.offsetDays;
      break;
    case "monday_of": {
      day = dayOfDate(year, date.month, date.day);
      const weekday = weekdayOfDay(day);
      observed = weekday === 0 ? day + 1 : weekday === 6 ? day + 2 : day - (weekday - 1);
      break;
    }
  }
  return { id, name: definition.name, day, observed };
}

/** ISO date (YYYY-MM-DD) of a day number. */
export function isoDateOfDay(dayNumber: number): string {
  return new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
}

/** The federal holidays of a year with their dates and observed dates, as ISO dates. */
export function usFederalHolidays(
  year: number,
): { id: HolidayId; name: string; date: string; observed: string }[] {
  const list: { id: HolidayId; name: string; date: string; observed: string }[] = [];
  for (const id of FEDERAL_HOLIDAYS) {
    const occurrence = holidayIn(id, year);
    if (occurrence) {
      list.push({
        id,
        name: occurrence.name,
        date: isoDateOfDay(occurrence.day),
        observed: isoDateOfDay(occurrence.observed),
      });
    }
  }
  return list;
}

/**
 * A set of holidays asked "is this day a holiday?" per local day. Each year's days (dates and
 * observed dates) are computed once; a year's set also holds the days the neighbouring years'
 * holidays are observed on (New Year's Day on a Saturday is observed on December 31).
 */
export class HolidayCalendar {
  private readonly years = new Map<number, Set<number>>();

  constructor(readonly ids: readonly HolidaySource[]) {}

  /** True when `dayNumber` (days since 1970-01-01, local date) is one of the holidays or observed. */
  has(dayNumber: number): boolean {
    const { year } = dateOfDay(dayNumber);
    let days = this.years.get(year);
    if (!days) {
      days = new Set();
      for (const y of [year - 1, year, year + 1]) {
        for (const id of this.ids) for (const entry of daysOf(id, y)) days.add(entry.day);
      }
      if (this.years.size > 200) this.years.clear();
      this.years.set(year, days);
    }
    return days.has(dayNumber);
  }

  /** Names of the holidays on `dayNumber` (for explanations and tests). */
  namesOn(dayNumber: number): string[] {
    const { year } = dateOfDay(dayNumber);
    const names: string[] = [];
    for (const y of [year - 1, year, year + 1]) {
      for (const id of this.ids) {
        for (const entry of daysOf(id, y)) if (entry.day === dayNumber) names.push(entry.name);
      }
    }
    return names;
  }
}
