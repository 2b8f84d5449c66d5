/**
 * In-process Prometheus metrics, one registry per app instance.
 *
 * Per-request work is two map updates (label strings are built once per route and status).
 * Everything that needs a file stat or a query (database size, queues, backlogs) is a gauge
 * read at scrape time, never on the request path.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Hist {
  counts: number[];
  sum: number;
  count: number;
}

type Labels = Record<string, string>;
/** A gauge read at scrape time: one value, or one value per label set. */
type GaugeValue = number | [Labels, number][];
type GaugeRead = () => GaugeValue | Promise<GaugeValue>;

const labelStr = (labels: Labels) =>
  Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`).join(",");

const header = (out: string[], name: string, type: "counter" | "gauge" | "histogram" | "summary", help: string) =>
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);

export class Metrics {
  private requests = new Map<string, number>();
  private latency = new Map<string, Hist>();
  private jobs = new Map<string, number>();
  private jobDurations = new Map<string, { sum: number; count: number }>();
  /** Counters of other components (webhook attempts, system mails): name -> labels -> value. */
  private counters = new Map<string, { help: string; values: Map<string, number> }>();
  private gauges = new Map<string, { help: string; read: GaugeRead }>();
  private loop: ReturnType<typeof monitorEventLoopDelay> | null = null;

  /**
   * Requests the HTTP kernel has started and not yet answered. Background work that competes
   * with the API for the event loop (mail delivery) reads it to yield under load.
   */
  requestsInFlight = 0;

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

  observeJob(name: string, outcome: "ok" | "error", seconds: number) {
    const key = labelStr({ job: name, outcome });
    this.jobs.set(key, (this.jobs.get(key) ?? 0) + 1);
    const dkey = labelStr({ job: name });
    const d = this.jobDurations.get(dkey) ?? { sum: 0, count: 0 };
    d.sum += seconds;
    d.count++;
    this.jobDurations.set(dkey, d);
  }

  /** Adds to a counter (created on first use). For events, not for the request path. */
  count(name: string, help: string, labels: Labels, by = 1) {
    let c = this.counters.get(name);
    if (!c) this.counters.set(name, (c = { help, values: new Map() }));
    const key = labelStr(labels);
    c.values.set(key, (c.values.get(key) ?? 0) + by);
  }

  /** Registers a gauge computed when /metrics is scraped. A second registration replaces the first. */
  gauge(name: string, help: string, read: GaugeRead) {
    this.gauges.set(name, { help, read });
  }

  /**
   * Event-loop lag sampling (libuv-style histogram, 20 ms resolution), for the serving
   * process: main.ts starts it, tests that build many apps don't pay for it.
   */
  startLoopMonitor(): void {
    if (this.loop) return;
    this.loop = monitorEventLoopDelay({ resolution: 20 });
    this.loop.enable();
  }

  stopLoopMonitor(): void {
    this.loop?.disable();
    this.loop = null;
  }

  async render(): Promise<string> {
    const out: string[] = [];
    header(out, "bunker_http_requests_total", "counter", "HTTP requests by method, route template and status.");
    for (const [k, v] of this.requests) out.push(`bunker_http_requests_total{${k}} ${v}`);
    header(out, "bunker_http_request_duration_seconds", "histogram", "Request latency by method and route template.");
    for (const [k, h] of this.latency) {
      BUCKETS.forEach((b, i) => out.push(`bunker_http_request_duration_seconds_bucket{${k},le="${b}"} ${h.counts[i]}`));
      out.push(`bunker_http_request_duration_seconds_bucket{${k},le="+Inf"} ${h.count}`);
      out.push(`bunker_http_request_duration_seconds_sum{${k}} ${h.sum}`);
      out.push(`bunker_http_request_duration_seconds_count{${k}} ${h.count}`);
    }
    header(out, "bunker_job_runs_total", "counter", "Scheduled job runs by outcome (ok, error).");
    for (const [k, v] of this.jobs) out.push(`bunker_job_runs_total{${k}} ${v}`);
    header(out, "bunker_job_duration_seconds", "summary", "Time spent in scheduled job runs.");
    for (const [k, d] of this.jobDurations) out.push(`bunker_job_duration_seconds_sum{${k}} ${d.sum}`, `bunker_job_duration_seconds_count{${k}} ${d.count}`);
    for (const [name, c] of this.counters) {
      header(out, name, "counter", c.help);
      for (const [k, v] of c.values) out.push(`${name}{${k}} ${v}`);
    }
    this.renderProcess(out);
    header(out, "bunker_http_requests_in_flight", "gauge", "Requests being handled.");
    out.push(`bunker_http_requests_in_flight ${this.requestsInFlight}`);
    for (const [name, g] of this.gauges) {
      let value: GaugeValue;
      try {
        value = await g.read();
      } catch {
        continue; // e.g. the database closed during shutdown: leave the gauge out of this scrape
      }
      header(out, name, "gauge", g.help);
      if (typeof value === "number") out.push(`${name} ${value}`);
      else for (const [labels, v] of value) out.push(`${name}{${labelStr(labels)}} ${v}`);
    }
    return out.join("\n") + "\n";
  }

  private renderProcess(out: string[]) {
    header(out, "bunker_process_resident_memory_bytes", "gauge", "Resident set size of the process.");
    out.push(`bunker_process_resident_memory_bytes ${process.memoryUsage.rss()}`);
    header(out, "bunker_process_uptime_seconds", "gauge", "Seconds since the process started.");
    out.push(`bunker_process_uptime_seconds ${process.uptime()}`);
    if (!this.loop) return;
    // Since the previous scrape: a stall shows once, at the scrape after it.
    header(out, "bunker_event_loop_lag_seconds", "gauge", "Event-loop delay since the previous scrape (p50, p99, max).");
    const s = (ns: number) => (Number.isFinite(ns) ? ns / 1e9 : 0);
    out.push(
      `bunker_event_loop_lag_seconds{quantile="0.5"} ${s(this.loop.percentile(50))}`,
      `bunker_event_loop_lag_seconds{quantile="0.99"} ${s(this.loop.percentile(99))}`,
      `bunker_event_loop_lag_seconds{quantile="1"} ${s(this.loop.max)}`,
    );
    this.loop.reset();
  }
}
