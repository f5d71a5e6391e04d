import { eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { preparedPerConnection } from "../../db/prepared";
import { workspaces } from "../../db/schema";

/**
 * The settings a send is checked against, read in one statement for a send that needs several
 * (a one-off asks its daily budget, its default sender and whether senders must be registered):
 * each check takes them from the caller instead of reading the workspace row again.
 */
export interface SendSettings {
  /** The daily budgets (daily-budgets.ts), null without a limit. */
  limits: { one_off_daily_limit: number | null; number_orders_daily_limit: number | null };
  defaultNumberId: string | null;
  requireRegistration: boolean;
}

const read = preparedPerConnection((db: DbOrTx) =>
  db
    .select({
      oneOffDailyLimit: workspaces.oneOffDailyLimit,
      numberOrdersDailyLimit: workspaces.numberOrdersDailyLimit,
      defaultNumberId: workspaces.defaultNumberId,
      requireRegistration: workspaces.requireRegistration,
    })
    .from(workspaces)
    .where(eq(workspaces.id, sql.placeholder("workspaceId")))
    .prepare(),
);

/** The workspace's send settings as the caller's transaction sees them (undefined: no such workspace). */
export async function sendSettingsOf(tx: DbOrTx, workspaceId: string): Promise<SendSettings | undefined> {
  const row = await read(tx).get({ workspaceId });
  if (!row) return undefined;
  return {
    limits: {
      one_off_daily_limit: row.oneOffDailyLimit,
      number_orders_daily_limit: row.numberOrdersDailyLimit,
    },
    defaultNumberId: row.defaultNumberId,
    requireRegistration: Boolean(row.requireRegistration),
  };
}
