import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import { getSettings, updateSettings } from "../domain/workspace/settings";
import { workspaceOf } from "../http/context";
import { Body, Int, Ok, READ_ERRORS, responses, WRITE_ERRORS } from "../http/schemas";

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
  },
  { description: "Fields to change; others stay as they are" },
);

const SettingsEnvelope = t.Object({ ok: Ok, settings: SettingsSchema });

// GET /v1/settings, PATCH /v1/settings – workspace settings used by sending, inbox and tracking.
export function settingsRoutes(deps: AppDeps) {
  return new Elysia({ name: "settings" })
    .get(
      "/v1/settings",
      ({ request }) => ({ ok: true as const, settings: getSettings(deps.db, workspaceOf(request)) }),
      {
        detail: {
          tags: ["Settings"],
          operationId: "getSettings",
          summary: "Get workspace settings",
          description:
            "The settings of the key's workspace as they are now: name, timezone, default sending number, conversion tracking, the HELP, STOP and START keyword replies, quiet hours, costs and the public id of the tracking script.",
        },
        response: responses(SettingsEnvelope, READ_ERRORS),
      },
    )
    .patch(
      "/v1/settings",
      ({ request, body }) => ({
        ok: true as const,
        settings: updateSettings(deps.db, workspaceOf(request), body),
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
