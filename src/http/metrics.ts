/**
 * Prometheus metrics kept in memory: requests by route and status, a latency histogram, and the
 * job queue depth read at scrape time.
 */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class HttpMetrics {
  private readonly requests = new Map<string, number>();
  private readonly histogram = new Map<string, { counts: number[]; sum: number; count: number }>();

  record(method: string, route: string, status: number, seconds: number) {
    const key = `${method} ${route} ${status}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    const hkey = `${method} ${route}`;
    let h = this.histogram.get(hkey);
    if (!h) {
      h = { counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.histogram.set(hkey, h);
    }
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]) h.counts[i]++;
    h.sum += seconds;
    h.count++;
  }

  render(gauges: { name: string; help: string; values: Record<string, number>; label: string }[]): string {
    const lines: string[] = [
      "# HELP outreach_http_requests_total HTTP requests by route and status.",
      "# TYPE outreach_http_requests_total counter",
    ];
    for (const [key, n] of this.requests) {
      const [method, route, status] = key.split(" ");
      lines.push(
        `outreach_http_requests_total{method="${method}",route="${esc(route)}",status="${status}"} ${n}`,
      );
    }
    lines.push(
      "# HELP outreach_http_request_duration_seconds Request latency.",
      "# TYPE outreach_http_request_duration_seconds histogram",
    );
    for (const [key, h] of this.histogram) {
      const [method, route] = key.split(" ");
      const labels = `method="${method}",route="${esc(route)}"`;
      BUCKETS.forEach((le, i) => {
        lines.push(`outreach_http_request_duration_seconds_bucket{${labels},le="${le}"} ${h.counts[i]}`);
      });
      lines.push(`outreach_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${h.count}`);
      lines.push(`outreach_http_request_duration_seconds_sum{${labels}} ${h.sum}`);
      lines.push(`outreach_http_request_duration_seconds_count{${labels}} ${h.count}`);
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
