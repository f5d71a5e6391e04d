/**
 * Analytics over a date range: the overview's figures, a uPlot chart of messages sent, delivered
 * and replies per day, and tables per campaign (cost, revenue, ROI in the workspace currency), per
 * number and per agent (this chunk loads on its page only).
 */
import { useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import { Link } from "wouter";
import { ApiError, get, type Json } from "../api";

const DAY = 86_400_000;

/** `YYYY-MM-DD` of a time, local. */
function day(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

export default function AnalyticsPage() {
  const [from, setFrom] = useState(() => day(Date.now() - 13 * DAY));
  const [to, setTo] = useState(() => day(Date.now()));
  const [overview, setOverview] = useState<Json>(null);
  const [campaigns, setCampaigns] = useState<Json[] | null>(null);
  const [numbers, setNumbers] = useState<Json[] | null>(null);
  const [agents, setAgents] = useState<Json[] | null>(null);
  const [currency, setCurrency] = useState("USD");
  const [error, setError] = useState<string | null>(null);
  const chart = useRef<HTMLDivElement | null>(null);

  useEffect(() => {
    get("/v1/settings").then(
      (a) => setCurrency(a.settings?.costs?.currency ?? "USD"),
      () => undefined,
    );
  }, []);
  useEffect(() => {
    // The range's days in local time: from the start of `from` to the end of `to`.
    const start = new Date(`${from}T00:00:00`).getTime();
    const end = new Date(`${to}T00:00:00`).getTime() + DAY;
    if (!(end > start)) {
      setError("The range must end after it starts.");
      return;
    }
    setError(null);
    const window = `from=${new Date(start).toISOString()}&to=${new Date(end).toISOString()}`;
    const fail = (e: unknown) => setError(e instanceof ApiError ? e.message : "Could not load the figures");
    get(`/v1/analytics/overview?${window}`).then((a) => setOverview(a.overview), fail);
    get(`/v1/analytics/campaigns?${window}`).then((a) => setCampaigns(a.campaigns), fail);
    get(`/v1/analytics/numbers?${window}`).then((a) => setNumbers(a.numbers), fail);
    get(`/v1/analytics/agents?${window}`).then((a) => setAgents(a.agents), fail);
    let plot: uPlot | null = null;
    let live = true;
    Promise.all(
      ["sent", "delivered", "replies"].map((metric) =>
        get(`/v1/analytics/timeseries?metric=${metric}&interval=day&${window}`).then((a) => a.series),
      ),
    ).then(([sent, delivered, replies]) => {
      if (!live || !chart.current) return;
      chart.current.replaceChildren();
      const xs = sent.map((row: Json) => Date.parse(row.t) / 1000);
      const values = (series: Json[]) => xs.map((_: number, i: number) => series[i]?.value ?? 0);
      plot = new uPlot(
        {
          width: Math.min(1000, chart.current.clientWidth || 900),
          height: 280,
          series: [
            {},
            { label: "Sent", stroke: "#2454d6" },
            { label: "Delivered", stroke: "#1a8f4c" },
            { label: "Replies", stroke: "#b4540a" },
          ],
        },
        [xs, values(sent), values(delivered), values(replies)],
        chart.current,
      );
    }, fail);
    return () => {
      live = false;
      plot?.destroy();
    };
  }, [from, to]);

  const money = (v: number | null | undefined) =>
    v === null || v === undefined
      ? "—"
      : new Intl.NumberFormat(undefined, { style: "currency", currency }).format(v);
  const preset = (days: number) => {
    setFrom(day(Date.now() - (days - 1) * DAY));
    setTo(day(Date.now()));
  };
  const m = overview?.messages;
  return (
    <div className="page">
      <h1>Analytics</h1>
      <fieldset className="row range">
        <legend className="range-legend">Date range</legend>
        <label>
          From
          <input type="date" value={from} onChange={(e) => setFrom(e.target.value)} />
        </label>
        <label>
          To
          <input type="date" value={to} onChange={(e) => setTo(e.target.value)} />
        </label>
        {[7, 30, 90].map((n) => (
          <button key={n} type="button" className="secondary" onClick={() => preset(n)}>
            Last {n} days
          </button>
        ))}
      </fieldset>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {overview ? (
        <dl className="stats" aria-label="Overview">
          {[
            ["Sent", m?.sent],
            ["Delivered", m?.delivered],
            ["Delivery rate", m?.sent ? `${Math.round((m.delivered / m.sent) * 100)} %` : "—"],
            ["Failed", m?.failed],
            ["Replies", overview.replies],
            ["Opt-outs", overview.opt_outs],
            ["Clicks", overview.clicks],
            ["Conversions", overview.conversions],
            ["Revenue", money(overview.revenue)],
            ["Calls placed", overview.calls?.placed],
          ].map(([label, value]) => (
            <div key={String(label)}>
              <dt>{label}</dt>
              <dd>{value ?? 0}</dd>
            </div>
          ))}
        </dl>
      ) : (
        <p className="muted">Loading the figures…</p>
      )}
      <section className="card" aria-label="Messages per day">
        <h2>Messages per day</h2>
        <div ref={chart} />
      </section>
      <section className="card" aria-label="Campaigns">
        <h2>Campaigns</h2>
        <Table
          rows={campaigns}
          empty="No campaign was launched in this range."
          head={[
            "Campaign",
            "Recipients",
            "Delivered",
            "Replied",
            "Clicked",
            "Conversions",
            "Revenue",
            "Cost",
            "ROI",
          ]}
          row={(c) => [
            <Link key="n" href={`/campaigns/${c.campaign_id}`}>
              {c.name}
            </Link>,
            c.recipients,
            c.delivered,
            c.replied,
            c.clicked,
            c.conversions,
            money(c.revenue),
            money(c.cost),
            c.roi === null ? "—" : `${Math.round(c.roi * 100)} %`,
          ]}
        />
      </section>
      <section className="card" aria-label="Numbers">
        <h2>Numbers</h2>
        <Table
          rows={numbers}
          empty="No number sent anything in this range."
          head={["Number", "Sent", "Delivered", "Delivery rate", "Failed", "Replies", "Opt-outs"]}
          row={(n) => [
            n.number,
            n.sent,
            n.delivered,
            `${Math.round(n.delivery_rate * 100)} %`,
            n.failed,
            n.replies,
            n.opt_outs,
          ]}
        />
      </section>
      <section className="card" aria-label="Agents">
        <h2>Agents</h2>
        <Table
          rows={agents}
          empty="No agent took a thread in this range."
          head={["Agent", "Threads", "Replies", "Handoffs", "Conversions", "Revenue"]}
          row={(a) => [
            <Link key="n" href={`/agents/${a.agent_id}`}>
              {a.name}
            </Link>,
            a.conversations,
            a.replies,
            a.handoffs,
            a.conversions,
            money(a.revenue),
          ]}
        />
      </section>
    </div>
  );
}

function Table(props: { rows: Json[] | null; empty: string; head: string[]; row: (r: Json) => unknown[] }) {
  if (props.rows === null) return <p className="muted">Loading…</p>;
  if (props.rows.length === 0) return <p className="muted">{props.empty}</p>;
  return (
    <table>
      <thead>
        <tr>
          {props.head.map((h) => (
            <th key={h}>{h}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((r, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows of a report, shown in order
          <tr key={i}>
            {props.row(r).map((cell, j) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the columns of one row
              <td key={j}>{cell as React.ReactNode}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
