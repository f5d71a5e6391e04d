/**
 * Send windows: hour rules read on a wall clock, and the search for the next instant at which
 * every rule is open in every zone it is read in.
 *
 * A rule is a table of allowed half hours per weekday (slot s: s×30 minutes past midnight, for 30
 * minutes) plus holidays on which the whole day is closed. Rules open and close on the hour or the
 * half hour (the CRTC's 21:30), so a window opens on a half hour of some zone's wall clock; the
 * search jumps from one opening to the next instead of walking minutes.
 */
import { HolidayCalendar, type HolidaySource } from "./holidays";
import type { StateRule } from "./state-rules";
import { DAY_MS, instantOfWallTime, MINUTE_MS, wallTime, weekdayOfDay, zoneOffset } from "./zone-clock";

/** Why a send waits: which rule closed the window while it waited. */
export type DeferReason =
  | "quiet_hours"
  | `state_hours:${string}`
  | `sunday:${string}`
  | `holiday:${string}`
  | "no_window";

/** Half-hour slots in a day. */
export const SLOTS_PER_DAY = 48;
const SLOT_MS = 30 * MINUTE_MS;

/** An hour rule, compiled once and shared. */
export interface HourRule {
  /** Allowed half hours, SLOTS_PER_DAY per weekday (Sunday first): 1 allowed, 0 not. */
  readonly slots: Uint8Array;
  /** Per weekday (Sunday first): true when no half hour of the day is allowed. */
  readonly closedDays: readonly boolean[];
  readonly holidays: HolidayCalendar | null;
  /** Read in this zone instead of the recipient's local zones. */
  readonly zone: string | null;
  /** [zone] when zone is set (kept to avoid an array per check). */
  readonly ownZones: readonly string[] | null;
  readonly hoursReason: DeferReason;
  /** Reason when a whole Sunday is closed (no-Sunday states), else null (hoursReason is used). */
  readonly sundayReason: DeferReason | null;
  readonly holidayReason: DeferReason | null;
}

/** The slot table of allowed [from, to) hours per weekday (null: closed); hours on the half hour. */
function slotTable(days: readonly (readonly [from: number, to: number] | null)[]): {
  slots: Uint8Array;
  closedDays: readonly boolean[];
} {
  const slots = new Uint8Array(7 * SLOTS_PER_DAY);
  days.forEach((day, weekday) => {
    if (!day) return;
    const from = Math.max(0, Math.round(day[0] * 2));
    const to = Math.min(SLOTS_PER_DAY, Math.round(day[1] * 2));
    for (let slot = from; slot < to; slot++) slots[weekday * SLOTS_PER_DAY + slot] = 1;
  });
  const closedDays = Object.freeze(
    Array.from({ length: 7 }, (_, weekday) =>
      slots.subarray(weekday * SLOTS_PER_DAY, (weekday + 1) * SLOTS_PER_DAY).every((slot) => slot === 0),
    ),
  );
  return { slots, closedDays };
}

/**
 * Quiet hours as a rule: quiet from `start_hour` to `end_hour` (21 → 8 means sends 8:00–20:59);
 * a window across midnight the other way (1 → 6) works too; start = end means no quiet hours.
 * Returns null when nothing is quiet.
 */
export function quietHoursRule(
  startHour: number,
  endHour: number,
  zone: string | null = null,
): HourRule | null {
  const start = Math.trunc(startHour);
  const end = Math.trunc(endHour);
  const simple = zone === null && start >= 0 && start < 24 && end >= 0 && end < 24;
  const key = simple ? start * 24 + end : `${start}:${end}:${zone}`;
  const cached = simple ? quietRulesByHours[key as number] : quietRulesByKey.get(key as string);
  if (cached !== undefined) return cached;
  const isQuiet = (hour: number) =>
    start !== end && (start < end ? hour >= start && hour < end : hour >= start || hour < end);
  const open = Array.from({ length: 24 }, (_, hour) => hour).filter((hour) => !isQuiet(hour));
  const table = slotTable(Array.from({ length: 7 }, () => null));
  for (let weekday = 0; weekday < 7; weekday++)
    for (const hour of open)
      table.slots.fill(1, weekday * SLOTS_PER_DAY + hour * 2, weekday * SLOTS_PER_DAY + hour * 2 + 2);
  const rule: HourRule | null =
    open.length === 24
      ? null
      : Object.freeze({
          slots: table.slots,
          closedDays: Object.freeze(Array.from({ length: 7 }, () => open.length === 0)),
          holidays: null,
          zone,
          ownZones: zone === null ? null : Object.freeze([zone]),
          hoursReason: "quiet_hours" as const,
          sundayReason: null,
          holidayReason: null,
        });
  if (simple) quietRulesByHours[key as number] = rule;
  else {
    if (quietRulesByKey.size > 1000) quietRulesByKey.clear();
    quietRulesByKey.set(key as string, rule);
  }
  return rule;
}
const quietRulesByHours: (HourRule | null | undefined)[] = [];
const quietRulesByKey = new Map<string, HourRule | null>();

const calendars = new Map<string, HolidayCalendar>();
function calendarOf(ids: readonly HolidaySource[]): HolidayCalendar | null {
  if (ids.length === 0) return null;
  const key = [...new Set(ids)].sort().join(",");
  let calendar = calendars.get(key);
  if (!calendar) {
    calendar = new HolidayCalendar(key.split(",") as HolidaySource[]);
    calendars.set(key, calendar);
  }
  return calendar;
}

/**
 * A state row as an hour rule; `label` names it in reasons (the state, or "unknown"). `zones`
 * reads it in those zones instead of the recipient's (a row of an unknown state, read in its own
 * state's zones).
 */
export function stateHourRule(
  rule: StateRule,
  label = rule.state,
  zones: readonly string[] | null = null,
): HourRule {
  const table = slotTable(rule.hours);
  return Object.freeze({
    slots: table.slots,
    closedDays: table.closedDays,
    holidays: calendarOf(rule.holidays),
    zone: rule.zones?.[0] ?? null,
    ownZones:
      rule.zones === null ? (zones ? Object.freeze([...zones]) : null) : Object.freeze([...rule.zones]),
    hoursReason: `state_hours:${label}` as const,
    sundayReason: rule.hours[0] === null ? (`sunday:${label}` as const) : null,
    holidayReason: rule.holidays.length > 0 ? (`holiday:${label}` as const) : null,
  });
}

/** Why `rule` is closed at a wall time (a day and a half-hour slot of it), or null when it is open. */
function closedBy(rule: HourRule, day: number, slot: number): DeferReason | null {
  if (rule.holidays?.has(day)) return rule.holidayReason;
  const weekday = weekdayOfDay(day);
  if (rule.slots[weekday * SLOTS_PER_DAY + slot] === 1) return null;
  return weekday === 0 && rule.closedDays[0] && rule.sundayReason ? rule.sundayReason : rule.hoursReason;
}

/** How far ahead the search looks before it gives up (no window). */
export const SEARCH_HORIZON_MS = 14 * DAY_MS;

function addReason(reasons: DeferReason[], reason: DeferReason): void {
  if (!reasons.includes(reason)) reasons.push(reason);
}

/**
 * The first instant after `at` at which `rule`, read in `zone`, opens; `at` must be closed.
 * Adds the reasons of the whole days it skips (Sundays, holidays); the reason it is closed at `at`
 * is the caller's. Null when it stays closed past the horizon.
 */
function nextOpening(rule: HourRule, zone: string, at: number, reasons: DeferReason[]): number | null {
  const wall = wallTime(zone, at);
  let day = Math.floor(wall / DAY_MS);
  let slot = Math.floor((wall - day * DAY_MS) / SLOT_MS);
  const lastDay = day + SEARCH_HORIZON_MS / DAY_MS;
  for (; day <= lastDay; day++, slot = 0) {
    if (rule.holidays?.has(day)) {
      addReason(reasons, rule.holidayReason!);
      continue;
    }
    const weekday = weekdayOfDay(day);
    const base = weekday * SLOTS_PER_DAY;
    // First allowed half hour at or after `slot` (the one `at` is in is closed, so this is later).
    let open = slot;
    while (open < SLOTS_PER_DAY && rule.slots[base + open] !== 1) open++;
    if (open === SLOTS_PER_DAY) {
      addReason(
        reasons,
        weekday === 0 && rule.closedDays[0] && rule.sundayReason ? rule.sundayReason : rule.hoursReason,
      );
      continue;
    }
    const instant = instantOfWallTime(zone, day * DAY_MS + open * SLOT_MS, at);
    return instant > at ? instant : at + MINUTE_MS;
  }
  return null;
}

/** Rules to satisfy: each read in the local zones, or in its own zone when it has one. */
export interface WindowPlan {
  /** The recipient's local zones (from localTimeFor). */
  zones: readonly string[];
  rules: readonly HourRule[];
}

/** When sends may go: `at` (= from when open now) and why it waits; at null: no window within the horizon. */
export interface WindowAnswer {
  at: number | null;
  reasons: DeferReason[];
}

const OPEN_NOW_REASONS = Object.freeze([]) as unknown as DeferReason[]; // shared: never mutated

/**
 * The earliest instant ≥ `from` at which every rule of the plan is open in every zone it is read
 * in. Exact across DST changes (a window opening inside a spring-forward gap opens at the gap's
 * end), midnight, Sundays and holidays.
 */
export function findWindow(plan: WindowPlan, from: number): WindowAnswer {
  const { zones, rules } = plan;
  if (rules.length === 0) return { at: from, reasons: OPEN_NOW_REASONS };
  let reasons: DeferReason[] | null = null;
  let at = from;
  for (let round = 0; round < 1000; round++) {
    let next = at;
    for (const rule of rules) {
      const ruleZones = rule.ownZones ?? zones;
      if (ruleZones.length === 0) {
        // No local time is known: nothing can be checked, so nothing is sent.
        reasons ??= [];
        addReason(reasons, rule.hoursReason);
        addReason(reasons, "no_window");
        return { at: null, reasons };
      }
      for (const zone of ruleZones) {
        const wall = at + zoneOffset(zone, at);
        const day = Math.floor(wall / DAY_MS);
        const reason = closedBy(rule, day, Math.floor((wall - day * DAY_MS) / SLOT_MS));
        if (reason === null) continue;
        reasons ??= [];
        addReason(reasons, reason);
        const opening = nextOpening(rule, zone, at, reasons);
        if (opening === null) {
          addReason(reasons, "no_window");
          return { at: null, reasons };
        }
        if (opening > next) next = opening;
      }
    }
    if (next === at) return { at, reasons: reasons ?? OPEN_NOW_REASONS };
    at = next;
    if (at - from > SEARCH_HORIZON_MS) break;
  }
  reasons ??= [];
  addReason(reasons, "no_window");
  return { at: null, reasons };
}
