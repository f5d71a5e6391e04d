import { and, eq } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { isUuid } from "../lib/ids";
import type { DbOrTx } from "./client";

type WorkspaceTable = SQLiteTable & { id: SQLiteColumn; workspaceId: SQLiteColumn };

/**
 * A workspace's row of `table` by its id, or undefined when the id is malformed, unknown or
 * another workspace's: what every "Not found" (and every "`<field>` does not exist") of the API
 * looks up. A malformed id is never sent to the database.
 */
export async function workspaceRow<T extends WorkspaceTable>(
  db: DbOrTx,
  table: T,
  workspaceId: string,
  id: string,
): Promise<T["$inferSelect"] | undefined> {
  if (!isUuid(id)) return undefined;
  return (await db
    .select()
    .from(table as SQLiteTable)
    .where(and(eq(table.workspaceId, workspaceId), eq(table.id, id)))
    .get()) as T["$inferSelect"] | undefined;
}
