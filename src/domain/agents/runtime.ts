import { and, desc, eq, gt, isNull } from "drizzle-orm";
import type { Db, DbOrTx } from "../../db/client";
import {
  type AgentThreadRow,
  agents,
  agentThreads,
  type ContactRow,
  type ConversationRow,
  contacts,
  conversations,
  messages,
  type NumberRow,
} from "../../db/schema";
import type { AgentEngine, EngineAnswer, EngineInput, EngineTurn } from "../../engines/llm";
import { EngineUnavailableError } from "../../engines/llm";
import { offlineEngine } from "../../engines/offline";
import type { JobContext, JobPayloads } from "../../jobs/catalog";
import { RescheduleJob } from "../../jobs/catalog";
import { enqueueJob } from "../../jobs/queue";
import { errorText, log } from "../../lib/log";
import { recordAgentConversion } from "../attribution/conversions";
import { brandTrackedLinks } from "../attribution/link-domains";
import { workspaceLinkBase } from "../attribution/offers";
import { inKeyOrder } from "../audience/contacts";
import { canSendTo } from "../audience/suppression";
import { complianceDecision, recipientFacts, workspaceSendRules } from "../campaigns/send-plan";
import { emitEvent } from "../events";
import { flagNeedsAttention, threadForContact } from "../messaging/conversations";
import { type InboundContext, onInboundMessage } from "../messaging/inbound";
import { nextLocalMidnight, reserveDailySend, resolveSender } from "../messaging/numbers";
import { threadNumber } from "../messaging/one-off";
import { queueOutboundMessage } from "../messaging/outbound";
import { type AgentJson, agentJson, engineAgentOf } from "./agents";
import {
  decideTurn,
  type HandoffReason,
  keywordHandoff,
  localDayOf,
  quietWindowEnd,
  type TurnDecision,
} from "./policy";

/**
 * The SMS agent at work (API.md §6.3), as durable jobs of the catalogue:
 * - an inbound message on a thread an active agent owns owes one reply, due after the agent's
 *   reply delay (`agents.reply`); more messages before it is due join the same reply;
 * - the reply job asks the engine outside any transaction, then applies the answer in the
 *   transaction that completes the job (capture, conversion, intent, handoff, the reply itself);
 *   a message that arrived while the engine was thinking makes it ask again, so one reply answers
 *   the whole burst;
 * - follow-ups (`agents.followup`) go when the contact has been quiet, under the send-time rules.
 * Opt-out and suppression are checked again by the send job at the moment of sending, as for
 * every message.
 */

const engines = new WeakMap<Db, AgentEngine>();

/** Wires the engine agents on `db` use (the offline engine unless LLM_BASE_URL configured one). */
export function startAgents(db: Db, engine: AgentEngine) {
  engines.set(db, engine);
}

export function engineFor(db: Db): AgentEngine {
  return engines.get(db) ?? offlineEngine;
}

/** How many of the thread's latest messages the engine sees. */
const THREAD_WINDOW = 30;

async function loadAgent(tx: DbOrTx, id: string | null): Promise<AgentJson | null> {
  if (!id) return null;
  const row = await tx.select().from(agents).where(eq(agents.id, id)).get();
  return row ? agentJson(row) : null;
}

const acting = (agent: AgentJson | null): agent is AgentJson =>
  agent !== null && agent.status === "active" && agent.channel === "sms";

async function threadState(
  tx: DbOrTx,
  conversation: ConversationRow,
  agentId: string,
  now: number,
): Promise<AgentThreadRow> {
  const found = await tx
    .select()
    .from(agentThreads)
    .where(eq(agentThreads.conversationId, conversation.id))
    .get();
  if (found && found.agentId === agentId) return found;
  const fresh: AgentThreadRow = {
    conversationId: conversation.id,
    workspaceId: conversation.workspaceId,
    agentId,
    replyDueAt: null,
    turns: 0,
    repliesDay: null,
    repliesToday: 0,
    followupsSent: 0,
    lastAgentMessageAt: null,
    goalReached: false,
    handoffReason: null,
    handedOffAt: null,
    createdAt: now,
    updatedAt: now,
  };
  // A thread given to another agent starts over with it.
  if (found) await tx.delete(agentThreads).where(eq(agentThreads.conversationId, conversation.id)).run();
  // Another transaction may have made it meanwhile: its row is the thread's.
  const made = await tx
    .insert(agentThreads)
    .values(fresh)
    .onConflictDoNothing()
    .returning({ conversationId: agentThreads.conversationId })
    .all();
  if (made.length === 0)
    return (
      (await tx.select().from(agentThreads).where(eq(agentThreads.conversationId, conversation.id)).get()) ??
      fresh
    );
  return fresh;
}

async function saveThread(tx: DbOrTx, conversationId: string, set: Partial<AgentThreadRow>, now: number) {
  await tx
    .update(agentThreads)
    .set({ ...set, updatedAt: now })
    .where(eq(agentThreads.conversationId, conversationId))
    .run();
}

/** uniform(min, max) seconds, in ms. */
function replyDelayMs(agent: AgentJson): number {
  const { reply_delay_min_sec: min, reply_delay_max_sec: max } = agent.sms;
  return Math.round((min + Math.random() * (max - min)) * 1000);
}

/**
 * Runs in the transaction that stored an inbound message (src/domain/messaging/inbound.ts): a
 * thread an active SMS agent owns owes a reply. CTIA keywords are never answered (a STOP also
 * cancels what was owed), nor is a thread flagged as a possible opt-out (a person decides), and a
 * handoff keyword hands off at once.
 */
export async function agentOnInbound(tx: DbOrTx, inbound: InboundContext) {
  const { conversation, now } = inbound;
  if (conversation.agentId === null || conversation.agentPaused) return;
  const possibleOptOut = conversation.needsAttention && conversation.attentionReason === "possible_opt_out";
  if (inbound.keyword || possibleOptOut) {
    if (inbound.keyword === "opt_out" || possibleOptOut)
      await tx
        .update(agentThreads)
        .set({ replyDueAt: null, updatedAt: now })
        .where(eq(agentThreads.conversationId, conversation.id))
        .run();
    return;
  }
  const agent = await loadAgent(tx, conversation.agentId);
  if (!acting(agent)) {
    // The owner is not acting (paused, draft, voice, deleted): a person must see the message.
    await flagNeedsAttention(tx, conversation, now, "unanswered_message");
    return;
  }
  const state = await threadState(tx, conversation, agent.id, now);
  if (keywordHandoff(agent, inbound.message.body)) {
    const decision = decideTurn(agent, state, inbound.message.body, null);
    await applyHandoff(tx, agent, conversation, inbound.contact, decision, "keyword", now);
    return;
  }
  // Any message from the contact stops the follow-ups; a reply already owed answers this one too.
  if (state.replyDueAt !== null) {
    if (state.followupsSent > 0) await saveThread(tx, conversation.id, { followupsSent: 0 }, now);
    return;
  }
  const due = now + replyDelayMs(agent);
  // Owed with compare-and-set: of inbound messages of one thread stored at once (by two
  // processes, or two transactions of one), one makes the reply owed and the others find it so.
  const owed = await tx
    .update(agentThreads)
    .set({ replyDueAt: due, followupsSent: 0, updatedAt: now })
    .where(and(eq(agentThreads.conversationId, conversation.id), isNull(agentThreads.replyDueAt)))
    .returning({ conversationId: agentThreads.conversationId })
    .all();
  if (owed.length === 0) return;
  await enqueueJob(
    tx,
    "agents.reply",
    { conversation_id: conversation.id, due_at: due },
    {
      workspaceId: conversation.workspaceId,
      runAt: due,
      now,
    },
  );
}

onInboundMessage(agentOnInbound);

/** The thread as the engine sees it: contact messages are `contact`, everything we sent is `agent`. */
async function engineThread(
  tx: DbOrTx,
  conversationId: string,
): Promise<{ turns: EngineTurn[]; lastInboundAt: number; pending: string }> {
  const rows = (
    await tx
      .select({
        direction: messages.direction,
        body: messages.body,
        createdAt: messages.createdAt,
        status: messages.status,
      })
      .from(messages)
      .where(eq(messages.conversationId, conversationId))
      .orderBy(desc(messages.createdAt), desc(messages.id))
      .limit(THREAD_WINDOW)
      .all()
  ).reverse();
  const turns: EngineTurn[] = [];
  let lastInboundAt = 0;
  const pending: string[] = [];
  for (const row of rows) {
    if (row.direction === "inbound") {
      turns.push({ role: "contact", text: row.body });
      lastInboundAt = Math.max(lastInboundAt, row.createdAt);
      pending.push(row.body);
    } else if (row.status !== "FAILED") {
      turns.push({ role: "agent", text: row.body });
      pending.length = 0;
    }
  }
  return { turns, lastInboundAt, pending: pending.join("\n") };
}

/** What is known of the contact, for the engine (columns and custom fields). */
function knownOf(contact: ContactRow): Record<string, string> {
  const known: Record<string, string> = {};
  if (contact.firstName) known.first_name = contact.firstName;
  if (contact.lastName) known.last_name = contact.lastName;
  if (contact.email) known.email = contact.email;
  for (const [key, value] of Object.entries(inKeyOrder(contact.fields ?? {})))
    if (value !== null && value !== undefined && typeof value !== "object") known[key] = String(value);
  return known;
}

/** Asks the engine; null when it could not answer (the caller hands off with `llm_unavailable`). */
export async function askEngine(engine: AgentEngine, input: EngineInput): Promise<EngineAnswer | null> {
  try {
    return await engine.answer(input);
  } catch (error) {
    if (!(error instanceof EngineUnavailableError))
      log.error("agent engine failed", { error: errorText(error) });
    else log.warn("agent engine unavailable", { engine: engine.name, error: error.message });
    return null;
  }
}

interface ReplyContext {
  conversation: ConversationRow;
  contact: ContactRow;
  agent: AgentJson;
  state: AgentThreadRow;
}

/**
 * The thread, its state and the agent it belongs to, if this reply is still owed on it (no person
 * took the thread over, and no later inbound message or handoff replaced the reply).
 */
async function owedReply(tx: DbOrTx, payload: JobPayloads["agents.reply"]) {
  const conversation = await tx
    .select()
    .from(conversations)
    .where(eq(conversations.id, payload.conversation_id))
    .get();
  if (!conversation || conversation.agentPaused || conversation.agentId === null) return null;
  const state = await tx
    .select()
    .from(agentThreads)
    .where(eq(agentThreads.conversationId, conversation.id))
    .get();
  if (!state || state.replyDueAt !== payload.due_at || state.agentId !== conversation.agentId) return null;
  return { conversation, state, agent: await loadAgent(tx, conversation.agentId) };
}

/** The thread, its contact, agent and state, if the agent still owes this reply and can give it. */
async function replyContext(tx: DbOrTx, payload: JobPayloads["agents.reply"]): Promise<ReplyContext | null> {
  const owed = await owedReply(tx, payload);
  if (!owed || !acting(owed.agent)) return null;
  const contact = await tx.select().from(contacts).where(eq(contacts.id, owed.conversation.contactId)).get();
  if (!contact) return null;
  return { ...owed, agent: owed.agent, contact };
}

/**
 * A reply still owed whose agent stopped acting before it was due (paused, draft, deleted): nobody
 * will answer the contact, so a person must see the thread, as for a message that arrives while
 * the agent is not acting. A thread a person took over (agent paused on it) is theirs already.
 */
async function flagUnanswered(tx: DbOrTx, payload: JobPayloads["agents.reply"], now: number) {
  const owed = await owedReply(tx, payload);
  if (!owed || acting(owed.agent)) return;
  await tx
    .update(agentThreads)
    .set({ replyDueAt: null, updatedAt: now })
    .where(eq(agentThreads.conversationId, owed.conversation.id))
    .run();
  await flagNeedsAttention(tx, owed.conversation, now, "unanswered_message");
}

/** `agents.reply`: the reply owed on a thread, once per burst of inbound messages. */
export async function agentReplyJob(payload: JobPayloads["agents.reply"], ctx: JobContext) {
  const now = ctx.clock.now();
  const first = await replyContext(ctx.db, payload);
  if (!first) {
    await ctx.completeWith(async (tx) => await flagUnanswered(tx, payload, now));
    return;
  }
  const { agent } = first;
  // The agent's quiet window: the reply waits for its end.
  const quietEnd = quietWindowEnd(
    { start: agent.sms.quiet_start_hour, end: agent.sms.quiet_end_hour, zone: agent.sms.quiet_tz },
    now,
  );
  if (quietEnd !== null) throw new RescheduleJob(quietEnd);
  // The day's replies are spent (max_replies_per_day, in the agent's zone): the reply waits for the
  // next local day, as the contract's "at most N per day" asks, rather than being dropped.
  const spent = repliesSoFar(agent, first.state, now);
  if (agent.sms.max_replies_per_day > 0 && spent.count >= agent.sms.max_replies_per_day)
    throw new RescheduleJob(nextLocalMidnight(agent.sms.quiet_tz, now));

  const thread = await engineThread(ctx.db, first.conversation.id);
  const answer = await askEngine(engineFor(ctx.db), {
    agent: engineAgentOf(agent),
    thread: thread.turns,
    known: knownOf(first.contact),
  });

  const retry = await ctx.completeWith(async (tx) => {
    const current = await replyContext(tx, payload);
    if (!current) return false;
    // A message that arrived while the engine answered: ask again, so one reply answers all of them.
    const newer = await tx
      .select({ id: messages.id })
      .from(messages)
      .where(
        and(
          eq(messages.conversationId, current.conversation.id),
          eq(messages.direction, "inbound"),
          gt(messages.createdAt, thread.lastInboundAt),
        ),
      )
      .get();
    if (newer) return true;
    await applyReply(tx, current, thread.pending, answer, now);
    return false;
  });
  if (retry) throw new RescheduleJob(ctx.clock.now());
}

/** The day's reply count for the thread, in the agent's zone. */
function repliesSoFar(agent: AgentJson, state: AgentThreadRow, now: number) {
  const day = localDayOf(agent.sms.quiet_tz, now);
  return { day, count: state.repliesDay === day ? state.repliesToday : 0 };
}

async function applyReply(
  tx: DbOrTx,
  ctx: ReplyContext,
  contactText: string,
  answer: EngineAnswer | null,
  now: number,
) {
  const { agent, state, contact } = ctx;
  let conversation = ctx.conversation;
  const decision = decideTurn(
    agent,
    { turns: state.turns, goalReached: state.goalReached },
    contactText,
    answer,
  );
  await applyOutcomes(tx, agent, conversation, contact, decision, now);
  if (decision.handoff) {
    await applyHandoff(tx, agent, conversation, contact, decision, decision.handoff.reason, now);
    await saveThread(tx, conversation.id, { replyDueAt: null, turns: state.turns + 1 }, now);
    return;
  }
  if (decision.needsAttention)
    conversation = await flagNeedsAttention(tx, conversation, now, "agent_flagged");
  const set: Partial<AgentThreadRow> = {
    replyDueAt: null,
    turns: state.turns + 1,
    goalReached: decision.goalReached,
  };
  if (decision.draft !== null)
    await tx
      .update(conversations)
      .set({ draftReply: decision.draft, updatedAt: now })
      .where(eq(conversations.id, conversation.id))
      .run();
  if (decision.send) {
    const replies = repliesSoFar(agent, state, now);
    if (replies.count >= agent.sms.max_replies_per_day) {
      // No replies at all (max_replies_per_day 0), or spent meanwhile: a person answers instead.
      await flagNeedsAttention(tx, conversation, now, "unanswered_message");
    } else if (await sendAgentMessage(tx, conversation, contact, decision.send, now)) {
      set.repliesDay = replies.day;
      set.repliesToday = replies.count + 1;
      set.lastAgentMessageAt = now;
      set.followupsSent = 0;
      if (agent.sms.followup_enabled && agent.sms.followup_count > 0)
        await scheduleFollowup(tx, conversation, agent, now);
    }
  }
  await saveThread(tx, conversation.id, set, now);
}

/** Capture, conversion and intent: applied whatever the mode and whether or not the agent answers. */
async function applyOutcomes(
  tx: DbOrTx,
  agent: AgentJson,
  conversation: ConversationRow,
  contact: ContactRow,
  decision: TurnDecision,
  now: number,
) {
  await tx
    .update(conversations)
    .set({ intent: decision.intent })
    .where(eq(conversations.id, conversation.id))
    .run();
  const captured = Object.entries(decision.captured);
  if (captured.length > 0) {
    const set: Partial<ContactRow> = { updatedAt: now };
    const fields: Record<string, unknown> = { ...(contact.fields ?? {}) };
    for (const [key, value] of captured) {
      if (key === "first_name") set.firstName = value;
      else if (key === "last_name") set.lastName = value;
      else if (key === "email") set.email = value;
      else fields[key] = value;
    }
    set.fields = fields as ContactRow["fields"];
    await tx.update(contacts).set(set).where(eq(contacts.id, contact.id)).run();
  }
  if (decision.conversion) {
    const what = decision.conversion.source === "goal" ? "goal" : decision.conversion.keyword.toLowerCase();
    await recordAgentConversion(tx, {
      workspaceId: conversation.workspaceId,
      contactId: contact.id,
      agentId: agent.id,
      txn: `agent:${conversation.id}:${what}`,
      now,
    });
  }
}

/**
 * The agent stops on the thread: its handoff message (auto mode), `needs_attention`, the agent
 * inactive on the thread, and `agent.handoff`.
 */
async function applyHandoff(
  tx: DbOrTx,
  agent: AgentJson,
  conversation: ConversationRow,
  contact: ContactRow,
  decision: TurnDecision,
  reason: HandoffReason,
  now: number,
) {
  if (decision.send) await sendAgentMessage(tx, conversation, contact, decision.send, now);
  const flagged = await flagNeedsAttention(tx, conversation, now, "agent_handoff");
  await tx
    .update(conversations)
    .set({ agentPaused: true, updatedAt: now })
    .where(eq(conversations.id, flagged.id))
    .run();
  await saveThread(tx, conversation.id, { replyDueAt: null, handoffReason: reason, handedOffAt: now }, now);
  await emitEvent(
    tx,
    conversation.workspaceId,
    "agent.handoff",
    { conversation_id: conversation.id, agent_id: agent.id, contact_id: contact.id, reason },
    now,
  );
}

/**
 * Queues the agent's message on the thread from the number the thread last used (the one the
 * contact wrote to, when the latest message is theirs), else the workspace default, as a team
 * reply does; counted against that number's daily cap.
 * Nothing is queued to an opted-out or suppressed contact, or when no number can send.
 */
async function sendAgentMessage(
  tx: DbOrTx,
  conversation: ConversationRow,
  contact: ContactRow,
  body: string,
  now: number,
  options: { followup?: boolean } = {},
) {
  if (!(await canSendTo(tx, conversation.workspaceId, contact.phoneNumber)).allowed) return false;
  let sender: NumberRow;
  try {
    sender = await resolveSender(
      tx,
      conversation.workspaceId,
      await threadNumber(tx, conversation.workspaceId, conversation.id),
    );
  } catch {
    log.warn("agent reply not sent: no sending number", { conversation_id: conversation.id });
    return false;
  }
  if (!(await reserveDailySend(tx, sender, now))) {
    log.warn("agent reply not sent: the number is at its daily_limit", { conversation_id: conversation.id });
    return false;
  }
  await queueOutboundMessage(tx, {
    workspaceId: conversation.workspaceId,
    contact,
    conversationId: conversation.id,
    numberId: sender.id,
    from: sender.number,
    body: await onAgentLinkDomain(tx, conversation, body),
    sender: "agent",
    followup: options.followup ?? false,
    now,
  });
  return true;
}

/**
 * The workspace's tracked links in an agent's text (an offer's `tracking_url` in its knowledge,
 * greeting or handoff message, whichever host it was copied from) go out on the agent's
 * `sms.link_domain_id`, else the default verified domain, else PUBLIC_URL.
 */
async function onAgentLinkDomain(tx: DbOrTx, conversation: ConversationRow, body: string): Promise<string> {
  if (!body.includes("/r/")) return body;
  const agent = conversation.agentId
    ? await tx
        .select({ sms: agents.sms })
        .from(agents)
        .where(and(eq(agents.workspaceId, conversation.workspaceId), eq(agents.id, conversation.agentId)))
        .get()
    : undefined;
  const named = agent?.sms.link_domain_id;
  const base = await workspaceLinkBase(tx, conversation.workspaceId, [
    typeof named === "string" ? named : null,
  ]);
  return await brandTrackedLinks(tx, conversation.workspaceId, body, base);
}

async function scheduleFollowup(tx: DbOrTx, conversation: ConversationRow, agent: AgentJson, now: number) {
  const runAt = now + agent.sms.followup_delay_hours * 3_600_000;
  await enqueueJob(
    tx,
    "agents.followup",
    { conversation_id: conversation.id, after: now },
    { workspaceId: conversation.workspaceId, runAt, now },
  );
}

/**
 * `agents.followup`: the contact has not answered since the agent's message at `after`. Sends a
 * follow-up (at most `followup_count` since the contact last wrote) when the send-time rules of
 * API.md §6.1 allow it now, waits when they defer it, and gives up when they skip it or the thread
 * is flagged as a possible opt-out.
 */
export async function agentFollowupJob(payload: JobPayloads["agents.followup"], ctx: JobContext) {
  const now = ctx.clock.now();
  const load = async (tx: DbOrTx) => {
    const conversation = await tx
      .select()
      .from(conversations)
      .where(eq(conversations.id, payload.conversation_id))
      .get();
    if (!conversation || conversation.agentPaused || conversation.agentId === null) return null;
    // A possible opt-out waits for a person (API.md §7.1): no follow-up goes out meanwhile.
    if (conversation.needsAttention && conversation.attentionReason === "possible_opt_out") return null;
    const state = await tx
      .select()
      .from(agentThreads)
      .where(eq(agentThreads.conversationId, conversation.id))
      .get();
    if (!state || state.lastAgentMessageAt !== payload.after || state.replyDueAt !== null) return null;
    const agent = await loadAgent(tx, conversation.agentId);
    const contact = await tx.select().from(contacts).where(eq(contacts.id, conversation.contactId)).get();
    if (!acting(agent) || !contact || !agent.sms.followup_enabled) return null;
    if (state.followupsSent >= agent.sms.followup_count) return null;
    return { conversation, state, agent, contact };
  };
  const first = await load(ctx.db);
  if (!first) {
    await ctx.completeWith(() => undefined);
    return;
  }
  const rules = await workspaceSendRules(ctx.db, first.conversation.workspaceId, null);
  const facts = await recipientFacts(ctx.db, first.conversation.workspaceId, "", [first.contact], rules, now);
  const decision = complianceDecision(
    first.contact,
    facts.get(first.contact.id) ?? { suppression: null, recentSends: [] },
    rules,
    now,
  );
  if (decision.action === "defer") throw new RescheduleJob(decision.until);
  if (decision.action === "skip") {
    await ctx.completeWith(() => undefined);
    return;
  }
  const thread = await engineThread(ctx.db, first.conversation.id);
  const answer = await askEngine(engineFor(ctx.db), {
    agent: engineAgentOf(first.agent),
    thread: thread.turns,
    known: knownOf(first.contact),
  });
  await ctx.completeWith(async (tx) => {
    const current = await load(tx);
    if (!current || !answer?.reply.trim()) return;
    const body = decideTurn(
      current.agent,
      { turns: current.state.turns, goalReached: current.state.goalReached },
      "",
      answer,
    );
    const text = body.text.trim();
    if (
      !text ||
      !(await sendAgentMessage(tx, current.conversation, current.contact, text, now, { followup: true }))
    )
      return;
    const sent = current.state.followupsSent + 1;
    await saveThread(tx, current.conversation.id, { followupsSent: sent, lastAgentMessageAt: now }, now);
    if (sent < current.agent.sms.followup_count)
      await scheduleFollowup(tx, current.conversation, current.agent, now);
  });
}

/**
 * A campaign or flow gives a contact to an agent: the contact's thread gets the agent (active
 * again), and when the contact had no thread before, the agent opens with its greeting.
 */
export async function handContactToAgent(
  tx: DbOrTx,
  input: { workspaceId: string; contact: ContactRow; agentId: string; now: number; greet: boolean },
): Promise<ConversationRow> {
  const { workspaceId, contact, agentId, now } = input;
  const before = await tx
    .select({ id: conversations.id })
    .from(conversations)
    .where(and(eq(conversations.workspaceId, workspaceId), eq(conversations.contactId, contact.id)))
    .get();
  const conversation = await threadForContact(tx, workspaceId, contact.id, { reopen: true, now, agentId });
  if (conversation.agentId !== agentId || conversation.agentPaused)
    await tx
      .update(conversations)
      .set({ agentId, agentPaused: false, updatedAt: now })
      .where(eq(conversations.id, conversation.id))
      .run();
  const owned = { ...conversation, agentId, agentPaused: false };
  const agent = await loadAgent(tx, agentId);
  if (input.greet && !before && acting(agent) && agent.greeting?.trim()) {
    await threadState(tx, owned, agentId, now);
    if (await sendAgentMessage(tx, owned, contact, agent.greeting.trim(), now))
      await saveThread(tx, owned.id, { lastAgentMessageAt: now }, now);
  }
  return owned;
}
