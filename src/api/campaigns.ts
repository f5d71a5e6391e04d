import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import {
  CAMPAIGN_STATUSES,
  cancelCampaign,
  createCampaign,
  deleteCampaign,
  getCampaign,
  launchCampaign,
  listCampaigns,
  pauseCampaign,
  resumeCampaign,
  updateCampaign,
} from "../domain/campaigns/campaigns";
import { listRecipients, previewCampaign, RECIPIENT_OUTCOMES } from "../domain/campaigns/preview";
import { workspaceOf } from "../http/context";
import { paginationQuery, parsePagination } from "../http/pagination";
import {
  Body,
  Enum,
  Int,
  listEnvelope,
  NullableTimestamp,
  Ok,
  PageFields,
  Query,
  READ_ERRORS,
  responses,
  Timestamp,
  Uuid,
  WRITE_ERRORS,
} from "../http/schemas";
import { MAX_COUNT } from "../lib/counts";
import { resourceRoutes } from "./resource-routes";

const NullableString = (description: string) => t.Union([t.String(), t.Null()], { description });
const NullableInt = (description: string) => t.Union([Int(), t.Null()], { description });
const Ids = (description: string) =>
  t.Array(t.String({ maxLength: 64 }), { maxItems: 10_000, description: `${description} (max 10,000)` });

const Audience = t.Object(
  {
    list_ids: Ids("Lists whose members are in the audience"),
    segment_ids: Ids("Segments whose members (evaluated at launch) are in the audience"),
    contact_ids: Ids("Individual contacts in the audience"),
    exclude_list_ids: Ids("Lists whose members are left out"),
  },
  {
    description: "Who the campaign goes to: lists ∪ segments ∪ contacts, minus excluded lists, de-duplicated",
  },
);

const Variant = t.Object(
  {
    name: t.String({ description: "Variant name, unique in the campaign", examples: ["A"] }),
    body: t.String({ description: "Text of this variant (merge fields allowed)" }),
    weight: t.Number({ description: "Relative weight (> 0)", examples: [50] }),
  },
  { description: "An A/B variant" },
);

const Message = t.Object(
  {
    body: NullableString(
      "Text with merge fields: {{first_name}}, {{last_name}}, {{fields.x}}, {{offer_url}}, with fallbacks {{first_name|there}}",
    ),
    variants: t.Union([t.Array(Variant), t.Null()], {
      description:
        "A/B variants; each recipient gets one, chosen deterministically from contact id + campaign id by weight",
    }),
  },
  { description: "What an SMS campaign says" },
);

const QuietHours = t.Object(
  {
    enabled: t.Boolean({ description: "Quiet hours apply" }),
    start_hour: Int({ description: "Quiet from this local hour (0–23)" }),
    end_hour: Int({ description: "Until this local hour (0–23)" }),
  },
  { description: "The campaign's own quiet hours, replacing the workspace's" },
);

const VariantStats = t.Object(
  {
    name: t.String({ description: "Variant name" }),
    recipients: Int({ description: "Recipients given this variant" }),
    sent: Int({ description: "Of them, messages that reached the carrier" }),
    delivered: Int({ description: "Of them, delivered" }),
    replied: Int({ description: "Of them, replied within 7 days" }),
    clicked: Int({ description: "Of them, recipients who clicked a link of the campaign" }),
    conversions: Int({
      description: "Conversions attributed to the campaign from recipients given this variant",
    }),
    revenue: t.Number({ description: "Their revenue" }),
  },
  { description: "Per-variant results" },
);

const Stats = t.Object(
  {
    recipients: Int({ description: "Audience after de-duplication, suppressed included" }),
    queued: Int({ description: "Waiting to be handed to the carrier" }),
    deferred: Int({ description: "Waiting for quiet hours to end or a daily_limit to reset" }),
    sent: Int({ description: "Messages that reached the carrier (cumulative; delivered ⊆ sent)" }),
    delivered: Int({ description: "Delivered" }),
    failed: Int({ description: "Failed or undelivered" }),
    suppressed: Int({ description: "Skipped recipients (suppressed, opted out, no sending number ...)" }),
    replied: Int({
      description: "Recipients who sent an inbound message within 7 days of the campaign message",
    }),
    opted_out: Int({ description: "Recipients who opted out within 7 days of the campaign message" }),
    clicked: Int({ description: "Of them, recipients who clicked a link of the campaign" }),
    conversions: Int({
      description: "Conversions attributed to the campaign from recipients given this variant",
    }),
    revenue: t.Number({ description: "Their revenue" }),
    variants: t.Array(VariantStats, { description: "Per-variant results (empty without variants)" }),
    calls: t.Optional(
      t.Object(
        {
          placed: Int({
            description:
              "Calls the provider took (a call refused before placement or by the provider is failed, not placed)",
          }),
          answered: Int({ description: "Calls that were answered (COMPLETED)" }),
          voicemail: Int({ description: "Calls that reached voicemail" }),
          no_answer: Int({ description: "Calls nobody answered" }),
          busy: Int({ description: "Calls to a busy line" }),
          failed: Int({ description: "Calls that failed or were refused" }),
        },
        {
          description:
            "Voice campaigns only: their calls by outcome (API.md §6.4). For a voice campaign `sent` counts calls placed and `delivered` calls answered or voicemail reached.",
        },
      ),
    ),
  },
  { description: "Headline results, counted from the recipients" },
);

export const CampaignSchema = t.Object(
  {
    id: Uuid("Campaign id"),
    name: t.String({ description: "Name" }),
    campaign_type: Enum(["sms", "voice"], "sms or voice (calls: `say` or a voice `agent_id`)"),
    status: Enum(
      CAMPAIGN_STATUSES,
      "draft → scheduled → active ⇄ paused → completed; any non-final → canceled",
    ),
    audience: Audience,
    message: t.Union([Message, t.Null()], { description: "SMS content" }),
    say: NullableString("Voice: text to speak"),
    agent_id: NullableString("Voice: the agent that calls"),
    from: NullableString("Fixed sending number (E.164)"),
    pool_id: NullableString("Pool the sends rotate across"),
    offer_id: NullableString("Offer behind {{offer_url}}"),
    link_domain_id: NullableString(
      "Branded link domain of its `{{offer_url}}` links; null: the offer's, else the workspace's default verified domain, else PUBLIC_URL. A domain deleted or no longer verified falls back the same way when a message is written.",
    ),
    send_at: NullableTimestamp("When a scheduled campaign starts"),
    quiet_hours: t.Union([QuietHours, t.Null()], { description: "Own quiet hours; null = the workspace's" }),
    throttle_per_minute: NullableInt("Most hand-offs per minute; null = no limit"),
    created_at: Timestamp("Created"),
    updated_at: Timestamp("Last changed"),
    launched_at: NullableTimestamp("Became active"),
    completed_at: NullableTimestamp("Every recipient handed off or skipped"),
    canceled_at: NullableTimestamp("Canceled"),
    stats: Stats,
  },
  { description: "A bulk SMS (or voice) send" },
);

const AudienceInput = Body(
  {
    list_ids: t.Optional(Ids("List ids")),
    segment_ids: t.Optional(Ids("Segment ids")),
    contact_ids: t.Optional(Ids("Contact ids")),
    exclude_list_ids: t.Optional(Ids("Lists to leave out")),
  },
  { description: "Who the campaign goes to; ids must be the workspace's (422 naming the path)" },
);

const MessageInput = t.Union(
  [
    Body(
      {
        body: t.Optional(
          t.Union([t.String({ maxLength: 1600 }), t.Null()], {
            description: "Text (max 1600) with merge fields",
          }),
        ),
        variants: t.Optional(
          t.Union(
            [
              t.Array(
                Body({
                  name: t.String({ maxLength: 200, description: "Variant name" }),
                  body: t.String({ maxLength: 1600, description: "Variant text" }),
                  weight: t.Number({ description: "Weight (> 0)" }),
                }),
                { description: "A/B variants (1–10)" },
              ),
              t.Null(),
            ],
            { description: "A/B variants" },
          ),
        ),
      },
      { description: "SMS content: `body`, or `variants`" },
    ),
    t.Null(),
  ],
  { description: "SMS content" },
);

// Checked in the domain (`quiet_hours.start_hour must be an integer between 0 and 23`): inside a
// nullable object the framework could only say `quiet_hours must be an object`.
const Hour = (description: string) => t.Optional(t.Unknown({ description: `Integer ${description}` }));

const configFields = {
  campaign_type: t.Optional(Enum(["sms", "voice"], "sms (default) or voice")),
  audience: t.Optional(AudienceInput),
  message: t.Optional(MessageInput),
  say: t.Optional(
    t.Union([t.String({ maxLength: 2000 }), t.Null()], { description: "Voice: text to speak" }),
  ),
  agent_id: t.Optional(
    t.Union([t.String({ maxLength: 64 }), t.Null()], {
      description:
        "SMS: an SMS agent that answers the recipients' replies; voice: a voice agent that makes the calls (not with `say`)",
    }),
  ),
  from: t.Optional(
    t.Union([t.String({ maxLength: 64 }), t.Null()], { description: "A sending number of the workspace" }),
  ),
  pool_id: t.Optional(
    t.Union([t.String({ maxLength: 64 }), t.Null()], { description: "A pool with active numbers" }),
  ),
  offer_id: t.Optional(
    t.Union([t.String({ maxLength: 64 }), t.Null()], {
      description: "An offer of the workspace: `{{offer_url}}` becomes each recipient's tracked link",
    }),
  ),
  link_domain_id: t.Optional(
    t.Union([t.String({ maxLength: 64 }), t.Null()], {
      description:
        "A verified link domain of the workspace (`/v1/link-domains`) for its `{{offer_url}}` links; null: the offer's, else the default, else PUBLIC_URL. Otherwise 422 `link_domain_id is not a verified link domain`",
    }),
  ),
  send_at: t.Optional(
    t.Union([t.String({ maxLength: 64 }), t.Null()], {
      description: "ISO 8601 time in the future: launch schedules the campaign for then",
    }),
  ),
  quiet_hours: t.Optional(
    t.Union(
      [
        Body({
          enabled: t.Optional(t.Unknown({ description: "Boolean, default true" })),
          start_hour: Hour("0–23, default 21"),
          end_hour: Hour("0–23, default 8"),
        }),
        t.Null(),
      ],
      { description: "Own quiet hours; null = the workspace's" },
    ),
  ),
  throttle_per_minute: t.Optional(
    t.Union([Int({ minimum: 1, maximum: MAX_COUNT }), t.Null()], {
      description: `Most hand-offs per minute (1–${MAX_COUNT})`,
    }),
  ),
};

const CreateBody = Body(
  { name: t.String({ minLength: 1, maxLength: 200, description: "Name (max 200)" }), ...configFields },
  { description: "A new campaign (a draft)" },
);
const PatchBody = Body(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "Name (max 200)" })),
    ...configFields,
  },
  { description: "Fields to change; the result is validated whole" },
);

const IdParams = t.Object({ id: t.String({ description: "Campaign id" }) });
const CampaignEnvelope = t.Object({ ok: Ok, campaign: CampaignSchema });

const PreviewContact = t.Object({
  contact_id: Uuid("Contact"),
  phone_number: t.String({ description: "E.164" }),
  outcome: Enum(["send", "defer", "skip"], "What would happen now"),
  reason: NullableString(
    "skip: suppressed | opted_out | frequency_cap | duplicate | no_phone | invalid_phone | state_paused (the compliance module's closed set). defer: the module's reasons joined with commas (quiet_hours, state_hours:FL, sunday:AL, holiday:UT, no_window), or daily_limit (every sender at its cap) or no_sending_number (no active number). null for send",
  ),
  send_at: NullableTimestamp("When it would be sent: the start, or the next allowed minute for a deferral"),
  from: NullableString(
    "The number sender rotation would pick (for a deferral: the one it would use now; it is picked again when the send goes)",
  ),
  body: NullableString("The merged text"),
  variant: NullableString("The A/B variant"),
});
const Preview = t.Object(
  {
    recipients: Int({ description: "Audience after de-duplication" }),
    sendable: Int({ description: "Would be sent at the start" }),
    deferred: Int({
      description:
        "Would wait: outside the allowed hours (quiet hours, state rules), or beyond the senders' daily_limit capacity today",
    }),
    skipped: t.Record(t.String(), Int(), {
      description:
        "Skipped counts by reason (suppressed, opted_out, frequency_cap, no_phone, invalid_phone, state_paused). Every total is the compliance module's decision for each contact, as the run asks it: computed per group of contacts that share what it depends on, and per contact for those with recent marketing sends",
    }),
    starts_at: Timestamp("When sending would start (send_at, or now)"),
    estimated_completion_at: Timestamp(
      "Estimate of the last hand-off: the throttle (or a nominal 1,000/s) over the sendable recipients, after the last deferral",
    ),
    warnings: t.Array(
      t.Object({
        code: t.String({ description: "Lint code" }),
        message: t.String({ description: "What to fix" }),
      }),
      {
        description:
          "Content lint of the body (or each variant, named): no_opt_out_language, public_url_shortener, unknown_merge_field, many_segments, shaft_content. Warnings never block; they appear here only (create and launch answer the Campaign record as the contract defines it)",
      },
    ),
    contacts: t.Array(PreviewContact, {
      description:
        "This page of the audience, in the order recipients are resolved (created_at, id); with `contact_id`, that contact alone (none when it is not in the audience)",
    }),
    ...PageFields,
  },
  { description: "The dry run" },
);
const Recipient = t.Object({
  contact_id: Uuid("Contact"),
  phone_number: t.String({ description: "E.164 at launch" }),
  outcome: Enum(RECIPIENT_OUTCOMES, "queued | deferred | sent | delivered | failed | skipped"),
  reason: NullableString(
    "skipped: the compliance module's reason (suppressed, opted_out, frequency_cap, no_phone, invalid_phone, state_paused); deferred: its reasons joined with commas (quiet_hours, state_hours:FL, ...), daily_limit or no_sending_number; failed: the message's error_code",
  ),
  send_at: NullableTimestamp(
    "Deferred until this instant (the next allowed minute, or the senders' next day)",
  ),
  message_id: NullableString(
    "The message written for it. A deferred recipient already has its message: QUEUED with the same send_at (API.md §6.1); when it comes due the rules are asked again and it is sent, deferred again, or FAILED with the skip reason as error_code",
  ),
  call_id: NullableString("The recipient's call (voice campaigns)"),
  variant: NullableString("The A/B variant"),
});

const ACTIONS = [
  [
    "launch",
    launchCampaign,
    "Launch a campaign",
    "draft → active (or scheduled when send_at is in the future). The audience is resolved in batches by durable jobs and handed to the send queue at the moment of sending (quiet hours, pool rotation, daily_limit, throttle). 409 `Campaign is <status>: only a draft can be launched` (e.g. `Campaign is completed: only a draft can be launched`); 422 for an empty audience or ids deleted since. A voice campaign writes one call per recipient (under the same send-time rules, asked for calls; `throttle_per_minute` counts calls). A refused launch changes nothing. Emits `campaign.started`.",
    [409],
  ],
  [
    "pause",
    pauseCampaign,
    "Pause a campaign",
    "active → paused: no new hand-offs (within a second). 409 `Campaign is <status>: only an active campaign can be paused`.",
    [409],
  ],
  [
    "resume",
    resumeCampaign,
    "Resume a campaign",
    "paused → active. 409 `Campaign is <status>: only a paused campaign can be resumed`.",
    [409],
  ],
  [
    "cancel",
    cancelCampaign,
    "Cancel a campaign",
    "Any non-final state → canceled, for good; messages already handed to the send queue still go out. A deferred recipient's waiting message becomes FAILED (`error_code: campaign_canceled`) and the recipient `failed` with that reason. 409 `Campaign is <status>: only a draft, scheduled, active or paused campaign can be canceled` for a completed or canceled one.",
    [409],
  ],
] as const;

// /v1/campaigns – CRUD, control, preview and recipients of campaigns (src/domain/campaigns).
export function campaignsRoutes(deps: AppDeps) {
  const app = new Elysia({ name: "campaigns" }).use(
    resourceRoutes(
      deps,
      {
        path: "/v1/campaigns",
        tag: "Campaigns",
        one: "campaign",
        many: "campaigns",
        item: CampaignSchema,
        idDescription: "Campaign id",
      },
      {
        list: {
          summary: "List campaigns (newest first)",
          description: "Filters: `status`, `q` (name contains).",
          itemsDescription: "Campaigns, newest first",
          query: {
            status: t.Optional(t.String({ description: `One of ${CAMPAIGN_STATUSES.join(", ")}` })),
            q: t.Optional(
              t.String({ description: "Name contains (case-insensitive for ASCII letters: É and é differ)" }),
            ),
          },
          run: async (workspaceId, query, page) => {
            const { campaigns, total } = await listCampaigns(deps.db, workspaceId, query, page);
            return { items: campaigns, total };
          },
        },
        create: {
          summary: "Create a campaign (draft)",
          description:
            "Validated whole: every id in the body must be the workspace's (422 `audience.list_ids[0] does not exist`, `pool_id does not exist`, `from is not a number of this workspace`; `offer_id does not exist`, `agent_id must be an SMS agent`, `link_domain_id is not a verified link domain`), `send_at` in the future, hours 0–23, throttle ≥ 1, a pool with active numbers, variant weights > 0, known merge fields (`message.body has an unknown merge field {{favourite_color}}`). Voice campaigns need `say` or a voice `agent_id`, not both (`say and agent_id cannot both be set for a voice campaign: choose one`), and a voice-capable `from` or pool (`from cannot place calls: the number has no voice capability`).",
          body: CreateBody,
          run: async (workspaceId, body, now) => await createCampaign(deps.db, workspaceId, body, now),
        },
        get: {
          summary: "Get a campaign",
          description: "The configuration and `stats` (counted from the recipients through an index).",
          run: async (workspaceId, id) => await getCampaign(deps.db, workspaceId, id),
        },
        update: {
          summary: "Update a draft or scheduled campaign",
          description:
            "409 `Campaign is <status>: only a draft or scheduled campaign can be changed` otherwise.",
          errors: [409],
          body: PatchBody,
          run: async (workspaceId, id, body, now) =>
            await updateCampaign(deps.db, workspaceId, id, body, now),
        },
        delete: {
          summary: "Delete a draft",
          description:
            "409 `Campaign is <status>: only a draft can be deleted` otherwise (cancel a launched campaign instead).",
          errors: [409],
          run: async (workspaceId, id) => await deleteCampaign(deps.db, workspaceId, id),
        },
      },
    ),
  );
  for (const [action, run, summary, description, errors] of ACTIONS) {
    app.post(
      `/v1/campaigns/:id/${action}`,
      async ({ request, params }) => ({
        ok: true as const,
        campaign: await run(deps.db, workspaceOf(request), params.id, deps.clock.now()),
      }),
      {
        params: IdParams,
        detail: { tags: ["Campaigns"], operationId: `${action}Campaign`, summary, description },
        response: responses(CampaignEnvelope, [...WRITE_ERRORS, 404, ...errors]),
      },
    );
  }
  return app
    .get(
      "/v1/campaigns/:id/preview",
      async ({ request, params, query }) => ({
        ok: true as const,
        preview: await previewCampaign(
          deps.db,
          workspaceOf(request),
          params.id,
          parsePagination(query),
          deps.clock.now(),
          query.contact_id,
        ),
      }),
      {
        params: IdParams,
        query: Query({
          ...paginationQuery,
          contact_id: t.Optional(
            t.String({
              description:
                "Preview for this contact only: `contacts` holds its entry (the message exactly as it would get it, or why it would not) when it is in the audience, and is empty when it is not. Totals still cover the whole audience. Another workspace's contact, or an unknown id: 404",
              examples: ["0f3c6a8e-1b2d-4c5e-8f90-a1b2c3d4e5f6"],
            }),
          ),
        }),
        detail: {
          tags: ["Campaigns"],
          operationId: "previewCampaign",
          summary: "Dry run of a campaign",
          description:
            "In any state; writes nothing. Each contact of the page is planned by the same function as the real run (audience, variant, merge, sender rotation, send-time decision), so preview and run agree; totals cover the whole audience. `{{offer_url}}` shows as `<link base>/r/XXXXXXXXXX` on the domain the links will use (the campaign's link domain, the offer's, the default, else PUBLIC_URL): a recipient's own link has that shape and length, and its code is made when the message is written.",
        },
        response: responses(t.Object({ ok: Ok, preview: Preview }), [...READ_ERRORS, 404, 422]),
      },
    )
    .get(
      "/v1/campaigns/:id/recipients",
      async ({ request, params, query }) => ({
        ok: true as const,
        ...(await listRecipients(
          deps.db,
          workspaceOf(request),
          params.id,
          { outcome: query.outcome },
          parsePagination(query),
        )),
      }),
      {
        params: IdParams,
        query: Query({
          ...paginationQuery,
          outcome: t.Optional(t.String({ description: `One of ${RECIPIENT_OUTCOMES.join(", ")}` })),
        }),
        detail: {
          tags: ["Campaigns"],
          operationId: "listCampaignRecipients",
          summary: "Recipients of a launched campaign",
          description:
            "In contact-id order, filtered by `outcome`; each with its reason, send_at, message_id and variant.",
        },
        response: responses(listEnvelope("recipients", Recipient, "Recipients in contact-id order"), [
          ...READ_ERRORS,
          404,
          422,
        ]),
      },
    );
}
