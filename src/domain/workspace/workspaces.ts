import { asc, count, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { type WorkspaceRow, workspaces } from "../../db/schema";
import { newId } from "../../lib/ids";

export const DEFAULT_HELP_REPLY = "Reply STOP to unsubscribe. Msg & data rates may apply.";
export const DEFAULT_OPT_OUT_REPLY =
  "You have been unsubscribed and will receive no further messages. Reply START to resubscribe.";
export const DEFAULT_OPT_IN_REPLY = "You have been resubscribed. Reply STOP to unsubscribe.";

/** Creates a workspace with default settings. */
export function createWorkspace(db: DbOrTx, input: { name: string; now?: number }): WorkspaceRow {
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
    stateRules: true,
    frequencyCapEnabled: true,
    frequencyCapMaxMessages: 3,
    frequencyCapWindowHours: 24,
    frequencyCapApplyToAll: false,
    pausedStates: [],
    createdAt: now,
    updatedAt: now,
  };
  db.insert(workspaces).values(row).run();
  return row;
}

export function getWorkspace(db: DbOrTx, id: string): WorkspaceRow | undefined {
  return db.select().from(workspaces).where(eq(workspaces.id, id)).get();
}

export function listWorkspaces(db: DbOrTx): WorkspaceRow[] {
  return db.select().from(workspaces).orderBy(asc(workspaces.createdAt)).all();
}

export function countWorkspaces(db: DbOrTx): number {
  return db.select({ n: count() }).from(workspaces).get()?.n ?? 0;
}
