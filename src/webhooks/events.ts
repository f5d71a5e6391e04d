import { type Static, type TSchema, Type } from "@sinclair/typebox";

/**
 * The event catalogue: every event kind the service emits (API.md §3 Webhooks), each with the
 * schema of its `data`. Domains emit only these, through `emitEvent` in src/domain/events.ts; the
 * schemas are published in the OpenAPI document (components.schemas `<Kind>Event`).
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
  "brand.updated",
  "tendlc_campaign.updated",
  "short_code.updated",
  "webhook.test",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * When each kind is emitted, as the OpenAPI document's `webhooks` section tells receivers. Kinds
 * of parts not built yet are in the catalogue (subscriptions may name them) but never emitted.
 */
export const EVENT_SUMMARIES: Record<EventType, string> = {
  "message.sent": "An outbound message was handed to the carrier (status SENT).",
  "message.delivered": "The carrier confirmed delivery of an outbound message (status DELIVERED).",
  "message.failed":
    "An outbound message failed (status FAILED or UNDELIVERED); `error_code` and `error_message` say why.",
  "message.received": "An inbound message arrived from a contact (status RECEIVED).",
  "contact.created": "A contact was created: by the API, an import, or a first inbound message.",
  "contact.opted_out": "A contact opted out, e.g. by a STOP keyword or `opted_in: false` on the contact.",
  "contact.opted_in": "A contact opted back in, e.g. by a START keyword or `opted_in: true` on the contact.",
  "conversation.needs_attention": "A thread started to need a person (flagged once until it is cleared).",
  "call.completed":
    "A call reached its final status (COMPLETED, BUSY, NO_ANSWER, FAILED or VOICEMAIL); data is the Call record, and `status` says how it ended. Emitted once per call, with the call's entry in the contact's thread.",
  "campaign.started":
    "A campaign became active: launched, or its `send_at` came. Data is the Campaign record.",
  "campaign.completed":
    "Every recipient of a campaign was handed off or skipped (delivery reports may still follow). Data is the Campaign record.",
  "conversion.recorded": "A conversion was recorded by `POST /v1/conversion` (not for a duplicate `txn`).",
  "link.clicked": "A tracked link (`/r/<code>`) was followed and redirected.",
  "flow.completed":
    "A contact's run reached the end of a flow (an `end` node, or a node with nowhere to go); data is the Run.",
  "agent.handoff":
    "An SMS agent handed a thread to a person (`{conversation_id, agent_id, contact_id, reason}`).",
  "brand.updated":
    "A 10DLC brand's review changed its status (VERIFIED, UNVERIFIED or FAILED, with reasons).",
  "tendlc_campaign.updated":
    "A 10DLC campaign's review changed its status (APPROVED or REJECTED, with reasons).",
  "short_code.updated":
    "A short-code request moved on (in_review, approved with its code, or rejected with reasons).",
  "webhook.test": "Sent once, on demand, by `POST /v1/webhooks/{id}/test`; never retried.",
};

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

const Id = (description: string) => Type.String({ description, format: "uuid" });
const NullableId = (description: string) => Type.Union([Id(description), Type.Null()], { description });
const Time = (description: string) => Type.String({ format: "date-time", description });
const NullableTime = (description: string) => Type.Union([Time(description), Type.Null()], { description });
const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

/** message.* data: the Message record. */
export const MessageEventData = Type.Object(
  {
    id: Id("Message id"),
    direction: Type.Union([Type.Literal("outbound"), Type.Literal("inbound")], { description: "Direction" }),
    from: Type.String({ description: "Sender, E.164" }),
    to: Type.String({ description: "Recipient, E.164" }),
    body: Type.String({ description: "Text" }),
    status: Type.String({
      description: "PENDING, QUEUED, SENT, DELIVERED, UNDELIVERED, FAILED or RECEIVED",
    }),
    segments: Type.Integer({ description: "SMS segments" }),
    encoding: Type.Union([Type.Literal("GSM-7"), Type.Literal("UCS-2")], { description: "Encoding" }),
    contact_id: NullableId("Contact"),
    conversation_id: NullableId("Conversation"),
    campaign_id: NullableId("Campaign that sent it"),
    error_code: NullableString("Carrier error code"),
    error_message: NullableString("Carrier error text"),
    created_at: Time("Created"),
    sent_at: NullableTime("Handed to the carrier"),
    delivered_at: NullableTime("Delivery confirmed"),
    send_at: NullableTime("Deferred until (quiet hours); null unless deferred"),
  },
  { description: "The Message record" },
);

/** contact.* data: the Contact record. */
export const ContactEventData = Type.Object(
  {
    id: Id("Contact id"),
    phone_number: Type.String({ description: "E.164" }),
    first_name: NullableString("First name"),
    last_name: NullableString("Last name"),
    email: NullableString("Email"),
    external_id: NullableString("Id in the customer's system"),
    source: Type.String({ description: "Where the contact came from" }),
    opted_in: Type.Boolean({ description: "Consent to receive messages" }),
    timezone: NullableString("IANA zone (the area code's main zone when timezone_source is area_code)"),
    timezone_source: Type.Union([Type.Literal("given"), Type.Literal("area_code")], {
      description: "given: from the caller or an import; area_code: from the phone number",
    }),
    state: NullableString("US state or Canadian province (two letters) given for the contact"),
    fields: Type.Record(Type.String(), Type.Unknown(), { description: "Custom fields" }),
    created_at: Time("Created"),
    updated_at: Time("Last changed"),
  },
  { description: "The Contact record" },
);

/** conversion.recorded data: the conversion record. */
export const ConversionEventData = Type.Object(
  {
    id: Id("Conversion id"),
    txn: Type.String({ description: "The caller's transaction id" }),
    event: Type.String({ description: "Conversion event name" }),
    value: NullableNumber("Value"),
    currency: NullableString("ISO 4217 currency"),
    contact_id: NullableId("Contact"),
    campaign_id: NullableId("Attributed campaign"),
    offer_id: NullableId("Attributed offer"),
    message_id: NullableId("Attributed message"),
    click_id: NullableId("Attributed click"),
    agent_id: NullableId("Attributed agent"),
    flow_id: NullableId("Attributed flow"),
    created_at: Time("Recorded"),
  },
  { description: "The conversion record" },
);

/** call.completed data: the Call record. */
export const CallEventData = Type.Object(
  {
    id: Id("Call id"),
    direction: Type.String({ description: "outbound or inbound" }),
    status: Type.String({ description: "COMPLETED, BUSY, NO_ANSWER, FAILED or VOICEMAIL" }),
    to: Type.String({ description: "Callee, E.164" }),
    from: Type.String({ description: "Caller, E.164" }),
    contact_id: Type.Optional(NullableId("Contact")),
    agent_id: Type.Optional(NullableId("Voice agent")),
    duration_sec: Type.Union([Type.Integer(), Type.Null()], { description: "Duration in seconds" }),
    transcript: Type.Array(
      Type.Object({
        role: Type.String({ description: "agent or contact" }),
        text: Type.String({ description: "What was said" }),
        at: Type.String({ description: "When" }),
      }),
      { description: "Transcript" },
    ),
    recording_url: NullableString("Recording"),
    summary: NullableString("Summary"),
    sentiment: Type.Optional(NullableString("The contact's sentiment: positive, neutral or negative")),
    ended_reason: NullableString("Why the call ended"),
    say: Type.Optional(NullableString("The text spoken (say calls)")),
    conversation_id: Type.Optional(NullableId("The contact's thread")),
    campaign_id: Type.Optional(NullableId("The voice campaign")),
    created_at: Time("Created"),
    started_at: Type.Optional(NullableString("When it was answered")),
    ended_at: Type.Optional(NullableString("When it ended")),
  },
  { description: "The Call record", additionalProperties: true },
);

/** campaign.* data: the Campaign record. */
export const CampaignEventData = Type.Object(
  {
    id: Id("Campaign id"),
    name: Type.String({ description: "Name" }),
    campaign_type: Type.String({ description: "sms or voice" }),
    status: Type.String({ description: "draft, scheduled, active, paused, completed or canceled" }),
    created_at: Time("Created"),
    launched_at: Type.Optional(NullableTime("Launched")),
    completed_at: Type.Optional(NullableTime("Completed")),
    stats: Type.Optional(
      Type.Object(
        {},
        {
          description:
            "recipients, queued, sent, delivered, failed, suppressed, replied, opted_out, clicked, conversions, revenue, and `variants` (per A/B variant)",
          additionalProperties: true,
        },
      ),
    ),
  },
  { description: "The Campaign record", additionalProperties: true },
);

/** conversation.needs_attention data: the Conversation record. */
export const ConversationEventData = Type.Object(
  {
    id: Id("Conversation id"),
    contact_id: Id("Contact"),
    status: Type.String({ description: "open or closed" }),
    needs_attention: Type.Boolean({ description: "Waiting for a person" }),
    attention_reason: NullableString(
      "Why: unanswered_message | possible_opt_out | agent_handoff | agent_flagged | manual",
    ),
    last_message_at: NullableTime("Latest message"),
  },
  { description: "The Conversation record", additionalProperties: true },
);

/** link.clicked data. */
export const LinkClickedEventData = Type.Object(
  {
    click_id: Id("Click id (the `vcx` value)"),
    offer_id: Id("Offer"),
    contact_id: NullableId("Contact the link was sent to"),
    campaign_id: NullableId("Campaign"),
    message_id: NullableId("Message that carried the link"),
  },
  { description: "A tracked link was clicked" },
);

/** flow.completed data: the Run record (`GET /v1/flows/{id}/runs`). */
export const FlowCompletedEventData = Type.Object(
  {
    id: Id("Run"),
    flow_id: Id("Flow"),
    contact_id: Id("Contact"),
    status: Type.String({ description: "completed" }),
    current_node_id: NullableString("The node the run ended at"),
    waiting_until: NullableTime("null: the run has ended"),
    exit_reason: NullableString("null for a completed run"),
    started_at: Time("Enrolled"),
    ended_at: NullableTime("Ended"),
  },
  {
    description:
      "A contact's run reached the end of a flow (a run that exits early, e.g. on purchase, does not emit it)",
    additionalProperties: true,
  },
);

/** agent.handoff data. */
export const AgentHandoffEventData = Type.Object(
  {
    agent_id: Id("Agent"),
    conversation_id: Id("Conversation"),
    contact_id: Id("Contact"),
    reason: NullableString("Why the agent handed the thread to a person"),
  },
  { description: "An agent handed a conversation to a person", additionalProperties: true },
);

/** webhook.test data. */
export const WebhookTestEventData = Type.Object(
  {
    webhook_id: Id("The subscription under test"),
    message: Type.String({ description: "A fixed greeting" }),
  },
  { description: "Sent by POST /v1/webhooks/{id}/test" },
);

/** brand.updated data: the 10DLC Brand record. */
export const BrandEventData = Type.Object(
  {
    id: Id("Brand id"),
    legal_name: Type.String({ description: "Legal name" }),
    status: Type.String({ description: "PENDING, VERIFIED, UNVERIFIED or FAILED" }),
    failure_reasons: Type.Array(Type.String(), { description: "Why it was not verified" }),
  },
  { description: "The 10DLC Brand record", additionalProperties: true },
);

/** tendlc_campaign.updated data: the 10DLC Campaign record. */
export const TendlcCampaignEventData = Type.Object(
  {
    id: Id("10DLC campaign id"),
    brand_id: Id("Brand"),
    status: Type.String({ description: "PENDING, APPROVED or REJECTED" }),
    rejection_reasons: Type.Array(Type.String(), { description: "Why it was rejected" }),
  },
  { description: "The 10DLC Campaign record", additionalProperties: true },
);

/** short_code.updated data: the short-code request. */
export const ShortCodeEventData = Type.Object(
  {
    id: Id("Request id"),
    status: Type.String({ description: "submitted, in_review, approved or rejected" }),
    short_code: NullableString("The assigned code, once approved"),
  },
  { description: "The short-code request", additionalProperties: true },
);

/** Schema of `data` for every event kind. */
export const EVENT_DATA_SCHEMAS = {
  "message.sent": MessageEventData,
  "message.delivered": MessageEventData,
  "message.failed": MessageEventData,
  "message.received": MessageEventData,
  "contact.created": ContactEventData,
  "contact.opted_out": ContactEventData,
  "contact.opted_in": ContactEventData,
  "conversation.needs_attention": ConversationEventData,
  "call.completed": CallEventData,
  "campaign.started": CampaignEventData,
  "campaign.completed": CampaignEventData,
  "conversion.recorded": ConversionEventData,
  "link.clicked": LinkClickedEventData,
  "flow.completed": FlowCompletedEventData,
  "agent.handoff": AgentHandoffEventData,
  "brand.updated": BrandEventData,
  "tendlc_campaign.updated": TendlcCampaignEventData,
  "short_code.updated": ShortCodeEventData,
  "webhook.test": WebhookTestEventData,
} satisfies Record<EventType, TSchema>;

/** The `data` of an event kind, as a type. */
export type EventData<T extends EventType> = Static<(typeof EVENT_DATA_SCHEMAS)[T]>;

/** `message.sent` → `MessageSentEvent`: the component name of an event's payload schema. */
export function eventSchemaName(type: EventType): string {
  return `${type
    .split(/[._]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("")}Event`;
}

/** The signed payload of one event kind: `{type, timestamp, data}`. */
export function eventPayloadSchema(type: EventType) {
  return Type.Object(
    {
      type: Type.Literal(type, { description: "Event kind" }),
      timestamp: Time("When the event happened"),
      data: EVENT_DATA_SCHEMAS[type],
    },
    { description: `Payload of a \`${type}\` webhook (Standard Webhooks signed)` },
  );
}

/** Every event payload schema keyed by component name, for the OpenAPI document. */
export function eventComponentSchemas(): Record<string, Record<string, unknown>> {
  const schemas: Record<string, Record<string, unknown>> = {};
  for (const type of EVENT_TYPES) {
    schemas[eventSchemaName(type)] = eventPayloadSchema(type) as unknown as Record<string, unknown>;
  }
  return schemas;
}
