/**
 * The carrier interface: everything the platform needs from a telecom provider. Adapters map
 * their own statuses and errors to these types and never import domain code.
 */

export type NumberType = "local" | "toll_free";

export interface AvailableNumber {
  number: string;
  region: string | null;
  locality: string | null;
  type: NumberType;
  capabilities: { sms: boolean; voice: boolean; mms: boolean };
  /** Monthly price in USD. */
  monthly_cost: number;
}

export interface NumberSearch {
  country: string;
  areaCode?: string;
  contains?: string;
  type?: NumberType;
  limit: number;
}

export type OrderResult = { ok: true; carrierNumberId: string } | { ok: false; reason: string };

export interface OutboundSms {
  /** Our message id: the adapter passes it to the carrier so a send can be found again. */
  messageId: string;
  from: string;
  to: string;
  body: string;
  /** Where the carrier posts status updates (real carriers only). */
  statusCallbackUrl: string;
}

/** Our message statuses that a carrier can report. */
export type CarrierMessageStatus = "QUEUED" | "SENT" | "DELIVERED" | "UNDELIVERED" | "FAILED";

export type SendResult =
  | { accepted: true; carrierMessageId: string; status: CarrierMessageStatus }
  | { accepted: false; errorCode: string; errorMessage: string };

/** A send the carrier already has, found by our message id (reconciliation after a crash). */
export type SendLookup =
  | { found: true; carrierMessageId: string; status: CarrierMessageStatus }
  | { found: false };

export interface StatusUpdate {
  carrierMessageId: string;
  /** Our message id when the carrier echoes it. */
  messageId?: string;
  status: CarrierMessageStatus;
  errorCode?: string;
  errorMessage?: string;
}

export interface InboundSms {
  carrierMessageId: string;
  from: string;
  to: string;
  body: string;
}

/** A carrier's HTTP callback as received: verified and parsed by the adapter. */
export interface CallbackRequest {
  /** Full public URL the carrier called (signatures cover it). */
  url: string;
  headers: Headers;
  /** Form or JSON fields of the body. */
  params: Record<string, string>;
}

/** A temporary failure (network, 5xx, throttling): the send stays QUEUED and is retried. */
export class CarrierUnavailableError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "CarrierUnavailableError";
  }
}

export interface Carrier {
  readonly name: "simulated" | "twilio";
  searchNumbers(search: NumberSearch): Promise<AvailableNumber[]>;
  orderNumber(number: string): Promise<OrderResult>;
  releaseNumber(number: string, carrierNumberId: string | null): Promise<void>;
  /** Hands one SMS to the carrier. Throws CarrierUnavailableError for transient failures. */
  sendSms(sms: OutboundSms): Promise<SendResult>;
  /** Finds an earlier hand-off of `messageId`, so an unknown outcome is never blindly re-sent. */
  lookupSend(sms: OutboundSms, sentAfter: number): Promise<SendLookup>;
  /** Verifies and parses a status callback; null when the signature does not check out. */
  parseStatusCallback(request: CallbackRequest): StatusUpdate | null;
  /** Verifies and parses an inbound-message webhook; null when the signature does not check out. */
  parseInbound(request: CallbackRequest): InboundSms | null;
}
