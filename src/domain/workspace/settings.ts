import { and, eq, isNull } from "drizzle-orm";
import { STATE_CODES } from "../../compliance";
import type { Db, DbOrTx } from "../../db/client";
import { type WorkspaceRow, workspaces } from "../../db/schema";
import { invalid, notFound } from "../../lib/errors";
import { isTimeZone } from "../../lib/time";
import { invalidateTrackingFlags } from "../attribution/conversions";
import { checkCurrency } from "../attribution/values";
import { invalidateKeyCache } from "./api-keys";
import { DAILY_BUDGETS } from "./daily-budgets";
import { newPublicId } from "./workspaces";

/** A cost per unit: finite, 0 to 100. */
function checkCost(value: number, field: string): number {
  if (!Number.isFinite(value) || value < 0 || value > 100)
    throw invalid(`${field} must be a number between 0 and 100`);
  return value;
}

/** A daily budget: a whole number from 0, or null for none. */
function checkDailyBudget(value: number | null | undefined, field: string) {
  if (value === undefined || value === null) return;
  if (!Number.isSafeInteger(value) || value < 0)
    throw invalid(`${field} must be a non-negative integer or null`);
}

export interface WorkspaceSettings {
  name: string;
  timezone: string;
  default_number_id: string | null;
  conversion_tracking_enabled: boolean;
  help_reply: string;
  opt_out_reply: string;
  opt_in_reply: string;
  quiet_hours: { enabled: boolean; start_hour: number; end_hour: number };
  /** What sends cost, for analytics cost and ROI (API.md §6.5). */
  costs: { sms_segment: number; call_minute: number; currency: string };
  /** The id the tracking script names the workspace by (`/t.js?w=`); read-only. */
  public_id: string;
  /** Apply the built-in US state table to marketing sends (API.md §6.1). */
  state_rules: boolean;
  frequency_cap: { enabled: boolean; max_messages: number; window_hours: number; apply_to_all: boolean };
  /** States / provinces whose marketing sends are skipped as `state_paused`. */
  paused_states: string[];
  /** Sends from US local numbers need an APPROVED 10DLC campaign (API.md §3 10DLC). */
  require_registration: boolean;
  /** One-off sends (messages and calls) per UTC day; null = no budget (API.md §7.2). */
  one_off_daily_limit: number | null;
  /** Numbers ordered per UTC day; null = no budget (API.md §7.2). */
  number_orders_daily_limit: number | null;
}

export type SettingsPatch = Partial<
  Omit<WorkspaceSettings, "quiet_hours" | "costs" | "public_id" | "frequency_cap">
> & {
  quiet_hours?: Partial<WorkspaceSettings["quiet_hours"]>;
  costs?: Partial<WorkspaceSettings["costs"]>;
  frequency_cap?: Partial<WorkspaceSettings["frequency_cap"]>;
};

export function settingsOf(row: WorkspaceRow): WorkspaceSettings {
  return {
    name: row.name,
    timezone: row.timezone,
    default_number_id: row.defaultNumberId,
    conversion_tracking_enabled: row.conversionTrackingEnabled,
    help_reply: row.helpReply,
    opt_out_reply: row.optOutReply,
    opt_in_reply: row.optInReply,
    quiet_hours: {
      enabled: row.quietHoursEnabled,
      start_hour: row.quietStartHour,
      end_hour: row.quietEndHour,
    },
    costs: { sms_segment: row.costSmsSegment, call_minute: row.costCallMinute, currency: row.costCurrency },
    public_id: row.publicId ?? "",
    state_rules: row.stateRules,
    frequency_cap: {
      enabled: row.frequencyCapEnabled,
      max_messages: row.frequencyCapMaxMessages,
      window_hours: row.frequencyCapWindowHours,
      apply_to_all: row.frequencyCapApplyToAll,
    },
    paused_states: row.pausedStates,
    require_registration: row.requireRegistration,
    one_off_daily_limit: row.oneOffDailyLimit,
    number_orders_daily_limit: row.numberOrdersDailyLimit,
  };
}

/**
 * The workspace's row with a public id: a workspace made before public ids existed gets one the
 * first time its settings are read (the id is only ever shown there).
 */
async function withPublicId(db: DbOrTx, row: WorkspaceRow): Promise<WorkspaceRow> {
  if (row.publicId) return row;
  const publicId = newPublicId();
  await db
    .update(workspaces)
    .set({ publicId })
    .where(and(eq(workspaces.id, row.id), isNull(workspaces.publicId)))
    .run();
  return (await db.select().from(workspaces).where(eq(workspaces.id, row.id)).get()) ?? { ...row, publicId };
}

export async function getSettings(db: Db, workspaceId: string): Promise<WorkspaceSettings> {
  const row = await db.select().from(workspaces).where(eq(workspaces.id, workspaceId)).get();
  if (!row) throw notFound();
  return settingsOf(await withPublicId(db, row));
}

/**
 * Hook for checks that belong to other domains (a default number must be one of the workspace's
 * active numbers); the numbers domain registers it. Returns an error message or null.
 */
export type DefaultNumberCheck = (
  db: DbOrTx,
  workspaceId: string,
  numberId: string,
) => Promise<string | null>;
let defaultNumberCheck: DefaultNumberCheck | null = null;
export function registerDefaultNumberCheck(check: DefaultNumberCheck) {
  defaultNumberCheck = check;
}

/** Applies a partial update; unknown keys were already dropped by the route schema. */
export async function updateSettings(
  db: Db,
  workspaceId: string,
  patch: SettingsPatch,
  now = Date.now(),
): Promise<WorkspaceSettings> {
  return await db.transaction(async (tx) => {
    const row = await tx.select().from(workspaces).where(eq(workspaces.id, workspaceId)).get();
    if (!row) throw notFound();
    if (patch.timezone !== undefined && !isTimeZone(patch.timezone)) {
      throw invalid("timezone must be a valid IANA time zone");
    }
    // null clears it; any string, the empty one too, must name a number of the workspace.
    if (typeof patch.default_number_id === "string") {
      const problem = defaultNumberCheck
        ? await defaultNumberCheck(tx, workspaceId, patch.default_number_id)
        : "default_number_id does not exist";
      if (problem) throw invalid(problem);
    }
    let pausedStates: string[] | undefined;
    if (patch.paused_states !== undefined) {
      pausedStates = [];
      for (const [i, code] of patch.paused_states.entries()) {
        const upper = code.trim().toUpperCase();
        if (!STATE_CODES.has(upper))
          throw invalid(`paused_states[${i}] must be a US state or Canadian province code (e.g. LA)`);
        if (!pausedStates.includes(upper)) pausedStates.push(upper);
      }
    }
    for (const budget of DAILY_BUDGETS) checkDailyBudget(patch[budget], budget);
    const changes: Partial<WorkspaceRow> = { updatedAt: now };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.timezone !== undefined) changes.timezone = patch.timezone;
    if (patch.default_number_id !== undefined) changes.defaultNumberId = patch.default_number_id;
    if (patch.conversion_tracking_enabled !== undefined)
      changes.conversionTrackingEnabled = patch.conversion_tracking_enabled;
    if (patch.help_reply !== undefined) changes.helpReply = patch.help_reply;
    if (patch.opt_out_reply !== undefined) changes.optOutReply = patch.opt_out_reply;
    if (patch.opt_in_reply !== undefined) changes.optInReply = patch.opt_in_reply;
    if (patch.quiet_hours?.enabled !== undefined) changes.quietHoursEnabled = patch.quiet_hours.enabled;
    if (patch.quiet_hours?.start_hour !== undefined) changes.quietStartHour = patch.quiet_hours.start_hour;
    if (patch.quiet_hours?.end_hour !== undefined) changes.quietEndHour = patch.quiet_hours.end_hour;
    if (patch.costs?.sms_segment !== undefined)
      changes.costSmsSegment = checkCost(patch.costs.sms_segment, "costs.sms_segment");
    if (patch.costs?.call_minute !== undefined)
      changes.costCallMinute = checkCost(patch.costs.call_minute, "costs.call_minute");
    if (patch.costs?.currency !== undefined)
      changes.costCurrency = checkCurrency(patch.costs.currency, "costs.currency");
    if (patch.state_rules !== undefined) changes.stateRules = patch.state_rules;
    const cap = patch.frequency_cap;
    if (cap?.enabled !== undefined) changes.frequencyCapEnabled = cap.enabled;
    if (cap?.max_messages !== undefined) changes.frequencyCapMaxMessages = cap.max_messages;
    if (cap?.window_hours !== undefined) changes.frequencyCapWindowHours = cap.window_hours;
    if (cap?.apply_to_all !== undefined) changes.frequencyCapApplyToAll = cap.apply_to_all;
    if (pausedStates !== undefined) changes.pausedStates = pausedStates;
    if (patch.require_registration !== undefined) changes.requireRegistration = patch.require_registration;
    if (patch.one_off_daily_limit !== undefined) changes.oneOffDailyLimit = patch.one_off_daily_limit;
    if (patch.number_orders_daily_limit !== undefined)
      changes.numberOrdersDailyLimit = patch.number_orders_daily_limit;
    await tx.update(workspaces).set(changes).where(eq(workspaces.id, workspaceId)).run();
    if (changes.name !== undefined) invalidateKeyCache();
    if (changes.conversionTrackingEnabled !== undefined) invalidateTrackingFlags();
    return settingsOf(await withPublicId(tx, { ...row, ...changes }));
  });
}
