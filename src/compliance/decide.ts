/**
 * decideSend: for one contact, one channel and one moment — send now, defer until T, or skip with a
 * reason (API.md §6.1). Pure: plain data in, plain data out, the clock passed in. Callers resolve
 * suppression, opt-out, settings and the contact's recent sends; they ask at the moment of sending
 * (not only at launch) and again when a deferral comes due.
 */
import { areaCodesWithRegion, regionOfAreaCode } from "../lib/area-code-regions";
import { type LocalTime, localTimeFor, nanpAreaCode } from "./local-time";
import { CRTC_CALL_RULE, STATE_RULES, type StateRule } from "./state-rules";
import {
  type DeferReason,
  findWindow,
  type HourRule,
  quietHoursRule,
  SEARCH_HORIZON_MS,
  stateHourRule,
  type WindowAnswer,
} from "./windows";
import { HOUR_MS, isKnownZone } from "./zone-clock";

export type Channel = "sms" | "voice";

/**
 * marketing: campaign, flow, agent follow-up (every rule); transactional: a one-off API send
 * (suppression and opt-out only); reply: an agent's answer to the contact's own message (quiet
 * hours only, read in `quiet_hours.timezone` when given; no state rules, caps or pauses).
 */
export type SendKind = "marketing" | "transactional" | "reply";

/**
 * Why a send is skipped. Closed set, shared by every sending path: `duplicate` is decided by the
 * callers (the same contact twice in one audience) but counted under the same names;
 * `unregistered_number` by the sender check (src/compliance/sender.ts) once a sender is picked.
 */
export const SKIP_REASONS = [
  "suppressed",
  "opted_out",
  "no_phone",
  "invalid_phone",
  "frequency_cap",
  "state_paused",
  "duplicate",
  "unregistered_number",
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export type { DeferReason } from "./windows";

export interface QuietHours {
  enabled: boolean;
  /** Quiet from start_hour to end_hour: 21 → 8 means sends 8:00–20:59. Equal hours: nothing is quiet. */
  start_hour: number;
  end_hour: number;
  /** Read the hours in this zone (an agent's quiet_tz) instead of the contact's local time. */
  timezone?: string | null;
}

export interface FrequencyCap {
  enabled: boolean;
  max_messages: number;
  window_hours: number;
  /** true: everyone; false: only contacts of capped states (with state_rules on). */
  apply_to_all: boolean;
}

/** API.md defaults, used when a field is left out. */
export const DEFAULT_QUIET_HOURS: QuietHours = Object.freeze({ enabled: true, start_hour: 21, end_hour: 8 });
export const DEFAULT_FREQUENCY_CAP: FrequencyCap = Object.freeze({
  enabled: true,
  max_messages: 3,
  window_hours: 24,
  apply_to_all: false,
});

export interface SendInput {
  channel: Channel;
  kind: SendKind;
  /** The contact's number in E.164, or null. */
  phone: string | null;
  /**
   * The zone the contact (or its import) gave, used alone; null: the number decides (every zone
   * its area code spans). Pass a zone shown for display only (`timezone_source: area_code`) as null.
   */
  timezone: string | null;
  /**
   * The state or province the contact (or its import) gave (two letters): the state rules use it
   * before the area code's state. Null or absent: the area code's state.
   */
  state?: string | null;
  /** On the workspace's suppression list. */
  suppressed: boolean;
  /** Opted out (opted_in false). */
  opted_out: boolean;
  /** Effective quiet hours: the workspace's, or a campaign's own. Default: enabled, 21 → 8. */
  quiet_hours?: QuietHours;
  /** Apply the built-in state table (default true). */
  state_rules?: boolean;
  /** State / province codes an operator has stopped (e.g. ["LA"]); applies whatever state_rules says. */
  paused_states?: readonly string[];
  /** Workspace frequency cap. Default: enabled, 3 per 24 h, capped states only. */
  frequency_cap?: FrequencyCap;
  /**
   * Times (epoch ms) of the contact's recent marketing sends (campaign, flow, agent follow-up) on
   * any channel; replies and one-off sends are not counted. Must cover `capLookbackMs(input)`.
   */
  recent_sends?: readonly number[];
}

export type SendDecision =
  | { action: "send" }
  | { action: "defer"; until: number; reasons: DeferReason[] }
  | { action: "skip"; reason: SkipReason };

const SEND: SendDecision = Object.freeze({ action: "send" });
const SKIPS = Object.fromEntries(
  SKIP_REASONS.map((reason) => [reason, Object.freeze({ action: "skip", reason })]),
) as Record<SkipReason, SendDecision>;

// 1. Phones --------------------------------------------------------------------------------------

const E164 = /^\+[1-9][0-9]{6,14}$/;

/** none: no number; invalid: not a dialable E.164 number; else ok. */
function phoneStatus(phone: string | null | undefined): "none" | "invalid" | "ok" {
  if (phone === null || phone === undefined || phone.trim() === "") return "none";
  if (!E164.test(phone)) return "invalid";
  if (phone.charCodeAt(1) === 49 /* +1 */) {
    // NANP: exactly ten digits and an area code that can exist (NXX: not 0 or 1 first).
    if (phone.length !== 12) return "invalid";
    const first = phone.charCodeAt(2);
    if (first === 48 || first === 49) return "invalid";
  }
  return "ok";
}

// 2. State of the number --------------------------------------------------------------------------

/**
 * known: a state or territory of the table's country (its row may be null: no special rule);
 * unknown: a +1 number whose area code is not in the table (could be any state: fail closed);
 * none: not a US number (Canada, Caribbean, other countries), no US state rule applies.
 */
type NumberState =
  | {
      kind: "known";
      regions: readonly string[];
      rule: StateRule | null;
      /** A Canadian number whose contact gave a US state: the CRTC's call hours apply too. */
      canadianNumber?: boolean;
    }
  | { kind: "unknown" }
  | { kind: "none"; regions: readonly string[]; canada: boolean };

const NO_REGIONS: readonly string[] = Object.freeze([]);
const UNKNOWN_STATE: NumberState = Object.freeze({ kind: "unknown" });
const NOT_US: NumberState = Object.freeze({ kind: "none", regions: NO_REGIONS, canada: false });
const statesByAreaCode = new Map<string, NumberState>();
const RULES_BY_STATE = new Map(STATE_RULES.map((rule) => [rule.state, rule]));
const regionsOf = (country: string) =>
  new Set(
    areaCodesWithRegion().flatMap((code) => {
      const region = regionOfAreaCode(code);
      return region?.country === country ? region.regions : [];
    }),
  );
const US_STATES = regionsOf("US");
const CA_PROVINCES = regionsOf("CA");

const statesByGivenState = new Map<string, NumberState>();

/**
 * The state whose rules apply: the contact's own `state` when it is a known US state or Canadian
 * province code, else the number's area code's state. A Canadian number keeps the CRTC's call
 * hours (API.md §7.1: calls to Canadian numbers) whatever state its contact gave.
 */
function recipientState(phone: string, given: string | null | undefined): NumberState {
  if (!given) return numberState(phone);
  const code = given.toUpperCase();
  const own = numberState(phone);
  const canadianNumber = own.kind === "none" && own.canada;
  const key = canadianNumber ? `${code}:CA` : code;
  let state = statesByGivenState.get(key);
  if (state) return state;
  if (US_STATES.has(code)) {
    const rule = RULES_BY_STATE.get(code) ?? null;
    state = Object.freeze({
      kind: "known",
      regions: [code],
      rule,
      ...(canadianNumber ? { canadianNumber } : {}),
    });
  } else if (CA_PROVINCES.has(code)) {
    state = Object.freeze({ kind: "none", regions: [code], canada: true });
  } else return own; // not a code the table knows: the area code decides
  statesByGivenState.set(key, state);
  return state;
}

function numberState(phone: string): NumberState {
  const areaCode = nanpAreaCode(phone);
  if (!areaCode) return NOT_US;
  let state = statesByAreaCode.get(areaCode);
  if (state) return state;
  const region = regionOfAreaCode(areaCode);
  if (!region) state = UNKNOWN_STATE;
  else if (region.country !== "US")
    state = Object.freeze({ kind: "none", regions: region.regions, canada: region.country === "CA" });
  else {
    const rule =
      region.regions.map((code) => RULES_BY_STATE.get(code)).find((row) => row !== undefined) ?? null;
    state = Object.freeze({ kind: "known", regions: region.regions, rule });
  }
  statesByAreaCode.set(areaCode, state);
  return state;
}

// 3. Rules per channel, compiled once --------------------------------------------------------------

function reaches(rule: StateRule, channel: Channel): boolean {
  return (channel === "sms" ? rule.sms : rule.voice) !== "no";
}

interface Cap {
  max_messages: number;
  window_hours: number;
}

interface CompiledState {
  hourRules: readonly HourRule[];
  /** The state's own caps (one, or for an unknown state every distinct cap of the table). */
  caps: readonly Cap[];
}

const NO_STATE_RULES: CompiledState = Object.freeze({ hourRules: [], caps: [] });

function compileState(rule: StateRule, channel: Channel): CompiledState {
  return reaches(rule, channel)
    ? Object.freeze({ hourRules: Object.freeze([stateHourRule(rule)]), caps: rule.cap ? [rule.cap] : [] })
    : NO_STATE_RULES;
}

/** Every zone the area codes of a state (or of Canada, for "CA-CRTC") span. */
function zonesOfRow(rule: StateRule): string[] {
  const zones = new Set<string>();
  for (const code of areaCodesWithRegion()) {
    const region = regionOfAreaCode(code);
    if (!region) continue;
    const inRow =
      rule.state === CRTC_CALL_RULE.state ? region.country === "CA" : region.regions.includes(rule.state);
    if (inRow) for (const zone of localTimeFor(`+1${code}5550100`, null).zones) zones.add(zone);
  }
  return [...zones];
}

/**
 * Unknown state (a +1 area code the table does not know): every row that reaches the channel at
 * once (Canada's CRTC hours too), each read in every zone of its own state (the number is in one
 * state, in one of its zones: a row read in another state's zones would close windows no number can
 * be in), and every cap. Quiet hours still hold in every NANP zone (NANP_FALLBACK_ZONES).
 */
function compileUnknown(channel: Channel): CompiledState {
  const rows = [...STATE_RULES, CRTC_CALL_RULE].filter((rule) => reaches(rule, channel));
  const caps = new Map<string, Cap>();
  for (const rule of rows)
    if (rule.cap) caps.set(`${rule.cap.max_messages}/${rule.cap.window_hours}`, rule.cap);
  return Object.freeze({
    hourRules: Object.freeze(
      rows.map((rule) => stateHourRule(rule, "unknown", rule.zones === null ? zonesOfRow(rule) : null)),
    ),
    caps: [...caps.values()],
  });
}

const compiled = {
  sms: new Map(STATE_RULES.map((rule) => [rule, compileState(rule, "sms")])),
  voice: new Map(STATE_RULES.map((rule) => [rule, compileState(rule, "voice")])),
};
const compiledUnknown = { sms: compileUnknown("sms"), voice: compileUnknown("voice") };
const compiledCanada = {
  sms: compileState(CRTC_CALL_RULE, "sms"),
  voice: compileState(CRTC_CALL_RULE, "voice"),
};

/** A US state's rules with the CRTC's call hours added (a Canadian number, a US state given). */
const withCanada = {
  sms: new Map<StateRule | null, CompiledState>(),
  voice: new Map<StateRule | null, CompiledState>(),
};
function stateAndCanada(rule: StateRule | null, channel: Channel): CompiledState {
  let both = withCanada[channel].get(rule);
  if (!both) {
    const own = rule ? (compiled[channel].get(rule) ?? NO_STATE_RULES) : NO_STATE_RULES;
    const canada = compiledCanada[channel];
    both = Object.freeze({
      hourRules: Object.freeze([...own.hourRules, ...canada.hourRules]),
      caps: [...own.caps, ...canada.caps],
    });
    withCanada[channel].set(rule, both);
  }
  return both;
}

function stateRulesFor(state: NumberState, channel: Channel): CompiledState {
  if (state.kind === "unknown") return compiledUnknown[channel];
  if (state.kind === "known" && state.canadianNumber) return stateAndCanada(state.rule, channel);
  if (state.kind === "known" && state.rule) return compiled[channel].get(state.rule) ?? NO_STATE_RULES;
  if (state.kind === "none" && state.canada) return compiledCanada[channel];
  return NO_STATE_RULES;
}

// 4. Windows -----------------------------------------------------------------------------------------

/** The part of SendInput that decides *when* a send may go. */
export type WindowInput = Pick<
  SendInput,
  "channel" | "kind" | "phone" | "timezone" | "state" | "quiet_hours" | "state_rules"
>;

function windowPlan(
  input: WindowInput,
  local: LocalTime,
  state: CompiledState,
): { zones: readonly string[]; rules: HourRule[] } {
  const rules: HourRule[] = [];
  const quiet = input.quiet_hours ?? DEFAULT_QUIET_HOURS;
  if (input.kind !== "transactional" && quiet.enabled) {
    // A quiet-hours zone the runtime does not know is ignored: the contact's local time is used.
    const zone = quiet.timezone && isKnownZone(quiet.timezone) ? quiet.timezone : null;
    const rule = quietHoursRule(quiet.start_hour, quiet.end_hour, zone);
    if (rule) rules.push(rule);
  }
  if (input.kind === "marketing" && input.state_rules !== false) {
    for (const rule of state.hourRules) rules.push(rule);
  }
  return { zones: local.zones, rules };
}

/**
 * When a send may go at the earliest, from `from` on: `at` equals `from` when the window is open
 * now, else the first allowed minute after it, with the reasons it waits (for previews and dry
 * runs). `at` is null when no minute is allowed within 14 days (rules that leave no window, or a
 * number with no known local time). Suppression, caps and pauses are not considered here.
 */
export function nextAllowedAt(input: WindowInput, from: number): WindowAnswer {
  const phone = phoneStatus(input.phone) === "ok" ? input.phone : null;
  const local = localTimeFor(phone, input.timezone);
  const state = phone ? stateRulesFor(recipientState(phone, input.state), input.channel) : NO_STATE_RULES;
  return findWindow(windowPlan(input, local, state), from);
}

// 5. Caps -------------------------------------------------------------------------------------------

/** How far back `recent_sends` must reach for the caps that can apply (ms). */
export function capLookbackMs(input: Pick<SendInput, "frequency_cap">): number {
  const cap = input.frequency_cap ?? DEFAULT_FREQUENCY_CAP;
  const stateWindow = Math.max(0, ...STATE_RULES.map((rule) => rule.cap?.window_hours ?? 0));
  return Math.max(cap.enabled ? cap.window_hours : 0, stateWindow) * HOUR_MS;
}

function overCap(recent: readonly number[], at: number, maxMessages: number, windowHours: number): boolean {
  const since = at - windowHours * HOUR_MS;
  let count = 0;
  for (const sent of recent) if (sent > since) count++; // a send exactly window_hours ago has aged out
  return count >= maxMessages;
}

// 6. The decision --------------------------------------------------------------------------------

/**
 * Send now, defer until the next allowed minute, or skip with a reason.
 *
 * Order: suppressed → opted_out → no_phone → invalid_phone (every kind); transactional sends stop
 * there (send). Replies: quiet hours only. Marketing: state_paused → the window (quiet hours and,
 * with state_rules, the state's hours, Sundays and holidays; the stricter wins) → frequency caps,
 * counted at the moment the send would go (now, or the deferral's end).
 *
 * Fail closed: an unknown zone reads the window in every zone of the number's country; a +1 number
 * whose area code is unknown gets every state row at once (latest start, earliest end, no Sundays,
 * every holiday, every cap) and is skipped as state_paused while any state is paused.
 *
 * Not asked here: the single confirmation sent after an opt-out (it goes to an opted-out contact
 * by design, FCC 24-24) and keyword answers (HELP/STOP), which are the inbound path's own.
 */
export function decideSend(input: SendInput, now: number): SendDecision {
  if (input.suppressed) return SKIPS.suppressed;
  if (input.opted_out) return SKIPS.opted_out;
  const status = phoneStatus(input.phone);
  if (status === "none") return SKIPS.no_phone;
  if (status === "invalid") return SKIPS.invalid_phone;
  if (input.kind === "transactional") return SEND;
  const phone = input.phone as string;

  const marketing = input.kind === "marketing";
  const numberStateOfPhone = marketing ? recipientState(phone, input.state) : NOT_US;
  if (marketing && input.paused_states && input.paused_states.length > 0) {
    if (isPaused(numberStateOfPhone, input.paused_states)) return SKIPS.state_paused;
  }

  const stateRulesOn = input.state_rules !== false;
  const state = marketing && stateRulesOn ? stateRulesFor(numberStateOfPhone, input.channel) : NO_STATE_RULES;
  const window = findWindow(windowPlan(input, localTimeFor(phone, input.timezone), state), now);
  const at = window.at ?? now + SEARCH_HORIZON_MS;

  if (marketing) {
    const recent = input.recent_sends ?? [];
    for (const cap of state.caps) {
      if (overCap(recent, at, cap.max_messages, cap.window_hours)) return SKIPS.frequency_cap;
    }
    const cap = input.frequency_cap ?? DEFAULT_FREQUENCY_CAP;
    const capped = state.caps.length > 0; // a capped state, or an unknown one (fail closed)
    if (
      cap.enabled &&
      (cap.apply_to_all || capped) &&
      overCap(recent, at, cap.max_messages, cap.window_hours)
    ) {
      return SKIPS.frequency_cap;
    }
  }
  if (at === now) return SEND;
  return { action: "defer", until: at, reasons: window.reasons };
}

/**
 * Every state, territory and province code a number can be placed in (the codes `paused_states`
 * may name): the regions of the area-code table, US and Canada.
 */
export const STATE_CODES: ReadonlySet<string> = new Set(
  areaCodesWithRegion().flatMap((code) => regionOfAreaCode(code)?.regions ?? []),
);

function isPaused(state: NumberState, paused: readonly string[]): boolean {
  if (state.kind === "unknown") return true; // could be a paused state
  for (const region of state.regions) {
    for (const code of paused) if (code.toUpperCase() === region) return true;
  }
  return false;
}
