import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { ENTITY_TYPES, SHORT_CODE_TYPES, USE_CASES, VERTICALS } from "../compliance/registration";
import {
  createBrand,
  createShortCodeRequest,
  createTendlcCampaign,
  getBrand,
  getShortCodeRequest,
  getTendlcCampaign,
  listBrands,
  listShortCodeRequests,
  listTendlcCampaigns,
  preflightCampaign,
  updateBrand,
  updateTendlcCampaign,
} from "../domain/registration/registration";
import { workspaceOf } from "../http/context";
import { Body, Enum, Int, Ok, responses, Timestamp, Uuid, WRITE_ERRORS } from "../http/schemas";
import { MAX_COUNT } from "../lib/counts";
import { resourceRoutes } from "./resource-routes";

const Nullable = (description: string) => t.Union([t.String(), t.Null()], { description });
const Strings = (description: string) => t.Array(t.String(), { description });
const TAG = "10DLC and short codes";

const Address = t.Object(
  {
    street: t.String({ description: "Street" }),
    city: t.String({ description: "City" }),
    state: t.String({ description: "2-letter US state code" }),
    postal_code: t.String({ description: "US ZIP code" }),
    country: t.String({ description: "US" }),
  },
  { description: "Registered address" },
);

const BrandSchema = t.Object(
  {
    id: Uuid("Brand id"),
    legal_name: t.String({ description: "Legal name" }),
    ein: Nullable("EIN like 12-3456789; null for a sole proprietor"),
    entity_type: Enum(ENTITY_TYPES, "Entity type"),
    vertical: Enum(VERTICALS, "Industry, from the registry's list"),
    website: Nullable("Website"),
    email: t.String({ description: "Contact email" }),
    phone: t.String({ description: "Contact phone (E.164)" }),
    address: Address,
    status: Enum(["PENDING", "VERIFIED", "UNVERIFIED", "FAILED"], "Review status"),
    failure_reasons: Strings("Why it was not verified"),
    created_at: Timestamp("Submitted"),
    updated_at: Timestamp("Last change"),
  },
  { description: "A 10DLC brand" },
);

const Issue = t.Object(
  {
    field: t.String({ description: "The field at fault, e.g. sample_messages[1]" }),
    code: t.String({
      description:
        "brand_name_missing, opt_out_missing, public_url_shortener, embedded_link_mismatch, embedded_phone_mismatch, shaft_content, use_case_mismatch",
    }),
    message: t.String({ description: "What carriers would say" }),
    severity: Enum(
      ["error", "warning"],
      "error: carriers reject it (create refuses it); warning: worth a look",
    ),
  },
  { description: "One pre-flight finding" },
);

const CampaignSchema = t.Object(
  {
    id: Uuid("10DLC campaign id"),
    brand_id: Uuid("Brand"),
    use_case: Enum(USE_CASES, "Use case"),
    description: t.String({ description: "What the campaign sends" }),
    message_flow: t.String({ description: "How consent is collected" }),
    sample_messages: Strings("2–5 sample messages"),
    help_message: t.String({ description: "The HELP answer" }),
    optout_message: t.String({ description: "The STOP answer" }),
    has_embedded_links: t.Boolean({ description: "Messages carry links" }),
    has_embedded_phone: t.Boolean({ description: "Messages carry phone numbers" }),
    number_ids: Strings("Numbers of the workspace it registers"),
    status: Enum(["PENDING", "APPROVED", "REJECTED"], "Review status"),
    rejection_reasons: Strings("Why it was rejected"),
    warnings: t.Array(Issue, { description: "The pre-flight's warnings at submission" }),
    created_at: Timestamp("Submitted"),
    updated_at: Timestamp("Last change"),
  },
  { description: "A 10DLC campaign" },
);

const ShortCodeSchema = t.Object(
  {
    id: Uuid("Request id"),
    type: Enum(SHORT_CODE_TYPES, "random or vanity"),
    vanity_code: Nullable("The 5–6 digit code asked for (vanity)"),
    use_case: Enum(USE_CASES, "Use case"),
    monthly_volume: Int({ description: "Expected messages a month" }),
    sample_messages: Strings("Sample messages"),
    status: Enum(
      ["submitted", "in_review", "approved", "rejected"],
      "submitted → in_review → approved | rejected",
    ),
    short_code: Nullable("The assigned code, once approved (then also a number of the workspace)"),
    rejection_reasons: Strings("Why it was rejected"),
    created_at: Timestamp("Submitted"),
    updated_at: Timestamp("Last change"),
  },
  { description: "A short-code request" },
);

const opt = <T extends import("@sinclair/typebox").TSchema>(schema: T) => t.Optional(schema);
const brandFields = {
  legal_name: opt(t.String({ maxLength: 255, description: "Legal name" })),
  ein: opt(
    t.Union([t.String({ maxLength: 20 }), t.Null()], {
      description: "EIN like 12-3456789 (not for SOLE_PROPRIETOR)",
    }),
  ),
  entity_type: opt(t.String({ description: ENTITY_TYPES.join(" | ") })),
  vertical: opt(t.String({ description: "The registry's vertical, e.g. RETAIL" })),
  website: opt(t.Union([t.String({ maxLength: 2048 }), t.Null()], { description: "http(s) URL" })),
  email: opt(t.String({ maxLength: 320, description: "Contact email" })),
  phone: opt(t.String({ maxLength: 64, description: "Contact phone" })),
  address: opt(
    t.Record(t.String(), t.Unknown(), { description: "{street, city, state, postal_code, country}" }),
  ),
};
const campaignFields = {
  brand_id: opt(t.String({ maxLength: 64, description: "A brand of the workspace" })),
  use_case: opt(t.String({ description: "One of the registry's use cases, e.g. MARKETING" })),
  description: opt(t.String({ maxLength: 4096, description: "What the campaign sends (≥ 40 characters)" })),
  message_flow: opt(t.String({ maxLength: 4096, description: "How consent is collected (≥ 40 characters)" })),
  sample_messages: opt(t.Array(t.String({ maxLength: 2048 }), { maxItems: 10, description: "2–5 samples" })),
  help_message: opt(t.String({ maxLength: 1024, description: "The HELP answer" })),
  optout_message: opt(t.String({ maxLength: 1024, description: "The STOP answer (must mention STOP)" })),
  has_embedded_links: opt(t.Boolean({ description: "Messages carry links" })),
  has_embedded_phone: opt(t.Boolean({ description: "Messages carry phone numbers" })),
  number_ids: opt(
    t.Array(t.String({ maxLength: 64 }), { maxItems: 1000, description: "Numbers it registers" }),
  ),
};

const EXPLAIN_501 =
  "With `CARRIER=twilio` every write answers 501: registration is done in Twilio's console (Trust Hub) for now.";

// /v1/10dlc/brands, /v1/10dlc/campaigns (+ preflight), /v1/short-codes/requests.
export function registrationRoutes(deps: AppDeps) {
  return new Elysia({ name: "registration" })
    .post(
      "/v1/10dlc/campaigns/preflight",
      async ({ request, body }) => ({
        ok: true as const,
        preflight: await preflightCampaign(deps.db, workspaceOf(request), body),
      }),
      {
        body: Body(campaignFields, { description: "A 10DLC campaign as it would be submitted" }),
        detail: {
          tags: [TAG],
          operationId: "preflightTendlcCampaign",
          summary: "Pre-flight a 10DLC campaign",
          description:
            "Checks what carriers reject before a registration fee is paid, writing nothing: the brand's name and STOP wording in the samples, no public URL shorteners, links and phone numbers consistent with `has_embedded_links`/`has_embedded_phone`, SHAFT content, a use case that matches the samples. The body must pass the registry's rules first (422 naming the field, as create).",
        },
        response: responses(
          t.Object({
            ok: Ok,
            preflight: t.Object(
              {
                passed: t.Boolean({ description: "No error (warnings allowed)" }),
                issues: t.Array(Issue, { description: "Findings, by field then code" }),
              },
              { description: "The result" },
            ),
          }),
          WRITE_ERRORS,
        ),
      },
    )
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/10dlc/brands",
          tag: TAG,
          one: "brand",
          many: "brands",
          item: BrandSchema,
          idDescription: "Brand id",
        },
        {
          list: {
            summary: "List 10DLC brands",
            description: "Newest first, with their review status and reasons.",
            itemsDescription: "Brands, newest first",
            run: async (workspaceId, _query, page) => await listBrands(deps.db, workspaceId, page),
          },
          create: {
            summary: "Register a 10DLC brand",
            description: `Checked with the registry's rules (422 naming the field: \`ein must look like 12-3456789\`, entity types, verticals, a US address), then PENDING until the carrier's review (the simulated one: VERIFIED, or FAILED for an EIN of 00-0000000, UNVERIFIED for an EIN starting with 99 or a legal name with the word "test"). Emits \`brand.updated\` when reviewed. ${EXPLAIN_501}`,
            body: Body({ ...brandFields }, { description: "A brand" }),
            errors: [501],
            run: async (workspaceId, body, now) => await createBrand(deps.db, workspaceId, body, now),
          },
          get: {
            summary: "Get a 10DLC brand",
            description: "The brand with its review status and failure reasons.",
            run: async (workspaceId, id) => await getBrand(deps.db, workspaceId, id),
          },
          update: {
            summary: "Edit a 10DLC brand",
            description:
              "Only before it is VERIFIED (409 after); the edit goes back to PENDING and is reviewed again.",
            body: Body({ ...brandFields }, { description: "Fields to change" }),
            errors: [404, 409, 501],
            run: async (workspaceId, id, body, now) => await updateBrand(deps.db, workspaceId, id, body, now),
          },
        },
      ),
    )
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/10dlc/campaigns",
          tag: TAG,
          one: "campaign",
          many: "campaigns",
          item: CampaignSchema,
          idDescription: "10DLC campaign id",
          operationNouns: { one: "tendlc_campaign", many: "tendlc_campaigns" },
        },
        {
          list: {
            summary: "List 10DLC campaigns",
            description: "Newest first, with their review status, rejection reasons and pre-flight warnings.",
            itemsDescription: "10DLC campaigns, newest first",
            run: async (workspaceId, _query, page) => await listTendlcCampaigns(deps.db, workspaceId, page),
          },
          create: {
            summary: "Register a 10DLC campaign",
            description: `Checked with the registry's rules (422 naming the field: at least two sample messages, \`optout_message must mention STOP\`, a help message, a message flow that says how consent is collected, \`brand_id does not exist\`, \`number_ids[1] does not exist\`) and the pre-flight: its errors block (422 \`sample_messages[0]: …\`), its warnings are kept in \`warnings\`. PENDING until the carrier's review (the simulated one approves when the brand is VERIFIED and the pre-flight has no error). Emits \`tendlc_campaign.updated\` when reviewed. ${EXPLAIN_501}`,
            body: Body({ ...campaignFields }, { description: "A 10DLC campaign" }),
            errors: [501],
            run: async (workspaceId, body, now) =>
              await createTendlcCampaign(deps.db, workspaceId, body, now),
          },
          get: {
            summary: "Get a 10DLC campaign",
            description: "The campaign with its review status, rejection reasons and pre-flight warnings.",
            run: async (workspaceId, id) => await getTendlcCampaign(deps.db, workspaceId, id),
          },
          update: {
            summary: "Edit a 10DLC campaign",
            description: "Only before it is APPROVED (409 after); checked again and reviewed again.",
            body: Body({ ...campaignFields }, { description: "Fields to change" }),
            errors: [404, 409, 501],
            run: async (workspaceId, id, body, now) =>
              await updateTendlcCampaign(deps.db, workspaceId, id, body, now),
          },
        },
      ),
    )
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/short-codes/requests",
          tag: TAG,
          one: "request",
          many: "requests",
          item: ShortCodeSchema,
          idDescription: "Request id",
          operationNouns: { one: "short_code_request", many: "short_code_requests" },
        },
        {
          list: {
            summary: "List short-code requests",
            description: "Newest first, with their status and assigned codes.",
            itemsDescription: "Requests, newest first",
            run: async (workspaceId, _query, page) => await listShortCodeRequests(deps.db, workspaceId, page),
          },
          create: {
            summary: "Request a short code",
            description: `Random or vanity (\`vanity_code\` of 5–6 digits). submitted → in_review → approved | rejected by the carrier's review (the simulated one rejects samples with public shorteners or SHAFT content and the leased vanity codes 12345, 11111, 55555). An approved code becomes a number of the workspace. Emits \`short_code.updated\` on each step. ${EXPLAIN_501}`,
            body: Body(
              {
                type: opt(t.String({ description: "random | vanity" })),
                vanity_code: opt(
                  t.Union([t.String({ maxLength: 16 }), t.Null()], { description: "5–6 digits (vanity)" }),
                ),
                use_case: opt(t.String({ description: "One of the registry's use cases" })),
                monthly_volume: opt(t.Number({ description: `Expected messages a month (1–${MAX_COUNT})` })),
                sample_messages: opt(
                  t.Array(t.String({ maxLength: 2048 }), { maxItems: 10, description: "1–5 samples" }),
                ),
              },
              { description: "A short-code request" },
            ),
            errors: [501],
            run: async (workspaceId, body, now) =>
              await createShortCodeRequest(deps.db, workspaceId, body, now),
          },
          get: {
            summary: "Get a short-code request",
            description: "The request with its status, assigned code and rejection reasons.",
            run: async (workspaceId, id) => await getShortCodeRequest(deps.db, workspaceId, id),
          },
        },
      ),
    );
}
