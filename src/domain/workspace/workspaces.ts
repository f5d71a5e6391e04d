import { asc, count, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { type WorkspaceRow, workspaces } from "../../db/schema";
import { newId } from "../../lib/ids";

export const DEFAULT_HELP_REPLY = "Reply STOP to unsubscribe. Msg & data rates may apply.";
export const DEFAULT_OPT_OUT_REPLY =
  "You have been unsubscribed and will receive no further messages. Reply START to resubscribe.";
export const DEFAULT_OPT_IN_REPLY = "You have been resubscribed. Reply STOP to unsubscribe.";

/** `settings.costs` of a new workspace (API.md §6.5). */
export const DEFAULT_COSTS = { sms_segment: 0.0079, call_minute: 0.014, currency: "USD" };

/**
 * The id public pages name a workspace by (`/t.js?w=`): `ws_` and 20 random base-36 characters,
 * unrelated to the workspace id, which stays out of page sources.
 */
export function newPublicId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  return `ws_${Array.from(bytes, (b) => (b % 36).toString(36)).join("")}`;
}

/** The daily budgets of a new workspace (API.md §7.2). */
export const DEFAULT_DAILY_BUDGETS = { one_off_daily_limit: 5000, number_orders_daily_limit: 50 } as const;

/** Creates a workspace with default settings. */
export async function createWorkspace(
  db: DbOrTx,
  input: { name: string; now?: number },
): Promise<WorkspaceRow> {
  const now = input.now ?? Date.now();
  const row: WorkspaceRow = {
    id: newId(),
    name: input.name,
    timezone: "America/New_York",
    defaultNumberId: null,
    conversionTrackingEnabled: true,
    helpReply: DEFAULT_HELP_REPLY,
    optOutReply: DEFAULT_OPT_OUT_REPLY,
    optInReply: DEFAULT_OPT_IN_REPLY,
    quietHoursEnabled: true,
    quietStartHour: 21,
    quietEndHour: 8,
    publicId: newPublicId(),
    costSmsSegment: DEFAULT_COSTS.sms_segment,
    costCallMinute: DEFAULT_COSTS.call_minute,
    costCurrency: DEFAULT_COSTS.currency,
    stateRules: true,
    requireRegistration: false,
    frequencyCapEnabled: true,
    frequencyCapMaxMessages: 3,
    frequencyCapWindowHours: 24,
    frequencyCapApplyToAll: false,
    pausedStates: [],
    oneOffDailyLimit: DEFAULT_DAILY_BUDGETS.one_off_daily_limit,
    numberOrdersDailyLimit: DEFAULT_DAILY_BUDGETS.number_orders_daily_limit,
    createdAt: now,
    updatedAt: now,
  };
  await db.insert(workspaces).values(row).run();
  return row;
}

export async function getWorkspace(db: DbOrTx, id: string): Promise<WorkspaceRow | undefined> {
  return await db.select().from(workspaces).where(eq(workspaces.id, id)).get();
}

export async function listWorkspaces(db: DbOrTx): Promise<WorkspaceRow[]> {
  return await db.select().from(workspaces).orderBy(asc(workspaces.createdAt)).all();
}

export async function countWorkspaces(db: DbOrTx): Promise<number> {
  return (await db.select({ n: count() }).from(workspaces).get())?.n ?? 0;
}
