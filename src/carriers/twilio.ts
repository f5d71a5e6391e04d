/**
 * Twilio over its REST API (2010-04-01), with `fetch`: Messages, IncomingPhoneNumbers and
 * AvailablePhoneNumbers, form-encoded bodies, Basic auth with the account SID and auth token.
 * Requests follow Twilio's published OpenAPI document (tests run them against a Prism mock of it).
 *
 * Callbacks: Twilio posts message statuses to `<PUBLIC_URL>/carriers/twilio/status?message_id=<ours>`
 * and inbound SMS to `<PUBLIC_URL>/carriers/twilio/inbound`; both are verified with
 * `X-Twilio-Signature` (base64 HMAC-SHA1 of the URL followed by the sorted POST parameters).
 *
 * Limitation of `lookupSend`: Twilio cannot be queried by our message id, so a prior hand-off is
 * found by listing the most recent Messages with the same To and From and matching the body and
 * creation time; two identical bodies to the same recipient in that window cannot be told apart.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { log } from "../lib/log";
import {
  type AvailableNumber,
  type CallbackRequest,
  type Carrier,
  type CarrierMessageStatus,
  CarrierSinkSlot,
  type CarrierSinks,
  CarrierUnavailableError,
  type InboundSms,
  type NumberSearch,
  type OrderResult,
  type OutboundSms,
  type SendLookup,
  type SendResult,
  type StatusUpdate,
} from "./carrier";

export interface TwilioOptions {
  accountSid: string;
  authToken: string;
  /** https://api.twilio.com, or a mock's address in tests. */
  apiBase: string;
  /** Public base URL of this server, for the callback URLs Twilio is given. */
  publicUrl: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

export const TWILIO_STATUS_PATH = "/carriers/twilio/status";
export const TWILIO_INBOUND_PATH = "/carriers/twilio/inbound";

/** US list prices (USD/month): the AvailablePhoneNumbers resource carries none. */
const LIST_PRICE = { local: 1.15, toll_free: 2.15 } as const;

/** Twilio's message statuses mapped to ours; null for statuses of inbound messages. */
export function mapTwilioStatus(status: string): CarrierMessageStatus | null {
  switch (status) {
    case "accepted":
    case "scheduled":
    case "queued":
      return "QUEUED";
    case "sending":
    case "sent":
    case "partially_delivered":
      return "SENT";
    case "delivered":
    case "read":
      return "DELIVERED";
    case "undelivered":
      return "UNDELIVERED";
    case "failed":
    case "canceled":
      return "FAILED";
    default:
      return null;
  }
}

/** base64(HMAC-SHA1(authToken, url + each POST parameter's key and value, keys sorted)). */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  let data = url;
  for (const key of Object.keys(params).sort()) data += key + params[key];
  return createHmac("sha1", authToken).update(data, "utf8").digest("base64");
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

interface TwilioError {
  code?: number;
  message?: string;
}

interface TwilioMessage {
  sid: string;
  status: string;
  body?: string;
  to?: string;
  from?: string;
  date_created?: string | null;
  error_code?: number | null;
  error_message?: string | null;
}

interface TwilioAvailableNumber {
  phone_number: string;
  region?: string | null;
  locality?: string | null;
  capabilities?: Record<string, boolean>;
}

type Answer<T> = { ok: true; status: number; data: T } | { ok: false; status: number; error: TwilioError };

export class TwilioCarrier implements Carrier {
  readonly name = "twilio" as const;
  readonly sinks = new CarrierSinkSlot();
  private readonly fetcher: typeof fetch;
  private readonly authHeader: string;

  constructor(private readonly options: TwilioOptions) {
    this.fetcher = options.fetch ?? fetch;
    this.authHeader = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString("base64")}`;
  }

  attachSinks(sinks: CarrierSinks) {
    this.sinks.attach(sinks);
  }

  start() {}

  async stop() {}

  private accountPath(rest: string): string {
    return `/2010-04-01/Accounts/${this.options.accountSid}${rest}`;
  }

  /** One REST call. Network errors, timeouts, 429 and 5xx → CarrierUnavailableError. */
  private async call<T>(
    method: "GET" | "POST" | "DELETE",
    path: string,
    params: Record<string, string> = {},
  ): Promise<Answer<T>> {
    const form = new URLSearchParams(params);
    let url = this.options.apiBase + path;
    const init: RequestInit = {
      method,
      headers: { authorization: this.authHeader, accept: "application/json" },
      signal: AbortSignal.timeout(this.options.timeoutMs),
    };
    if (method === "POST") {
      (init.headers as Record<string, string>)["content-type"] = "application/x-www-form-urlencoded";
      init.body = form.toString();
    } else if (form.size > 0) {
      url += `?${form.toString()}`;
    }
    let response: Response;
    try {
      response = await this.fetcher(url, init);
    } catch (error) {
      throw new CarrierUnavailableError(`Twilio unreachable: ${(error as Error).message}`);
    }
    if (response.status === 401 || response.status === 403) {
      // Wrong credentials are an operator problem, not a refusal of this one request: nothing is
      // counted as rejected or "not available"; the send stays queued and retries.
      await response.body?.cancel();
      log.error("Twilio refused the credentials (check TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN)", {
        status: response.status,
      });
      throw new CarrierUnavailableError(`Twilio answered ${response.status}: credentials refused`);
    }
    if (response.status === 429 || response.status >= 500) {
      const retryAfter = Number(response.headers.get("retry-after"));
      await response.body?.cancel();
      throw new CarrierUnavailableError(
        `Twilio answered ${response.status}`,
        Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
      );
    }
    const text = await response.text();
    let data: unknown = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (response.ok) return { ok: true, status: response.status, data: data as T };
    const error = (data ?? {}) as TwilioError & { detail?: string };
    return {
      ok: false,
      status: response.status,
      error: { code: error.code, message: error.message ?? error.detail ?? `HTTP ${response.status}` },
    };
  }

  async searchNumbers(search: NumberSearch): Promise<AvailableNumber[]> {
    const type = search.type ?? "local";
    const params: Record<string, string> = { SmsEnabled: "true", PageSize: String(search.limit) };
    if (search.areaCode) params.AreaCode = search.areaCode;
    if (search.contains) params.Contains = search.contains;
    const resource = type === "toll_free" ? "TollFree" : "Local";
    const answer = await this.call<{ available_phone_numbers?: TwilioAvailableNumber[] }>(
      "GET",
      this.accountPath(`/AvailablePhoneNumbers/${encodeURIComponent(search.country)}/${resource}.json`),
      params,
    );
    if (!answer.ok) return [];
    return (answer.data?.available_phone_numbers ?? []).slice(0, search.limit).map((n) => {
      const caps = n.capabilities ?? {};
      return {
        number: n.phone_number,
        region: n.region ?? null,
        locality: n.locality ?? null,
        type,
        capabilities: {
          sms: Boolean(caps.sms ?? caps.SMS),
          voice: Boolean(caps.voice ?? caps.Voice),
          mms: Boolean(caps.mms ?? caps.MMS),
        },
        monthly_cost: LIST_PRICE[type],
      };
    });
  }

  async orderNumber(number: string): Promise<OrderResult> {
    const answer = await this.call<{ sid: string }>("POST", this.accountPath("/IncomingPhoneNumbers.json"), {
      PhoneNumber: number,
      SmsUrl: this.options.publicUrl + TWILIO_INBOUND_PATH,
      SmsMethod: "POST",
    });
    if (!answer.ok) return { ok: false, reason: answer.error.message ?? "Number is not available" };
    return { ok: true, carrierNumberId: answer.data.sid };
  }

  async releaseNumber(number: string, carrierNumberId: string | null): Promise<void> {
    let sid = carrierNumberId;
    if (!sid) {
      const found = await this.call<{ incoming_phone_numbers?: { sid: string }[] }>(
        "GET",
        this.accountPath("/IncomingPhoneNumbers.json"),
        { PhoneNumber: number },
      );
      sid = found.ok ? (found.data?.incoming_phone_numbers?.[0]?.sid ?? null) : null;
      if (!sid) return;
    }
    const answer = await this.call(
      "DELETE",
      this.accountPath(`/IncomingPhoneNumbers/${encodeURIComponent(sid)}.json`),
    );
    // 404: already released on Twilio's side, which is what we wanted.
    if (!answer.ok && answer.status !== 404) {
      throw new CarrierUnavailableError(`Twilio refused the release: ${answer.error.message}`);
    }
  }

  statusCallbackUrl(messageId: string): string {
    return `${this.options.publicUrl}${TWILIO_STATUS_PATH}?message_id=${encodeURIComponent(messageId)}`;
  }

  async sendSms(sms: OutboundSms): Promise<SendResult> {
    const answer = await this.call<TwilioMessage>("POST", this.accountPath("/Messages.json"), {
      To: sms.to,
      From: sms.from,
      Body: sms.body,
      // Always our own route, carrying our message id (the status callback names it).
      StatusCallback: this.statusCallbackUrl(sms.messageId),
    });
    if (!answer.ok) {
      return {
        accepted: false,
        errorCode: String(answer.error.code ?? answer.status),
        errorMessage: answer.error.message ?? "Rejected by Twilio",
      };
    }
    return {
      accepted: true,
      carrierMessageId: answer.data.sid,
      status: mapTwilioStatus(answer.data.status) ?? "QUEUED",
    };
  }

  async lookupSend(sms: OutboundSms, sentAfter: number): Promise<SendLookup> {
    const answer = await this.call<{ messages?: TwilioMessage[] }>(
      "GET",
      this.accountPath("/Messages.json"),
      {
        To: sms.to,
        From: sms.from,
        PageSize: "50",
      },
    );
    if (!answer.ok) return { found: false };
    // Clocks differ: accept messages created up to five minutes before our hand-off began.
    const earliest = sentAfter - 5 * 60_000;
    const match = (answer.data?.messages ?? []).find((message) => {
      const created = message.date_created ? Date.parse(message.date_created) : Number.NaN;
      return message.body === sms.body && (Number.isNaN(created) || created >= earliest);
    });
    if (!match) return { found: false };
    return { found: true, carrierMessageId: match.sid, status: mapTwilioStatus(match.status) ?? "QUEUED" };
  }

  verifyCallback(request: CallbackRequest): boolean {
    const presented = request.headers.get("x-twilio-signature");
    if (!presented) return false;
    return safeEqual(presented, twilioSignature(this.options.authToken, request.url, request.params));
  }

  parseStatusCallback(request: CallbackRequest): StatusUpdate | null {
    if (!this.verifyCallback(request)) return null;
    const p = request.params;
    const sid = p.MessageSid ?? p.SmsSid;
    const status = mapTwilioStatus(p.MessageStatus ?? p.SmsStatus ?? "");
    if (!sid || !status) return null;
    const update: StatusUpdate = { carrierMessageId: sid, status };
    const messageId = new URL(request.url).searchParams.get("message_id");
    if (messageId) update.messageId = messageId;
    if (p.ErrorCode) update.errorCode = p.ErrorCode;
    if (p.ErrorMessage) update.errorMessage = p.ErrorMessage;
    return update;
  }

  parseInbound(request: CallbackRequest): InboundSms | null {
    if (!this.verifyCallback(request)) return null;
    const p = request.params;
    const sid = p.MessageSid ?? p.SmsSid;
    if (!sid || !p.From || !p.To) return null;
    return { carrierMessageId: sid, from: p.From, to: p.To, body: p.Body ?? "" };
  }
}
