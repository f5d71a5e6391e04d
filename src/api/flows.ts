import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import {
  createFlow,
  deleteFlow,
  enrollByRequest,
  FLOW_STATUSES,
  flowStats,
  getFlow,
  listFlows,
  listRuns,
  updateFlow,
} from "../domain/flows/flows";
import { SIMULATION_EVENTS, simulateFlow } from "../domain/flows/simulate";
import { NODE_TYPES } from "../domain/flows/types";
import { workspaceOf } from "../http/context";
import { paginationQuery, parsePagination } from "../http/pagination";
import {
  Body,
  Enum,
  Int,
  listEnvelope,
  NullableTimestamp,
  Ok,
  Query,
  READ_ERRORS,
  responses,
  Timestamp,
  Uuid,
  WRITE_ERRORS,
} from "../http/schemas";
import { resourceRoutes } from "./resource-routes";

const Nullable = (description: string) => t.Union([t.String(), t.Null()], { description });

const Node = t.Object(
  {
    id: t.String({ description: "Node id, unique in the flow" }),
    type: Enum(NODE_TYPES, "What the node does"),
    position: t.Object(
      { x: t.Number({ description: "x" }), y: t.Number({ description: "y" }) },
      { description: "Where the editor draws it" },
    ),
    data: t.Record(t.String(), t.Unknown(), {
      description:
        "By type: trigger {event: contact_created|added_to_list|inbound_keyword|link_clicked|conversion|manual, list_id?, keywords?, offer_id?, conversion_event? (the conversion's event name; any when absent)}; send_sms {body, pool_id?, offer_id? ({{offer_url}} in body becomes the contact's own tracked link to it), link_domain_id? (a verified link domain for its links; else the offer's, the default, PUBLIC_URL)}; wait {minutes|hours|days}; wait_for_reply {timeout_hours}; condition {rules}; agent {agent_id}; add_to_list/remove_from_list {list_id}; update_contact {fields}; webhook {url}; call {agent_id|say}; end {}",
    }),
  },
  { description: "A node (React Flow's format)" },
);

const Edge = t.Object(
  {
    id: t.String({ description: "Edge id" }),
    source: t.String({ description: "Source node id" }),
    target: t.String({ description: "Target node id" }),
    sourceHandle: t.Optional(
      t.Union([t.String(), t.Null()], {
        description:
          "true/false out of a condition, replied/timeout out of wait_for_reply; elsewhere absent or null (out)",
      }),
    ),
  },
  { description: "An edge (React Flow's format)" },
);

const Definition = t.Object(
  { nodes: t.Array(Node, { description: "Nodes" }), edges: t.Array(Edge, { description: "Edges" }) },
  { description: "The flow's graph: exactly one trigger; every edge between existing nodes" },
);

export const FlowSchema = t.Object(
  {
    id: Uuid("Flow id"),
    name: t.String({ description: "Name" }),
    status: Enum(FLOW_STATUSES, "draft, active (triggers enroll; runs advance) or paused (runs hold)"),
    definition: Definition,
    settings: t.Object(
      {
        exit_on_purchase: t.Boolean({
          description: "A `purchase` conversion exits the contact from this flow",
        }),
        allow_reentry: t.Boolean({
          description: "A contact may enter again once its previous run has ended (otherwise only once ever)",
        }),
        webhook_secret: t.String({
          description: "Signs the webhook nodes' requests (Standard Webhooks, `whsec_…`), made on create",
        }),
      },
      { description: "Behaviour" },
    ),
    created_at: Timestamp("When the flow was created"),
    updated_at: Timestamp("Last change"),
  },
  { description: "A flow (seed: Flow)" },
);

const DefinitionInput = t.Unknown({
  description:
    '`{nodes, edges}` in React Flow\'s format (see Flow.definition). Checked whole: 422 names the node or edge (`nodes[2] ("send1"): data.body is required`); an id in node data that names nothing of the workspace by its path (`definition.nodes[2].data.list_id does not exist`).',
});
const SettingsInput = t.Object(
  {
    exit_on_purchase: t.Optional(t.Boolean({ description: "Exit on a purchase conversion (default false)" })),
    allow_reentry: t.Optional(
      t.Boolean({ description: "Let a contact enter again after its run ended (default false)" }),
    ),
  },
  { description: "Behaviour" },
);

const CreateBody = Body(
  {
    name: t.String({ minLength: 1, maxLength: 200, description: "Name" }),
    definition: DefinitionInput,
    settings: t.Optional(SettingsInput),
    status: t.Optional(Enum(["draft", "active"], "draft (default) or active (activates at once)")),
  },
  { description: "A new flow" },
);

const PatchBody = Body(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "Name" })),
    definition: t.Optional(DefinitionInput),
    settings: t.Optional(SettingsInput),
    status: t.Optional(Enum(["active", "paused"], "active: activate (or resume); paused: hold every run")),
  },
  { description: "A partial update" },
);

const NodeStats = t.Object(
  {
    type: t.String({ description: "Node type" }),
    entered: Int({ description: "Visits in the window" }),
    completed: Int({ description: "Visits that finished" }),
    sent: Int({ description: "Messages or calls made" }),
    failed: Int({ description: "Of them, failed (then or later)" }),
    waiting: Int({ description: "Runs there now" }),
    skipped: Int({ description: "Sends skipped by the send-time rules (opted out, suppressed, caps ...)" }),
  },
  { description: "One node's figures" },
);

const Stats = t.Object(
  {
    window_days: Int({ description: "The window: runs started in the last 30 days" }),
    enrolled: Int({ description: "Runs started" }),
    active: Int({ description: "Of them, still running" }),
    completed: Int({ description: "Reached an end" }),
    exited: Int({ description: "Left early (a purchase, the flow deleted)" }),
    exited_on_purchase: Int({ description: "Left on a purchase" }),
    skipped_reentry: Int({
      description:
        "Entries refused because the contact had entered this flow 5 times in the last 24 hours (the re-entry bound that stops flows from looping), counted by UTC day in the window",
    }),
    nodes: t.Record(t.String(), NodeStats, {
      description: "By node id: nodes entered at least once in the window",
    }),
  },
  { description: "Flow performance" },
);

const Run = t.Object(
  {
    id: Uuid("Run id"),
    flow_id: Uuid("Flow"),
    contact_id: Uuid("Contact"),
    status: Enum(["active", "completed", "exited"], "active, completed or exited"),
    current_node_id: Nullable("Where the run is (or ended)"),
    waiting_until: NullableTimestamp(
      "When it goes on (a wait, a reply timeout, a send held by the send-time rules)",
    ),
    exit_reason: Nullable("Why it exited: purchase, flow_deleted"),
    started_at: Timestamp("Enrolled"),
    ended_at: NullableTimestamp("Ended"),
  },
  { description: "One contact's journey through the flow" },
);

const TraceLine = t.Object(
  {
    at_minutes: t.Number({ description: "Virtual minutes since the start" }),
    node_id: Nullable("The node"),
    type: t.String({ description: "Node type, or `event` / `run`" }),
    action: t.String({
      description:
        "enrolled, sent, skipped, deferred, waiting, waited, waiting_for_reply, replied, timeout, true, false, handed_to_agent, added_to_list, removed_from_list, updated_contact, webhook_queued, call_queued, completed, exited, max_days_reached; events: reply, click, conversion",
    }),
    detail: Nullable("The message body, the reason, the time waited until ..."),
  },
  { description: "One thing the run did" },
);

const Id = t.Object({ id: t.String({ description: "Flow id" }) });

// /v1/flows (seed endpoints 12–13): CRUD, activation, enrolment, stats, runs and the simulator.
export function flowsRoutes(deps: AppDeps) {
  return new Elysia({ name: "flows" })
    .use(
      resourceRoutes(
        deps,
        {
          path: "/v1/flows",
          tag: "Flows",
          one: "flow",
          many: "flows",
          item: FlowSchema,
          idDescription: "Flow id",
        },
        {
          list: {
            summary: "List flows (newest first)",
            description:
              "Seed endpoint 12: each flow with its live `status`. Filters: `status`, `q` (name contains).",
            query: {
              status: t.Optional(t.String({ description: "draft | active | paused" })),
              q: t.Optional(
                t.String({
                  description: "Name contains (case-insensitive for ASCII letters: É and é differ)",
                }),
              ),
            },
            itemsDescription: "Flows, newest first",
            run: async (workspaceId, query, page) => await listFlows(deps.db, workspaceId, query, page),
          },
          create: {
            summary: "Create a flow",
            description:
              "The definition is checked whole (one trigger, known node types, no dangling edge, the right handles out of `condition` and `wait_for_reply`, ids in node data that exist, condition rules as segment rules, no loop without a wait, at most 200 nodes, waits up to 365 days): 422 names the node or edge. `settings.webhook_secret` is made here. Created `active`, it is refused like an activation whose list additions would start itself again (422 `flow would loop through flows: A → B → A`).",
            body: CreateBody,
            run: async (workspaceId, body, now) => await createFlow(deps.db, workspaceId, body, now),
          },
          get: {
            summary: "Get a flow",
            description:
              "The flow with its definition, settings (including the webhook nodes' signing secret) and live status.",
            run: async (workspaceId, id) => await getFlow(deps.db, workspaceId, id),
          },
          update: {
            summary: "Update, activate or pause a flow",
            description:
              "`status: active` activates a draft or resumes a paused flow (runs go on where they were); `status: paused` holds every run. The definition changes only while the flow is not active (409 `Flow is active: pause it before changing its definition`). Activation refuses a flow whose `add_to_list` nodes would start itself again through the active flows' `added_to_list` triggers, or directly: 422 `flow would loop through flows: Welcome → Nurture → Welcome`. At run time a contact enters one flow at most 5 times in 24 hours; further entries are skipped and counted in the stats' `skipped_reentry`.",
            body: PatchBody,
            errors: [404, 409],
            run: async (workspaceId, id, body, now) => await updateFlow(deps.db, workspaceId, id, body, now),
          },
          delete: {
            summary: "Delete a flow",
            description: "Its active runs end as exited (`flow_deleted`); messages already sent stay.",
            run: async (workspaceId, id, now) => await deleteFlow(deps.db, workspaceId, id, now),
          },
        },
      ),
    )
    .post(
      "/v1/flows/:id/enroll",
      async ({ request, params, body }) => ({
        ok: true as const,
        ...(await enrollByRequest(
          deps.db,
          workspaceOf(request),
          params.id,
          body.contact_ids,
          deps.clock.now(),
        )),
      }),
      {
        params: Id,
        body: Body(
          {
            contact_ids: t.Array(t.String({ maxLength: 64 }), {
              maxItems: 10_000,
              description: "Contacts to enroll (1–10,000)",
            }),
          },
          { description: "Who to enroll" },
        ),
        detail: {
          tags: ["Flows"],
          operationId: "enrollInFlow",
          summary: "Enroll contacts",
          description:
            "Starts a run for each contact at the trigger. 409 unless the flow is active; 422 `contact_ids[2] does not exist` for an unknown or foreign id (nothing enrolled). A contact already running (or, without `allow_reentry`, ever enrolled) is counted in `skipped`.",
        },
        response: responses(
          t.Object({
            ok: Ok,
            enrolled: Int({ description: "Runs started" }),
            skipped: Int({ description: "Contacts not enrolled (already running, or once only)" }),
          }),
          [...WRITE_ERRORS, 404, 409],
        ),
      },
    )
    .get(
      "/v1/flows/:id/stats",
      async ({ request, params }) => ({
        ok: true as const,
        stats: await flowStats(deps.db, workspaceOf(request), params.id, deps.clock.now()),
      }),
      {
        params: Id,
        detail: {
          tags: ["Flows"],
          operationId: "getFlowStats",
          summary: "Flow stats",
          description:
            "Seed endpoint 13: runs started in the last 30 days by outcome, and per node (entered at least once in the window) entered, completed, sent, failed, waiting and skipped.",
        },
        response: responses(t.Object({ ok: Ok, stats: Stats }), [...READ_ERRORS, 404]),
      },
    )
    .get(
      "/v1/flows/:id/runs",
      async ({ request, params, query }) => ({
        ok: true as const,
        ...(await listRuns(deps.db, workspaceOf(request), params.id, query, parsePagination(query))),
      }),
      {
        params: Id,
        query: Query({
          ...paginationQuery,
          status: t.Optional(t.String({ description: "active | completed | exited" })),
        }),
        detail: {
          tags: ["Flows"],
          operationId: "listFlowRuns",
          summary: "List a flow's runs",
          description: "Newest first; `status` filters (422 for another value).",
        },
        response: responses(listEnvelope("runs", Run, "Runs, newest first"), [...READ_ERRORS, 404, 422]),
      },
    )
    .post(
      "/v1/flows/:id/simulate",
      async ({ request, params, body }) => ({
        ok: true as const,
        trace: await simulateFlow(deps.db, workspaceOf(request), params.id, body, deps.clock.now()),
      }),
      {
        params: Id,
        body: Body(
          {
            contact_id: t.Optional(t.String({ maxLength: 64, description: "A contact of the workspace" })),
            contact: t.Optional(
              t.Object(
                {
                  phone_number: t.Optional(
                    t.String({ maxLength: 64, description: "Their number (decides local time)" }),
                  ),
                  first_name: t.Optional(
                    t.Union([t.String({ maxLength: 200 }), t.Null()], { description: "First name" }),
                  ),
                  last_name: t.Optional(
                    t.Union([t.String({ maxLength: 200 }), t.Null()], { description: "Last name" }),
                  ),
                  email: t.Optional(
                    t.Union([t.String({ maxLength: 320 }), t.Null()], { description: "Email" }),
                  ),
                  timezone: t.Optional(
                    t.Union([t.String({ maxLength: 64 }), t.Null()], { description: "IANA zone" }),
                  ),
                  fields: t.Optional(t.Record(t.String(), t.Unknown(), { description: "Custom fields" })),
                },
                { description: "A made-up contact (one of contact_id or contact)" },
              ),
            ),
            events: t.Optional(
              t.Array(
                t.Object(
                  {
                    after_minutes: t.Number({ description: "When, in virtual minutes from the start" }),
                    type: Enum(SIMULATION_EVENTS, "reply, click or conversion"),
                    body: t.Optional(t.String({ maxLength: 1600, description: "A reply's text" })),
                    event: t.Optional(
                      t.String({ maxLength: 64, description: "A conversion's event (default purchase)" }),
                    ),
                  },
                  { description: "A scripted event" },
                ),
                { maxItems: 100, description: "Scripted replies, clicks and conversions" },
              ),
            ),
            max_days: t.Optional(
              t.Number({ description: "How far to run the virtual clock (1–365, default 30)" }),
            ),
          },
          { description: "Who to simulate, and what happens" },
        ),
        detail: {
          tags: ["Flows"],
          operationId: "simulateFlow",
          summary: "Simulate a flow",
          description:
            "Runs the flow's real node logic for one contact on a virtual clock (the send-time rules included: a send at night shows as deferred), with scripted replies, clicks and conversions, and returns the trace. Works on draft flows. Nothing is written or sent: it all happens in a transaction that is rolled back.",
        },
        response: responses(
          t.Object({ ok: Ok, trace: t.Array(TraceLine, { description: "What happened, in order" }) }),
          [...WRITE_ERRORS, 404],
        ),
      },
    );
}
