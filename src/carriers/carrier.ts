import type { HeldLease } from "../jobs/queue";
import type { CallLookup, CallPlacement, CallReport, CallSinkSlot, OutboundCall } from "../voice/provider";

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

export type OrderResult =
  | {
      ok: true;
      carrierNumberId: string;
      /** What the number can do, when the carrier says (absent: assumed SMS and voice). */
      capabilities?: { sms: boolean; voice: boolean; mms: boolean };
    }
  | { ok: false; reason: string };

export interface OutboundSms {
  /** Our message id: the adapter passes it to the carrier so a send can be found again. */
  messageId: string;
  /** The workspace sending (the simulated carrier's ledger is scoped by it). */
  workspaceId: string;
  from: string;
  to: string;
  body: string;
  /** Where the carrier posts status updates (real carriers only). */
  statusCallbackUrl: string;
  /**
   * Asked by the adapter at the last moment before the send leaves (after any batching of its
   * own): false when the job handing it off has lost its lease meanwhile (its process was frozen
   * past it), and another worker may be handing it off now. The adapter then sends nothing and
   * throws SendWithdrawnError. Absent: always send.
   */
  stillOurs?: () => boolean;
  /**
   * The lease of the job handing it off, as the database knows it. A carrier that keeps its ledger
   * in our database (the simulated one) writes the send only while that lease is still held, in
   * the transaction that keeps it held (`holdLeases`): no other worker can take the job while the
   * write is under way (it finds the send when it looks it up), and a process frozen between
   * `stillOurs` and its write sends nothing once another worker has taken the job. Absent: no check.
   */
  lease?: HeldLease;
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

/**
 * Registry review of 10DLC brands and campaigns and of short-code requests, as a carrier does it.
 * The simulated carrier decides deterministically (src/compliance/registration.ts); an adapter
 * without one (`registry: null`) registers in the provider's own console.
 */
export interface RegistryReviewer {
  /** How long a review takes; the domain schedules it as a durable job this far ahead. */
  readonly reviewDelayMs: number;
  reviewBrand(brand: { legal_name: string; ein: string | null }): { status: string; reasons: string[] };
  reviewCampaign(
    campaign: Parameters<typeof import("../compliance/registration").preflight>[0],
    brand: { status: string; legal_name: string },
  ): { status: string; reasons: string[] };
  reviewShortCode(
    request: Parameters<typeof import("../compliance/registration").reviewShortCodeSimulated>[0],
    seed: string,
  ): { status: string; reasons: string[]; short_code?: string };
}

/** A send not made because its `stillOurs` said no at the last moment (see OutboundSms). */
export class SendWithdrawnError extends Error {
  constructor() {
    super("send withdrawn: its job lost its lease");
    this.name = "SendWithdrawnError";
  }
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

/**
 * Where an adapter hands what the carrier tells us. The messaging domain attaches them at boot
 * (`carrier.attachSinks(...)`). Both must be idempotent: after a restart a status can be reported
 * twice, and carriers retry webhooks.
 */
export interface CarrierSinks {
  /** Status changes of sends, batched (the simulated carrier reports up to a few thousand at once). */
  onStatus(updates: StatusUpdate[]): Promise<void> | void;
  onInbound(sms: InboundSms): Promise<void> | void;
}

/**
 * Holds the sinks attached to a carrier. Until they are attached, reporting throws (the simulated
 * carrier keeps its deliveries pending; a webhook route answers 503 so the carrier retries).
 */
export class CarrierSinkSlot implements CarrierSinks {
  private target: CarrierSinks | null = null;
  attach(sinks: CarrierSinks) {
    this.target = sinks;
  }
  get attached(): boolean {
    return this.target !== null;
  }
  async onStatus(updates: StatusUpdate[]) {
    if (!this.target) throw new Error("no carrier status sink attached");
    if (updates.length) await this.target.onStatus(updates);
  }
  async onInbound(sms: InboundSms) {
    if (!this.target) throw new Error("no carrier inbound sink attached");
    await this.target.onInbound(sms);
  }
}

export interface Carrier {
  readonly name: "simulated" | "twilio";
  /** What the carrier reports goes here; see CarrierSinks. */
  readonly sinks: CarrierSinkSlot;
  attachSinks(sinks: CarrierSinks): void;
  /** Starts background work (the simulated carrier's delivery timer). Called once at boot. */
  start(): void;
  /** Stops background work; called at shutdown before the database closes. */
  stop(): Promise<void>;
  searchNumbers(search: NumberSearch): Promise<AvailableNumber[]>;
  orderNumber(number: string): Promise<OrderResult>;
  releaseNumber(number: string, carrierNumberId: string | null): Promise<void>;
  /** Hands one SMS to the carrier. Throws CarrierUnavailableError for transient failures. */
  sendSms(sms: OutboundSms): Promise<SendResult>;
  /** Finds an earlier hand-off of `messageId`, so an unknown outcome is never blindly re-sent. */
  lookupSend(sms: OutboundSms, sentAfter: number): Promise<SendLookup>;
  /** True when a callback's signature checks out (a forged one is answered 401, nothing changed). */
  verifyCallback(request: CallbackRequest): boolean;
  /** Verifies and parses a status callback; null when forged or not about an outbound status. */
  parseStatusCallback(request: CallbackRequest): StatusUpdate | null;
  /** Verifies and parses an inbound-message webhook; null when forged or incomplete. */
  parseInbound(request: CallbackRequest): InboundSms | null;
  /** 10DLC and short-code review, or null when registration happens in the provider's console. */
  readonly registry: RegistryReviewer | null;
  /** Where reports about `say` calls go (the calls domain attaches it at boot). */
  readonly callSinks: CallSinkSlot;
  /**
   * Places one `say` call (text spoken to whoever answers). Throws CarrierUnavailableError for
   * transient failures; a refusal for good is `{accepted: false}`.
   */
  placeCall(call: OutboundCall): Promise<CallPlacement>;
  /** Finds an earlier placement of `call.callId` made at or after `since` (epoch ms). */
  lookupCall(call: OutboundCall, since: number): Promise<CallLookup>;
  /** Verifies and parses a call status callback; null when forged or not about a call of ours. */
  parseCallStatusCallback(request: CallbackRequest): CallReport | null;
}
