import { useEffect, useRef } from "react";
import uPlot from "uplot";
import { ApiError, call, client } from "../../api";

const METRICS = ["sent", "delivered", "replies"] as const;

/** Messages sent, delivered and replies per day over the range, drawn with uPlot. */
export function DailyChart(props: { from: string; to: string; onError: (message: string) => void }) {
  const chart = useRef<HTMLDivElement | null>(null);
  const { from, to, onError } = props;
  useEffect(() => {
    let plot: uPlot | null = null;
    let live = true;
    Promise.all(
      METRICS.map((metric) =>
        call(
          client.GET("/v1/analytics/timeseries", {
            params: { query: { metric, interval: "day", from, to } },
          }),
        ).then((a) => a.series),
      ),
    ).then(
      ([sent = [], delivered = [], replies = []]) => {
        if (!live || !chart.current) return;
        chart.current.replaceChildren();
        const xs = sent.map((row) => Date.parse(row.t) / 1000);
        const values = (series: typeof sent) => xs.map((_, i) => series[i]?.value ?? 0);
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
      },
      (e: unknown) => onError(e instanceof ApiError ? e.message : "Could not load the chart"),
    );
    return () => {
      live = false;
      plot?.destroy();
    };
  }, [from, to, onError]);
  return <div ref={chart} />;
}
