import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import {
  createdAtColumn,
  idColumn,
  jsonColumn,
  timestampColumn,
  updatedAtColumn,
  workspaceIdColumn,
} from "./columns";

/**
 * Flows (seed: Flow; API.md §3 Flows, §6.6): a definition in React Flow's node/edge format and its
 * settings. status: draft | active | paused. `trigger_event` and `trigger_list_id` repeat the
 * trigger node's data so the enrolment hooks find the flows an event starts with one index seek.
 */
export const flows = sqliteTable(
  "flows",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    name: text("name").notNull(),
    status: text("status").notNull(),
    definition: jsonColumn<Record<string, unknown>>("definition").notNull(),
    /** {exit_on_purchase, allow_reentry, webhook_secret} */
    settings: jsonColumn<Record<string, unknown>>("settings").notNull(),
    triggerEvent: text("trigger_event").notNull(),
    triggerListId: text("trigger_list_id"),
    /** settings.exit_on_purchase, repeated so a purchase finds the flows to exit in SQL. */
    exitOnPurchase: integer("exit_on_purchase", { mode: "boolean" }).notNull().default(false),
    /** Bumped on each activation: an older dispatcher job stops. */
    dispatchGeneration: integer("dispatch_generation").notNull().default(0),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    index("flows_workspace_created_idx").on(t.workspaceId, t.createdAt, t.id),
    index("flows_workspace_trigger_idx").on(t.workspaceId, t.status, t.triggerEvent),
  ],
);

export type FlowRow = typeof flows.$inferSelect;

/**
 * One contact's journey through a flow. status: active | completed | exited. An active run is due
 * when `waiting_until` has come: the dispatcher then runs it from `current_node_id` until it waits
 * again or ends. `wait_kind` says what it waits for at that node (wait, reply, defer = a send held
 * by the send-time rules, or null = nothing: due now); `replied_at` marks a reply to a
 * wait_for_reply. At most one active run per flow and contact.
 */
export const flowRuns = sqliteTable(
  "flow_runs",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    flowId: text("flow_id").notNull(),
    contactId: text("contact_id").notNull(),
    status: text("status").notNull(),
    currentNodeId: text("current_node_id"),
    /** The open visit (flow_steps row) of the node the run is at, while it waits there. */
    currentStepId: text("current_step_id"),
    waitingUntil: timestampColumn("waiting_until"),
    waitKind: text("wait_kind"),
    repliedAt: timestampColumn("replied_at"),
    exitReason: text("exit_reason"),
    startedAt: timestampColumn("started_at").notNull(),
    endedAt: timestampColumn("ended_at"),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    uniqueIndex("flow_runs_active_contact_idx").on(t.flowId, t.contactId).where(sql`status = 'active'`),
    index("flow_runs_due_idx").on(t.flowId, t.waitingUntil).where(sql`status = 'active'`),
    index("flow_runs_flow_status_idx").on(t.flowId, t.status, t.startedAt),
    index("flow_runs_flow_contact_idx").on(t.flowId, t.contactId),
    index("flow_runs_workspace_contact_idx").on(t.workspaceId, t.contactId, t.status),
  ],
);

export type FlowRunRow = typeof flowRuns.$inferSelect;

/**
 * One visit of a run to a node: entered, then finished with an outcome (completed, sent, skipped,
 * failed, exited); open (finished_at null) while the run waits there. Node stats are counted from
 * these rows; a send's message (or a call) is linked so a later failure counts as `failed`.
 */
export const flowSteps = sqliteTable(
  "flow_steps",
  {
    id: idColumn(),
    workspaceId: workspaceIdColumn(),
    flowId: text("flow_id").notNull(),
    runId: text("run_id").notNull(),
    nodeId: text("node_id").notNull(),
    nodeType: text("node_type").notNull(),
    outcome: text("outcome"),
    detail: text("detail"),
    messageId: text("message_id"),
    callId: text("call_id"),
    enteredAt: timestampColumn("entered_at").notNull(),
    finishedAt: timestampColumn("finished_at"),
  },
  (t) => [
    index("flow_steps_flow_node_idx").on(t.flowId, t.enteredAt, t.nodeId),
    index("flow_steps_run_idx").on(t.runId, t.enteredAt),
  ],
);

export type FlowStepRow = typeof flowSteps.$inferSelect;

/**
 * A run is active, written as a literal: a bound `status = ?` on flow_runs, whose partial indexes
 * are chosen by that value, makes SQLite compile the statement again on every run
 * (src/db/bound-parameters.ts; a flow hook's probe cost 17 µs a run that way, ~5 µs with the literal).
 */
export const RUN_IS_ACTIVE = sql`${flowRuns.status} = 'active'`;
