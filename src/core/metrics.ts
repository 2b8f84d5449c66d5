/** In-process Prometheus metrics: request counts, a latency histogram, job runs. */
const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Hist {
  counts: number[];
  sum: number;
  count: number;
}

const labelStr = (labels: Record<string, string>) =>
  Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`).join(",");

export class Metrics {
  private requests = new Map<string, number>();
  private latency = new Map<string, Hist>();
  private jobs = new Map<string, number>();

  // Label strings per (method, route, status): built once, not escaped on every request.
  private labels = new Map<string, { key: string; hkey: string }>();

  observeRequest(method: string, route: string, status: number, seconds: number) {
    const id = `${method} ${status} ${route}`;
    let l = this.labels.get(id);
    if (!l) this.labels.set(id, (l = { key: labelStr({ method, route, status: String(status) }), hkey: labelStr({ method, route }) }));
    const { key, hkey } = l;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    let h = this.latency.get(hkey);
    if (!h) this.latency.set(hkey, (h = { counts: BUCKETS.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]) h.counts[i]++;
    h.sum += seconds;
    h.count++;
  }

  observeJob(name: string, outcome: "ok" | "error") {
    const key = labelStr({ job: name, outcome });
    this.jobs.set(key, (this.jobs.get(key) ?? 0) + 1);
  }

  render(): string {
    const out: string[] = [];
    out.push("# HELP bunker_http_requests_total HTTP requests by route and status.", "# TYPE bunker_http_requests_total counter");
    for (const [k, v] of this.requests) out.push(`bunker_http_requests_total{${k}} ${v}`);
    out.push("# HELP bunker_http_request_duration_seconds Request latency.", "# TYPE bunker_http_request_duration_seconds histogram");
    for (const [k, h] of this.latency) {
      BUCKETS.forEach((b, i) => out.push(`bunker_http_request_duration_seconds_bucket{${k},le="${b}"} ${h.counts[i]}`));
      out.push(`bunker_http_request_duration_seconds_bucket{${k},le="+Inf"} ${h.count}`);
      out.push(`bunker_http_request_duration_seconds_sum{${k}} ${h.sum}`);
      out.push(`bunker_http_request_duration_seconds_count{${k}} ${h.count}`);
    }
    out.push("# HELP bunker_job_runs_total Scheduled job runs by outcome.", "# TYPE bunker_job_runs_total counter");
    for (const [k, v] of this.jobs) out.push(`bunker_job_runs_total{${k}} ${v}`);
    return out.join("\n") + "\n";
  }
}
