import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { getSettings, updateSettings } from "../domain/workspace/settings";
import { workspaceOf } from "../http/context";
import { Body, Int, Ok, READ_ERRORS, responses, WRITE_ERRORS } from "../http/schemas";
import { MAX_COUNT } from "../lib/counts";

const Hour = (description: string) => Int({ minimum: 0, maximum: 23, description });

const QuietHours = t.Object(
  {
    enabled: t.Boolean({
      description: "Hold bulk sends during quiet hours (contact's local time)",
      default: true,
    }),
    start_hour: Hour("Quiet hours start (0–23, local)"),
    end_hour: Hour("Quiet hours end (0–23, local)"),
  },
  { description: "Quiet hours for bulk sends" },
);

const FrequencyCap = t.Object(
  {
    enabled: t.Boolean({ description: "Cap marketing sends per contact", default: true }),
    max_messages: Int({
      minimum: 1,
      maximum: MAX_COUNT,
      description: "Most marketing sends per contact in the window",
      examples: [3],
    }),
    window_hours: Int({ minimum: 1, maximum: 720, description: "Rolling window in hours", examples: [24] }),
    apply_to_all: t.Boolean({
      description:
        "true: every contact; false: only contacts of the capped states (FL, OK, MD, OR), and only with state_rules on",
      default: false,
    }),
  },
  {
    description:
      "Rolling cap on marketing sends per contact, on either channel: campaign and flow messages, agent follow-ups, and calls placed by a voice campaign or a flow; replies and one-off messages and calls are not counted. Over the cap: skipped as frequency_cap.",
  },
);

const PausedStates = t.Array(t.String({ maxLength: 8, examples: ["LA"] }), {
  maxItems: 100,
  description:
    "US state / territory or Canadian province codes (by the number's area code) whose marketing sends are stopped: skipped as state_paused. A +1 number whose area code is unknown is skipped too while any state is paused.",
  examples: [["LA"]],
});

const ONE_OFF_BUDGET =
  "Most one-off sends per UTC day, POST /v1/messages, POST /v1/calls and the team's replies in a thread (POST /v1/conversations/{id}) together (default 5000; null = no budget). Over it: 429 `Daily limit reached: one_off_daily_limit is 5000` and nothing is sent. Campaigns, flows and agents are not counted.";
const NUMBER_ORDERS_BUDGET =
  "Most numbers ordered per UTC day, each number of a request counted (default 50; null = no budget). A request that would pass it: 429 `Daily limit reached: number_orders_daily_limit is 50` and nothing is ordered.";

/** A daily budget setting (API.md §7.2): a whole number from 0, or null for none. */
const DailyBudget = (description: string, example: number) =>
  t.Union([Int({ minimum: 0, maximum: MAX_COUNT }), t.Null()], { description, examples: [example] });

export const SettingsSchema = t.Object(
  {
    name: t.String({ description: "Workspace name", examples: ["Acme"] }),
    timezone: t.String({ description: "IANA zone of the workspace", examples: ["America/New_York"] }),
    default_number_id: t.Union([t.String(), t.Null()], {
      description: "Default sending number; null means the oldest active number",
    }),
    conversion_tracking_enabled: t.Boolean({ description: "When false, POST /v1/conversion answers 403" }),
    help_reply: t.String({ description: "Reply to HELP/INFO" }),
    opt_out_reply: t.String({ description: "Confirmation sent once on STOP" }),
    opt_in_reply: t.String({ description: "Confirmation sent on START" }),
    quiet_hours: QuietHours,
    costs: t.Object(
      {
        sms_segment: t.Number({ description: "Cost of one SMS segment", examples: [0.0079] }),
        call_minute: t.Number({ description: "Cost of one call minute", examples: [0.014] }),
        currency: t.String({ description: "ISO 4217 currency of the costs", examples: ["USD"] }),
      },
      { description: "What sends cost, for analytics cost and ROI" },
    ),
    public_id: t.String({
      description:
        'Public id of the workspace for the tracking script: `<script src="…/t.js?w=<public_id>">`',
      examples: ["ws_k3j9x0q2m8v7c1b5n4z6"],
    }),
    state_rules: t.Boolean({
      description:
        "Apply the built-in US state table to marketing sends (stricter hours, no-Sunday states, holidays, rolling caps), by the area code's state; the stricter rule wins",
    }),
    frequency_cap: FrequencyCap,
    paused_states: PausedStates,
    require_registration: t.Boolean({
      description:
        "Campaign and flow sends from a US local number that is in no APPROVED 10DLC campaign are skipped as `unregistered_number`; one-off sends answer 422 `from is not registered for A2P messaging` (default false)",
    }),
    one_off_daily_limit: DailyBudget(ONE_OFF_BUDGET, 5000),
    number_orders_daily_limit: DailyBudget(NUMBER_ORDERS_BUDGET, 50),
  },
  { description: "Workspace settings" },
);

const Text = (description: string, maxLength = 2000) => t.String({ description, maxLength });

const SettingsPatchBody = Body(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "Workspace name" })),
    timezone: t.Optional(t.String({ maxLength: 100, description: "IANA zone" })),
    default_number_id: t.Optional(
      t.Union([t.String(), t.Null()], { description: "A number of this workspace, or null" }),
    ),
    conversion_tracking_enabled: t.Optional(t.Boolean({ description: "Accept server-side conversions" })),
    help_reply: t.Optional(Text("Reply to HELP/INFO", 1600)),
    opt_out_reply: t.Optional(Text("Confirmation sent on STOP", 1600)),
    opt_in_reply: t.Optional(Text("Confirmation sent on START", 1600)),
    quiet_hours: t.Optional(
      t.Object(
        {
          enabled: t.Optional(t.Boolean({ description: "Hold bulk sends during quiet hours" })),
          start_hour: t.Optional(Hour("Start hour")),
          end_hour: t.Optional(Hour("End hour")),
        },
        { description: "Quiet hours for bulk sends; given fields change" },
      ),
    ),
    costs: t.Optional(
      t.Object(
        {
          sms_segment: t.Optional(
            t.Number({ minimum: 0, maximum: 100, description: "Cost of one SMS segment (0–100)" }),
          ),
          call_minute: t.Optional(
            t.Number({ minimum: 0, maximum: 100, description: "Cost of one call minute (0–100)" }),
          ),
          currency: t.Optional(t.String({ maxLength: 3, description: "ISO 4217 currency (three letters)" })),
        },
        { description: "Costs for analytics; given fields change" },
      ),
    ),
    state_rules: t.Optional(t.Boolean({ description: "Apply the built-in US state table" })),
    require_registration: t.Optional(
      t.Boolean({ description: "Require an APPROVED 10DLC campaign for sends from US local numbers" }),
    ),
    frequency_cap: t.Optional(
      t.Object(
        {
          enabled: t.Optional(t.Boolean({ description: "Cap marketing sends per contact" })),
          max_messages: t.Optional(
            Int({ minimum: 1, maximum: MAX_COUNT, description: `Most sends in the window (1–${MAX_COUNT})` }),
          ),
          window_hours: t.Optional(Int({ minimum: 1, maximum: 720, description: "Window in hours (1–720)" })),
          apply_to_all: t.Optional(t.Boolean({ description: "Cap everyone, not only capped states" })),
        },
        { description: "Frequency cap; given fields change" },
      ),
    ),
    paused_states: t.Optional(PausedStates),
    one_off_daily_limit: t.Optional(DailyBudget(ONE_OFF_BUDGET, 5000)),
    number_orders_daily_limit: t.Optional(DailyBudget(NUMBER_ORDERS_BUDGET, 50)),
  },
  { description: "Fields to change; others stay as they are" },
);

const SettingsEnvelope = t.Object({ ok: Ok, settings: SettingsSchema });

// GET /v1/settings, PATCH /v1/settings – workspace settings used by sending, inbox and tracking.
export function settingsRoutes(deps: AppDeps) {
  return new Elysia({ name: "settings" })
    .get(
      "/v1/settings",
      async ({ request }) => ({
        ok: true as const,
        settings: await getSettings(deps.db, workspaceOf(request)),
      }),
      {
        detail: {
          tags: ["Settings"],
          operationId: "getSettings",
          summary: "Get workspace settings",
          description:
            "The settings of the key's workspace as they are now: name, timezone, default sending number, conversion tracking, the HELP, STOP and START keyword replies, the sending rules of bulk paths (quiet hours, state rules, frequency cap, paused states), costs and the public id of the tracking script.",
        },
        // 403: a dashboard session of an agent (settings are for admins).
        response: responses(SettingsEnvelope, [...READ_ERRORS, 403]),
      },
    )
    .patch(
      "/v1/settings",
      async ({ request, body }) => ({
        ok: true as const,
        settings: await updateSettings(deps.db, workspaceOf(request), body),
      }),
      {
        body: SettingsPatchBody,
        detail: {
          tags: ["Settings"],
          operationId: "updateSettings",
          summary: "Update workspace settings",
          description: "Partial update.",
        },
        response: responses(SettingsEnvelope, WRITE_ERRORS),
      },
    );
}
