import { and, count, desc, eq, isNull, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sqlFalse } from "../../db/dialect";
import { messages } from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { invalid, notFound } from "../../lib/errors";
import { isUuid } from "../../lib/ids";
import { MESSAGE_STATUSES, type MessageJson, messageJson } from "./message-json";

export async function getMessage(db: Db, workspaceId: string, id: string): Promise<MessageJson> {
  const row = await workspaceRow(db, messages, workspaceId, id);
  if (!row || row.callId !== null) throw notFound();
  return messageJson(row);
}

export interface MessageFilters {
  status?: string;
  direction?: string;
  contact_id?: string;
  campaign_id?: string;
  conversation_id?: string;
  limit: number;
  offset: number;
}

/** Messages newest first, filtered by status, direction, contact, campaign or conversation. */
export async function listMessages(db: Db, workspaceId: string, filters: MessageFilters) {
  // SMS only: a call's entry in its thread (status CALL) is not a message (GET /v1/calls has calls).
  const conditions: (SQL | undefined)[] = [eq(messages.workspaceId, workspaceId), isNull(messages.callId)];
  if (filters.status !== undefined) {
    if (!(MESSAGE_STATUSES as readonly string[]).includes(filters.status))
      throw invalid(`status must be one of ${MESSAGE_STATUSES.join(", ")}`);
    conditions.push(eq(messages.status, filters.status));
  }
  if (filters.direction !== undefined) {
    if (filters.direction !== "inbound" && filters.direction !== "outbound")
      throw invalid("direction must be one of outbound, inbound");
    conditions.push(eq(messages.direction, filters.direction));
  }
  // Ids that cannot exist match nothing (a filter is not a path id: no 404).
  const idFilter = (
    value: string | undefined,
    column: typeof messages.contactId | typeof messages.campaignId | typeof messages.conversationId,
  ) => {
    if (value === undefined) return;
    conditions.push(isUuid(value) ? eq(column, value) : sqlFalse());
  };
  idFilter(filters.contact_id, messages.contactId);
  idFilter(filters.campaign_id, messages.campaignId);
  idFilter(filters.conversation_id, messages.conversationId);
  const where = and(...conditions);
  const rows = await db
    .select()
    .from(messages)
    .where(where)
    .orderBy(desc(messages.createdAt), desc(messages.id))
    .limit(filters.limit)
    .offset(filters.offset)
    .all();
  const total = (await db.select({ n: count() }).from(messages).where(where).get())?.n ?? 0;
  return { messages: rows.map(messageJson), total, limit: filters.limit, offset: filters.offset };
}
