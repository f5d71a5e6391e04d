import { Elysia, t } from "elysia";
import type { AppDeps } from "../app";
import {
  analyticsAgents,
  analyticsCampaigns,
  analyticsNumbers,
  analyticsOverview,
  analyticsTimeseries,
  INTERVALS,
  METRICS,
  parseWindow,
  type Window,
} from "../domain/attribution/analytics";
import { workspaceOf } from "../http/context";
import { Int, Ok, Query, READ_ERRORS, responses, Timestamp } from "../http/schemas";

const WindowQuery = {
  from: t.Optional(
    t.String({
      description: "Window start, ISO 8601 (default: 30 days before `to`)",
      examples: ["2026-11-01T00:00:00Z"],
    }),
  ),
  to: t.Optional(
    t.String({
      description: "Window end, exclusive, ISO 8601 (default: now)",
      examples: ["2026-12-01T00:00:00Z"],
    }),
  ),
};
const Money = (description: string) => t.Number({ description });
const ERRORS = [...READ_ERRORS, 422];
const detail = (operationId: string, summary: string, description: string) => ({
  tags: ["Analytics"],
  operationId,
  summary,
  description,
});

const Overview = t.Object(
  {
    from: Timestamp("Window start (echoed)"),
    to: Timestamp("Window end, exclusive (echoed)"),
    messages: t.Object(
      {
        sent: Int({
          description: "Outbound messages that reached the carrier (SENT, DELIVERED, UNDELIVERED)",
        }),
        delivered: Int({ description: "Outbound messages DELIVERED" }),
        failed: Int({ description: "Outbound messages FAILED or UNDELIVERED" }),
        inbound: Int({ description: "Inbound messages" }),
      },
      { description: "Messages created in the window" },
    ),
    replies: Int({ description: "Inbound messages from contacts" }),
    opt_outs: Int({ description: "Opt-outs (STOP and the like)" }),
    clicks: Int({ description: "Tracked-link clicks" }),
    conversions: Int({ description: "Conversions recorded" }),
    revenue: Money("Sum of conversion values"),
    calls: t.Object(
      {
        placed: Int({ description: "Outbound calls the provider took (refused ones are not placed)" }),
        completed: Int({ description: "Outbound calls answered and ended (status COMPLETED)" }),
      },
      { description: "Outbound calls created in the window" },
    ),
  },
  { description: "Totals over the window" },
);

const CampaignRow = t.Object(
  {
    campaign_id: t.String({ description: "Campaign id" }),
    name: t.String({ description: "Campaign name" }),
    recipients: Int({ description: "Recipients" }),
    sent: Int({ description: "Sent" }),
    delivered: Int({ description: "Delivered" }),
    replied: Int({ description: "Replied within 7 days" }),
    opted_out: Int({ description: "Opted out within 7 days" }),
    clicked: Int({ description: "Recipients who clicked" }),
    conversions: Int({ description: "Attributed conversions" }),
    revenue: Money("Attributed revenue"),
    cost: Money("Segments sent × settings.costs.sms_segment"),
    roi: t.Union([t.Number(), t.Null()], { description: "(revenue − cost) / cost; null when cost is 0" }),
  },
  { description: "One campaign's figures" },
);

const NumberRow = t.Object(
  {
    number_id: t.String({ description: "Number id" }),
    number: t.String({ description: "E.164" }),
    sent: Int({ description: "Sent from it" }),
    delivered: Int({ description: "Delivered" }),
    failed: Int({ description: "Failed or undelivered" }),
    delivery_rate: t.Number({ description: "delivered / sent, a fraction 0–1 (0 when nothing was sent)" }),
    replies: Int({ description: "Inbound messages to it" }),
    opt_outs: Int({ description: "Opt-out keywords received on it" }),
  },
  { description: "One sending number's figures" },
);

const AgentRow = t.Object(
  {
    agent_id: t.String({ description: "Agent id" }),
    name: t.String({ description: "Agent name" }),
    conversations: Int({ description: "Threads the agent took in the window" }),
    replies: Int({ description: "Replies sent" }),
    handoffs: Int({ description: "Handoffs" }),
    conversions: Int({ description: "Attributed conversions" }),
    revenue: Money("Attributed revenue"),
  },
  { description: "One agent's figures" },
);

/** The window an answer covers, echoed (API.md §5): `from` and `to` as ISO 8601. */
const WindowEcho = {
  from: t.String({ description: "Start of the window (inclusive), ISO 8601" }),
  to: t.String({ description: "End of the window (exclusive), ISO 8601" }),
};

// GET /v1/analytics/overview|timeseries|campaigns|numbers|agents – figures over a window.
export function analyticsRoutes(deps: AppDeps) {
  const windowOf = (query: { from?: string; to?: string }) => parseWindow(query, deps.clock.now());
  /** What `answer` makes of the query's window, with the window echoed first (API.md §5). */
  const over = async <T extends object>(
    query: { from?: string; to?: string },
    answer: (window: Window) => Promise<T> | T,
  ) => {
    const window = windowOf(query);
    return {
      from: new Date(window.from).toISOString(),
      to: new Date(window.to).toISOString(),
      ...(await answer(window)),
    };
  };
  return new Elysia({ name: "analytics" })
    .get(
      "/v1/analytics/overview",
      async ({ request, query }) => ({
        ok: true as const,
        overview: await analyticsOverview(deps.db, workspaceOf(request), windowOf(query)),
      }),
      {
        query: Query(WindowQuery),
        detail: detail(
          "getAnalyticsOverview",
          "Totals over a window",
          "Messages, replies, opt-outs, clicks, conversions and revenue created in [from, to); the window defaults to the last 30 days and is echoed. 422 `from must be a date (ISO 8601)`, `from must not be after to`.",
        ),
        response: responses(t.Object({ ok: Ok, overview: Overview }), ERRORS),
      },
    )
    .get(
      "/v1/analytics/timeseries",
      async ({ request, query }) => ({
        ok: true as const,
        metric: query.metric,
        interval: query.interval || "day",
        ...(await over(query, async (window) => ({
          series: await analyticsTimeseries(deps.db, workspaceOf(request), query, window),
        }))),
      }),
      {
        query: Query({
          ...WindowQuery,
          metric: t.String({ description: `One of ${METRICS.join(", ")}`, examples: ["sent"] }),
          interval: t.Optional(
            t.String({
              description: `${INTERVALS.join(" or ")} (default day; UTC buckets)`,
              examples: ["day"],
            }),
          ),
        }),
        detail: detail(
          "getAnalyticsTimeseries",
          "One metric per hour or day",
          `Rows \`{t, value}\` for every UTC bucket of the window, zeros included (at most 2000). 422 \`metric must be one of ${METRICS.join(", ")}\`, \`interval must be one of hour, day\`, and the window's errors.`,
        ),
        response: responses(
          t.Object({
            ok: Ok,
            metric: t.String({ description: "The metric" }),
            interval: t.String({ description: "hour or day" }),
            from: Timestamp("Window start"),
            to: Timestamp("Window end, exclusive"),
            series: t.Array(
              t.Object(
                {
                  t: Timestamp("Bucket start (UTC)"),
                  value: t.Number({ description: "The metric in the bucket" }),
                },
                { description: "One bucket" },
              ),
              { description: "Buckets in time order" },
            ),
          }),
          ERRORS,
        ),
      },
    )
    .get(
      "/v1/analytics/campaigns",
      async ({ request, query }) => ({
        ok: true as const,
        ...(await over(query, async (window) => ({
          campaigns: await analyticsCampaigns(deps.db, workspaceOf(request), window),
        }))),
      }),
      {
        query: Query(WindowQuery),
        detail: detail(
          "getAnalyticsCampaigns",
          "Campaigns with cost and ROI",
          "Campaigns launched in the window (newest first, up to 1000), with cost from `settings.costs` and ROI = (revenue − cost) / cost, null when cost is 0.",
        ),
        response: responses(
          t.Object({
            ok: Ok,
            ...WindowEcho,
            campaigns: t.Array(CampaignRow, { description: "Campaign rows" }),
          }),
          ERRORS,
        ),
      },
    )
    .get(
      "/v1/analytics/numbers",
      async ({ request, query }) => ({
        ok: true as const,
        ...(await over(query, async (window) => ({
          numbers: await analyticsNumbers(deps.db, workspaceOf(request), window),
        }))),
      }),
      {
        query: Query(WindowQuery),
        detail: detail(
          "getAnalyticsNumbers",
          "Delivery rate per sending number",
          "Every number of the workspace with what it sent, delivered and received in the window; `delivery_rate` = delivered / sent.",
        ),
        response: responses(
          t.Object({ ok: Ok, ...WindowEcho, numbers: t.Array(NumberRow, { description: "Number rows" }) }),
          ERRORS,
        ),
      },
    )
    .get(
      "/v1/analytics/agents",
      async ({ request, query }) => ({
        ok: true as const,
        ...(await over(query, async (window) => ({
          agents: await analyticsAgents(deps.db, workspaceOf(request), window),
        }))),
      }),
      {
        query: Query(WindowQuery),
        detail: detail(
          "getAnalyticsAgents",
          "Figures per agent",
          "Every agent of the workspace: threads it took in the window (`conversations`), replies it sent, handoffs, and conversions attributed to it with their revenue.",
        ),
        response: responses(
          t.Object({ ok: Ok, ...WindowEcho, agents: t.Array(AgentRow, { description: "Agent rows" }) }),
          ERRORS,
        ),
      },
    );
}
