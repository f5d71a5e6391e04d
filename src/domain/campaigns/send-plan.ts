import { and, eq, inArray, ne, type Placeholder, type SQL, sql } from "drizzle-orm";
import {
  capLookbackMs,
  DEFAULT_QUIET_HOURS,
  decideSend,
  type FrequencyCap,
  type QuietHours,
  type SendDecision,
} from "../../compliance";
import type { DbOrTx } from "../../db/client";
import { boolValue, distinctFrom, inJsonListParam, jsonList } from "../../db/dialect";
import { insertRows, preparedPerConnection } from "../../db/prepared";
import {
  type CampaignRow,
  type ContactRow,
  calls,
  campaigns,
  contacts,
  type MessageRow,
  messages,
  type NumberRow,
  poolStickySenders,
  workspaces,
} from "../../db/schema";
import { workspaceRow } from "../../db/workspace-row";
import { suppressionReasons } from "../audience/suppression";
import { activeNumberOf, DailySendBook, defaultSender, nextLocalMidnight } from "../messaging/numbers";
import { type PickedSender, pickFrom, pinStickySender, poolCandidates } from "../messaging/senders";
import { registeredNumberIds, senderSkip } from "../registration/sender-check";
import { variantFor } from "./audience";
import { mergeBody } from "./merge";

/**
 * The send-time rules of one campaign (API.md §6.1): the effective quiet hours (the campaign's own,
 * else the workspace's) and the workspace's state_rules, frequency_cap and paused_states.
 */
export interface SendRules {
  quietHours: QuietHours;
  stateRules: boolean;
  frequencyCap: FrequencyCap;
  pausedStates: string[];
  /** Numbers in an APPROVED 10DLC campaign when the workspace requires registration; else null. */
  registered: Set<string> | null;
}

export async function sendRulesFor(tx: DbOrTx, campaign: CampaignRow): Promise<SendRules> {
  return await workspaceSendRules(tx, campaign.workspaceId, campaign.quietHours);
}

/**
 * The workspace's send-time rules for any bulk path (campaigns, flows, agent follow-ups), with the
 * path's own quiet hours replacing the workspace's when it has them.
 */
export async function workspaceSendRules(
  tx: DbOrTx,
  workspaceId: string,
  ownQuietHours: QuietHours | null,
): Promise<SendRules> {
  const ws = await tx.select().from(workspaces).where(eq(workspaces.id, workspaceId)).get();
  const workspaceQuiet: QuietHours = ws
    ? { enabled: ws.quietHoursEnabled, start_hour: ws.quietStartHour, end_hour: ws.quietEndHour }
    : DEFAULT_QUIET_HOURS;
  return {
    quietHours: ownQuietHours ?? workspaceQuiet,
    stateRules: ws?.stateRules ?? true,
    frequencyCap: {
      enabled: ws?.frequencyCapEnabled ?? true,
      max_messages: ws?.frequencyCapMaxMessages ?? 3,
      window_hours: ws?.frequencyCapWindowHours ?? 24,
      apply_to_all: ws?.frequencyCapApplyToAll ?? false,
    },
    pausedStates: ws?.pausedStates ?? [],
    registered: await registeredNumberIds(tx, workspaceId),
  };
}

/** What the rules need to know about one recipient besides the contact row. */
export interface RecipientFacts {
  /** The number's suppression reason, if it is on the list. */
  suppression: string | null;
  /** Times of the contact's recent marketing sends and calls (other campaigns, later flows). */
  recentSends: number[];
}

/** Senders that make a marketing send (campaign, flow); replies and one-off API sends are not. */
export const MARKETING_SENDERS = ["campaign", "flow"] as const;

/** A marketing send: a campaign's or a flow's message, or an agent's follow-up (API.md §6.1). */
export const isMarketingSend = () =>
  sql`(${inArray(messages.sender, MARKETING_SENDERS)} OR ${messages.followup} = ${boolValue(true)})`;
/** The longest a send can be deferred by the rules: an older message cannot be a recent send. */
const LONGEST_DEFERRAL_MS = 14 * 86_400_000;

/** A value bound in the query, or a placeholder of a prepared statement. */
type Bound<T> = T | Placeholder;

/**
 * The messages that may be a recent marketing send for the caps looking back to `since`: the
 * workspace's outbound marketing messages that did not fail, written late enough to go after
 * `since` (a deferred one goes later, so `writtenAfter` is `since` less the longest deferral),
 * other than `campaignId`'s own.
 */
function marketingSendsWhere(
  workspaceId: Bound<string>,
  campaignId: Bound<string>,
  writtenAfter: Bound<number>,
) {
  return and(
    eq(messages.workspaceId, workspaceId),
    eq(messages.direction, "outbound"),
    sql`${messages.createdAt} > ${writtenAfter}`,
    isMarketingSend(),
    ne(messages.status, "FAILED"),
    distinctFrom(messages.campaignId, campaignId),
  ) as SQL;
}

/** `marketingSendsWhere` for the caps looking back to `since`. */
export function marketingSendsSince(workspaceId: string, campaignId: string, since: number): SQL {
  return marketingSendsWhere(workspaceId, campaignId, since - LONGEST_DEFERRAL_MS);
}

/**
 * The calls that count as recent marketing sends for the caps looking back to `since`: the
 * workspace's outbound calls placed by a campaign or a flow that did not fail, other than
 * `campaignId`'s own (a one-off `POST /v1/calls` is transactional and not counted).
 */
export function marketingCallsSince(
  workspaceId: Bound<string>,
  campaignId: Bound<string>,
  since: Bound<number>,
): SQL {
  return and(
    eq(calls.workspaceId, workspaceId),
    eq(calls.direction, "outbound"),
    sql`${calls.createdAt} > ${since}`,
    sql`(${calls.campaignId} IS NOT NULL OR ${calls.flowId} IS NOT NULL)`,
    ne(calls.status, "FAILED"),
    distinctFrom(calls.campaignId, campaignId),
  ) as SQL;
}

/**
 * The facts' queries of recent sends, prepared once per connection: built per dispatch step, with a
 * bound parameter per contact, they were ~4 % of a campaign's CPU. The batch's contacts travel as
 * JSON lists.
 */
const factStatements = preparedPerConnection((db: DbOrTx) => {
  const ph = sql.placeholder;
  const at = sql<number>`coalesce(${messages.sentAt}, ${messages.sendAt}, ${messages.createdAt})`.mapWith(
    Number,
  );
  return {
    sends: db
      .select({ contactId: messages.contactId, at })
      .from(messages)
      .where(
        and(
          marketingSendsWhere(ph("ws"), ph("campaign"), ph("writtenAfter")),
          inJsonListParam(messages.contactId, "contacts"),
          sql`${at} > ${ph("since")}`,
        ),
      )
      .prepare(),
    calls: db
      .select({ contactId: calls.contactId, at: calls.createdAt })
      .from(calls)
      .where(
        and(
          marketingCallsSince(ph("ws"), ph("campaign"), ph("since")),
          inJsonListParam(calls.contactId, "contacts"),
        ),
      )
      .prepare(),
  };
});

/**
 * Facts for a batch of contacts in three queries (not per recipient): their suppression entries
 * and their recent marketing sends on either channel (API.md §6.1) — outbound messages of a
 * marketing sender that did not fail, timed when they went (or will go: a deferred message counts
 * at its send_at), and calls placed by a campaign or a flow that did not fail, within the lookback
 * of the caps — leaving out `campaignId`'s own messages and calls (one per contact per campaign).
 */
export async function recipientFacts(
  tx: DbOrTx,
  workspaceId: string,
  campaignId: string,
  batch: readonly ContactRow[],
  rules: SendRules,
  now: number,
): Promise<Map<string, RecipientFacts>> {
  const facts = new Map<string, RecipientFacts>();
  if (batch.length === 0) return facts;
  for (const contact of batch) facts.set(contact.id, { suppression: null, recentSends: [] });
  const byPhone = new Map(batch.map((c) => [c.phoneNumber, c.id]));
  const statements = factStatements(tx);
  for (const [phone, reason] of await suppressionReasons(tx, workspaceId, byPhone.keys())) {
    const id = byPhone.get(phone);
    const fact = id ? facts.get(id) : undefined;
    if (fact) fact.suppression = reason;
  }
  const since = now - capLookbackMs({ frequency_cap: rules.frequencyCap });
  const window = {
    ws: workspaceId,
    campaign: campaignId,
    since,
    contacts: jsonList([...facts.keys()]),
  };
  const sends = await statements.sends.all({ ...window, writtenAfter: since - LONGEST_DEFERRAL_MS });
  for (const row of sends) if (row.contactId) facts.get(row.contactId)?.recentSends.push(row.at);
  const placed = await statements.calls.all(window);
  for (const row of placed) if (row.contactId) facts.get(row.contactId)?.recentSends.push(row.at);
  return facts;
}

/**
 * The compliance module's answer for one campaign recipient at `now` (a marketing SMS): the same
 * call for the run, the preview's page and the preview's totals.
 */
export function complianceDecision(
  contact: Pick<ContactRow, "phoneNumber" | "timezone" | "optedIn"> & Partial<Pick<ContactRow, "state">>,
  facts: RecipientFacts,
  rules: SendRules,
  now: number,
  channel: "sms" | "voice" = "sms",
): SendDecision {
  return decideSend(
    {
      channel,
      kind: "marketing",
      phone: contact.phoneNumber,
      timezone: contact.timezone,
      state: contact.state ?? null,
      suppressed: facts.suppression !== null && facts.suppression !== "opt_out",
      opted_out: !contact.optedIn || facts.suppression === "opt_out",
      quiet_hours: rules.quietHours,
      state_rules: rules.stateRules,
      frequency_cap: rules.frequencyCap,
      paused_states: rules.pausedStates,
      recent_sends: facts.recentSends,
    },
    now,
  );
}

/** A contact's given zone and state, as the send-time rules read them. */
export type ContactZone = Pick<ContactRow, "timezone" | "state">;

/**
 * A contact's given zone and state, prepared once per connection: every marketing hand-off whose
 * caller did not read them ahead reads them.
 */
const contactZone = preparedPerConnection((db: DbOrTx) =>
  db
    .select({ timezone: contacts.timezone, state: contacts.state })
    .from(contacts)
    .where(eq(contacts.id, sql.placeholder("id")))
    .prepare(),
);

/**
 * Rules per workspace and campaign ("" for flows and follow-ups), read once per batch of hand-offs.
 * The promise is kept, so the batch's concurrent hand-offs share one read.
 */
export type HandOffRules = Map<string, Promise<SendRules>>;

/** A marketing message: a campaign's or a flow's, or an agent's follow-up (API.md §6.1). */
export function isMarketingMessage(message: Pick<MessageRow, "sender" | "followup">): boolean {
  return (MARKETING_SENDERS as readonly string[]).includes(message.sender) || message.followup;
}

/**
 * The send-time rules asked again at the hand-off of a marketing message or call (a campaign's, a
 * flow's, an agent's follow-up), API.md §6.1 "at the moment of sending": the path decided them
 * when it wrote the send, but a hand-off that runs later (a retry after a carrier outage, a
 * restart after a crash, a worker backlog) must not go inside quiet hours, a state's hours or a
 * paused state. A campaign's own quiet hours apply to its sends. Frequency caps were counted when
 * the send was written and are not asked again; suppression and opt-out are the hand-off's own
 * check.
 */
export async function handOffDecision(
  tx: DbOrTx,
  send: {
    channel: "sms" | "voice";
    workspaceId: string;
    campaignId: string | null;
    contactId: string | null;
    to: string;
    /** The contact's zone as the caller read it (null: no such contact); absent, it is read here. */
    zone?: ContactZone | null;
  },
  now: number,
  cache: HandOffRules = new Map(),
): Promise<SendDecision> {
  const key = `${send.workspaceId}:${send.campaignId ?? ""}`;
  let read = cache.get(key);
  if (!read) {
    read = (async () => {
      const campaign = send.campaignId
        ? await workspaceRow(tx, campaigns, send.workspaceId, send.campaignId)
        : undefined;
      const own = campaign
        ? await sendRulesFor(tx, campaign)
        : await workspaceSendRules(tx, send.workspaceId, null);
      // Caps were counted when the send was written: asked again, they would count it twice.
      return { ...own, frequencyCap: { ...own.frequencyCap, enabled: false } };
    })();
    cache.set(key, read);
  }
  const rules = await read;
  const zone =
    send.zone !== undefined
      ? send.zone
      : send.contactId
        ? await contactZone(tx).get({ id: send.contactId })
        : undefined;
  // Opt-out and suppression are the hand-off's own check, made just before this.
  return complianceDecision(
    { phoneNumber: send.to, timezone: zone?.timezone ?? null, state: zone?.state ?? null, optedIn: true },
    { suppression: null, recentSends: [] },
    rules,
    now,
    send.channel,
  );
}

/** The body a contact gets: its variant's, merged. */
export function bodyFor(
  campaign: CampaignRow,
  contact: ContactRow,
  extra: { offerUrl?: string } = {},
): { body: string; variant: string | null } {
  const variant = variantFor(campaign, contact.id);
  const template =
    variant !== null
      ? (campaign.message?.variants?.find((v) => v.name === variant)?.body ?? "")
      : (campaign.message?.body ?? campaign.say ?? "");
  return { body: mergeBody(template, contact, extra), variant };
}

/** What happens to one recipient now: the same answer for the real run and the preview. */
export type SendPlan =
  | { outcome: "send"; sender: NumberRow; body: string; variant: string | null }
  | {
      outcome: "defer";
      /** Why it waits: the module's reasons joined with "," (quiet_hours, state_hours:FL, sunday:AL, ...), or daily_limit. */
      reason: string;
      sendAt: number;
      variant: string | null;
      body: string;
      /** The number it would go from if it went now (re-picked when it goes), null when none. */
      from: string | null;
    }
  | { outcome: "skip"; reason: string; variant: string | null };

/**
 * Senders of one dispatcher step (or preview page), looked up once: the campaign's fixed sender
 * (`from`, else the workspace default, else its oldest active number) or its pool's numbers, the
 * pool's pins of the step's `contacts` (read together when first needed), and the daily sends the
 * step reserves (DailySendBook: each number's counter held once). `flush` writes the step's
 * reservations and new pins; the dispatcher calls it before it commits, the preview never (it
 * rolls back).
 */
export class SenderBook {
  private fixed: NumberRow | null | undefined;
  private pool: NumberRow[] | undefined;
  /** Pins read from the database, by contact (null: none). */
  private readonly pinned = new Map<string, string | null>();
  /** Pins made by this step's picks, written by `flush`. */
  private readonly pins = new Map<string, string>();
  private readonly sends: DailySendBook;
  constructor(
    private readonly tx: DbOrTx,
    private readonly campaign: CampaignRow,
    private readonly now: number,
    private readonly contacts: readonly string[] = [],
  ) {
    this.sends = new DailySendBook(tx, now);
  }

  async fixedSender(): Promise<NumberRow | null> {
    if (this.fixed === undefined) this.fixed = (await lookupFixedSender(this.tx, this.campaign)) ?? null;
    return this.fixed;
  }

  /** Counts one send of `sender` against its daily_limit (see DailySendBook): false at its cap. */
  async reserve(sender: NumberRow): Promise<boolean> {
    return await this.sends.reserve(sender);
  }

  /**
   * pickSender for the campaign's pool, with the step's counters and pins: a new pin is written by
   * `flush`, together with the others; one lost to another transaction pinning the contact
   * meanwhile leaves this send on the number picked here, and the next on the one pinned.
   */
  async pick(contact: ContactRow): Promise<PickedSender> {
    const { tx, campaign, now } = this;
    const poolId = campaign.poolId;
    const candidates = await this.poolNumbers();
    if (!poolId || candidates.length === 0) return { sender: null, retryAt: null };
    const sticky = await this.pinOf(contact.id);
    return await pickFrom(
      {
        candidates,
        sticky,
        reserve: async (row) => await this.sends.reserve(row),
        release: async (row) => this.sends.release(row),
        usage: async () => await this.sends.usage(candidates),
        pin: async (numberId) => {
          // A pin whose number left the pool is replaced at once (compare-and-set, rare).
          if (sticky !== undefined)
            return await pinStickySender(
              tx,
              campaign.workspaceId,
              poolId,
              contact.id,
              numberId,
              { numberId: sticky },
              now,
            );
          this.pins.set(contact.id, numberId);
          return numberId;
        },
      },
      contact,
      now,
    );
  }

  /** Writes the step's daily sends and new pins (before the step commits). */
  async flush(): Promise<void> {
    await this.sends.flush();
    const poolId = this.campaign.poolId;
    if (!poolId || this.pins.size === 0) return;
    const rows = [...this.pins].map(([contactId, numberId]) => ({
      workspaceId: this.campaign.workspaceId,
      poolId,
      contactId,
      numberId,
      createdAt: this.now,
    }));
    this.pins.clear();
    await insertRows(this.tx, poolStickySenders, rows, { ignoreDuplicates: true });
  }

  /** The pool's active numbers, oldest first, read once. */
  private async poolNumbers(): Promise<NumberRow[]> {
    if (!this.campaign.poolId) return [];
    this.pool ??= await poolCandidates(this.tx, this.campaign.workspaceId, this.campaign.poolId);
    return this.pool;
  }

  /**
   * The contact's pinned number in the pool: the first asked reads the pins of the step's contacts
   * with it, in one statement.
   */
  private async pinOf(contactId: string): Promise<string | undefined> {
    const poolId = this.campaign.poolId;
    if (!poolId) return undefined;
    const made = this.pins.get(contactId);
    if (made) return made;
    if (!this.pinned.has(contactId)) {
      const unread = new Set([contactId, ...this.contacts.filter((id) => !this.pinned.has(id))]);
      for (const id of unread) this.pinned.set(id, null);
      const rows = await stickyStatement(this.tx).all({ poolId, contacts: jsonList([...unread]) });
      for (const row of rows) this.pinned.set(row.contactId, row.numberId);
    }
    return this.pinned.get(contactId) ?? undefined;
  }

  /**
   * The number a voice campaign's call goes from: the contact's sticky pool number if it can place
   * calls, else the pool's oldest voice-capable number; without a pool the fixed sender if it can.
   * Calls are not SMS: no daily_limit is reserved.
   */
  async voiceSender(contactId: string): Promise<NumberRow | null> {
    if (!this.campaign.poolId) {
      const fixed = await this.fixedSender();
      return fixed?.voiceCapable ? fixed : null;
    }
    const voice = (await this.poolNumbers()).filter((row) => row.voiceCapable);
    const sticky = await this.pinOf(contactId);
    return voice.find((row) => row.id === sticky) ?? voice[0] ?? null;
  }

  /** The number a deferred send would use as things stand (the sticky one, else the pool's first). */
  async tentative(contactId: string): Promise<string | null> {
    if (!this.campaign.poolId) return (await this.fixedSender())?.number ?? null;
    const pool = await this.poolNumbers();
    const sticky = await this.pinOf(contactId);
    return (pool.find((row) => row.id === sticky) ?? pool[0])?.number ?? null;
  }
}

/** Pins of many contacts in a pool, prepared once per connection. */
const stickyStatement = preparedPerConnection((db: DbOrTx) =>
  db
    .select({ contactId: poolStickySenders.contactId, numberId: poolStickySenders.numberId })
    .from(poolStickySenders)
    .where(
      and(
        eq(poolStickySenders.poolId, sql.placeholder("poolId")),
        inJsonListParam(poolStickySenders.contactId, "contacts"),
      ),
    )
    .prepare(),
);

async function lookupFixedSender(tx: DbOrTx, campaign: CampaignRow): Promise<NumberRow | undefined> {
  return campaign.fromNumber
    ? await activeNumberOf(tx, campaign.workspaceId, campaign.fromNumber)
    : await defaultSender(tx, campaign.workspaceId);
}

/** How long a send waits when the campaign has no active sending number (released since launch). */
export const NO_SENDER_RETRY_MS = 15 * 60_000;

/** No active number to send from: the send waits (never dropped) until one is added or the campaign is canceled. */
function noSenderYet(variant: string | null, body: string, now: number): SendPlan {
  return {
    outcome: "defer",
    reason: "no_sending_number",
    sendAt: now + NO_SENDER_RETRY_MS,
    variant,
    body,
    from: null,
  };
}

/**
 * Plans one recipient's send at `now`: the compliance module first (skip with its reason, or
 * defer to the next allowed minute with its reasons), then the sender — pool rotation (sticky,
 * least used, area code) or the fixed sender — with one send reserved against its daily_limit;
 * every number at its cap defers (daily_limit) to the next local day. Reservations and sticky
 * senders are counted in `senders` (SenderBook): the dispatcher writes them with its messages,
 * the preview never does. A contact deleted since resolution is skipped as no_phone.
 */
export async function planSend(
  campaign: CampaignRow,
  contact: ContactRow,
  facts: RecipientFacts,
  rules: SendRules,
  senders: SenderBook,
  now: number,
): Promise<SendPlan> {
  const variant = variantFor(campaign, contact.id);
  const voice = campaign.campaignType === "voice";
  const decision = complianceDecision(contact, facts, rules, now, voice ? "voice" : "sms");
  if (decision.action === "skip") return { outcome: "skip", reason: decision.reason, variant };
  if (voice) return await planCall(campaign, contact, decision, senders, now);
  const { body } = bodyFor(campaign, contact);
  if (decision.action === "defer")
    return {
      outcome: "defer",
      reason: decision.reasons.join(",") || "no_window",
      sendAt: decision.until,
      variant,
      body,
      from: await senders.tentative(contact.id),
    };
  if (campaign.poolId) {
    const picked = await senders.pick(contact);
    const unregistered = picked.sender ? senderSkip(rules.registered, picked.sender) : null;
    if (unregistered) return { outcome: "skip", reason: unregistered, variant };
    if (picked.sender) return { outcome: "send", sender: picked.sender, body, variant };
    if (picked.retryAt === null) return noSenderYet(variant, body, now);
    return {
      outcome: "defer",
      reason: "daily_limit",
      sendAt: allowedFrom(contact, facts, rules, picked.retryAt),
      variant,
      body,
      from: await senders.tentative(contact.id),
    };
  }
  const sender = await senders.fixedSender();
  if (!sender) return noSenderYet(variant, body, now);
  const unregistered = senderSkip(rules.registered, sender);
  if (unregistered) return { outcome: "skip", reason: unregistered, variant };
  if (!(await senders.reserve(sender)))
    return {
      outcome: "defer",
      reason: "daily_limit",
      sendAt: allowedFrom(contact, facts, rules, nextLocalMidnight(sender.timezone, now)),
      variant,
      body,
      from: sender.number,
    };
  return { outcome: "send", sender, body, variant };
}

/**
 * A send held by a daily_limit until `at` (the cap's reset, usually midnight): the first instant
 * from then that the send-time rules allow, as the send will be asked again then.
 */
function allowedFrom(contact: ContactRow, facts: RecipientFacts, rules: SendRules, at: number): number {
  const then = complianceDecision(contact, facts, rules, at, "sms");
  return then.action === "defer" ? then.until : at;
}

/**
 * A voice campaign's recipient (the TCPA covers calls: the same rules, asked for the voice
 * channel): defer with the module's reasons, else the call goes from a voice-capable number.
 * `body` is what the call says (`say`; an agent call shows as empty).
 */
async function planCall(
  campaign: CampaignRow,
  contact: ContactRow,
  decision: Exclude<SendDecision, { action: "skip" }>,
  senders: SenderBook,
  now: number,
): Promise<SendPlan> {
  const body = campaign.agentId ? "" : (campaign.say ?? "");
  if (decision.action === "defer")
    return {
      outcome: "defer",
      reason: decision.reasons.join(",") || "no_window",
      sendAt: decision.until,
      variant: null,
      body,
      from: (await senders.voiceSender(contact.id))?.number ?? null,
    };
  const sender = await senders.voiceSender(contact.id);
  if (!sender) return noSenderYet(null, body, now);
  return { outcome: "send", sender, body, variant: null };
}
