import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { assertTrackingEnabled, listConversions, recordConversion } from "../domain/attribution/conversions";
import { MAX_VALUE } from "../domain/attribution/values";
import { workspaceOf } from "../http/context";
import { Body, responses, Timestamp, Uuid, WRITE_ERRORS } from "../http/schemas";
import { resourceRoutes } from "./resource-routes";

const NullableId = (description: string) => t.Union([t.String(), t.Null()], { description });

export const ConversionSchema = t.Object(
  {
    id: Uuid("Conversion id"),
    txn: t.String({ description: "The caller's unique id for the conversion", examples: ["order-10031"] }),
    event: t.String({ description: "purchase, lead, action or a custom name", examples: ["purchase"] }),
    value: t.Union([t.Number(), t.Null()], {
      description: "Revenue; null for a non-sale event",
      examples: [49.9],
    }),
    currency: t.String({ description: "ISO 4217 currency", examples: ["USD"] }),
    contact_id: Uuid("The matched contact"),
    campaign_id: NullableId("Campaign of the attributed click"),
    offer_id: NullableId("Offer of the attributed click"),
    message_id: NullableId("Message that carried the attributed link"),
    click_id: NullableId("The attributed click: the contact's last click within 30 days"),
    agent_id: NullableId(
      "The SMS agent credited: the one that recorded it (a `lead` from a conversion keyword or its goal), else the agent that last wrote to the contact within 30 days; null when none",
    ),
    flow_id: NullableId(
      "The flow credited: the one that last sent the contact a message or placed a call within 30 days; null when none",
    ),
    created_at: Timestamp("Recorded"),
  },
  { description: "A recorded conversion with its attribution" },
);

const Identifier = (description: string, example: string) =>
  t.Optional(t.String({ maxLength: 320, description, examples: [example] }));

const ConversionBody = Body(
  {
    txn: t.String({
      maxLength: 255,
      description: "Caller's unique id for the conversion; the idempotency key, forever (max 255)",
      examples: ["order-10031"],
    }),
    value: t.Optional(
      t.Union([t.Number({ minimum: 0, maximum: MAX_VALUE }), t.Null()], {
        description: `Revenue, a finite number from 0 to ${MAX_VALUE}; omitted for a non-sale event`,
        examples: [49.9],
      }),
    ),
    currency: t.Optional(
      t.Union([t.String({ maxLength: 3 }), t.Null()], {
        description: "ISO 4217, three letters (upper-cased); default USD (also for null)",
        examples: ["USD"],
      }),
    ),
    event: t.Optional(
      t.Union([t.String({ maxLength: 64 }), t.Null()], {
        description:
          "`purchase` (default, also for null; exits the contact from flows that opted in), `lead`, `action`, or a custom name matching `^[a-z][a-z0-9_.-]{0,63}$`",
        examples: ["purchase"],
      }),
    ),
    vcx: Identifier(
      "Identifier 1 (strongest): the click id a tracked link appended",
      "0193a1b2-7c1a-7a3b-9f00-2d5e8c1b4a77",
    ),
    vid: Identifier("Identifier 2: the tracking script's visitor id", "0193a1b2-7c1a-4a3b-9f00-2d5e8c1b4a77"),
    external_id: Identifier("Identifier 3: your own id for the person, if stored on the contact", "crm-4411"),
    phone: Identifier(
      "Identifier 4: E.164 preferred; 10- and 11-digit US numbers are normalised",
      "+15125550143",
    ),
    email: Identifier(
      "Identifier 5 (weakest): matched case-insensitively for ASCII letters",
      "ana@example.com",
    ),
  },
  { description: "A server-side conversion: `txn` and at least one identifier" },
);

const ConversionOutcome = t.Object(
  {
    conversion: t.Object(
      {
        recorded: t.Boolean({ description: "The conversion is recorded (now or before)" }),
        duplicate: t.Boolean({
          description: "True when this txn was already recorded: nothing was written twice",
        }),
        contact_id: t.Union([t.String(), t.Null()], {
          description: "The matched contact (the original one for a duplicate)",
        }),
      },
      { description: "The Conversion response" },
    ),
  },
  { description: "The seed's Conversion response: the only success body without `ok`" },
);

// POST /v1/conversion – record a server-side conversion; GET /v1/conversions – list them.
export function conversionsRoutes(deps: AppDeps) {
  return new Elysia({ name: "conversions" })
    .post(
      "/v1/conversion",
      async ({ request, body }) => ({
        conversion: await recordConversion(deps.db, workspaceOf(request), body, deps.clock.now()),
      }),
      {
        // Before the body is validated: disabled tracking is a 403 whatever the body says.
        transform: async ({ request }) => await assertTrackingEnabled(deps.db, workspaceOf(request)),
        body: ConversionBody,
        detail: {
          tags: ["Conversions"],
          operationId: "recordConversion",
          summary: "Record a conversion",
          description:
            "Matches a contact by the strongest identifier sent (`vcx`, `vid`, `external_id`, `phone`, `email`: the first that resolves to a contact of the workspace wins), credits the contact's last click within 30 days (campaign, offer, message) and emits `conversion.recorded`. Idempotent on `txn` forever: a retry writes nothing and answers `duplicate: true` with the original contact. 422 `txn is required`, `At least one identifier is required (vcx, vid, external_id, phone, email)`, `No contact matched the identifiers`; 403 `Conversion tracking is disabled for this workspace` when settings turn tracking off.",
        },
        response: responses(ConversionOutcome, WRITE_ERRORS),
      },
    )
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/conversions",
          tag: "Conversions",
          one: "conversion",
          many: "conversions",
          item: ConversionSchema,
          idDescription: "Conversion id",
        },
        {
          list: {
            summary: "List conversions (newest first)",
            description: "Filters: `contact_id`, `campaign_id`, `offer_id`, `event`.",
            itemsDescription: "Conversions, newest first",
            query: {
              contact_id: t.Optional(t.String({ description: "Only this contact's conversions" })),
              campaign_id: t.Optional(
                t.String({ description: "Only conversions attributed to this campaign" }),
              ),
              offer_id: t.Optional(t.String({ description: "Only conversions attributed to this offer" })),
              event: t.Optional(t.String({ description: "Only this event (purchase, lead, ...)" })),
            },
            run: async (workspaceId, query, page) => {
              const { conversions, total } = await listConversions(deps.db, workspaceId, query, page);
              return { items: conversions, total };
            },
          },
        },
      ),
    );
}
