/**
 * The simulated carrier: no network. It keeps a ledger of every send it accepted (table
 * `sandbox_sends`, one row per message: our message id is its idempotency key, and a repeated
 * hand-off is counted in `handoffs` instead of sent again), reports a final status after a
 * configurable delay, and answers number searches with deterministic numbers. Same input, same
 * result.
 *
 * Magic numbers (docs/numbers.md, "Carriers"):
 *   to +15005550001         rejected at send: invalid number (FAILED, nothing in the ledger)
 *   to +15005550009         accepted, then UNDELIVERED (the handset cannot receive)
 *   to +15005550004         accepted, then FAILED (blocked by the carrier)
 *   +15005550003 anywhere   carrier outage: send, order and release throw CarrierUnavailableError
 *   order a number ending in 0000   "not available" (skipped, never charged)
 *   a number ending in 9999         has no voice capability (SMS only)
 * `say` calls run on the simulated call line (src/voice/simulated.ts), with its magic numbers.
 */
import { createHash } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import {
  reviewBrandSimulated,
  reviewCampaignSimulated,
  reviewShortCodeSimulated,
} from "../compliance/registration";
import type { DbOrTx } from "../db/client";
import { newestFirstPage } from "../db/paging";
import { dueLedgerStatements, insertRowsReturning, preparedPerConnection } from "../db/prepared";
import { type SandboxSendRow, sandboxSends } from "../db/schema";
import { type HeldLease, holdLeases, leaseKey } from "../jobs/queue";
import { newId } from "../lib/ids";
import { errorText, log } from "../lib/log";
import type { Clock } from "../lib/time";
import type { CallLookup, CallPlacement, CallReport, OutboundCall } from "../voice/provider";
import { SimulatedCallLine } from "../voice/simulated";
import {
  type AvailableNumber,
  type Carrier,
  type CarrierMessageStatus,
  CarrierSinkSlot,
  type CarrierSinks,
  CarrierUnavailableError,
  type InboundSms,
  type NumberSearch,
  type OrderResult,
  type OutboundSms,
  type RegistryReviewer,
  type SendLookup,
  type SendResult,
  SendWithdrawnError,
  type StatusUpdate,
} from "./carrier";

export const SIMULATED_MAGIC = {
  invalidNumber: "+15005550001",
  cannotReceive: "+15005550009",
  blocked: "+15005550004",
  outage: "+15005550003",
  /** Ordering a number with this ending is refused as not available. */
  unavailableSuffix: "0000",
  /** A number with this ending cannot place calls. */
  smsOnlySuffix: "9999",
} as const;

export interface SimulatedCarrierOptions {
  /** Delay between acceptance and the final status report. */
  deliveryDelayMs: number;
  /** How often due deliveries are flushed (default: min(delay, 50 ms), at least 5 ms). */
  tickMs?: number;
  /** Most deliveries reported in one sink call. */
  batchSize?: number;
  /** Time from placing a `say` call to its final report (default 2 s). */
  callMs?: number;
  /** Time a 10DLC or short-code review takes (default 2 s; "within 5 s"). */
  reviewMs?: number;
}

const TOLL_FREE_PREFIXES = ["800", "833", "844", "855", "866", "877", "888"];
const DEFAULT_LOCAL_AREAS = ["415", "212", "312", "512", "206", "305", "617", "303"];
const AREA_PLACES: Record<string, [string, string]> = {
  "415": ["CA", "San Francisco"],
  "212": ["NY", "New York"],
  "312": ["IL", "Chicago"],
  "512": ["TX", "Austin"],
  "206": ["WA", "Seattle"],
  "305": ["FL", "Miami"],
  "617": ["MA", "Boston"],
  "303": ["CO", "Denver"],
  "213": ["CA", "Los Angeles"],
  "646": ["NY", "New York"],
  "702": ["NV", "Las Vegas"],
  "404": ["GA", "Atlanta"],
};

function digest(...parts: string[]): string {
  return createHash("sha256").update(parts.join("\u0000")).digest("hex");
}

function hashInt(...parts: string[]): number {
  return Number.parseInt(digest(...parts).slice(0, 12), 16);
}

/** One ledger row as `GET /v1/sandbox/outbox` shows it. */
export interface SandboxSend {
  message_id: string;
  from: string;
  to: string;
  body: string;
  accepted_at: string;
  /** How many times the message was handed over: more than 1 is a duplicate hand-off (sent once). */
  handoffs: number;
}

/**
 * The simulated carrier's ledger for one workspace, newest first (`GET /v1/sandbox/outbox`).
 * One row per message: a duplicate hand-off shows as `handoffs` above 1.
 */
export async function listSandboxSends(
  db: DbOrTx,
  workspaceId: string,
  page: { limit: number; offset: number },
): Promise<{ sends: SandboxSend[]; total: number }> {
  const { rows, total } = await newestFirstPage(
    db,
    sandboxSends,
    eq(sandboxSends.workspaceId, workspaceId),
    [sandboxSends.acceptedAt, sandboxSends.id],
    page,
  );
  return {
    sends: rows.map((row) => ({
      message_id: row.messageId,
      from: row.from,
      to: row.to,
      body: row.body,
      accepted_at: new Date(row.acceptedAt).toISOString(),
      handoffs: row.handoffs,
    })),
    total,
  };
}

export class SimulatedCarrier implements Carrier {
  readonly name = "simulated" as const;
  readonly sinks = new CarrierSinkSlot();
  readonly registry: RegistryReviewer;
  /** `say` calls: the simulated call line of the carrier. */
  readonly calls: SimulatedCallLine;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<void> | null = null;
  private stopped = true;
  private unwritten: { row: SandboxSendRow; stillOurs?: () => boolean; lease?: HeldLease }[] = [];
  /** The turn's ledger write: the carrier message id of each message written, by message id. */
  private writing: Promise<Map<string, string>> | null = null;
  private readonly tickMs: number;
  private readonly batchSize: number;

  constructor(
    private readonly db: DbOrTx,
    private readonly clock: Clock,
    private readonly options: SimulatedCarrierOptions,
  ) {
    this.tickMs = options.tickMs ?? Math.max(5, Math.min(options.deliveryDelayMs, 50));
    this.batchSize = options.batchSize ?? 2000;
    this.calls = new SimulatedCallLine(db, clock, "carrier", { callMs: options.callMs ?? 2000 });
    this.registry = {
      reviewDelayMs: options.reviewMs ?? 2000,
      reviewBrand: reviewBrandSimulated,
      reviewCampaign: reviewCampaignSimulated,
      reviewShortCode: reviewShortCodeSimulated,
    };
  }

  get callSinks() {
    return this.calls.sinks;
  }

  async placeCall(call: OutboundCall): Promise<CallPlacement> {
    if (call.to === SIMULATED_MAGIC.outage || call.from === SIMULATED_MAGIC.outage)
      throw new CarrierUnavailableError("simulated carrier outage");
    return await this.calls.place(call);
  }

  async lookupCall(call: OutboundCall): Promise<CallLookup> {
    return await this.calls.lookup(call.callId);
  }

  /** The simulated carrier makes no HTTP callbacks: call reports go straight to the call sink. */
  parseCallStatusCallback(): CallReport | null {
    return null;
  }

  attachSinks(sinks: CarrierSinks) {
    this.sinks.attach(sinks);
  }

  /** Starts the delivery timer; pending deliveries in the ledger (from before a restart) are picked up. */
  start() {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
    this.calls.start();
  }

  async stop() {
    this.stopped = true;
    await this.calls.stop();
    await this.writing;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flushing;
  }

  private schedule() {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.flushing = this.flushDue()
        .then(() => undefined)
        .catch((error) => log.warn("simulated carrier: delivery report failed", { error: errorText(error) }))
        .finally(() => {
          this.flushing = null;
          this.schedule();
        });
    }, this.tickMs);
  }

  /**
   * Reports every delivery that is due, in batches: claimed, the sink told, then the ledger row
   * marked reported. A crash in between reports it again (sinks are idempotent), by this server
   * after its restart or by another one: at once on PostgreSQL, LEDGER_RETRY_MS later on SQLite
   * (dueLedgerStatements).
   */
  async flushDue(): Promise<number> {
    if (!this.sinks.attached) return 0;
    let reported = 0;
    for (;;) {
      if (this.stopped && reported > 0) break;
      const now = this.clock.now();
      const count = await ledgerStatements(this.db).reportDue(
        { now, limit: this.batchSize },
        async (due) => await this.sinks.onStatus(due.map(statusOfLedgerRow)),
      );
      reported += count;
      if (count < this.batchSize) break;
    }
    return reported;
  }

  async searchNumbers(search: NumberSearch): Promise<AvailableNumber[]> {
    const country = search.country.toUpperCase();
    if (country !== "US" && country !== "CA") return [];
    const type = search.type ?? "local";
    const contains = (search.contains ?? "").replace(/\D/g, "");
    if (contains.length > 7) return [];
    let areas: string[];
    if (search.areaCode) {
      const isTollFree = TOLL_FREE_PREFIXES.includes(search.areaCode);
      if (isTollFree !== (type === "toll_free")) return [];
      areas = [search.areaCode];
    } else {
      areas = type === "toll_free" ? TOLL_FREE_PREFIXES : DEFAULT_LOCAL_AREAS;
    }
    const out: AvailableNumber[] = [];
    const seen = new Set<string>();
    for (let i = 0; out.length < search.limit && i < search.limit * 20 + 50; i++) {
      const area = areas[i % areas.length];
      const h = hashInt(country, type, area, contains, String(i));
      let rest = String(200 + (h % 800)) + String(Math.floor(h / 800) % 10000).padStart(4, "0");
      if (contains) rest = rest.slice(0, 7 - contains.length) + contains;
      if (rest[0] === "0" || rest[0] === "1") continue;
      const number = `+1${area}${rest}`;
      if (number.endsWith(SIMULATED_MAGIC.unavailableSuffix) || seen.has(number)) continue;
      seen.add(number);
      const place = type === "local" && Object.hasOwn(AREA_PLACES, area) ? AREA_PLACES[area] : undefined;
      out.push({
        number,
        region: place?.[0] ?? null,
        locality: place?.[1] ?? null,
        type,
        capabilities: simulatedCapabilities(number, type),
        monthly_cost: type === "local" ? 1.15 : 2.15,
      });
    }
    return out;
  }

  async orderNumber(number: string): Promise<OrderResult> {
    if (number === SIMULATED_MAGIC.outage) throw new CarrierUnavailableError("simulated carrier outage");
    if (number.endsWith(SIMULATED_MAGIC.unavailableSuffix)) {
      return { ok: false, reason: "Number is not available" };
    }
    return {
      ok: true,
      carrierNumberId: `PN${digest("number", number).slice(0, 32)}`,
      capabilities: simulatedCapabilities(
        number,
        TOLL_FREE_PREFIXES.includes(number.slice(2, 5)) ? "toll_free" : "local",
      ),
    };
  }

  async releaseNumber(number: string): Promise<void> {
    if (number === SIMULATED_MAGIC.outage) throw new CarrierUnavailableError("simulated carrier outage");
  }

  async sendSms(sms: OutboundSms): Promise<SendResult> {
    if (sms.to === SIMULATED_MAGIC.outage || sms.from === SIMULATED_MAGIC.outage) {
      throw new CarrierUnavailableError("simulated carrier outage");
    }
    if (sms.to === SIMULATED_MAGIC.invalidNumber) {
      return {
        accepted: false,
        errorCode: "invalid_number",
        errorMessage: "The 'To' number is not a valid phone number",
      };
    }
    const carrierMessageId = `SM${digest("send", sms.messageId).slice(0, 32)}`;
    let outcome: CarrierMessageStatus = "DELIVERED";
    let errorCode: string | null = null;
    let errorMessage: string | null = null;
    if (sms.to === SIMULATED_MAGIC.cannotReceive) {
      outcome = "UNDELIVERED";
      errorCode = "unreachable";
      errorMessage = "The handset cannot receive SMS";
    } else if (sms.to === SIMULATED_MAGIC.blocked) {
      outcome = "FAILED";
      errorCode = "blocked";
      errorMessage = "Blocked by the carrier";
    }
    const now = this.clock.now();
    // A message handed over again is not sent again: the ledger answers the first send's id.
    const accepted = await this.record(sms, {
      id: newId(),
      workspaceId: sms.workspaceId,
      messageId: sms.messageId,
      from: sms.from,
      to: sms.to,
      body: sms.body,
      carrierMessageId,
      acceptedAt: now,
      deliverAt: now + this.options.deliveryDelayMs,
      outcome,
      errorCode,
      errorMessage,
      deliveredAt: null,
      handoffs: 1,
    });
    return { accepted: true, carrierMessageId: accepted, status: "SENT" };
  }

  /**
   * Group commit: hand-offs made in the same event-loop turn (e.g. a batch of send jobs the worker
   * runs together, each awaiting its reads) are written in one transaction; each sendSms resolves
   * once its row is committed, with the carrier message id of the message's ledger row.
   */
  private async record(sms: OutboundSms, row: SandboxSendRow): Promise<string> {
    this.unwritten.push({ row, stillOurs: sms.stillOurs, lease: sms.lease });
    this.writing ??= new Promise<Map<string, string>>((resolve, reject) => {
      setImmediate(async () => {
        const sends = this.unwritten;
        this.unwritten = [];
        this.writing = null;
        // The sends still ours now, right before their rows are written (the carrier receiving
        // them): their job's lease still held, by the clock and then by the database, which keeps
        // it held until the rows are committed. The others are withdrawn (absent from the answer).
        const ours = (held: Set<string>) =>
          sends.flatMap((send) =>
            (!send.stillOurs || send.stillOurs()) && (!send.lease || held.has(leaseKey(send.lease)))
              ? [send.row]
              : [],
          );
        const leases = sends.flatMap((send) => (send.lease ? [send.lease] : []));
        try {
          if (sends.length === 1 && leases.length === 0)
            resolve(await writeLedgerRows(this.db, ours(new Set())));
          else
            resolve(
              await this.db.transaction(
                async (tx) => await writeLedgerRows(tx, ours(await holdLeases(tx, leases))),
              ),
            );
        } catch (error) {
          reject(error);
        }
      });
    });
    const written = await this.writing;
    const carrierMessageId = written.get(row.messageId);
    if (carrierMessageId === undefined) throw new SendWithdrawnError();
    return carrierMessageId;
  }

  async lookupSend(sms: OutboundSms, _sentAfter: number): Promise<SendLookup> {
    await this.writing;
    const row = await this.db
      .select()
      .from(sandboxSends)
      .where(eq(sandboxSends.messageId, sms.messageId))
      .get();
    if (!row) return { found: false };
    return {
      found: true,
      carrierMessageId: row.carrierMessageId,
      status: row.deliveredAt === null ? "SENT" : (row.outcome as CarrierMessageStatus),
    };
  }

  /** The simulated carrier makes no HTTP callbacks, so none is genuine. */
  verifyCallback(): boolean {
    return false;
  }

  /** The simulated carrier makes no HTTP callbacks: its statuses go straight to the sinks. */
  parseStatusCallback(): StatusUpdate | null {
    return null;
  }

  /** Inbound messages are injected with `injectInbound` (POST /v1/sandbox/inbound), not posted. */
  parseInbound(): InboundSms | null {
    return null;
  }

  /**
   * An inbound SMS as if a handset sent it: handed to the inbound sink and returned. The carrier
   * message id is derived from the content and the time, so the same injection is the same message.
   */
  async injectInbound(sms: { from: string; to: string; body: string }): Promise<InboundSms> {
    const inbound: InboundSms = {
      carrierMessageId: `SMIN${digest("inbound", sms.from, sms.to, sms.body, String(this.clock.now())).slice(0, 30)}`,
      from: sms.from,
      to: sms.to,
      body: sms.body,
    };
    await this.sinks.onInbound(inbound);
    return inbound;
  }
}

/** Every simulated number sends SMS; one ending in 9999 cannot place calls; MMS on local numbers. */
function simulatedCapabilities(number: string, type: "local" | "toll_free") {
  return { sms: true, voice: !number.endsWith(SIMULATED_MAGIC.smsOnlySuffix), mms: type === "local" };
}

function statusOfLedgerRow(row: SandboxSendRow): StatusUpdate {
  const update: StatusUpdate = {
    carrierMessageId: row.carrierMessageId,
    messageId: row.messageId,
    status: row.outcome as CarrierMessageStatus,
  };
  if (row.errorCode) update.errorCode = row.errorCode;
  if (row.errorMessage) update.errorMessage = row.errorMessage;
  return update;
}

/**
 * Writes the ledger rows of a turn's hand-offs: a message already in the ledger (handed over
 * again, by this process or another) keeps its row, whose `handoffs` counts the repeat. Answers
 * each message's carrier message id as its row holds it. One statement for the rows on
 * PostgreSQL, one prepared statement per row on SQLite.
 */
async function writeLedgerRows(db: DbOrTx, rows: SandboxSendRow[]): Promise<Map<string, string>> {
  // A message handed over twice in one turn is one row: one statement may not upsert a key twice.
  const byMessage = new Map<string, SandboxSendRow>();
  for (const row of rows) {
    const first = byMessage.get(row.messageId);
    if (first) first.handoffs += row.handoffs;
    else byMessage.set(row.messageId, { ...row });
  }
  // In key order: two processes repeating hand-offs of the same messages lock their rows alike.
  const merged = [...byMessage.values()].sort((a, b) => (a.messageId < b.messageId ? -1 : 1));
  const written = await insertRowsReturning(db, sandboxSends, merged, "handoff", {
    conflict: {
      target: sandboxSends.messageId,
      set: { handoffs: sql`${sandboxSends.handoffs} + excluded.handoffs` },
    },
    returning: { messageId: sandboxSends.messageId, carrierMessageId: sandboxSends.carrierMessageId },
  });
  return new Map(written.map((row) => [row.messageId, row.carrierMessageId]));
}

/** The ledger's delivery reports, claimed by whichever server reports them (built once per connection). */
const ledgerStatements = preparedPerConnection((db: DbOrTx) =>
  dueLedgerStatements(db, sandboxSends, { due: "deliverAt", done: "deliveredAt" }),
);
