import { timezoneForPhone } from "../../lib/area-codes";

/**
 * The answer every campaign send asks for at the moment of sending: send now, defer until an
 * instant, or skip with a reason (API.md §6.1).
 *
 * INTERIM: the compliance module (`src/compliance/`, state rules, frequency caps, content lint) is
 * being written separately; until it is merged this holds only the workspace/campaign quiet hours
 * by the recipient's local time, failing closed when the zone is unknown. It is the one function
 * campaigns call, and it will be replaced by the module's `decideSend`.
 */
export type SendDecision =
  | { action: "send" }
  | { action: "defer"; until: number; reason: string }
  | { action: "skip"; reason: string };

export interface SendDecisionInput {
  phoneNumber: string;
  /** The contact's IANA zone, if known. */
  timezone: string | null;
  quietHours: { enabled: boolean; start_hour: number; end_hour: number };
  now: number;
}

/** Zones of the continental US and beyond: the window allowed in all of them when the zone is unknown. */
const US_ZONES = [
  "America/New_York",
  "America/Chicago",
  "America/Denver",
  "America/Los_Angeles",
  "America/Anchorage",
  "Pacific/Honolulu",
];

export function decideSend(input: SendDecisionInput): SendDecision {
  const { quietHours, now } = input;
  if (!quietHours.enabled || quietHours.start_hour === quietHours.end_hour) return { action: "send" };
  const zone = input.timezone ?? timezoneForPhone(input.phoneNumber);
  const zones = zone ? [zone] : US_ZONES;
  // The first instant (on a minute) allowed in every zone; a few passes settle it.
  let at = now;
  for (let pass = 0; pass < zones.length * 3; pass++) {
    let moved = false;
    for (const z of zones) {
      const next = nextAllowed(z, at, quietHours.start_hour, quietHours.end_hour);
      if (next > at) {
        at = next;
        moved = true;
      }
    }
    if (!moved) break;
  }
  if (at <= now) return { action: "send" };
  return { action: "defer", until: at, reason: zone ? "quiet_hours" : "quiet_hours_unknown_zone" };
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function localHourMinute(zone: string, ms: number): { hour: number; minute: number } {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(zone, formatter);
  }
  let hour = 0;
  let minute = 0;
  for (const part of formatter.formatToParts(ms)) {
    if (part.type === "hour") hour = Number(part.value);
    if (part.type === "minute") minute = Number(part.value);
  }
  return { hour, minute };
}

/** `ms` when it is outside the quiet window in `zone`, else the next local `end:00`. */
function nextAllowed(zone: string, ms: number, start: number, end: number): number {
  const { hour, minute } = localHourMinute(zone, ms);
  const quiet = start > end ? hour >= start || hour < end : hour >= start && hour < end;
  if (!quiet) return ms;
  const minutesNow = hour * 60 + minute;
  const wait = (end * 60 - minutesNow + 1440) % 1440;
  let at = Math.floor(ms / 60_000) * 60_000 + wait * 60_000;
  // A DST change in between shifts the wall clock by up to an hour: correct once.
  const check = localHourMinute(zone, at);
  const drift = (check.hour * 60 + check.minute - end * 60 + 1440) % 1440;
  if (drift !== 0) at -= (drift > 720 ? drift - 1440 : drift) * 60_000;
  return at;
}
