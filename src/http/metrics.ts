/**
 * Prometheus metrics kept in memory: requests by route and status, a latency histogram, and the
 * job queue depth read at scrape time.
 */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface RouteStats {
  /** Requests by status. */
  statuses: Map<number, number>;
  /** Histogram: requests per bucket (not cumulative; render sums them). */
  counts: number[];
  sum: number;
  count: number;
}

/**
 * Series (method + route) kept at most. Routes are labels with ids replaced by `:id`, but a path
 * that matches a route without being one of its ids (a 422 on `/v1/contacts/anything`) is its own
 * label: past this many, further labels are counted under route `other`.
 */
export const MAX_ROUTE_SERIES = 1000;

export class HttpMetrics {
  /** method → route → stats; nested so that recording a request builds no key string. */
  private readonly byMethod = new Map<string, Map<string, RouteStats>>();
  private series = 0;

  record(method: string, route: string, status: number, seconds: number) {
    let routes = this.byMethod.get(method);
    if (!routes) {
      routes = new Map();
      this.byMethod.set(method, routes);
    }
    let stats = routes.get(route);
    if (!stats) {
      if (this.series >= MAX_ROUTE_SERIES && route !== "other") {
        this.record(method, "other", status, seconds);
        return;
      }
      stats = { statuses: new Map(), counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
      routes.set(route, stats);
      this.series++;
    }
    stats.statuses.set(status, (stats.statuses.get(status) ?? 0) + 1);
    // Counted in the first bucket it fits (render adds them up, as Prometheus buckets are cumulative).
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]) i++;
    if (i < BUCKETS.length) stats.counts[i]++;
    stats.sum += seconds;
    stats.count++;
  }

  render(gauges: { name: string; help: string; values: Record<string, number>; label: string }[]): string {
    const lines: string[] = [
      "# HELP outreach_http_requests_total HTTP requests by route and status.",
      "# TYPE outreach_http_requests_total counter",
    ];
    for (const [method, routes] of this.byMethod) {
      for (const [route, stats] of routes) {
        for (const [status, n] of stats.statuses) {
          lines.push(
            `outreach_http_requests_total{method="${method}",route="${esc(route)}",status="${status}"} ${n}`,
          );
        }
      }
    }
    lines.push(
      "# HELP outreach_http_request_duration_seconds Request latency.",
      "# TYPE outreach_http_request_duration_seconds histogram",
    );
    for (const [method, routes] of this.byMethod) {
      for (const [route, h] of routes) {
        const labels = `method="${method}",route="${esc(route)}"`;
        let cumulative = 0;
        BUCKETS.forEach((le, i) => {
          cumulative += h.counts[i];
          lines.push(`outreach_http_request_duration_seconds_bucket{${labels},le="${le}"} ${cumulative}`);
        });
        lines.push(`outreach_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${h.count}`);
        lines.push(`outreach_http_request_duration_seconds_sum{${labels}} ${h.sum}`);
        lines.push(`outreach_http_request_duration_seconds_count{${labels}} ${h.count}`);
      }
    }
    for (const gauge of gauges) {
      lines.push(`# HELP ${gauge.name} ${gauge.help}`, `# TYPE ${gauge.name} gauge`);
      for (const [label, value] of Object.entries(gauge.values)) {
        lines.push(`${gauge.name}{${gauge.label}="${esc(label)}"} ${value}`);
      }
    }
    return `${lines.join("\n")}\n`;
  }
}

function esc(value: string) {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"');
}
