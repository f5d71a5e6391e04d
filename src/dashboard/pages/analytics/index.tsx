/**
 * Analytics over a date range: the overview's figures, a uPlot chart of messages sent, delivered
 * and replies per day, and tables per campaign (cost, revenue, ROI in the workspace currency), per
 * number and per agent (this chunk loads on its page only).
 */
import { useEffect, useState } from "react";
import { Link } from "wouter";
import { type Answer, ApiError, call, client } from "../../api";
import { DailyChart } from "./DailyChart";
import { ReportTable } from "./ReportTable";

type Overview = Answer<"/v1/analytics/overview">["overview"];
type CampaignFigures = Answer<"/v1/analytics/campaigns">["campaigns"][number];
type NumberFigures = Answer<"/v1/analytics/numbers">["numbers"][number];
type AgentFigures = Answer<"/v1/analytics/agents">["agents"][number];

const DAY = 86_400_000;

/** `YYYY-MM-DD` of a time, local. */
function day(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

export default function AnalyticsPage() {
  const [from, setFrom] = useState(() => day(Date.now() - 13 * DAY));
  const [to, setTo] = useState(() => day(Date.now()));
  const [overview, setOverview] = useState<Overview | null>(null);
  const [campaigns, setCampaigns] = useState<CampaignFigures[] | null>(null);
  const [numbers, setNumbers] = useState<NumberFigures[] | null>(null);
  const [agents, setAgents] = useState<AgentFigures[] | null>(null);
  const [range, setRange] = useState<{ from: string; to: string } | null>(null);
  const [currency, setCurrency] = useState("USD");
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    call(client.GET("/v1/settings")).then(
      (a) => setCurrency(a.settings.costs.currency ?? "USD"),
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
    const query = { from: new Date(start).toISOString(), to: new Date(end).toISOString() };
    setRange(query);
    const fail = (e: unknown) => setError(e instanceof ApiError ? e.message : "Could not load the figures");
    const params = { params: { query } };
    call(client.GET("/v1/analytics/overview", params)).then((a) => setOverview(a.overview), fail);
    call(client.GET("/v1/analytics/campaigns", params)).then((a) => setCampaigns(a.campaigns), fail);
    call(client.GET("/v1/analytics/numbers", params)).then((a) => setNumbers(a.numbers), fail);
    call(client.GET("/v1/analytics/agents", params)).then((a) => setAgents(a.agents), fail);
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
        {range && <DailyChart from={range.from} to={range.to} onError={setError} />}
      </section>
      <section className="card" aria-label="Campaigns">
        <h2>Campaigns</h2>
        <ReportTable
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
        <ReportTable
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
        <ReportTable
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
