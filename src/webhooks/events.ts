/**
 * The event catalogue: every event kind the service emits (API.md §3 Webhooks). Domains emit only
 * these, through `emitEvent` in src/domain/events.ts.
 */
export const EVENT_TYPES = [
  "message.sent",
  "message.delivered",
  "message.failed",
  "message.received",
  "contact.created",
  "contact.opted_out",
  "contact.opted_in",
  "conversation.needs_attention",
  "call.completed",
  "campaign.started",
  "campaign.completed",
  "conversion.recorded",
  "link.clicked",
  "flow.completed",
  "agent.handoff",
  "webhook.test",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}
