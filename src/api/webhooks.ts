import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import {
  configureWebhookDelivery,
  createWebhook,
  deleteWebhook,
  dispatchPendingEvents,
  getWebhook,
  listDeliveryAttempts,
  listWebhooks,
  retryDelivery,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
} from "../domain/webhooks/webhooks";
import { workspaceOf } from "../http/context";
import { paginationQuery, parsePagination } from "../http/pagination";
import {
  Body,
  Enum,
  Int,
  listEnvelope,
  Ok,
  Query,
  READ_ERRORS,
  responses,
  Timestamp,
  Uuid,
  WRITE_ERRORS,
} from "../http/schemas";
import { errorText, log } from "../lib/log";
import { EVENT_TYPES } from "../webhooks/events";
import { resourceRoutes } from "./resource-routes";

const TAGS = ["Webhooks"];
const NOT_FOUND = 404;
const EVENT_LIST = `${EVENT_TYPES.join(", ")}, or * for all`;

const WebhookSchema = t.Object(
  {
    id: Uuid("Subscription id"),
    url: t.String({
      description: "Receiver URL (http or https)",
      examples: ["https://example.com/hooks/outreach"],
    }),
    events: t.Array(t.String(), {
      description: `Event kinds delivered: ${EVENT_LIST}`,
      examples: [["message.delivered", "conversion.recorded"]],
    }),
    description: t.Union([t.String(), t.Null()], { description: "Free text" }),
    enabled: t.Boolean({
      description: "Disabled endpoints receive nothing (set false by a 410 answer or 5 days of failures)",
    }),
    created_at: Timestamp("Created"),
  },
  { description: "Webhook subscription" },
);

const WebhookWithSecret = t.Object(
  {
    ...WebhookSchema.properties,
    secret: t.String({
      description:
        "Signing secret (`whsec_` + base64). Shown only here and on rotate-secret. Verify `webhook-signature` (Standard Webhooks) with it.",
      examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    }),
  },
  { description: "Webhook subscription with its signing secret" },
);

const DeliverySchema = t.Object(
  {
    id: Uuid("Delivery id (one event to this endpoint; use it to replay)"),
    event: t.String({ description: "Event kind", examples: ["webhook.test"] }),
    status: Enum(["succeeded", "failed"], "succeeded: the receiver answered 2xx; failed: anything else"),
    response_status: t.Union([Int(), t.Null()], {
      description: "Receiver's HTTP status; null when it did not answer (refused, timed out, blocked)",
    }),
    duration_ms: Int({ description: "Time the attempt took" }),
    attempt: Int({ description: "Attempt number of this delivery (1 = first)" }),
    created_at: Timestamp("When the attempt started"),
  },
  { description: "One delivery attempt" },
);

const DeliveryLogEntry = t.Object(
  {
    ...DeliverySchema.properties,
    attempt_id: Uuid("Id of this attempt"),
    event_id: Uuid("Event id (the `webhook-id` header)"),
    response_body: t.Union([t.String(), t.Null()], {
      description: "First 1 KiB of the receiver's answer (no more is read)",
    }),
    error: t.Union([t.String(), t.Null()], {
      description: "Why the attempt failed (HTTP status, timeout, connection error), or null",
    }),
  },
  { description: "One delivery attempt, as logged" },
);

const EventsField = t.Array(t.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  description: `Event kinds to deliver: ${EVENT_LIST}`,
  examples: [["message.delivered", "conversion.recorded"]],
});
const UrlField = t.String({
  minLength: 1,
  maxLength: 2000,
  description:
    "Receiver URL, http or https. Private, loopback and link-local addresses (IPv6 forms embedding one included) are refused by default with 422 `url points to a private address (an operator can allow this with WEBHOOK_ALLOW_PRIVATE=true)`; link-local and cloud metadata addresses whatever the setting.",
  examples: ["https://example.com/hooks/outreach"],
});
const DescriptionField = t.Union([t.String({ maxLength: 2000 }), t.Null()], { description: "Free text" });

const CreateBody = Body(
  {
    url: UrlField,
    events: EventsField,
    description: t.Optional(DescriptionField),
    enabled: t.Optional(t.Boolean({ description: "Default true" })),
  },
  { description: "New subscription" },
);

const PatchBody = Body(
  {
    url: t.Optional(UrlField),
    events: t.Optional(EventsField),
    description: t.Optional(DescriptionField),
    enabled: t.Optional(t.Boolean({ description: "Enable or disable; enabling clears the failure history" })),
  },
  { description: "Fields to change; others stay as they are" },
);

const IdParams = t.Object({ id: t.String({ description: "Subscription id" }) });
const DeliveryParams = t.Object({
  id: t.String({ description: "Subscription id" }),
  delivery_id: t.String({ description: "Delivery id (or the id of one of its attempts)" }),
});

const _WebhookEnvelope = t.Object({ ok: Ok, webhook: WebhookSchema });
const SecretEnvelope = t.Object({ ok: Ok, webhook: WebhookWithSecret });
const DeliveryEnvelope = t.Object({ ok: Ok, delivery: DeliverySchema });

// /v1/webhooks – event subscriptions, delivered per Standard Webhooks with retries and a log.
export async function webhooksRoutes(deps: AppDeps) {
  configureWebhookDelivery(deps.db, {
    allowPrivate: deps.config.webhookAllowPrivate,
    timeoutMs: deps.config.webhookTimeoutMs,
  });
  // Events written by a process that did not fan them out are delivered now.
  try {
    const dispatched = await dispatchPendingEvents(deps.db);
    if (dispatched > 0) log.info("dispatched pending events to webhooks", { count: dispatched });
  } catch (error) {
    log.error("could not dispatch pending events", { error: errorText(error) });
  }
  return (
    new Elysia({ name: "webhooks" })
      // GET /v1/webhooks, GET|PATCH|DELETE /v1/webhooks/{id}
      .use(
        resourceRoutes(
          deps,
          {
            path: "/v1/webhooks",
            tag: "Webhooks",
            one: "webhook",
            many: "webhooks",
            item: WebhookSchema,
            idDescription: "Subscription id",
          },
          {
            list: {
              summary: "List webhook subscriptions",
              description:
                "Newest first, with their events and whether they are enabled. Secrets are never listed: they are shown on create and rotate-secret only.",
              itemsDescription: "Webhook subscriptions, newest first",
              run: async (workspaceId, _query, page) => {
                const { webhooks, total } = await listWebhooks(deps.db, workspaceId, page);
                return { items: webhooks, total };
              },
            },
            get: {
              summary: "Get a webhook subscription",
              description:
                "Its URL, events, description and whether it is enabled; the delivery log is `GET /v1/webhooks/{id}/deliveries`. The secret is not shown.",
              run: async (workspaceId, id) => await getWebhook(deps.db, workspaceId, id),
            },
            update: {
              summary: "Update a webhook subscription",
              description: "Partial update.",
              body: PatchBody,
              run: async (workspaceId, id, body, now) =>
                await updateWebhook(deps.db, workspaceId, id, body, now),
            },
            delete: {
              summary: "Delete a webhook subscription",
              description:
                "Answers the deleted subscription. Its delivery log and pending deliveries go with it.",
              answers: "item",
              run: async (workspaceId, id) => await deleteWebhook(deps.db, workspaceId, id),
            },
          },
        ),
      )
      // POST /v1/webhooks – subscribe a URL to events
      .post(
        "/v1/webhooks",
        async ({ request, body }) => ({
          ok: true as const,
          webhook: await createWebhook(deps.db, workspaceOf(request), body, deps.clock.now()),
        }),
        {
          body: CreateBody,
          detail: {
            tags: TAGS,
            operationId: "createWebhook",
            summary: "Create a webhook subscription",
            description:
              "Answers the subscription with its signing `secret` (shown only here and on rotate-secret). Unknown event kinds answer 422 naming them.",
          },
          response: responses(SecretEnvelope, WRITE_ERRORS),
        },
      )
      // POST /v1/webhooks/{id}/rotate-secret – new secret; the old one also signs for 24 h
      .post(
        "/v1/webhooks/:id/rotate-secret",
        async ({ request, params }) => ({
          ok: true as const,
          webhook: await rotateWebhookSecret(deps.db, workspaceOf(request), params.id, deps.clock.now()),
        }),
        {
          params: IdParams,
          detail: {
            tags: TAGS,
            operationId: "rotateWebhookSecret",
            summary: "Rotate the signing secret",
            description:
              "Answers the new `secret`. For 24 h every delivery carries two signatures in `webhook-signature` (new and previous secret, space-separated), so receivers can switch without dropping events.",
          },
          response: responses(SecretEnvelope, [...WRITE_ERRORS, NOT_FOUND]),
        },
      )
      // POST /v1/webhooks/{id}/test – deliver a signed webhook.test now
      .post(
        "/v1/webhooks/:id/test",
        async ({ request, params }) => ({
          ok: true as const,
          delivery: await sendTestEvent(deps.db, workspaceOf(request), params.id, deps.clock),
        }),
        {
          params: IdParams,
          detail: {
            tags: TAGS,
            operationId: "testWebhook",
            summary: "Send a test event",
            description:
              'Delivers a signed `webhook.test` once, synchronously (not retried), and answers the attempt: a receiver that answers 500 gives `{ok:true, delivery:{status:"failed", response_status:500}}`.',
          },
          response: responses(DeliveryEnvelope, [...WRITE_ERRORS, NOT_FOUND]),
        },
      )
      // GET /v1/webhooks/{id}/deliveries – every attempt, newest first
      .get(
        "/v1/webhooks/:id/deliveries",
        async ({ request, params, query }) => ({
          ok: true as const,
          ...(await listDeliveryAttempts(deps.db, workspaceOf(request), params.id, parsePagination(query))),
        }),
        {
          params: IdParams,
          query: Query(paginationQuery),
          detail: {
            tags: TAGS,
            operationId: "listWebhookDeliveries",
            summary: "Delivery log",
            description:
              "Every attempt to this endpoint, newest first: receiver status, the first 1 KiB of its answer (no more is read), duration, and the error when it did not answer. `id` is the delivery (replay it with …/deliveries/{id}/retry).",
          },
          response: responses(
            listEnvelope("deliveries", DeliveryLogEntry, "Delivery attempts, newest first"),
            [...READ_ERRORS, 422, NOT_FOUND],
          ),
        },
      )
      // POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry – replay one delivery now
      .post(
        "/v1/webhooks/:id/deliveries/:delivery_id/retry",
        async ({ request, params }) => ({
          ok: true as const,
          delivery: await retryDelivery(
            deps.db,
            workspaceOf(request),
            params.id,
            params.delivery_id,
            deps.clock,
          ),
        }),
        {
          params: DeliveryParams,
          detail: {
            tags: TAGS,
            operationId: "retryWebhookDelivery",
            summary: "Replay a delivery",
            description:
              "Sends the delivery's event again now (same `webhook-id`, fresh timestamp and signature) and answers the attempt. A 2xx marks the delivery succeeded and ends its retry schedule.",
          },
          response: responses(DeliveryEnvelope, [...WRITE_ERRORS, NOT_FOUND]),
        },
      )
  );
}
