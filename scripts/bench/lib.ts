import { loadavg } from "node:os";
/**
 * Shared helpers for `bun scripts/bench/run.ts <name>`: start Bunker (or a bare Bun.serve
 * baseline) as a subprocess on 127.0.0.1, drive it with a closed-loop keep-alive load
 * generator, and print a report. Benches report numbers; they never fail a build.
 *
 * The load generator runs in the bench process (inline on the main thread, or split over
 * Bun Workers); the server is its own process. Every loop is bounded by time, every child
 * process is stopped on exit, and only 127.0.0.1 is ever contacted.
 *
 * This file is also the entry of the load Workers and of the plain Elysia baseline server
 * (see the bottom of the file).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";

export const REPO_ROOT = resolve(import.meta.dir, "../..");
const WORKER_FLAG = "--bunker-bench-load-worker";
const PLAIN_ELYSIA_FLAG = "--bunker-bench-plain-elysia";

// --- small utilities ---------------------------------------------------------------------

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function envNumber(name: string, def: number, min = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min} (got "${raw}")`);
  return n;
}

export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function median(xs: number[]): number {
  return percentile([...xs].sort((a, b) => a - b), 50);
}

export function machine() {
  const c = cpus();
  return { cores: availableParallelism(), cpuModel: c[0]?.model?.trim() ?? "unknown", bun: Bun.version, platform: `${process.platform}/${process.arch}` };
}

/** A port that was free a moment ago (bind 127.0.0.1:0, read it, release it). */
export function freePort(): number {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = s.port!;
  void s.stop(true);
  return port;
}

/** Temp directories and child processes to clean up, whatever way the bench ends. */
const cleanups: (() => void)[] = [];
let cleaned = false;
export function cleanupAll() {
  if (cleaned) return;
  cleaned = true;
  for (const f of cleanups.reverse()) {
    try {
      f();
    } catch {}
  }
}
if (Bun.isMainThread) {
  process.on("exit", cleanupAll);
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.on(sig, () => {
      cleanupAll();
      process.exit(130);
    });
  }
}

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Hard stop for the whole bench: nothing may run forever. */
export function watchdog(ms: number, what = "bench") {
  const t = setTimeout(() => {
    console.error(`\n${what}: watchdog fired after ${Math.round(ms / 1000)} s; stopping`);
    cleanupAll();
    process.exit(3);
  }, ms);
  t.unref();
}

// --- subprocess servers -----------------------------------------------------------------

export interface ServerProc {
  url: string;
  port: number;
  pid: number;
  logFile: string;
  stop(): Promise<void>;
  /** Last lines of the server's stdout+stderr (for error messages). */
  logTail(lines?: number): string;
}

function track(proc: Subprocess, url: string, port: number, logFile: string): ServerProc {
  const kill = () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  };
  cleanups.push(kill);
  return {
    url,
    port,
    pid: proc.pid,
    logFile,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      const done = await Promise.race([proc.exited.then(() => true), sleep(5000).then(() => false)]);
      if (!done) kill();
    },
    logTail(lines = 30) {
      try {
        return readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
      } catch {
        return "";
      }
    },
  };
}

async function waitHealthy(url: string, proc: Subprocess, timeoutMs: number, logTail: () => string) {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`server exited (${proc.exitCode ?? proc.signalCode}) before becoming healthy:\n${logTail()}`);
    }
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await r.arrayBuffer();
      if (r.ok) return;
    } catch {}
    await sleep(100);
  }
  throw new Error(`server not healthy at ${url} after ${timeoutMs} ms:\n${logTail()}`);
}

/**
 * Starts `bun src/main.ts serve` (of this checkout, or of `root`) on 127.0.0.1 with a fresh DATA_DIR. Extra env wins over
 * the defaults; password hashing keeps production cost unless the caller overrides it.
 */
export async function startBunker(opts: { env?: Record<string, string>; healthTimeoutMs?: number; root?: string } = {}): Promise<ServerProc> {
  const dir = tempDir("bunker-bench-");
  const port = freePort();
  const logFile = join(dir, "server.log");
  // Inherit PATH etc., but none of the caller's Bunker settings (a dev's .env must not skew it).
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(PORT|HOST|DATA_DIR|PUBLIC_URL|SMTP_|LOG_LEVEL|BUNKER_|ARGON2_|MASTER_KEY|NODE_ENV|DEFAULT_SERVICES|OBJECT_STORE|S3_)/.test(k)) base[k] = v;
  }
  const env = {
    ...base,
    DATA_DIR: join(dir, "data"),
    HOST: "127.0.0.1",
    PORT: String(port),
    SMTP_PORT: String(freePort()),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: "warn",
    BUNKER_ENV: "development",
    CONSOLE_SIGNUP: "open",
    ARGON2_MEMORY_KIB: "19456",
    ARGON2_TIME_COST: "2",
    ...(opts.env ?? {}),
  };
  const out = Bun.file(logFile);
  // root: another checkout of Bunker (the compare bench runs an older revision beside this one).
  const proc = Bun.spawn([process.execPath, ...(process.env.BENCH_CPU_PROF_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : []), "src/main.ts", "serve"], { cwd: opts.root ?? REPO_ROOT, env, stdin: "ignore", stdout: out, stderr: out });
  const url = `http://127.0.0.1:${port}`;
  const s = track(proc, url, port, logFile);
  await waitHealthy(`${url}/healthz`, proc, opts.healthTimeoutMs ?? 30_000, () => s.logTail());
  return s;
}

/** A bare Bun.serve hello-world in its own process, measured exactly like Bunker. */
export async function startBaseline(): Promise<ServerProc> {
  const dir = tempDir("bunker-bench-baseline-");
  const script = join(dir, "hello.ts");
  const portFile = join(dir, "port");
  writeFileSync(
    script,
    `const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("Hello, world!") });\n` +
      `await Bun.write(${JSON.stringify(portFile)}, String(s.port));\n`,
  );
  return spawnReporting([process.execPath, script], dir, portFile, "baseline server", "/");
}

/** A route of the plain Elysia baseline: the method and template of one a bench measures. */
export interface PlainRoute {
  method: string;
  /** Elysia route template (`/auth/:app_slug/v1/verify`). */
  route: string;
  /** The requests carry a body: the handler reads it (Elysia parses JSON and forms by content type). */
  body: boolean;
}

/**
 * The plain Elysia baseline: an Elysia app in its own process with the routes a bench
 * measures (same methods, same templates), no Bunker code, no schemas, no hooks. A route
 * whose requests carry a body reads it (Elysia parses what the handler names, by its
 * source), then answers a small JSON object, as the cheapest real route would. This is what
 * a Bunker route costs beyond the framework it is built on. Served by lib.ts itself, run as
 * a script (the bottom of this file), so every bench measures the same one.
 */
export async function startPlainElysia(routes: PlainRoute[]): Promise<ServerProc> {
  const dir = tempDir("bunker-bench-elysia-");
  const routesFile = join(dir, "routes.json");
  const portFile = join(dir, "port");
  // One registration per method and template, reading a body when any of its requests carries one.
  const unique = new Map<string, PlainRoute>();
  for (const r of routes) {
    const key = `${r.method.toUpperCase()} ${r.route}`;
    unique.set(key, { ...r, body: r.body || !!unique.get(key)?.body });
  }
  writeFileSync(routesFile, JSON.stringify([...unique.values()]));
  return spawnReporting([process.execPath, import.meta.path, PLAIN_ELYSIA_FLAG, routesFile, portFile], dir, portFile, "plain Elysia server", null);
}

/** Spawns a server that writes its port to `portFile` once listening; waits until it answers `probePath` (null: until it listens). */
async function spawnReporting(argv: string[], dir: string, portFile: string, what: string, probePath: string | null): Promise<ServerProc> {
  const logFile = join(dir, "server.log");
  const out = Bun.file(logFile);
  const proc = Bun.spawn(argv, { cwd: dir, stdin: "ignore", stdout: out, stderr: out });
  let port = 0;
  const deadline = performance.now() + 15_000;
  while (!port && performance.now() < deadline) {
    if (proc.exitCode !== null) break;
    try {
      port = Number(readFileSync(portFile, "utf8")) || 0;
    } catch {}
    if (!port) await sleep(50);
  }
  const url = `http://127.0.0.1:${port}`;
  const s = track(proc, url, port, logFile);
  if (!port) {
    await s.stop();
    throw new Error(`${what} did not start:\n${s.logTail()}`);
  }
  if (probePath !== null) await waitHealthy(url + probePath, proc, 10_000, () => s.logTail());
  return s;
}

// --- HTTP helpers for setup ---------------------------------------------------------------

export interface JsonResponse {
  status: number;
  body: any;
}

export async function api(base: string, method: string, path: string, opts: { body?: unknown; token?: string; headers?: Record<string, string> } = {}): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const r = await fetch(base + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body), signal: AbortSignal.timeout(30_000) });
  const text = await r.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {}
  return { status: r.status, body };
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
  return out;
}

// --- load generator -------------------------------------------------------------------------

export interface RequestSpec {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** The route template the path matches (`/platform/v1/workspaces/:slug`), for the plain Elysia baseline; default: the path itself. */
  route?: string;
}

/** Where the load generator runs: the bench process's main thread, or N Bun Workers. */
export type ClientSetup = { kind: "inline" } | { kind: "workers"; threads: number };

export function parseClient(s: string): ClientSetup {
  if (s === "inline") return { kind: "inline" };
  const m = /^workers?:(\d+)$/.exec(s);
  if (m && Number(m[1]) >= 1 && Number(m[1]) <= 16) return { kind: "workers", threads: Number(m[1]) };
  throw new Error(`client setup must be "inline" or "workers:<1-16>" (got "${s}")`);
}

export const describeClient = (c: ClientSetup) => (c.kind === "inline" ? "inline (bench main thread)" : `${c.threads} Bun Worker${c.threads > 1 ? "s" : ""}`);

export interface LoadOptions {
  baseUrl: string;
  /** Requests issued round-robin. */
  requests: RequestSpec[];
  /**
   * true (default): cycle through `requests` forever. false: each entry is sent at most
   * once (warm-up included); the run ends early when the list runs out.
   */
  cycle?: boolean;
  concurrency: number;
  warmupSec: number;
  durationSec: number;
  client: ClientSetup;
  /** Server process whose CPU time is sampled over the measurement window (Linux /proc). */
  serverPid?: number;
}

export interface LoadResult {
  /** Completed requests per second in the measurement window (all statuses). */
  rps: number;
  /** Completed requests in the window. */
  completed: number;
  /** Non-2xx responses and transport errors in the window. */
  errors: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
  /** Length of the measurement window actually used, seconds. */
  seconds: number;
  /** The request list ran out before the window ended (non-cycling lists only). */
  exhausted: boolean;
  firstError: string | null;
  /** Server CPU over the window, in cores (1.0 = one core busy); null when not measurable. */
  serverCores: number | null;
  /** Bench (client) process CPU over the window, in cores. */
  clientCores: number | null;
  /** CPU used by everything else on the machine over the window, in cores (noise). */
  otherCores: number | null;
}

interface RawPart {
  completed: number;
  errors: number;
  statuses: Record<string, number>;
  latencies: Float64Array;
  /** Absolute (epoch ms) end of this part's measurement: tEnd, or its last completion when exhausted. */
  endAbs: number;
  exhausted: boolean;
  firstError: string | null;
}

interface PartJob {
  baseUrl: string;
  requests: RequestSpec[];
  cycle: boolean;
  offset: number;
  concurrency: number;
  /** Absolute epoch ms. */
  startAbs: number;
  warmupMs: number;
  durationMs: number;
}

export const nowAbs = () => performance.timeOrigin + performance.now();

/** CPU seconds (user+system) a process has used so far, from /proc/<pid>/stat; null off Linux. */
export function procCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields after the command name start at field 3 (state): utime is field 14, stime 15.
    return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

/** Busy CPU seconds of the whole machine so far (all cores), from /proc/stat; null off Linux. */
export function machineBusySeconds(): number | null {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0];
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal ...: busy = all but idle and iowait.
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    return (total - f[3] - (f[4] ?? 0)) / 100;
  } catch {
    return null;
  }
}

const selfCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** Samples server and client CPU at two absolute instants (timers on the main thread). */
export function sampleCpu(pid: number | undefined, fromAbs: number, toAbs: number) {
  type Sample = { s: number | null; c: number; m: number | null; t: number };
  let a = null as Sample | null;
  let b = null as Sample | null;
  const take = (): Sample => ({ s: pid ? procCpuSeconds(pid) : null, c: selfCpuSeconds(), m: machineBusySeconds(), t: nowAbs() });
  const t1 = setTimeout(() => (a = take()), Math.max(0, fromAbs - nowAbs()));
  const t2 = setTimeout(() => (b = take()), Math.max(0, toAbs - nowAbs()));
  return {
    result(): { serverCores: number | null; clientCores: number | null; otherCores: number | null } {
      clearTimeout(t1);
      clearTimeout(t2);
      if (!a || !b || b.t - a.t < 100) return { serverCores: null, clientCores: null, otherCores: null };
      const wall = (b.t - a.t) / 1000;
      const serverCores = a.s !== null && b.s !== null ? (b.s - a.s) / wall : null;
      const clientCores = (b.c - a.c) / wall;
      const busy = a.m !== null && b.m !== null ? (b.m - a.m) / wall : null;
      const otherCores = busy !== null && serverCores !== null ? Math.max(0, busy - serverCores - clientCores) : null;
      return { serverCores, clientCores, otherCores };
    },
  };
}

/** One closed-loop generator: `concurrency` keep-alive loops, each awaiting its response before the next request. */
async function runPart(job: PartJob): Promise<RawPart> {
  while (nowAbs() < job.startAbs) await sleep(Math.max(0, Math.min(50, job.startAbs - nowAbs())));
  const t0 = performance.now();
  const tMeasure = t0 + job.warmupMs;
  const tEnd = tMeasure + job.durationMs;
  // One abort for everything still in flight well after the end: a hung server cannot hang the bench.
  const abort = new AbortController();
  const hardStop = setTimeout(() => abort.abort(), job.warmupMs + job.durationMs + 10_000);
  const prepared = job.requests.map((r) => ({ url: job.baseUrl + r.path, init: { method: r.method, headers: r.headers, body: r.body, signal: abort.signal } as RequestInit }));
  const n = prepared.length;
  let next = job.offset;
  let used = 0;
  let exhausted = false;
  let lastCompletion = tMeasure;
  const cap = Math.max(1024, Math.min(4_000_000, Math.ceil(job.durationMs * 100)));
  let latencies = new Float64Array(cap);
  let completed = 0;
  let errors = 0;
  let firstError: string | null = null;
  const statuses: Record<string, number> = {};

  const loop = async () => {
    for (;;) {
      if (performance.now() >= tEnd) return;
      let p;
      if (job.cycle) {
        p = prepared[next % n];
        next++;
      } else {
        if (used >= n) {
          exhausted = true;
          return;
        }
        p = prepared[used++];
      }
      const start = performance.now();
      let status: number;
      try {
        const res = await fetch(p.url, p.init);
        await res.arrayBuffer();
        status = res.status;
      } catch (e) {
        status = 0;
        if (firstError === null) firstError = String((e as Error)?.message ?? e);
      }
      const end = performance.now();
      if (end >= tMeasure && end <= tEnd) {
        if (completed === latencies.length) {
          const bigger = new Float64Array(latencies.length * 2);
          bigger.set(latencies);
          latencies = bigger;
        }
        latencies[completed++] = end - start;
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status < 200 || status >= 300) errors++;
        if (end > lastCompletion) lastCompletion = end;
      }
    }
  };
  await Promise.all(Array.from({ length: job.concurrency }, loop));
  clearTimeout(hardStop);
  const endRel = exhausted ? Math.min(tEnd, lastCompletion) : tEnd;
  return {
    completed,
    errors,
    statuses,
    latencies: latencies.slice(0, completed),
    endAbs: performance.timeOrigin + endRel,
    exhausted,
    firstError,
  };
}

function runPartInWorker(job: PartJob): Promise<RawPart> {
  return new Promise((resolvePart, reject) => {
    const w = new Worker(import.meta.url, { argv: [WORKER_FLAG] });
    const timeout = setTimeout(() => {
      w.terminate();
      reject(new Error("load worker did not finish in time"));
    }, job.startAbs - nowAbs() + job.warmupMs + job.durationMs + 30_000);
    w.onmessage = (ev: MessageEvent) => {
      const m = ev.data;
      if (m?.type === "ready") w.postMessage({ type: "run", job });
      else if (m?.type === "done") {
        clearTimeout(timeout);
        w.terminate();
        resolvePart(m.part as RawPart);
      } else if (m?.type === "error") {
        clearTimeout(timeout);
        w.terminate();
        reject(new Error(m.message));
      }
    };
    w.onerror = (ev: any) => {
      clearTimeout(timeout);
      w.terminate();
      reject(new Error(`load worker failed: ${ev?.message ?? ev}`));
    };
  });
}

/** Runs a closed-loop load: warm-up, then `durationSec` of measurement. */
export async function load(o: LoadOptions): Promise<LoadResult> {
  if (o.requests.length === 0) throw new Error("load: no requests");
  const cycle = o.cycle ?? true;
  const parts = o.client.kind === "inline" ? 1 : o.client.threads;
  const conc = Math.max(parts, o.concurrency);
  // Workers need a moment to boot; every part starts at the same instant.
  const startAbs = nowAbs() + (o.client.kind === "inline" ? 0 : 300);
  const jobs: PartJob[] = [];
  for (let i = 0; i < parts; i++) {
    const c = Math.floor(conc / parts) + (i < conc % parts ? 1 : 0);
    // Non-cycling lists are striped so that no entry is used twice across parts.
    const requests = cycle ? o.requests : o.requests.filter((_, j) => j % parts === i);
    jobs.push({ baseUrl: o.baseUrl, requests, cycle, offset: cycle ? Math.floor((i * o.requests.length) / parts) : 0, concurrency: c, startAbs, warmupMs: o.warmupSec * 1000, durationMs: o.durationSec * 1000 });
  }
  const measureStart = startAbs + o.warmupSec * 1000;
  const cpu = sampleCpu(o.serverPid, measureStart, measureStart + o.durationSec * 1000);
  const raw = o.client.kind === "inline" ? [await runPart(jobs[0])] : await Promise.all(jobs.map(runPartInWorker));
  const exhausted = raw.some((r) => r.exhausted);
  const end = exhausted ? Math.min(...raw.map((r) => r.endAbs)) : measureStart + o.durationSec * 1000;
  const seconds = Math.max(0.001, (end - measureStart) / 1000);
  const all = new Float64Array(raw.reduce((s, r) => s + r.latencies.length, 0));
  let k = 0;
  for (const r of raw) {
    all.set(r.latencies, k);
    k += r.latencies.length;
  }
  all.sort();
  const statuses: Record<string, number> = {};
  for (const r of raw) for (const [s, n] of Object.entries(r.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
  const completed = raw.reduce((s, r) => s + r.completed, 0);
  return {
    rps: completed / (exhausted ? seconds : o.durationSec),
    completed,
    errors: raw.reduce((s, r) => s + r.errors, 0),
    statuses,
    p50: percentile(all, 50),
    p99: percentile(all, 99),
    seconds: exhausted ? seconds : o.durationSec,
    exhausted,
    firstError: raw.find((r) => r.firstError)?.firstError ?? null,
    ...(exhausted ? { serverCores: null, clientCores: null, otherCores: null } : cpu.result()),
  };
}

// --- report -------------------------------------------------------------------------------------

export function table(headers: string[], rows: string[][], rightAlign: boolean[] = []): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (rightAlign[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ").trimEnd();
  return [fmt(headers), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(fmt)].join("\n");
}

export const fmtNum = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits }) : "-");

// --- worker entry ------------------------------------------------------------------------------

if (!Bun.isMainThread && process.argv.includes(WORKER_FLAG)) {
  const scope = self as unknown as Worker;
  scope.onmessage = async (ev: MessageEvent) => {
    if (ev.data?.type !== "run") return;
    try {
      const part = await runPart(ev.data.job as PartJob);
      scope.postMessage({ type: "done", part }, [part.latencies.buffer] as any);
    } catch (e) {
      scope.postMessage({ type: "error", message: String((e as Error)?.stack ?? e) });
    }
  };
  scope.postMessage({ type: "ready" });
}

// --- plain Elysia baseline entry (startPlainElysia) ---------------------------------------------

if (Bun.isMainThread && import.meta.main && process.argv.includes(PLAIN_ELYSIA_FLAG)) {
  const [routesFile, portFile] = process.argv.slice(process.argv.indexOf(PLAIN_ELYSIA_FLAG) + 1);
  const { Elysia } = await import("elysia");
  const app = new Elysia();
  for (const r of JSON.parse(readFileSync(routesFile!, "utf8")) as PlainRoute[]) {
    // Elysia reads the handler's source to decide what to prepare: naming `body` is what
    // makes it parse one, as every Bunker route that takes a body does.
    app.route(r.method.toUpperCase(), r.route, r.body ? ({ body }: { body: unknown }) => ({ ok: body !== undefined }) : () => ({ ok: true }));
  }
  app.listen({ hostname: "127.0.0.1", port: 0 });
  writeFileSync(portFile!, String(app.server!.port));
}

// --- shared by the benches that compare sign-in with the argon2id ceiling ---------------

/** The server's argon2id cost (startBunker runs Bunker with these). */
export const ARGON2 = { memoryCost: 19456, timeCost: 2 } as const;
export const BENCH_PASSWORD = "bench-password-123";

/** Median time of one Bun.password.verify at the server's cost, serially, in ms. */
export async function measureVerifyMs(samples = 10): Promise<number> {
  const hash = await Bun.password.hash(BENCH_PASSWORD, { algorithm: "argon2id", ...ARGON2 });
  await Bun.password.verify(BENCH_PASSWORD, hash); // warm-up
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    if (!(await Bun.password.verify(BENCH_PASSWORD, hash))) throw new Error("argon2 verify returned false");
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** Throughput of `parallel` back-to-back async verifies in this process, no HTTP (does the hardware scale?). */
export async function measureParallelVerify(parallel: number, ms = 2000): Promise<number> {
  const hash = await Bun.password.hash(BENCH_PASSWORD, { algorithm: "argon2id", ...ARGON2 });
  let n = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (performance.now() < t0 + ms) {
      await Bun.password.verify(BENCH_PASSWORD, hash);
      n++;
    }
  }));
  return n / ((performance.now() - t0) / 1000);
}

/** One request before the load: null when it answers 2xx and `check` accepts the body, else why not. */
export async function probe(base: string, spec: RequestSpec, check: (body: any) => boolean = () => true): Promise<string | null> {
  const r = await fetch(base + spec.path, { method: spec.method, headers: spec.headers, body: spec.body, signal: AbortSignal.timeout(30_000) });
  const text = await r.text();
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {}
  if (r.ok && check(body)) return null;
  return `${spec.method} ${spec.path} answered ${r.status} ${text.slice(0, 200)}`;
}

/** Prints and returns the sign-in ceiling: cores / one serial argon2id verify (measured while nothing else runs). */
export async function hashingCeiling(cores: number) {
  process.stdout.write("measuring argon2id verify (serial, median of 10) ... ");
  const verifyMs = await measureVerifyMs(10);
  const ceiling = cores / (verifyMs / 1000);
  console.log(`${verifyMs.toFixed(1)} ms -> ceiling ${cores} / ${verifyMs.toFixed(1)} ms = ${fmtNum(ceiling, 1)} sign-ins/s`);
  const parallelVerify = await measureParallelVerify(cores);
  console.log(`  (for reference: ${cores} verifies at a time in one process, no HTTP: ${fmtNum(parallelVerify, 1)}/s = ${(parallelVerify / ceiling).toFixed(2)} of the ceiling)`);
  return { verifyMs, ceiling };
}

/** Signs up the bench owner and creates a workspace over HTTP; returns the console session. */
export async function benchOwner(url: string, slug: string) {
  const owner = await api(url, "POST", "/platform/v1/auth/signup", { body: { email: "owner@bench.test", username: "bench_owner", password: BENCH_PASSWORD } });
  if (owner.status !== 200) throw new Error(`owner signup failed: ${owner.status} ${JSON.stringify(owner.body)}`);
  const session: string = owner.body.access_token;
  const ws = await api(url, "POST", "/platform/v1/workspaces", { token: session, body: { slug, display_name: "Bench workspace" } });
  if (ws.status !== 201) throw new Error(`workspace create failed: ${ws.status} ${JSON.stringify(ws.body)}`);
  return { session, workspaceId: ws.body.id as string };
}

/** Run settings every load bench reads, the watchdog, and the header line. `runs`: measured runs the bench makes. */
export function benchPrelude(name: string, setupBudgetSec: number, runs = 8) {
  const seconds = envNumber("BENCH_SECONDS", 5, 0.5);
  const warmup = envNumber("BENCH_WARMUP", 1, 0);
  const readConc = Math.floor(envNumber("BENCH_CONCURRENCY", 64, 1));
  const signinConc = Math.max(4, Math.floor(envNumber("BENCH_SIGNIN_CONCURRENCY", 8, 4)));
  // Generous bound for the whole run: setup plus the measured phases.
  watchdog((setupBudgetSec + runs * (seconds + warmup + 5)) * 1000, `bench ${name}`);
  const m = machine();
  console.log(`bench ${name}: ${m.cores} cores (${m.cpuModel}), bun ${m.bun}, ${m.platform}, load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  console.log(`each run: ${warmup} s warm-up + ${seconds} s measured; keep-alive, 127.0.0.1\n`);
  return { seconds, warmup, readConc, signinConc, m };
}

// --- wrk: the native load generator for fixed-request throughput ---------------------------
//
// A JavaScript client tops out well below what Bun.serve can answer (about 52k req/s here
// where wrk reaches about 120k), which squeezes every ratio towards 1. Throughput targets are
// therefore driven by wrk (C, epoll): `threads` threads, `connections` keep-alive connections.

/** Path of the wrk binary; installs the Debian package when it is missing (and says so). */
export function ensureWrk(): string {
  const found = Bun.which("wrk");
  if (found) return found;
  console.log("wrk not found: installing the Debian package `wrk` with apt-get ...");
  const sudo = process.getuid?.() === 0 ? [] : ["sudo", "-n"];
  const install = () => Bun.spawnSync([...sudo, "apt-get", "install", "-y", "wrk"], { stdout: "inherit", stderr: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  if (install().exitCode !== 0) {
    Bun.spawnSync([...sudo, "apt-get", "update"], { stdout: "inherit", stderr: "inherit" });
    install();
  }
  const after = Bun.which("wrk");
  if (!after) throw new Error("wrk is required (Debian: apt-get install -y wrk) and could not be installed");
  return after;
}

/** A Lua string literal for any text: every byte outside plain printable ASCII as \ddd. */
function luaString(s: string): string {
  let out = '"';
  for (const b of new TextEncoder().encode(s)) out += b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${String(b).padStart(3, "0")}`;
  return out + '"';
}

/** The `done` function every wrk script of the benches ends with: one machine-readable line. */
const WRK_DONE = [
  "done = function(summary, latency, requests)",
  "  local e = summary.errors",
  '  io.write(string.format("BENCH_RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(99)))',
  "end",
].join("\n");

/** The wrk script for one fixed request. */
function wrkScript(spec: RequestSpec): string {
  const lines = [`wrk.method = ${luaString(spec.method)}`];
  if (spec.body !== undefined) lines.push(`wrk.body = ${luaString(spec.body)}`);
  for (const [k, v] of Object.entries(spec.headers ?? {})) lines.push(`wrk.headers[${luaString(k)}] = ${luaString(v)}`);
  return lines.join("\n") + "\n";
}

export interface WrkOptions {
  baseUrl: string;
  spec: RequestSpec;
  threads: number;
  connections: number;
  durationSec: number;
  /** Server process whose CPU time is read from /proc before and after the run. */
  serverPid?: number;
}

/** One wrk run; server CPU per request comes from /proc/<pid>/stat around it. */
export function wrkRun(o: WrkOptions): Promise<LoadResult> {
  return wrkRunScript(wrkScript(o.spec), { ...o, path: o.spec.path });
}

/**
 * One wrk run of a Lua script of the bench's own (requests that change from one to the next,
 * e.g. a new email per sign-up); the result line's `done` function is appended here.
 */
export async function wrkRunScript(lua: string, o: Omit<WrkOptions, "spec"> & { path: string }): Promise<LoadResult> {
  const bin = ensureWrk();
  const dir = tempDir("bunker-bench-wrk-");
  const script = join(dir, "req.lua");
  writeFileSync(script, `${lua}\n${WRK_DONE}\n`);
  const secs = Math.max(1, Math.round(o.durationSec));
  const s0 = o.serverPid ? procCpuSeconds(o.serverPid) : null;
  const m0 = machineBusySeconds();
  const t0 = performance.now();
  const proc = Bun.spawn([bin, "-t", String(o.threads), "-c", String(o.connections), "-d", `${secs}s`, "--timeout", "10s", "-s", script, o.baseUrl + o.path], { stdout: "pipe", stderr: "pipe" });
  const killer = setTimeout(() => proc.kill("SIGKILL"), (secs + 30) * 1000);
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  clearTimeout(killer);
  const wall = (performance.now() - t0) / 1000;
  const s1 = o.serverPid ? procCpuSeconds(o.serverPid) : null;
  const m1 = machineBusySeconds();
  rmSync(dir, { recursive: true, force: true });
  const m = /BENCH_RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(stdout);
  if (!m) throw new Error(`wrk gave no result (exit ${proc.exitCode}): ${stderr.trim() || stdout.trim()}`);
  const [requests, durationUs, non2xx, sockErrors, p50us, p99us] = m.slice(1).map(Number);
  const seconds = durationUs / 1e6;
  const usage = proc.resourceUsage();
  const clientCpu = usage ? (Number(usage.cpuTime.user) + Number(usage.cpuTime.system)) / 1e6 : null;
  const serverCores = s0 !== null && s1 !== null ? (s1 - s0) / wall : null;
  const clientCores = clientCpu !== null ? clientCpu / wall : null;
  const busy = m0 !== null && m1 !== null ? (m1 - m0) / wall : null;
  return {
    rps: requests / seconds,
    completed: requests,
    errors: non2xx + sockErrors,
    statuses: { non2xx, socket_errors: sockErrors },
    p50: p50us / 1000,
    p99: p99us / 1000,
    seconds,
    exhausted: false,
    firstError: non2xx + sockErrors ? `${non2xx} non-2xx answers, ${sockErrors} socket errors` : null,
    serverCores,
    clientCores,
    otherCores: busy !== null && serverCores !== null && clientCores !== null ? Math.max(0, busy - serverCores - clientCores) : null,
  };
}

/** Server CPU time per request in µs (the figure least disturbed by other load on the machine). */
export const cpuUsPerRequest = (r: LoadResult) => (r.serverCores === null || !r.completed ? NaN : (r.serverCores * r.seconds * 1e6) / r.completed);

export interface WrkTarget {
  name: string;
  baseUrl: string;
  spec: RequestSpec;
  serverPid: number;
}

/** Something measured in the bench process itself (e.g. raw signing), interleaved like the rest. */
export interface LocalTarget {
  name: string;
  run(durationSec: number): Promise<LoadResult>;
  /**
   * The same load on the plain Elysia baseline (e.g. the same wrk script at the same
   * concurrency against its URL): the route it needs there and how to drive it. Without
   * one, the target has no plain Elysia ratio.
   */
  plain?: { route: PlainRoute; run(server: { url: string; pid: number }, durationSec: number): Promise<LoadResult> };
}

export interface InterleavedResult {
  name: string;
  runs: LoadResult[];
  /** Per-round ratio to that round's baseline run. */
  ratios: number[];
  /** The same requests on the plain Elysia baseline, run in the same rounds (shared by the targets that send the same requests). */
  plain?: InterleavedResult;
}

/** The plain Elysia route a fixed request needs. */
export const plainRouteOf = (spec: RequestSpec): PlainRoute => ({ method: spec.method, route: spec.route ?? spec.path.split("?")[0]!, body: spec.body !== undefined });

/**
 * Runs the baseline and every target `rounds` times, interleaved (baseline, t1, t2, ...,
 * baseline, t1, ...), each after a short warm-up, so that a burst of noise on the machine
 * hits one round of everything rather than one target; callers report medians.
 *
 * Beside the bare Bun.serve baseline, every target's requests also go to the plain Elysia
 * baseline (startPlainElysia, started here with the targets' routes), right after the
 * target in each round: targets sending identical requests share one such run. LocalTargets
 * take part when they say how (`plain`). BENCH_PLAIN_ELYSIA=0 leaves it out.
 */
export async function interleaved(o: { baseline: WrkTarget; targets: (WrkTarget | LocalTarget)[]; rounds: number; warmupSec: number; durationSec: number; threads: number; connections: number }): Promise<{ baseline: InterleavedResult; targets: InterleavedResult[]; plain: InterleavedResult[] }> {
  const all = [o.baseline, ...o.targets];
  const out: InterleavedResult[] = all.map((t) => ({ name: t.name, runs: [], ratios: [] }));
  const wrkWith = (spec: RequestSpec) => (server: { url: string; pid: number }, durationSec: number) =>
    wrkRun({ baseUrl: server.url, spec, threads: o.threads, connections: o.connections, durationSec, serverPid: server.pid });
  // Each target's run on the plain Elysia server, one per distinct request.
  type Twin = { result: InterleavedResult; route: PlainRoute; run(server: { url: string; pid: number }, durationSec: number): Promise<LoadResult> };
  const twins = new Map<string, Twin>();
  const twinOf: (Twin | undefined)[] = all.map((t, i) => {
    if (i === 0 || envNumber("BENCH_PLAIN_ELYSIA", 1) === 0) return undefined;
    const plain = "run" in t ? t.plain : { route: plainRouteOf(t.spec), run: wrkWith(t.spec) };
    if (!plain) return undefined;
    // Requests of the same shape share a run: values (another server's token of the same
    // length, say) cost the plain app nothing different.
    const key = "run" in t ? `local:${i}` : JSON.stringify([t.spec.method, plain.route.route, t.spec.path, Object.entries(t.spec.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v.length]), t.spec.body?.length ?? -1]);
    let twin = twins.get(key);
    if (!twin) {
      const base = `plain Elysia ${plain.route.method.toUpperCase()} ${plain.route.route}`;
      const taken = (n: string) => [...twins.values()].some((x) => x.result.name === n);
      let name = base;
      for (let k = 2; taken(name); k++) name = `${base} #${k}`;
      twin = { result: { name, runs: [], ratios: [] }, ...plain };
      twins.set(key, twin);
    }
    out[i]!.plain = twin.result;
    return twin;
  });
  const elysia = twins.size ? await startPlainElysia([...twins.values()].map((x) => x.route)) : null;
  try {
    for (let round = 0; round < o.rounds; round++) {
      process.stdout.write(`round ${round + 1}/${o.rounds}:`);
      const measure = async (result: InterleavedResult, run: (durationSec: number) => Promise<LoadResult>) => {
        if (o.warmupSec > 0) await run(o.warmupSec);
        const r = await run(o.durationSec);
        result.runs.push(r);
        result.ratios.push(r.rps / out[0]!.runs[round]!.rps);
        process.stdout.write(` ${result.name} ${fmtNum(r.rps)}/s`);
      };
      for (let i = 0; i < all.length; i++) {
        const t = all[i]!;
        await measure(out[i]!, "run" in t ? (d) => t.run(d) : (d) => wrkWith(t.spec)({ url: t.baseUrl, pid: t.serverPid }, d));
        const twin = twinOf[i];
        if (twin && elysia && twin.result.runs.length === round) await measure(twin.result, (d) => twin.run(elysia, d));
      }
      process.stdout.write("\n");
    }
  } finally {
    await elysia?.stop();
  }
  return { baseline: out[0]!, targets: out.slice(1), plain: [...twins.values()].map((x) => x.result) };
}

/**
 * interleaved() against the bare Bun.serve hello-world `baseline` (GET /) and the plain
 * Elysia app, with the bench's wrk settings (wrkSettings) and run lengths (BENCH_SECONDS,
 * BENCH_WARMUP): the throughput table of every bench.
 */
export function vsBunServe(baseline: ServerProc, targets: (WrkTarget | LocalTarget)[], ws: { threads: number; connections: number; rounds: number }, seconds: number, warmup: number) {
  return interleaved({
    baseline: { name: "baseline (Bun.serve)", baseUrl: baseline.url, spec: { method: "GET", path: "/" }, serverPid: baseline.pid },
    targets,
    rounds: ws.rounds,
    warmupSec: warmup,
    durationSec: seconds,
    threads: ws.threads,
    connections: ws.connections,
  });
}

/** Medians over an interleaved target's runs. */
export function medians(r: InterleavedResult) {
  const pick = (f: (x: LoadResult) => number | null) => median(r.runs.map((x) => f(x) ?? NaN).filter(Number.isFinite));
  return {
    rps: pick((x) => x.rps),
    p50: pick((x) => x.p50),
    p99: pick((x) => x.p99),
    errors: r.runs.reduce((s, x) => s + x.errors, 0),
    cpuUs: pick(cpuUsPerRequest),
    serverCores: pick((x) => x.serverCores),
    clientCores: pick((x) => x.clientCores),
    otherCores: pick((x) => x.otherCores),
  };
}

/** Settings of the wrk-driven part of a bench (environment, with the defaults). */
export function wrkSettings() {
  return {
    threads: Math.floor(envNumber("BENCH_THREADS", 2, 1)),
    connections: Math.floor(envNumber("BENCH_CONNECTIONS", 64, 1)),
    rounds: Math.floor(envNumber("BENCH_ROUNDS", 3, 1)),
  };
}

export interface WrkRow {
  result: InterleavedResult;
  what: string;
  /** Not compared with the baseline (e.g. a reference measured in the bench process). */
  noRatio?: boolean;
  /** Ratio to reach: of `reference` when there is one, else of the plain Elysia twin (`of: "elysia"`) or of bare Bun.serve (default). */
  target: number | null;
  of?: "bun" | "elysia";
  /** Another interleaved target to compare with (e.g. raw signing), round by round. */
  reference?: { result: InterleavedResult; label: string };
}

/** Per-round ratios of a target's runs to another's (same rounds). */
const perRound = (result: InterleavedResult, to: InterleavedResult) => result.runs.map((r, i) => r.rps / to.runs[i]!.rps);

/** A ratio's median and its spread across rounds. */
function spread(ratios: number[]) {
  if (!ratios.length) return null;
  const ratio = median(ratios);
  return { ratio, text: `${ratio.toFixed(2)} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})` };
}

/**
 * The table of an interleaved wrk run: medians, server CPU per request, the ratios to bare
 * Bun.serve and to the plain Elysia app sending the same requests, verdict. The plain
 * Elysia runs the rows used are listed after the bare baseline.
 */
export function wrkTable(baseline: InterleavedResult, rows: WrkRow[]): string {
  const plain = [...new Set(rows.map((r) => r.result.plain).filter((p) => p !== undefined))];
  const lines = [
    { result: baseline, what: "bare Bun.serve hello-world", target: null } as WrkRow,
    ...plain.map((p): WrkRow => ({ result: p, what: "plain Elysia", target: null })),
    ...rows,
  ];
  const body = lines.map((row) => {
    const m = medians(row.result);
    const isBase = row.result === baseline;
    const bun = row.noRatio || isBase ? null : spread(row.result.ratios);
    const elysia = row.noRatio || !row.result.plain ? null : spread(perRound(row.result, row.result.plain));
    const ref = row.reference ? spread(perRound(row.result, row.reference.result)) : null;
    const judged = row.reference ? ref : row.of === "elysia" ? elysia : bun;
    const verdict = row.target === null ? "" : judged && judged.ratio >= row.target ? "PASS" : "BELOW";
    const targetText = row.target === null ? "" : row.reference ? `≥ ${row.target.toFixed(2)} of ${row.reference.label}: ${ref?.text ?? "-"}` : `≥ ${row.target.toFixed(2)} x ${row.of === "elysia" ? "Elysia" : "Bun"}`;
    return [
      row.result.name,
      fmtNum(m.rps),
      Number.isFinite(m.p50) ? m.p50.toFixed(2) : "-",
      Number.isFinite(m.p99) ? m.p99.toFixed(2) : "-",
      String(m.errors),
      Number.isFinite(m.cpuUs) ? fmtNum(m.cpuUs, 1) : "-",
      Number.isFinite(m.serverCores) ? m.serverCores.toFixed(2) : "-",
      Number.isFinite(m.clientCores) ? m.clientCores.toFixed(2) : "-",
      Number.isFinite(m.otherCores) ? m.otherCores.toFixed(2) : "-",
      bun?.text ?? "-",
      elysia?.text ?? "-",
      targetText,
      verdict,
    ];
  });
  return table(
    ["target", "req/s", "p50 ms", "p99 ms", "errors", "srv µs/req", "srv cores", "wrk cores", "other", "x Bun (min-max)", "x Elysia (min-max)", "target", "result"],
    body,
    [false, true, true, true, true, true, true, true, true, true, true, false, false],
  );
}

/** What every wrk report says about how it was measured. */
export function wrkFootnote(s: { threads: number; connections: number; rounds: number }, seconds: number, warmup: number, m: { cores: number }): string {
  return `measured with wrk -t${s.threads} -c${s.connections}, ${warmup} s warm-up + ${seconds} s per run, ${s.rounds} rounds interleaved
  (baseline, then each target followed by its plain Elysia twin, repeated); figures are medians over the rounds.
  "x Bun": the median of each round's target / bare Bun.serve GET / (hello-world); "x Elysia": target / a plain
  Elysia app (same route, method, headers and body; no Bunker code, no schemas; a body is parsed) measured right
  after it; "of <reference>" where the target column names one (min-max across rounds). "srv µs/req": server process CPU (user+system, /proc/<pid>/stat) per
  request, the figure least sensitive to other load. CPU over each run, in cores: "srv" the server, "wrk" the
  load generator, "other" everything else on the machine (${m.cores} cores; noise when it is not ~0).`;
}
