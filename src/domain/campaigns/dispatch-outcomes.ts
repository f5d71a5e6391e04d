import { and, eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { preparedPerConnection } from "../../db/prepared";
import {
  type CampaignRow,
  type ContactRow,
  type ConversationRow,
  campaignRecipients,
  type NumberRow,
} from "../../db/schema";
import { handContactToAgent } from "../agents/runtime";
import { campaignLinkBase, createRecipientLink, newRecipientLink } from "../attribution/offers";
import { queueCall } from "../calls/calls";
import { threadForContact, threadFrom } from "../messaging/conversations";
import { queueOutboundMessage } from "../messaging/messages";
import { bodyFor } from "./send-plan";

/**
 * Writes one recipient's campaign message (sent now, or QUEUED until `deferredUntil`). With an
 * offer, `{{offer_url}}` becomes a tracked link of the recipient's own, written with the message,
 * so a click knows its contact, campaign, message and number.
 */
export async function writeCampaignMessage(
  tx: DbOrTx,
  campaign: CampaignRow,
  contact: ContactRow,
  input: { numberId: string | null; from: string; body: string; deferredUntil?: number },
  step: StepWrites,
  now: number,
): Promise<string> {
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
    ...(input.deferredUntil === undefined ? {} : { deferredUntil: input.deferredUntil }),
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
export async function writeCampaignCall(
  tx: DbOrTx,
  campaign: CampaignRow,
  contact: ContactRow,
  sender: NumberRow,
  now: number,
): Promise<string> {
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

/**
 * What one dispatcher step shares between its recipients: their open threads (read in one
 * search) and the batch of messages handed to the carrier by one `messages.send_batch` job.
 */
export interface StepWrites {
  threads: Map<string, ConversationRow>;
  batch: string[];
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
