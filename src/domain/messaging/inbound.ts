import { and, eq } from "drizzle-orm";
import type { InboundSms } from "../../carriers/carrier";
import type { Db, DbOrTx } from "../../db/client";
import { transactionKeyLocks } from "../../db/dialect";
import {
  type ContactRow,
  type ConversationRow,
  contacts,
  conversations,
  type MessageRow,
  messages,
  NUMBER_IS_ACTIVE,
  numbers,
  suppressions,
  workspaces,
} from "../../db/schema";
import { invalid } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { log } from "../../lib/log";
import { normalizePhone } from "../../lib/phone";
import { smsShape } from "../../lib/sms-encoding";
import { storableText } from "../../lib/text";
import { contactJson, ensureContact } from "../audience/contacts";
import { addSuppression } from "../audience/suppression";
import { emitEvent } from "../events";
import { flagNeedsAttention, threadForContact, touchConversation } from "./conversations";
import { messageJson } from "./message-json";
import { reserveDailySend } from "./numbers";
import { queueOutboundMessage } from "./outbound";

/**
 * Opt-out keywords (CTIA, and FCC 24-24's revocation words). A reply is an opt-out (API.md §7.1)
 * when, trimmed, folded to upper case and stripped of punctuation and emoji, it is one of them or
 * `OPT OUT`, or when it has at most OPT_OUT_MAX_WORDS words and one of them is such a keyword
 * (`Stop.`, `please stop`, `stop texting me`, `unsubscribe me`).
 */
export const OPT_OUT_KEYWORDS = [
  "STOP",
  "STOPALL",
  "UNSUBSCRIBE",
  "CANCEL",
  "END",
  "QUIT",
  "OPTOUT",
  "REVOKE",
];
/** Opt-in and help keywords: the whole trimmed body, case-insensitively (API.md §3). */
export const OPT_IN_KEYWORDS = ["START", "UNSTOP", "YES"];
export const HELP_KEYWORDS = ["HELP", "INFO"];
/** A reply of at most this many words containing an opt-out keyword is an opt-out. */
export const OPT_OUT_MAX_WORDS = 6;

export type KeywordKind = "opt_out" | "opt_in" | "help";

/**
 * The words of a reply as the opt-out rule reads them: upper case, apostrophes dropped ("don't"),
 * every other character that is not a letter or a digit (punctuation, emoji, symbols) a space, and
 * "OPT OUT" / "OPT-OUT" read as the one word OPTOUT.
 */
export function optOutWords(body: string): string[] {
  const words = body
    .normalize("NFKC")
    .toUpperCase()
    .replace(/['’ʼ`]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()
    .split(" ")
    .filter((word) => word !== "");
  const joined: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (words[i] === "OPT" && words[i + 1] === "OUT") {
      joined.push("OPTOUT");
      i++;
    } else joined.push(words[i] as string);
  }
  return joined;
}

const hasOptOutKeyword = (words: readonly string[]) => words.some((word) => OPT_OUT_KEYWORDS.includes(word));

/** The compliance keyword a reply is (opt-out by API.md §7.1's wording rule), or null. */
export function keywordOf(body: string): KeywordKind | null {
  const words = optOutWords(body);
  if (words.length > 0 && words.length <= OPT_OUT_MAX_WORDS && hasOptOutKeyword(words)) return "opt_out";
  const word = body.trim().toUpperCase();
  if (OPT_IN_KEYWORDS.includes(word)) return "opt_in";
  if (HELP_KEYWORDS.includes(word)) return "help";
  return null;
}

/**
 * A reply longer than OPT_OUT_MAX_WORDS words with an opt-out keyword in it ("I said stop sending
 * these things to my phone"): not an opt-out by the rule, but a person must read it.
 */
export function isPossibleOptOut(body: string): boolean {
  const words = optOutWords(body);
  return words.length > OPT_OUT_MAX_WORDS && hasOptOutKeyword(words);
}

/** What an inbound listener (agents, flows) learns, inside the transaction that stored the message. */
export interface InboundContext {
  workspaceId: string;
  message: MessageRow;
  conversation: ConversationRow;
  contact: ContactRow;
  /** The compliance keyword the message was, if any: agents and flows never answer those. */
  keyword: KeywordKind | null;
  now: number;
}

type InboundListener = (tx: DbOrTx, inbound: InboundContext) => Promise<void> | void;
const listeners: InboundListener[] = [];

/**
 * Registers work to do when a message arrives (an agent's reply job, a flow's wait_for_reply).
 * Runs in the storing transaction, so the work is enqueued exactly when the message is stored.
 */
export function onInboundMessage(listener: InboundListener) {
  listeners.push(listener);
}

/** The advisory-lock scope of inbound carrier message ids (PostgreSQL; see transactionKeyLocks). */
const INBOUND_LOCK_SCOPE = 7_202;

/**
 * Stores an inbound SMS and applies its consequences in one transaction: the contact (created
 * with source `inbound` if new), the thread (open one, else the latest closed one reopened),
 * `needs_attention` when no agent owns the thread, CTIA keywords, events. Idempotent on the
 * carrier's message id (carriers retry webhooks). Returns null when `to` is no active number.
 */
export async function receiveInbound(
  db: Db,
  received: InboundSms,
  now = Date.now(),
): Promise<MessageRow | null> {
  // A carrier's text is kept, not refused: what no database can store becomes U+FFFD.
  const sms = {
    ...received,
    body: storableText(received.body),
    carrierMessageId: storableText(received.carrierMessageId),
  };
  const to = normalizePhone(sms.to);
  const from = normalizePhone(sms.from);
  if (!to || !from) {
    log.warn("inbound message dropped: unparseable number", { from: sms.from, to: sms.to });
    return null;
  }
  return await db.transaction(async (tx) => {
    const number = await tx
      .select()
      .from(numbers)
      .where(and(eq(numbers.number, to), NUMBER_IS_ACTIVE))
      .get();
    if (!number) {
      log.warn("inbound message dropped: not a number of any workspace", { to });
      return null;
    }
    const workspaceId = number.workspaceId;
    if (sms.carrierMessageId) {
      // A carrier retrying its webhook may reach another server at the same moment: the second
      // waits here for the first's commit, then finds its message.
      for (const lock of transactionKeyLocks(INBOUND_LOCK_SCOPE, [sms.carrierMessageId])) await tx.run(lock);
      const seen = await tx
        .select()
        .from(messages)
        .where(and(eq(messages.carrierMessageId, sms.carrierMessageId), eq(messages.direction, "inbound")))
        .get();
      if (seen) return seen;
    }

    // 1. Contact and thread.
    const { contact, created } = await ensureContact(tx, workspaceId, from, "inbound", now);
    // A new thread on a number an agent answers belongs to that agent.
    let conversation = await threadForContact(tx, workspaceId, contact.id, {
      reopen: true,
      now,
      agentId: number.agentId,
      newContact: created,
    });
    // A thread no agent owns (and none was stopped on) is answered by the number's agent.
    if (conversation.agentId === null && number.agentId !== null && !conversation.agentPaused) {
      await tx
        .update(conversations)
        .set({ agentId: number.agentId, updatedAt: now })
        .where(eq(conversations.id, conversation.id))
        .run();
      conversation = { ...conversation, agentId: number.agentId };
    }

    // 2. The message.
    const shape = smsShape(sms.body);
    const message: MessageRow = {
      id: newId(),
      workspaceId,
      direction: "inbound",
      sender: "contact",
      fromNumber: from,
      toNumber: to,
      body: sms.body,
      status: "RECEIVED",
      segments: shape.segments,
      encoding: shape.encoding,
      contactId: contact.id,
      conversationId: conversation.id,
      campaignId: null,
      callId: null,
      followup: false,
      numberId: number.id,
      carrierMessageId: sms.carrierMessageId || null,
      errorCode: null,
      errorMessage: null,
      handoffStartedAt: null,
      sendAt: null,
      createdAt: now,
      sentAt: null,
      deliveredAt: null,
      updatedAt: now,
    };
    await tx.insert(messages).values(message).run();
    await touchConversation(tx, conversation.id, now);
    await emitEvent(tx, workspaceId, "message.received", messageJson(message), now);

    // 3. Compliance keywords, else the inbox.
    const keyword = await applyKeyword(tx, {
      workspaceId,
      contact,
      conversation,
      numberId: number.id,
      from: to,
      body: sms.body,
      now,
    });
    const agentOwns = conversation.agentId !== null && !conversation.agentPaused;
    if (!keyword && isPossibleOptOut(sms.body))
      conversation = await flagNeedsAttention(tx, conversation, now, "possible_opt_out");
    else if (!keyword && !agentOwns)
      conversation = await flagNeedsAttention(tx, conversation, now, "unanswered_message");

    for (const listener of listeners)
      await listener(tx, { workspaceId, message, conversation, contact, keyword, now });
    return message;
  });
}

interface KeywordInput {
  workspaceId: string;
  contact: ContactRow;
  conversation: ConversationRow;
  numberId: string;
  /** Our number the contact wrote to: replies go out from it. */
  from: string;
  body: string;
  now: number;
}

async function isOptedOut(tx: DbOrTx, workspaceId: string, contact: ContactRow) {
  if (!contact.optedIn) return true;
  const entry = await tx
    .select({ id: suppressions.id })
    .from(suppressions)
    .where(
      and(
        eq(suppressions.workspaceId, workspaceId),
        eq(suppressions.phoneNumber, contact.phoneNumber),
        eq(suppressions.reason, "opt_out"),
      ),
    )
    .get();
  return entry !== undefined;
}

/**
 * STOP family: opt out, suppress (`opt_out`, source `inbound`), confirm once, `contact.opted_out`.
 * START family (START, UNSTOP, YES): opt back in, lift the `opt_out` entry, confirm,
 * `contact.opted_in`; as CTIA keywords, agents and flows never answer them (API.md §3), YES from
 * a contact already opted in included. HELP/INFO: the help reply.
 * Replies go through the durable send job as sender `system`.
 */
async function applyKeyword(tx: DbOrTx, input: KeywordInput): Promise<KeywordKind | null> {
  const keyword = keywordOf(input.body);
  if (!keyword) return null;
  const { workspaceId, contact, now } = input;
  const settings = await tx.select().from(workspaces).where(eq(workspaces.id, workspaceId)).get();
  if (!settings) return keyword;
  const reply = async (body: string, optOutConfirmation = false) => {
    if (!body.trim()) return;
    // Compliance replies count against the cap (every outbound SMS does) but are never held back
    // by it: a STOP confirmation or help reply goes out even from a number at its cap.
    await reserveDailySend(tx, input.numberId, now, { evenOverCap: true });
    await queueOutboundMessage(tx, {
      workspaceId,
      contact,
      conversationId: input.conversation.id,
      numberId: input.numberId,
      from: input.from,
      body,
      sender: "system",
      optOutConfirmation,
      now,
    });
  };

  if (keyword === "opt_out") {
    const already = await isOptedOut(tx, workspaceId, contact);
    const updated = { ...contact, optedIn: false, updatedAt: now };
    await tx
      .update(contacts)
      .set({ optedIn: false, updatedAt: now })
      .where(eq(contacts.id, contact.id))
      .run();
    await addSuppression(tx, workspaceId, contact.phoneNumber, "opt_out", "inbound", now);
    if (!already) {
      await reply(settings.optOutReply, true);
      await emitEvent(tx, workspaceId, "contact.opted_out", contactJson(updated), now);
    }
    return keyword;
  }

  if (keyword === "opt_in") {
    const optedOut = await isOptedOut(tx, workspaceId, contact);
    const updated = { ...contact, optedIn: true, updatedAt: now };
    await tx.update(contacts).set({ optedIn: true, updatedAt: now }).where(eq(contacts.id, contact.id)).run();
    await tx
      .delete(suppressions)
      .where(
        and(
          eq(suppressions.workspaceId, workspaceId),
          eq(suppressions.phoneNumber, contact.phoneNumber),
          eq(suppressions.reason, "opt_out"),
        ),
      )
      .run();
    await reply(settings.optInReply);
    if (optedOut) await emitEvent(tx, workspaceId, "contact.opted_in", contactJson(updated), now);
    return keyword;
  }

  await reply(settings.helpReply);
  return keyword;
}

/**
 * POST /v1/sandbox/inbound checks: both numbers valid and `to` an active number of this workspace.
 * Returns the normalised numbers.
 */
export async function checkSandboxInbound(db: Db, workspaceId: string, input: { from: string; to: string }) {
  const from = normalizePhone(input.from);
  if (!from) throw invalid("from must be a valid phone number");
  const to = normalizePhone(input.to);
  if (!to) throw invalid("to must be a valid phone number");
  const number = await db
    .select({ id: numbers.id })
    .from(numbers)
    .where(and(eq(numbers.workspaceId, workspaceId), eq(numbers.number, to), NUMBER_IS_ACTIVE))
    .get();
  if (!number) throw invalid("to is not a number of this workspace");
  return { from, to };
}

/** The inbound message stored for a carrier message id (after an injection). */
export async function findInboundByCarrierId(db: Db, workspaceId: string, carrierMessageId: string) {
  return await db
    .select()
    .from(messages)
    .where(
      and(
        eq(messages.workspaceId, workspaceId),
        eq(messages.carrierMessageId, carrierMessageId),
        eq(messages.direction, "inbound"),
      ),
    )
    .get();
}
