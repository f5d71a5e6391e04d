import { and, eq, gte, inArray, isNotNull, lt, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Db, DbOrTx } from "../../db/client";
import { byteOrder, nullsLast } from "../../db/dialect";
import { preparedPerConnection } from "../../db/prepared";
import {
  agents,
  agentThreads,
  campaigns,
  clicks,
  conversions,
  messageDailyCounts,
  messages,
  numbers,
  suppressions,
} from "../../db/schema";
import { invalid } from "../../lib/errors";
import { parseIsoDate, toIso } from "../../lib/time";
import { callTotals } from "../calls/calls";
import { campaignStats } from "../campaigns/stats";
import { MESSAGE_STATUSES } from "../messaging/message-json";
import { getSettings } from "../workspace/settings";
import { roundMoney } from "./campaign-figures";

/**
 * Analytics (API.md §3 Analytics, §5, §6.5). Every figure is counted over a window [from, to) of
 * the record's creation time, from indexes that start with (workspace_id, created_at)
 * (messages_workspace_analytics_idx covers every message column read), and messages of whole UTC
 * days from message_daily_counts. Buckets are UTC.
 */
const DAY_MS = 86_400_000;
export const DEFAULT_WINDOW_MS = 30 * DAY_MS;
export const METRICS = [
  "sent",
  "delivered",
  "replies",
  "opt_outs",
  "clicks",
  "conversions",
  "revenue",
] as const;
export const INTERVALS = ["hour", "day"] as const;
export type Metric = (typeof METRICS)[number];
export type Interval = (typeof INTERVALS)[number];
/** The most buckets one timeseries answers (hourly over about 83 days). */
export const MAX_POINTS = 2000;

const SENT = ["SENT", "DELIVERED", "UNDELIVERED"];
const FAILED = ["FAILED", "UNDELIVERED"];

export interface Window {
  from: number;
  to: number;
}

function parseDate(value: string | undefined, field: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const ms = parseIsoDate(value);
  if (!Number.isFinite(ms)) throw invalid(`${field} must be a date (ISO 8601)`);
  return ms;
}

/**
 * `from`/`to` (ISO 8601): `to` defaults to now and `from` to 30 days before `to`; 422 naming the
 * field when they do not hold, and when `from` is after `to` (a `from` in the future without `to`).
 */
export function parseWindow(query: { from?: string; to?: string }, now: number): Window {
  const from = parseDate(query.from, "from");
  const to = parseDate(query.to, "to");
  const end = to ?? now;
  const start = from ?? end - DEFAULT_WINDOW_MS;
  if (start > end) throw invalid("from must not be after to");
  return { from: start, to: end };
}

const inWindow = (column: SQLiteColumn, window: Window) =>
  and(gte(column, window.from), lt(column, window.to)) as SQL;

/**
 * Messages by status are counted one status at a time, each a range of
 * messages_workspace_status_idx (workspace_id, status, created_at): SQLite counts a range without
 * reading the rows, about ten times faster than a GROUP BY over the window, which sorts every row
 * into a temporary b-tree. RECEIVED is the status of inbound messages and of nothing else
 * (src/domain/messaging/inbound.ts), so the status names the direction too.
 */
const countByStatus = preparedPerConnection((db: DbOrTx) =>
  db
    .select({ n: sql<number>`count(*)`.mapWith(Number) })
    .from(messages)
    .where(
      and(
        eq(messages.workspaceId, sql.placeholder("ws")),
        eq(messages.status, sql.placeholder("status")),
        gte(messages.createdAt, sql.placeholder("from")),
        lt(messages.createdAt, sql.placeholder("to")),
      ),
    )
    .prepare(),
);

/** Messages of whole UTC days [fromDay, toDay) with one status, from the daily counts. */
const countByStatusDaily = preparedPerConnection((db: DbOrTx) =>
  db
    .select({ n: sql<number>`coalesce(sum(${messageDailyCounts.n}), 0)`.mapWith(Number) })
    .from(messageDailyCounts)
    .where(
      and(
        eq(messageDailyCounts.workspaceId, sql.placeholder("ws")),
        eq(messageDailyCounts.status, sql.placeholder("status")),
        gte(messageDailyCounts.day, sql.placeholder("fromDay")),
        lt(messageDailyCounts.day, sql.placeholder("toDay")),
      ),
    )
    .prepare(),
);

/**
 * Messages created in [from, to) with any of `statuses`: the window's whole UTC days from
 * message_daily_counts (kept by triggers), its partial first and last days as index ranges.
 */
async function countMessages(
  db: DbOrTx,
  workspaceId: string,
  statuses: readonly string[],
  from: number,
  to: number,
) {
  const fromDay = Math.ceil(from / DAY_MS);
  const toDay = Math.floor(to / DAY_MS);
  const range = async (status: string, a: number, b: number) =>
    a < b ? ((await countByStatus(db).get({ ws: workspaceId, status, from: a, to: b }))?.n ?? 0) : 0;
  let n = 0;
  for (const status of statuses) {
    if (fromDay >= toDay) {
      n += await range(status, from, to);
      continue;
    }
    n += (await countByStatusDaily(db).get({ ws: workspaceId, status, fromDay, toDay }))?.n ?? 0;
    n += (await range(status, from, fromDay * DAY_MS)) + (await range(status, toDay * DAY_MS, to));
  }
  return n;
}

async function messageCounts(db: DbOrTx, workspaceId: string, window: Window) {
  const counted = new Map<string, number>();
  for (const status of MESSAGE_STATUSES)
    counted.set(status, await countMessages(db, workspaceId, [status], window.from, window.to));
  const total = (statuses: readonly string[]) => statuses.reduce((n, s) => n + (counted.get(s) ?? 0), 0);
  return {
    sent: total(SENT),
    delivered: total(["DELIVERED"]),
    failed: total(FAILED),
    inbound: total(["RECEIVED"]),
  };
}

async function optOuts(db: DbOrTx, workspaceId: string, window: Window): Promise<number> {
  return (
    (
      await db
        .select({ n: sql<number>`count(*)`.mapWith(Number) })
        .from(suppressions)
        .where(
          and(
            eq(suppressions.workspaceId, workspaceId),
            inWindow(suppressions.createdAt, window),
            eq(suppressions.reason, "opt_out"),
          ),
        )
        .get()
    )?.n ?? 0
  );
}

async function clickCount(db: DbOrTx, workspaceId: string, window: Window): Promise<number> {
  return (
    (
      await db
        .select({ n: sql<number>`count(*)`.mapWith(Number) })
        .from(clicks)
        .where(and(eq(clicks.workspaceId, workspaceId), inWindow(clicks.createdAt, window)))
        .get()
    )?.n ?? 0
  );
}

async function conversionTotals(db: DbOrTx, workspaceId: string, window: Window) {
  const row = await db
    .select({
      n: sql<number>`count(*)`.mapWith(Number),
      revenue: sql<number>`coalesce(sum(${conversions.value}), 0)`.mapWith(Number),
    })
    .from(conversions)
    .where(and(eq(conversions.workspaceId, workspaceId), inWindow(conversions.createdAt, window)))
    .get();
  return { conversions: row?.n ?? 0, revenue: roundMoney(row?.revenue ?? 0) };
}

/** `GET /v1/analytics/overview`. */
export async function analyticsOverview(db: DbOrTx, workspaceId: string, window: Window) {
  const counted = await messageCounts(db, workspaceId, window);
  const { conversions: converted, revenue } = await conversionTotals(db, workspaceId, window);
  return {
    from: toIso(window.from) as string,
    to: toIso(window.to) as string,
    messages: counted,
    replies: counted.inbound,
    opt_outs: await optOuts(db, workspaceId, window),
    clicks: await clickCount(db, workspaceId, window),
    conversions: converted,
    revenue,
    calls: await callTotals(db, workspaceId, window.from, window.to),
  };
}

/** Rows of a workspace's `table` created in [from, to): their count and the sum of `value`. */
const countInRange = (table: typeof clicks | typeof conversions, value: SQL) =>
  preparedPerConnection((db: DbOrTx) =>
    db
      .select({ n: sql<number>`count(*)`.mapWith(Number), revenue: sql<number>`${value}`.mapWith(Number) })
      .from(table)
      .where(
        and(
          eq(table.workspaceId, sql.placeholder("ws")),
          gte(table.createdAt, sql.placeholder("from")),
          lt(table.createdAt, sql.placeholder("to")),
        ),
      )
      .prepare(),
  );

const clicksInRange = countInRange(clicks, sql`0`);
const conversionsInRange = countInRange(conversions, sql`coalesce(sum(${conversions.value}), 0)`);

/** `GET /v1/analytics/timeseries`: one `{t, value}` per bucket of the window, zeros included. */
export async function analyticsTimeseries(
  db: DbOrTx,
  workspaceId: string,
  query: { metric?: string; interval?: string },
  window: Window,
): Promise<{ t: string; value: number }[]> {
  const metric = query.metric;
  if (metric === undefined || metric === "") throw invalid("metric is required");
  if (!(METRICS as readonly string[]).includes(metric))
    throw invalid(`metric must be one of ${METRICS.join(", ")}`);
  const interval = query.interval === undefined || query.interval === "" ? "day" : query.interval;
  if (!(INTERVALS as readonly string[]).includes(interval))
    throw invalid(`interval must be one of ${INTERVALS.join(", ")}`);
  const size = interval === "hour" ? 3_600_000 : DAY_MS;
  const first = Math.floor(window.from / size) * size;
  // Every bucket the window [from, to) touches; an empty window (from = to) touches none.
  const points = window.to > window.from ? Math.ceil((window.to - first) / size) : 0;
  if (points > MAX_POINTS)
    throw invalid(`from and to span ${points} ${interval}s; at most ${MAX_POINTS} points per series`);

  // The size is written into the SQL (one of two constants): PostgreSQL matches the grouped
  // expression to the selected one only when they are the same text, and two bound sizes are not.
  const width = sql.raw(String(size));
  const bucketOf = (column: SQLiteColumn) => sql<number>`(${column} / ${width}) * ${width}`.mapWith(Number);
  let rows: { bucket: number; value: number }[];
  if (metric === "sent" || metric === "delivered" || metric === "replies") {
    // One range count per bucket and status (see countByStatus): no sort of the window's rows.
    const statuses = metric === "replies" ? ["RECEIVED"] : metric === "sent" ? SENT : ["DELIVERED"];
    rows = [];
    for (let i = 0; i < points; i++) {
      const start = first + i * size;
      const from = Math.max(start, window.from);
      const to = Math.min(start + size, window.to);
      if (from < to)
        rows.push({ bucket: start, value: await countMessages(db, workspaceId, statuses, from, to) });
    }
  } else if (metric === "opt_outs") {
    const bucket = bucketOf(suppressions.createdAt);
    rows = await db
      .select({ bucket, value: sql<number>`count(*)`.mapWith(Number) })
      .from(suppressions)
      .where(
        and(
          eq(suppressions.workspaceId, workspaceId),
          inWindow(suppressions.createdAt, window),
          eq(suppressions.reason, "opt_out"),
        ),
      )
      .groupBy(bucket)
      .all();
  } else {
    // Clicks and conversions: one range count (or sum) per bucket from the covering
    // (workspace_id, created_at[, value]) index, as for messages.
    const statement = metric === "clicks" ? clicksInRange(db) : conversionsInRange(db);
    rows = [];
    for (let i = 0; i < points; i++) {
      const start = first + i * size;
      const from = Math.max(start, window.from);
      const to = Math.min(start + size, window.to);
      if (from >= to) continue;
      const row = await statement.get({ ws: workspaceId, from, to });
      rows.push({ bucket: start, value: (metric === "revenue" ? row?.revenue : row?.n) ?? 0 });
    }
  }
  const byBucket = new Map(rows.map((row) => [Number(row.bucket), Number(row.value)]));
  const series: { t: string; value: number }[] = [];
  for (let i = 0; i < points; i++) {
    const t = first + i * size;
    series.push({ t: toIso(t) as string, value: roundMoney(byBucket.get(t) ?? 0) });
  }
  return series;
}

/**
 * `GET /v1/analytics/campaigns`: campaigns launched in the window, with their stats, cost
 * (segments sent × `settings.costs.sms_segment`) and ROI ((revenue − cost) / cost, null at cost 0).
 */
export async function analyticsCampaigns(db: Db, workspaceId: string, window: Window) {
  const costs = (await getSettings(db, workspaceId)).costs;
  const rows = await db
    .select()
    .from(campaigns)
    .where(
      and(
        eq(campaigns.workspaceId, workspaceId),
        isNotNull(campaigns.launchedAt),
        gte(campaigns.launchedAt, window.from),
        lt(campaigns.launchedAt, window.to),
      ),
    )
    .orderBy(nullsLast(sql`${campaigns.launchedAt} DESC`))
    .limit(1000)
    .all();
  // One campaign at a time: the reads of a page share the connection (or the pool) in order.
  const answers = [];
  for (const row of rows) answers.push(await campaignAnalytics(row));
  return answers;

  async function campaignAnalytics(row: (typeof rows)[number]) {
    const stats = await campaignStats(db, row);
    const segmentsSent =
      (
        await db
          .select({ n: sql<number>`coalesce(sum(${messages.segments}), 0)`.mapWith(Number) })
          .from(messages)
          .where(
            and(
              eq(messages.workspaceId, workspaceId),
              eq(messages.campaignId, row.id),
              inArray(messages.status, SENT),
            ),
          )
          .get()
      )?.n ?? 0;
    const cost = roundMoney(segmentsSent * costs.sms_segment);
    return {
      campaign_id: row.id,
      name: row.name,
      recipients: stats.recipients,
      sent: stats.sent,
      delivered: stats.delivered,
      replied: stats.replied,
      opted_out: stats.opted_out,
      clicked: stats.clicked,
      conversions: stats.conversions,
      revenue: stats.revenue,
      cost,
      roi: cost === 0 ? null : roundMoney((stats.revenue - cost) / cost),
    };
  }
}

const STOP_WORDS = ["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "OPTOUT", "REVOKE"];

/** `GET /v1/analytics/numbers`: per sending number, delivery rate (0–1) and replies in the window. */
export async function analyticsNumbers(db: DbOrTx, workspaceId: string, window: Window) {
  const counts = await db
    .select({
      numberId: messages.numberId,
      direction: messages.direction,
      status: messages.status,
      n: sql<number>`count(*)`.mapWith(Number),
    })
    .from(messages)
    .where(
      and(
        eq(messages.workspaceId, workspaceId),
        inWindow(messages.createdAt, window),
        isNotNull(messages.numberId),
      ),
    )
    .groupBy(messages.numberId, messages.direction, messages.status)
    .all();
  const stops = await db
    .select({ numberId: messages.numberId, n: sql<number>`count(*)`.mapWith(Number) })
    .from(messages)
    .where(
      and(
        eq(messages.workspaceId, workspaceId),
        inWindow(messages.createdAt, window),
        eq(messages.direction, "inbound"),
        // ASCII letters upper-cased on both databases (SQLite's upper; PostgreSQL's under "C").
        sql`upper(trim(${byteOrder(messages.body)})) IN (${sql.join(
          STOP_WORDS.map((w) => sql`${w}`),
          sql`, `,
        )})`,
      ),
    )
    .groupBy(messages.numberId)
    .all();
  const owned = await db
    .select({ id: numbers.id, number: numbers.number })
    .from(numbers)
    .where(eq(numbers.workspaceId, workspaceId))
    .all();
  const rows = new Map(
    owned.map((n) => [
      n.id,
      {
        number_id: n.id,
        number: n.number,
        sent: 0,
        delivered: 0,
        failed: 0,
        delivery_rate: 0,
        replies: 0,
        opt_outs: 0,
      },
    ]),
  );
  for (const c of counts) {
    const row = rows.get(c.numberId as string);
    if (!row) continue;
    if (c.direction === "inbound") row.replies += c.n;
    else {
      if (SENT.includes(c.status)) row.sent += c.n;
      if (c.status === "DELIVERED") row.delivered += c.n;
      if (FAILED.includes(c.status)) row.failed += c.n;
    }
  }
  for (const s of stops) {
    const row = rows.get(s.numberId as string);
    if (row) row.opt_outs = s.n;
  }
  for (const row of rows.values())
    row.delivery_rate = row.sent === 0 ? 0 : roundMoney(row.delivered / row.sent);
  return [...rows.values()].sort((a, b) => b.sent - a.sent || a.number.localeCompare(b.number));
}

/**
 * `GET /v1/analytics/agents`: per agent of the workspace, over the window — the threads it took
 * (`conversations`), the replies it sent on them, its handoffs, and the conversions attributed to
 * it with their revenue.
 */
export async function analyticsAgents(db: DbOrTx, workspaceId: string, window: Window) {
  const rows = new Map(
    (
      await db
        .select({ id: agents.id, name: agents.name })
        .from(agents)
        .where(eq(agents.workspaceId, workspaceId))
        .all()
    ).map((a) => [
      a.id,
      {
        agent_id: a.id,
        name: a.name,
        conversations: 0,
        replies: 0,
        handoffs: 0,
        conversions: 0,
        revenue: 0,
      },
    ]),
  );
  const threads = await db
    .select({
      agentId: agentThreads.agentId,
      n: sql<number>`count(*)`.mapWith(Number),
      handoffs:
        sql<number>`sum(CASE WHEN ${agentThreads.handedOffAt} >= ${window.from} AND ${agentThreads.handedOffAt} < ${window.to} THEN 1 ELSE 0 END)`.mapWith(
          Number,
        ),
    })
    .from(agentThreads)
    .where(and(eq(agentThreads.workspaceId, workspaceId), inWindow(agentThreads.createdAt, window)))
    .groupBy(agentThreads.agentId)
    .all();
  for (const t of threads) {
    const row = rows.get(t.agentId);
    if (row) {
      row.conversations = t.n;
      row.handoffs = t.handoffs ?? 0;
    }
  }
  const replies = await db
    .select({ agentId: agentThreads.agentId, n: sql<number>`count(*)`.mapWith(Number) })
    .from(messages)
    .innerJoin(agentThreads, eq(agentThreads.conversationId, messages.conversationId))
    .where(
      and(
        eq(messages.workspaceId, workspaceId),
        inWindow(messages.createdAt, window),
        eq(messages.sender, "agent"),
      ),
    )
    .groupBy(agentThreads.agentId)
    .all();
  for (const r of replies) {
    const row = rows.get(r.agentId);
    if (row) row.replies = r.n;
  }
  const converted = await db
    .select({
      agentId: conversions.agentId,
      n: sql<number>`count(*)`.mapWith(Number),
      revenue: sql<number>`coalesce(sum(${conversions.value}), 0)`.mapWith(Number),
    })
    .from(conversions)
    .where(
      and(
        eq(conversions.workspaceId, workspaceId),
        inWindow(conversions.createdAt, window),
        isNotNull(conversions.agentId),
      ),
    )
    .groupBy(conversions.agentId)
    .all();
  for (const c of converted) {
    const row = c.agentId ? rows.get(c.agentId) : undefined;
    if (row) {
      row.conversions = c.n;
      row.revenue = roundMoney(c.revenue);
    }
  }
  return [...rows.values()];
}
