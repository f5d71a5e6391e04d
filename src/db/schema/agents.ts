import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import {
  createdAtColumn,
  idColumn,
  jsonColumn,
  timestampColumn,
  updatedAtColumn,
  workspaceIdColumn,
} from "./columns";

/**
 * AI agents (seed: Agent; API.md §3 Agents, §6.3). The `sms`, `voice` and `inbox` objects are
 * stored whole, with every default filled in at create, so a response never has to guess one.
 * status: draft | active | paused (only active agents act); channel: sms | voice.
 */
export const agents = sqliteTable(
  "agents",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    name: text("name").notNull(),
    systemPrompt: text("system_prompt").notNull(),
    channel: text("channel").notNull(),
    status: text("status").notNull(),
    goal: text("goal"),
    greeting: text("greeting"),
    maxTurns: integer("max_turns"),
    handoffKeywords: jsonColumn<string[]>("handoff_keywords").notNull(),
    voiceId: text("voice_id"),
    language: text("language"),
    modelTier: text("model_tier").notNull(),
    sms: jsonColumn<Record<string, unknown>>("sms").notNull(),
    voice: jsonColumn<Record<string, unknown>>("voice").notNull(),
    inbox: jsonColumn<Record<string, unknown>>("inbox").notNull(),
    /** Voice agents: the voice provider's copy (provider, llm_id, agent_id, synced_at); null otherwise. */
    voiceSync: jsonColumn<Record<string, unknown>>("voice_sync"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [index("agents_workspace_created_idx").on(t.workspaceId, t.createdAt, t.id)],
);

export type AgentRow = typeof agents.$inferSelect;

/**
 * An agent's running state on one thread (src/domain/agents/runtime.ts): the reply it owes (one
 * per burst of inbound messages), its turns and replies, follow-ups sent, and why it stopped.
 * One row per conversation, written with the thread's messages in the same transactions.
 */
export const agentThreads = sqliteTable(
  "agent_threads",
  {
    conversationId: text("conversation_id").primaryKey(),
    workspaceId: workspaceIdColumn(),
    agentId: text("agent_id").notNull(),
    /** When the owed reply is due (null: none owed). A second inbound before it joins the same reply. */
    replyDueAt: timestampColumn("reply_due_at"),
    /** Contact messages answered so far: a turn is one contact burst and the agent's answer. */
    turns: integer("turns").notNull().default(0),
    /** Replies sent on `repliesDay` (the agent's local day, YYYY-MM-DD), for max_replies_per_day. */
    repliesDay: text("replies_day"),
    repliesToday: integer("replies_today").notNull().default(0),
    /** Follow-ups sent since the contact last wrote. */
    followupsSent: integer("followups_sent").notNull().default(0),
    lastAgentMessageAt: timestampColumn("last_agent_message_at"),
    goalReached: integer("goal_reached", { mode: "boolean" }).notNull().default(false),
    /** Why the agent stopped (keyword, turns, negative, low_confidence, max_turns, llm_unavailable, requested). */
    handoffReason: text("handoff_reason"),
    handedOffAt: timestampColumn("handed_off_at"),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [index("agent_threads_agent_idx").on(t.workspaceId, t.agentId)],
);

export type AgentThreadRow = typeof agentThreads.$inferSelect;
