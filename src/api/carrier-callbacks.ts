import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import type { CallbackRequest } from "../carriers/carrier";
import { TWILIO_CALL_STATUS_PATH, TWILIO_INBOUND_PATH, TWILIO_STATUS_PATH } from "../carriers/twilio";
import { applyCallReports } from "../domain/calls/calls";
import { acceptWebhookReceipt } from "../domain/calls/receipts";
import { receiveInbound } from "../domain/messaging/inbound";
import { applyStatusUpdates } from "../domain/messaging/status-updates";
import type { RouteConventions } from "../http/route-conventions";
import { Ok, responses } from "../http/schemas";
import { AppError } from "../lib/errors";
import { log } from "../lib/log";

/** Where Retell posts call events (set as the agent's or account's webhook URL). */
export const RETELL_WEBHOOK_PATH = "/carriers/retell/webhook";

const INVALID_SIGNATURE = new AppError("unauthorized", "Invalid signature");

/** The callback as the adapter verifies it: the public URL the carrier called, headers, fields. */
async function callbackOf(request: Request, publicBase: string): Promise<CallbackRequest> {
  const url = new URL(request.url);
  const text = await request.text();
  const params: Record<string, string> = {};
  const type = (request.headers.get("content-type") ?? "").toLowerCase();
  if (type.includes("application/json")) {
    try {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      for (const [key, value] of Object.entries(parsed ?? {})) params[key] = String(value);
    } catch {
      // unparseable: no fields, the signature check fails
    }
  } else {
    for (const [key, value] of new URLSearchParams(text)) params[key] = value;
  }
  return { url: `${publicBase}${url.pathname}${url.search}`, headers: request.headers, params };
}

// POST /carriers/twilio/status, POST /carriers/twilio/inbound – carrier webhooks (no API key; the
// carrier's signature is checked by the adapter: a forged call answers 401 and changes nothing).
export function carrierCallbackRoutes(deps: AppDeps, conventions: RouteConventions) {
  // Form-encoded or JSON, and signed: the handler reads the raw body, not a checked JSON one.
  for (const path of [
    TWILIO_STATUS_PATH,
    TWILIO_INBOUND_PATH,
    TWILIO_CALL_STATUS_PATH,
    RETELL_WEBHOOK_PATH,
  ]) {
    conventions.registerStreamingRoute("POST", path);
  }
  const publicBase = (process.env.TWILIO_CALLBACK_BASE_URL ?? deps.config.publicUrl).replace(/\/+$/, "");
  return new Elysia({ name: "carrier-callbacks" })
    .post(
      TWILIO_STATUS_PATH,
      async ({ request }) => {
        const callback = await callbackOf(request, publicBase);
        if (!deps.carrier.verifyCallback(callback)) throw INVALID_SIGNATURE;
        // Genuine but not about one of our sends' statuses (e.g. "receiving"): acknowledged, ignored.
        const update = deps.carrier.parseStatusCallback(callback);
        if (update) await applyStatusUpdates(deps.db, [update], deps.clock.now());
        return { ok: true as const };
      },
      {
        detail: {
          tags: ["Carrier callbacks"],
          operationId: "receiveTwilioStatusCallback",
          summary: "Message status callback (signed by the carrier)",
          description:
            "Twilio posts each status change of a message sent through it here (`?message_id=<id>`, form-encoded, signed with `X-Twilio-Signature`). A genuine report moves the message along its lifecycle (a repeated or late report changes nothing) and emits `message.sent`, `message.delivered` or `message.failed`; a report about nothing of ours is acknowledged and ignored. A forged call answers 401 and changes nothing.",
        },
        response: responses(t.Object({ ok: Ok }), [401, 408, 413, 429]),
      },
    )
    .post(
      TWILIO_INBOUND_PATH,
      async ({ request }) => {
        const callback = await callbackOf(request, publicBase);
        if (!deps.carrier.verifyCallback(callback)) throw INVALID_SIGNATURE;
        const sms = deps.carrier.parseInbound(callback);
        if (sms) await receiveInbound(deps.db, sms, deps.clock.now());
        // Empty TwiML: replies are sent by us, never by the carrier.
        return new Response('<?xml version="1.0" encoding="UTF-8"?><Response></Response>', {
          headers: { "content-type": "text/xml" },
        });
      },
      {
        detail: {
          tags: ["Carrier callbacks"],
          operationId: "receiveTwilioInboundMessage",
          summary: "Inbound SMS webhook (signed by the carrier)",
          description:
            "Twilio posts every SMS sent to one of the workspace's numbers here (the number's SMS URL, set when it is ordered; form-encoded, signed with `X-Twilio-Signature`). The message runs the inbound path: contact and thread, CTIA keywords (STOP, START, HELP), needs_attention and `message.received`. A forged call answers 401 and changes nothing.",
        },
        response: responses(
          t.String({
            description: "Empty TwiML: replies are sent by the API, not by the carrier",
            contentMediaType: "text/xml",
            examples: ['<?xml version="1.0" encoding="UTF-8"?><Response></Response>'],
          }),
          [401, 408, 413, 429],
        ),
      },
    )
    .post(
      TWILIO_CALL_STATUS_PATH,
      async ({ request }) => {
        const callback = await callbackOf(request, publicBase);
        if (!deps.carrier.verifyCallback(callback)) throw INVALID_SIGNATURE;
        const report = deps.carrier.parseCallStatusCallback(callback);
        if (report) await applyCallReports(deps.db, [report], deps.clock.now());
        return { ok: true as const };
      },
      {
        detail: {
          tags: ["Carrier callbacks"],
          operationId: "receiveTwilioCallStatusCallback",
          summary: "Call status callback (signed by the carrier)",
          description:
            "Twilio posts each status change of a `say` call placed through it here (`?call_id=<id>`, form-encoded, signed with `X-Twilio-Signature`): initiated, ringing, answered, completed. A genuine report moves the call along its lifecycle (never back); the first final status adds the thread entry and emits `call.completed`. A report about no call of ours is acknowledged and ignored. A forged call answers 401 and changes nothing.",
        },
        response: responses(t.Object({ ok: Ok }), [401, 408, 413, 429]),
      },
    )
    .post(
      RETELL_WEBHOOK_PATH,
      async ({ request }) => {
        const webhook = { rawBody: await request.text(), headers: request.headers };
        const now = deps.clock.now();
        if (!deps.voice.verifyWebhook(webhook, now)) throw INVALID_SIGNATURE;
        // A genuine request seen before (the same timestamp and digest, however the signature
        // header is spelled) is a replay: refused, nothing changes.
        const replayKey = deps.voice.webhookReplayKey(webhook);
        if (!replayKey || !(await acceptWebhookReceipt(deps.db, replayKey, now))) throw INVALID_SIGNATURE;
        const report = deps.voice.parseWebhook(webhook);
        if (report) {
          const { unknown } = await applyCallReports(deps.db, [report], now);
          if (unknown)
            log.info("retell webhook for an unknown call ignored", {
              provider_call_id: report.providerCallId,
            });
        }
        return { ok: true as const };
      },
      {
        detail: {
          tags: ["Carrier callbacks"],
          operationId: "receiveRetellWebhook",
          summary: "Retell call webhook (signed by Retell)",
          description:
            "With `VOICE=retell`, Retell posts `call_started`, `call_ended` and `call_analyzed` here, signed with `x-retell-signature: v=<ms>,d=<hex HMAC-SHA256(api key, body + ms)>`. A forged signature, one older or newer than 5 minutes, or a replay of an accepted request (recognised by the signature's timestamp and digest, however the header is spelled: order of parts, case, spaces) answers 401 and changes nothing. Bodies over 64 KiB answer 413 before they are read further; callbacks are rate limited per client address. `call_ended`/`call_analyzed` fill status, duration, transcript, recording, summary, sentiment and `ended_reason` (Retell's `disconnection_reason`, mapped to our statuses). A webhook about an unknown call is acknowledged (200) and logged.",
        },
        response: responses(t.Object({ ok: Ok }), [401, 408, 413, 429]),
      },
    );
}
