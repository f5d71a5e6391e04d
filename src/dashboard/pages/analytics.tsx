/**
 * Analytics: the overview's figures and a uPlot chart of messages sent and delivered per day over
 * the last two weeks (this chunk loads on its page only).
 */
import { useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import { get, type Json } from "../api";

const DAY = 86_400_000;

export default function AnalyticsPage() {
  const [overview, setOverview] = useState<Json>(null);
  const chart = useRef<HTMLDivElement | null>(null);
  useEffect(() => {
    const to = new Date(Math.ceil(Date.now() / DAY) * DAY).toISOString();
    const from = new Date(Date.parse(to) - 14 * DAY).toISOString();
    void get(`/v1/analytics/overview?from=${from}&to=${to}`).then((a) => setOverview(a.overview));
    let plot: uPlot | null = null;
    void Promise.all(
      ["sent", "delivered", "replies"].map((metric) =>
        get(`/v1/analytics/timeseries?metric=${metric}&interval=day&from=${from}&to=${to}`).then(
          (a) => a.series,
        ),
      ),
    ).then(([sent, delivered, replies]) => {
      if (!chart.current) return;
      const xs = sent.map((row: Json) => Date.parse(row.t) / 1000);
      const values = (series: Json[]) => xs.map((_: number, i: number) => series[i]?.value ?? 0);
      plot = new uPlot(
        {
          width: Math.min(900, chart.current.clientWidth || 900),
          height: 300,
          series: [
            {},
            { label: "sent", stroke: "#2454d6" },
            { label: "delivered", stroke: "#1a8f4c" },
            { label: "replies", stroke: "#b4540a" },
          ],
        },
        [xs, values(sent), values(delivered), values(replies)],
        chart.current,
      );
    });
    return () => plot?.destroy();
  }, []);
  return (
    <div className="page">
      <h1>Analytics</h1>
      {overview && (
        <dl className="stats" aria-label="Overview">
          {Object.entries(overview)
            .filter(([, v]) => typeof v === "number")
            .map(([k, v]) => (
              <div key={k}>
                <dt>{k.replaceAll("_", " ")}</dt>
                <dd>{k === "delivery_rate" ? `${Math.round((v as number) * 100)} %` : String(v)}</dd>
              </div>
            ))}
        </dl>
      )}
      <section className="card" aria-label="Messages per day">
        <h2>Messages per day</h2>
        <div ref={chart} />
      </section>
    </div>
  );
}
