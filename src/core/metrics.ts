/**
 * In-process Prometheus metrics, one registry per app instance.
 *
 * Per-request work is two map updates (label strings are built once per route and status).
 * Everything that needs a file stat or a query (database size, queues, backlogs) is a gauge
 * read at scrape time, never on the request path.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * One method of one route template: its latency histogram (a count per bucket, the last one
 * past every bound; cumulated at scrape time) and its requests by status.
 */
interface RouteSeries {
  hkey: string;
  buckets: number[];
  sum: number;
  count: number;
  statuses: Map<number, { key: string; n: number }>;
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
  /**
   * Route template -> method -> series. Keyed by the template itself (the same string object
   * on every request, its hash cached) rather than by a label string built per request.
   */
  private routes = new Map<string, Map<string, RouteSeries>>();
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

  observeRequest(method: string, route: string, status: number, seconds: number) {
    let byMethod = this.routes.get(route);
    if (!byMethod) this.routes.set(route, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series) byMethod.set(method, (series = { hkey: labelStr({ method, route }), buckets: new Array(BUCKETS.length + 1).fill(0), sum: 0, count: 0, statuses: new Map() }));
    let st = series.statuses.get(status);
    if (!st) series.statuses.set(status, (st = { key: labelStr({ method, route, status: String(status) }), n: 0 }));
    st.n++;
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]) i++;
    series.buckets[i]++;
    series.sum += seconds;
    series.count++;
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
    const all = [...this.routes.values()].flatMap((byMethod) => [...byMethod.values()]);
    for (const series of all) for (const st of series.statuses.values()) out.push(`bunker_http_requests_total{${st.key}} ${st.n}`);
    header(out, "bunker_http_request_duration_seconds", "histogram", "Request latency by method and route template.");
    for (const { hkey: k, buckets, sum, count } of all) {
      let cumulative = 0;
      BUCKETS.forEach((b, i) => out.push(`bunker_http_request_duration_seconds_bucket{${k},le="${b}"} ${(cumulative += buckets[i])}`));
      out.push(`bunker_http_request_duration_seconds_bucket{${k},le="+Inf"} ${count}`);
      out.push(`bunker_http_request_duration_seconds_sum{${k}} ${sum}`);
      out.push(`bunker_http_request_duration_seconds_count{${k}} ${count}`);
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
