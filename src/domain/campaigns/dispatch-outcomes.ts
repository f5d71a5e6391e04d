import { and, eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { insertRows, preparedPerConnection, updateRowsByKey } from "../../db/prepared";
import {
  type CampaignRecipientRow,
  type CampaignRow,
  type ContactRow,
  type ConversationRow,
  campaignRecipients,
  type MessageRow,
  messages,
  type NumberRow,
} from "../../db/schema";
import { handContactToAgent } from "../agents/runtime";
import { campaignLinkBase, createRecipientLink, newRecipientLink } from "../attribution/offers";
import { queueCall } from "../calls/calls";
import { threadForContact, threadFrom } from "../messaging/conversations";
import {
  dropDeferredMessage,
  queueOutboundMessage,
  redeferMessage,
  releaseDeferredMessage,
} from "../messaging/outbound";
import { bodyFor, planSend, type RecipientFacts, type SenderBook, type SendRules } from "./send-plan";

const NO_FACTS: RecipientFacts = { suppression: null, recentSends: [] };

/**
 * What one dispatcher step shares between its recipients: its transaction, campaign and clock, the
 * outcome updates prepared on the transaction, the recipients' open threads (read in one search)
 * and the batch of messages handed to the carrier by one `messages.send_batch` job.
 */
export interface DispatchContext {
  tx: DbOrTx;
  campaign: CampaignRow;
  now: number;
  outcomes: ReturnType<typeof outcomeStatements>;
  threads: Map<string, ConversationRow>;
  batch: string[];
  /** The step's new message rows, inserted together once every plan is written (writeStepRows). */
  rows: MessageRow[];
  /** Recipients handed off as messages, their outcome written together (writeStepRows). */
  queued: { contactId: string; messageId: string }[];
}

/** A due recipient as the step reads it: its contact is null when deleted since resolution. */
export interface DueRecipient {
  recipient: CampaignRecipientRow;
  contact: ContactRow | null;
}

/** The recipient row a plan writes its outcome to. */
interface RecipientKey {
  campaignId: string;
  contactId: string;
}

/**
 * What the step does with one due recipient: `planSend`'s answer (shared with the preview) with
 * the campaign's channel applied and what the row already holds, `waiting` being the QUEUED message
 * of an earlier deferral. Each kind is written by its own function below, from the plan alone.
 */
export type RecipientPlan =
  | { kind: "skip"; key: RecipientKey; waiting: string | null; reason: string }
  | {
      kind: "defer";
      key: RecipientKey;
      contact: ContactRow;
      waiting: string | null;
      reason: string;
      sendAt: number;
      /** The number it would go from now; null when the campaign has no sender yet. */
      from: string | null;
      body: string;
    }
  | { kind: "call"; key: RecipientKey; contact: ContactRow; sender: NumberRow }
  | {
      kind: "send";
      key: RecipientKey;
      contact: ContactRow;
      waiting: string | null;
      sender: NumberRow;
      body: string;
    };

type PlanOf<K extends RecipientPlan["kind"]> = Extract<RecipientPlan, { kind: K }>;

/**
 * Plans one due recipient at the step's `now`. Not pure: like `planSend`, it reserves the chosen
 * sender's daily send and pins a pool's sticky sender in the step's SenderBook, which the step
 * writes before its outcomes. A contact deleted since resolution is skipped as no_phone.
 */
export async function planRecipient(
  step: DispatchContext,
  { recipient, contact }: DueRecipient,
  facts: Map<string, RecipientFacts>,
  rules: SendRules,
  senders: SenderBook,
): Promise<RecipientPlan> {
  const { campaign } = step;
  const key = { campaignId: campaign.id, contactId: recipient.contactId };
  const waiting = recipient.messageId;
  if (!contact) return { kind: "skip", key, waiting, reason: "no_phone" };
  const plan = await planSend(campaign, contact, facts.get(contact.id) ?? NO_FACTS, rules, senders, step.now);
  switch (plan.outcome) {
    case "skip":
      return { kind: "skip", key, waiting, reason: plan.reason };
    case "defer":
      return {
        kind: "defer",
        key,
        contact,
        waiting,
        reason: plan.reason,
        sendAt: plan.sendAt,
        from: plan.from,
        body: plan.body,
      };
    case "send":
      return campaign.campaignType === "voice"
        ? { kind: "call", key, contact, sender: plan.sender }
        : { kind: "send", key, contact, waiting, sender: plan.sender, body: plan.body };
  }
}

/** Skipped with its reason; a message waiting from an earlier deferral fails with it. */
export async function skipRecipient(step: DispatchContext, plan: PlanOf<"skip">): Promise<void> {
  if (plan.waiting)
    await dropDeferredMessage(step.tx, plan.waiting, plan.reason, `Not sent: ${plan.reason}`, step.now);
  await step.outcomes.skipped.run({ ...plan.key, reason: plan.reason });
}

/**
 * Deferred until `sendAt`. The contract's deferral (API.md §6.1): a QUEUED message with send_at,
 * visible in GET /v1/messages, asked again when it comes due. Without any sender yet, the row
 * waits alone.
 */
export async function deferRecipient(step: DispatchContext, plan: PlanOf<"defer">): Promise<void> {
  let messageId = plan.waiting;
  if (plan.waiting && plan.from)
    await redeferMessage(step.tx, plan.waiting, plan.sendAt, plan.from, step.now);
  // A call waits as the recipient row alone: the call is written when it may be placed.
  else if (!plan.waiting && plan.from && step.campaign.campaignType === "sms") {
    messageId = await writeCampaignMessage(step, plan.contact, {
      numberId: null,
      from: plan.from,
      body: plan.body,
      deferredUntil: plan.sendAt,
    });
  }
  await step.outcomes.deferred.run({
    ...plan.key,
    reason: plan.reason,
    sendAt: plan.sendAt,
    messageId: messageId ?? null,
  });
}

/** Handed off as a call, QUEUED with its `calls.place` job. */
export async function callRecipient(step: DispatchContext, plan: PlanOf<"call">): Promise<void> {
  const callId = await writeCampaignCall(step, plan.contact, plan.sender);
  await step.outcomes.called.run({ ...plan.key, callId });
}

/**
 * Handed off as a message in the step's send batch: a message waiting from an earlier deferral
 * goes now from the planned sender, else the message is written.
 */
export async function sendToRecipient(step: DispatchContext, plan: PlanOf<"send">): Promise<void> {
  let messageId = plan.waiting;
  if (plan.waiting)
    await releaseDeferredMessage(step.tx, {
      messageId: plan.waiting,
      workspaceId: step.campaign.workspaceId,
      numberId: plan.sender.id,
      from: plan.sender.number,
      // A body with a tracked link keeps its link: the one written at deferral.
      body: step.campaign.offerId ? undefined : plan.body,
      batch: step.batch,
      now: step.now,
    });
  else
    messageId = await writeCampaignMessage(step, plan.contact, {
      numberId: plan.sender.id,
      from: plan.sender.number,
      body: plan.body,
    });
  if (messageId) step.queued.push({ contactId: plan.key.contactId, messageId });
  else await step.outcomes.queued.run({ ...plan.key, messageId: null });
}

/**
 * What the step's plans left to write together: their new messages (one statement on PostgreSQL)
 * and the queued outcomes of the recipients handed off as messages.
 */
export async function writeStepRows(step: DispatchContext): Promise<void> {
  const { tx, campaign } = step;
  await insertRows(tx, messages, step.rows);
  await updateRowsByKey(
    tx,
    step.queued,
    async ({ contactId, messageId }) =>
      await step.outcomes.queued.run({ campaignId: campaign.id, contactId, messageId }),
    {
      table: campaignRecipients,
      scope: eq(campaignRecipients.campaignId, campaign.id),
      key: campaignRecipients.contactId,
      value: campaignRecipients.messageId,
      set: sql`outcome = 'queued', reason = NULL`,
      pair: ({ contactId, messageId }) => [contactId, messageId],
    },
  );
}

/**
 * Writes one recipient's campaign message (sent now, or QUEUED until `deferredUntil`). With an
 * offer, `{{offer_url}}` becomes a tracked link of the recipient's own, written with the message,
 * so a click knows its contact, campaign, message and number.
 */
async function writeCampaignMessage(
  step: DispatchContext,
  contact: ContactRow,
  input: { numberId: string | null; from: string; body: string; deferredUntil?: number },
): Promise<string> {
  const { tx, campaign, now } = step;
  // With an agent, the campaign gives the recipient's thread to it: the agent answers the replies.
  const conversation = campaign.agentId
    ? await handContactToAgent(tx, {
        workspaceId: campaign.workspaceId,
        contact,
        agentId: campaign.agentId,
        now,
        greet: false,
      })
    : await threadFrom(tx, step.threads, campaign.workspaceId, contact.id, now);
  const link = campaign.offerId ? newRecipientLink(await campaignLinkBase(tx, campaign)) : null;
  const message = await queueOutboundMessage(tx, {
    workspaceId: campaign.workspaceId,
    contact,
    conversationId: conversation.id,
    thread: conversation,
    numberId: input.numberId,
    from: input.from,
    body: link ? bodyFor(campaign, contact, { offerUrl: link.url }).body : input.body,
    sender: "campaign",
    campaignId: campaign.id,
    batch: step.batch,
    // A message that goes now joins the step's rows; a deferred one is written here.
    ...(input.deferredUntil === undefined ? { rows: step.rows } : { deferredUntil: input.deferredUntil }),
    now,
  });
  if (link && campaign.offerId)
    await createRecipientLink(
      tx,
      {
        workspaceId: campaign.workspaceId,
        offerId: campaign.offerId,
        contactId: contact.id,
        campaignId: campaign.id,
        messageId: message.id,
        numberId: input.numberId,
        code: link.code,
      },
      now,
    );
  return message.id;
}

/**
 * Writes one recipient's call (QUEUED, with its `calls.place` job): the campaign's voice agent
 * talks, else its `say` text is spoken. The finished call lands in the recipient's thread.
 */
async function writeCampaignCall(
  step: DispatchContext,
  contact: ContactRow,
  sender: NumberRow,
): Promise<string> {
  const { tx, campaign, now } = step;
  const conversation = await threadForContact(tx, campaign.workspaceId, contact.id, { reopen: false, now });
  return (
    await queueCall(tx, {
      workspaceId: campaign.workspaceId,
      contact,
      conversationId: conversation.id,
      sender,
      agentId: campaign.agentId,
      say: campaign.agentId ? null : campaign.say,
      campaignId: campaign.id,
      now,
    })
  ).id;
}

/** A recipient's outcome after its step, one prepared update each (they run per recipient). */
export const outcomeStatements = preparedPerConnection((db: DbOrTx) => {
  const key = and(
    eq(campaignRecipients.campaignId, sql.placeholder("campaignId")),
    eq(campaignRecipients.contactId, sql.placeholder("contactId")),
  );
  return {
    skipped: db
      .update(campaignRecipients)
      .set({ outcome: "skipped", reason: sql`${sql.placeholder("reason")}` })
      .where(key)
      .prepare(),
    deferred: db
      .update(campaignRecipients)
      .set({
        outcome: "deferred",
        reason: sql`${sql.placeholder("reason")}`,
        sendAt: sql`${sql.placeholder("sendAt")}`,
        dueAt: sql`${sql.placeholder("sendAt")}`,
        messageId: sql`${sql.placeholder("messageId")}`,
      })
      .where(key)
      .prepare(),
    queued: db
      .update(campaignRecipients)
      .set({ outcome: "queued", reason: null, messageId: sql`${sql.placeholder("messageId")}` })
      .where(key)
      .prepare(),
    called: db
      .update(campaignRecipients)
      .set({ outcome: "queued", reason: null, callId: sql`${sql.placeholder("callId")}` })
      .where(key)
      .prepare(),
  };
});
