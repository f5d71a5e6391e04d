import type { MessageRow } from "../../db/schema";
import { toIso } from "../../lib/time";

export const MESSAGE_STATUSES = [
  "PENDING",
  "QUEUED",
  "SENT",
  "DELIVERED",
  "UNDELIVERED",
  "FAILED",
  "RECEIVED",
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];
export const MAX_BODY_LENGTH = 1600;

/** The Message record (API.md §3 Messages); also the data of `message.*` events. */
export interface MessageJson {
  id: string;
  direction: string;
  from: string;
  to: string;
  body: string;
  status: string;
  segments: number;
  encoding: string;
  contact_id: string | null;
  conversation_id: string | null;
  campaign_id: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  sent_at: string | null;
  delivered_at: string | null;
  send_at: string | null;
}

export function messageJson(row: MessageRow): MessageJson {
  return {
    id: row.id,
    direction: row.direction,
    from: row.fromNumber,
    to: row.toNumber,
    body: row.body,
    status: row.status,
    segments: row.segments,
    encoding: row.encoding,
    contact_id: row.contactId,
    conversation_id: row.conversationId,
    campaign_id: row.campaignId,
    error_code: row.errorCode,
    error_message: row.errorMessage,
    created_at: toIso(row.createdAt) as string,
    sent_at: toIso(row.sentAt),
    delivered_at: toIso(row.deliveredAt),
    send_at: toIso(row.sendAt),
  };
}
