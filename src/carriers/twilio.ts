/**
 * Twilio over its REST API (2010-04-01), with `fetch`: Messages, Calls, IncomingPhoneNumbers and
 * AvailablePhoneNumbers, form-encoded bodies, Basic auth with the account SID and auth token.
 * Requests follow Twilio's published OpenAPI document (tests run them against a Prism mock of it).
 *
 * Callbacks: Twilio posts message statuses to `<PUBLIC_URL>/carriers/twilio/status?message_id=<ours>`,
 * inbound SMS to `<PUBLIC_URL>/carriers/twilio/inbound` and the progress of `say` calls
 * (initiated, ringing, answered, completed) to `<PUBLIC_URL>/carriers/twilio/call-status?call_id=<ours>`;
 * all are verified with `X-Twilio-Signature` (base64 HMAC-SHA1 of the URL followed by the sorted
 * POST parameters).
 *
 * `say` calls are placed with inline TwiML (`<Say>` of the XML-escaped text) and answering machine
 * detection (`MachineDetection=Enable`), so a call that reached voicemail (`AnsweredBy=machine_*`)
 * ends VOICEMAIL rather than COMPLETED.
 *
 * Limitation of `lookupSend`: Twilio cannot be queried by our message id, so a prior hand-off is
 * found by listing the most recent Messages with the same To and From and matching the body and
 * creation time; two identical bodies to the same recipient in that window cannot be told apart.
 *
 * Limitation of `lookupCall`: likewise Twilio cannot be queried by our call id (it only comes back
 * in the status callback URL), so a prior placement is found by listing Calls with the same To and
 * From that started on or after the placement's day (`StartTime>`, less five minutes of clock skew)
 * and matching the creation time; two calls to the same recipient from the same number in that
 * window cannot be told apart (the most recent is taken), and Twilio filters on the start time, so
 * a call still queued (not yet dialled) may not be listed.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { log } from "../lib/log";
import {
  type CallLookup,
  type CallPlacement,
  type CallReport,
  CallSinkSlot,
  type CallStatus,
  isFinalCallStatus,
  type OutboundCall,
} from "../voice/provider";
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
  SendWithdrawnError,
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
export const TWILIO_CALL_STATUS_PATH = "/carriers/twilio/call-status";

/** The call progress events Twilio reports to the call status callback. */
const CALL_STATUS_EVENTS = ["initiated", "ringing", "answered", "completed"] as const;

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

/**
 * Twilio's call statuses mapped to ours; null for anything else (such a callback is ignored). A
 * completed call answered by a machine (`AnsweredBy` `machine_start`, `machine_end_beep`, ... as
 * answering machine detection reports it) reached voicemail; one answered by a fax failed.
 */
export function mapTwilioCallStatus(callStatus: string, answeredBy?: string | null): CallStatus | null {
  switch (callStatus) {
    case "queued":
    case "initiated":
      return "QUEUED";
    case "ringing":
      return "RINGING";
    case "in-progress":
      return "IN_PROGRESS";
    case "completed":
      if (answeredBy === "machine" || answeredBy?.startsWith("machine_")) return "VOICEMAIL";
      if (answeredBy === "fax") return "FAILED";
      return "COMPLETED";
    case "busy":
      return "BUSY";
    case "no-answer":
      return "NO_ANSWER";
    case "failed":
    case "canceled":
      return "FAILED";
    default:
      return null;
  }
}

const XML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
};

/** The TwiML of a `say` call: the text XML-escaped (control characters XML forbids dropped). */
export function sayTwiml(text: string): string {
  const escaped = text
    // biome-ignore lint/suspicious/noControlCharactersInRegex: XML 1.0 forbids these characters.
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, "")
    .replace(/[&<>"']/g, (char) => XML_ESCAPES[char]);
  return `<Response><Say>${escaped}</Say></Response>`;
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

interface TwilioCall {
  sid: string;
  status: string;
  answered_by?: string | null;
  date_created?: string | null;
}

type Capabilities = { sms: boolean; voice: boolean; mms: boolean };

/** Twilio spells capability keys in lower case in JSON and upper case (SMS, MMS) elsewhere. */
function capabilitiesOf(caps: Record<string, boolean | undefined>): Capabilities {
  return {
    sms: Boolean(caps.sms ?? caps.SMS),
    voice: Boolean(caps.voice ?? caps.Voice),
    mms: Boolean(caps.mms ?? caps.MMS),
  };
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
  /** Twilio's A2P registration (Trust Hub) is done in its console for now. */
  readonly registry = null;
  readonly callSinks = new CallSinkSlot();
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

  /**
   * One REST call. Network errors, timeouts, 401/403, 429 and 5xx → CarrierUnavailableError.
   * `params` as pairs repeat a field (Twilio's list parameters, e.g. StatusCallbackEvent).
   */
  private async call<T>(
    method: "GET" | "POST" | "DELETE",
    path: string,
    params: Record<string, string> | [string, string][] = {},
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
    return (answer.data?.available_phone_numbers ?? []).slice(0, search.limit).map((n) => ({
      number: n.phone_number,
      region: n.region ?? null,
      locality: n.locality ?? null,
      type,
      capabilities: capabilitiesOf(n.capabilities ?? {}),
      monthly_cost: LIST_PRICE[type],
    }));
  }

  async orderNumber(number: string): Promise<OrderResult> {
    const answer = await this.call<{ sid: string; capabilities?: Record<string, boolean> | null }>(
      "POST",
      this.accountPath("/IncomingPhoneNumbers.json"),
      {
        PhoneNumber: number,
        SmsUrl: this.options.publicUrl + TWILIO_INBOUND_PATH,
        SmsMethod: "POST",
      },
    );
    if (!answer.ok) return { ok: false, reason: answer.error.message ?? "Number is not available" };
    const result: OrderResult = { ok: true, carrierNumberId: answer.data.sid };
    // Absent (or null) capabilities: the caller assumes SMS and voice.
    if (answer.data.capabilities) result.capabilities = capabilitiesOf(answer.data.capabilities);
    return result;
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
    if (sms.stillOurs && !sms.stillOurs()) throw new SendWithdrawnError();
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

  callStatusCallbackUrl(callId: string): string {
    return `${this.options.publicUrl}${TWILIO_CALL_STATUS_PATH}?call_id=${encodeURIComponent(callId)}`;
  }

  async placeCall(call: OutboundCall): Promise<CallPlacement> {
    const params: [string, string][] = [
      ["To", call.to],
      ["From", call.from],
      ["Twiml", sayTwiml(call.say ?? "")],
      // Always our own route, carrying our call id (the status callback names it).
      ["StatusCallback", this.callStatusCallbackUrl(call.callId)],
      // A list parameter: Twilio takes each event as its own field.
      ...CALL_STATUS_EVENTS.map((event): [string, string] => ["StatusCallbackEvent", event]),
      ["StatusCallbackMethod", "POST"],
      // AnsweredBy tells a person from voicemail (or a fax) in the status callbacks.
      ["MachineDetection", "Enable"],
    ];
    const answer = await this.call<TwilioCall>("POST", this.accountPath("/Calls.json"), params);
    if (!answer.ok) {
      return {
        accepted: false,
        errorCode: String(answer.error.code ?? answer.status),
        errorMessage: answer.error.message ?? "Rejected by Twilio",
      };
    }
    return {
      accepted: true,
      providerCallId: answer.data.sid,
      status: mapTwilioCallStatus(answer.data.status, answer.data.answered_by) ?? "QUEUED",
    };
  }

  async lookupCall(call: OutboundCall, since: number): Promise<CallLookup> {
    // Clocks differ: accept calls created up to five minutes before our placement began.
    const earliest = since - 5 * 60_000;
    const answer = await this.call<{ calls?: TwilioCall[] }>("GET", this.accountPath("/Calls.json"), {
      To: call.to,
      From: call.from,
      // "Only include calls that started on or after this date" (the document's date-time format).
      "StartTime>": `${new Date(earliest).toISOString().slice(0, 19)}Z`,
      PageSize: "50",
    });
    if (!answer.ok) return { found: false };
    const match = (answer.data?.calls ?? []).find((found) => {
      const created = found.date_created ? Date.parse(found.date_created) : Number.NaN;
      return Number.isNaN(created) || created >= earliest;
    });
    if (!match) return { found: false };
    return {
      found: true,
      providerCallId: match.sid,
      status: mapTwilioCallStatus(match.status, match.answered_by) ?? "QUEUED",
    };
  }

  parseCallStatusCallback(request: CallbackRequest): CallReport | null {
    if (!this.verifyCallback(request)) return null;
    const p = request.params;
    const answeredBy = p.AnsweredBy || undefined;
    const status = p.CallStatus ? mapTwilioCallStatus(p.CallStatus, answeredBy) : null;
    if (!p.CallSid || !status) return null;
    const report: CallReport = { providerCallId: p.CallSid, status };
    const callId = new URL(request.url).searchParams.get("call_id");
    if (callId) report.callId = callId;
    if (isFinalCallStatus(status)) {
      const duration = p.CallDuration ? Number(p.CallDuration) : Number.NaN;
      if (Number.isFinite(duration) && duration >= 0) report.durationSec = duration;
      report.endedReason = answeredBy ? `${p.CallStatus}:${answeredBy}` : p.CallStatus;
      const endedAt = p.Timestamp ? Date.parse(p.Timestamp) : Number.NaN;
      if (!Number.isNaN(endedAt)) report.endedAt = endedAt;
    }
    return report;
  }
}
