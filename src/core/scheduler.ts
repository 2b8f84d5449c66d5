/**
 * In-process scheduler: named jobs on cron patterns (croner, seconds supported).
 *
 * - A job never runs twice at once. A scheduled tick that finds the job busy is skipped
 *   (the next tick picks up the work). `runNow` on a busy job waits for the current run
 *   and then runs once more, so work queued before the call is always handled when it
 *   resolves; concurrent `runNow` calls share that one extra run.
 * - Scheduled runs never throw: errors are logged and counted (`bunker_job_runs_total`).
 *   `runNow` rejects with the job's error, because its caller asked for that run.
 * - `stop()` stops the timers and waits for runs in progress (graceful shutdown).
 * - Several nodes (PostgreSQL): with `claimTick`, a scheduled tick runs on the one node that
 *   claims it first (ticks are named by their second, so the nodes agree on them); `runNow`
 *   is not claimed. Jobs that take their work with row claims (leases, SKIP LOCKED) are
 *   safe on every node anyway; the tick claim keeps purges and sweeps from running N times.
 */
import { Cron } from "croner";
import { systemClock, type Clock } from "./clock";
import { ApiError } from "./errors";
import type { Logger } from "./log";
import type { Metrics } from "./metrics";
import { isDatabaseUnavailable } from "./store/sql";

export interface JobDefinition {
  name: string;
  /** Cron pattern; six fields means seconds first ("*\/5 * * * * *" = every 5 s). */
  schedule: string;
  run: () => Promise<void> | void;
}

export interface JobStatus {
  name: string;
  schedule: string;
  running: boolean;
  lastRunAt: string | null;
  lastError: string | null;
}

interface JobState {
  def: JobDefinition;
  /** The parsed pattern; given its function (and a timer) by schedule(), stopped by stop(). */
  cron: Cron | null;
  current: Promise<void> | null;
  /** The extra run requested by runNow while `current` was in progress. */
  rerun: PromiseWithResolvers<void> | null;
  lastRunAt: string | null;
  lastError: string | null;
  /** Its last run met a busy or unreachable database (warned once, until a run succeeds). */
  unavailable?: boolean;
}

/** Claims a tick of a job for this node; false when another node already runs it. */
export type TickClaimer = (job: string, tickAt: string) => Promise<boolean>;

export class Scheduler {
  private jobs = new Map<string, JobState>();
  private started = false;
  private stopped = false;
  private claimTick: TickClaimer | null = null;

  constructor(
    private readonly log: Logger,
    private readonly metrics: Metrics,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Set when several nodes share the database (app.ts, on PostgreSQL). */
  shareTicks(claim: TickClaimer): void {
    this.claimTick = claim;
  }

  register(job: JobDefinition): void {
    if (!job.name || this.jobs.has(job.name)) throw new ApiError(500, "INTERNAL_ERROR", `Job "${job.name}" is already registered`);
    // Parsed now, so a typo fails at start-up, not at the first tick. A Cron without a
    // function schedules nothing: schedule() hands this one its function, so each pattern is
    // parsed once per start, not twice (croner's parsing was a visible part of a start profile).
    // No `name` option: croner keeps named jobs in a process-wide registry, and two apps side
    // by side (tests) would collide. unref: the HTTP server, not a timer, keeps the process
    // alive, so CLI commands that build the app can still exit.
    let cron: Cron;
    try {
      cron = new Cron(job.schedule, { unref: true });
    } catch (e) {
      throw new ApiError(500, "INTERNAL_ERROR", `Job "${job.name}": invalid schedule "${job.schedule}": ${(e as Error).message}`);
    }
    const state: JobState = { def: job, cron, current: null, rerun: null, lastRunAt: null, lastError: null };
    this.jobs.set(job.name, state);
    if (this.started && !this.stopped) this.schedule(state);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (const state of this.jobs.values()) this.schedule(state);
    this.log.debug("scheduler started", { jobs: [...this.jobs.keys()] });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const state of this.jobs.values()) {
      state.cron?.stop();
      state.cron = null;
    }
    // Wait for reruns too: they were requested before the stop and are already promised.
    const pending = [...this.jobs.values()].flatMap((s) => [s.current, s.rerun?.promise]).filter((p): p is Promise<void> => !!p);
    await Promise.all(pending.map((p) => p.catch(() => {})));
  }

  async runNow(name: string): Promise<void> {
    const state = this.jobs.get(name);
    if (!state) throw new ApiError(404, "NOT_FOUND", `Job "${name}" not found`);
    if (!state.current) return this.execute(state);
    // Started by execute() the moment the current run ends, in the same tick, so nothing
    // can slip in between and run concurrently with it.
    state.rerun ??= Promise.withResolvers<void>();
    return state.rerun.promise;
  }

  list(): JobStatus[] {
    return [...this.jobs.values()].map((s) => ({
      name: s.def.name,
      schedule: s.def.schedule,
      running: s.current !== null,
      lastRunAt: s.lastRunAt,
      lastError: s.lastError,
    }));
  }

  /** True between start() and stop(): what /readyz reports. */
  isRunning(): boolean {
    return this.started && !this.stopped;
  }

  private schedule(state: JobState) {
    state.cron?.schedule(() => {
      if (state.current) {
        this.log.debug("job still running, tick skipped", { job: state.def.name });
        return;
      }
      if (this.claimTick) return void this.claimed(state);
      // The promise is also tracked in state.current; a scheduled run must never reject.
      this.execute(state).catch(() => {});
    });
  }

  /** A scheduled tick with several nodes: runs it only if this node claims it. Never rejects. */
  private async claimed(state: JobState): Promise<void> {
    // Wall-clock second of the tick (not the app clock: tests move that one by hand).
    const tickAt = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
    let mine: boolean;
    try {
      mine = await this.claimTick!(state.def.name, tickAt);
    } catch (e) {
      this.log.warn("job tick not claimed (database unavailable?)", { job: state.def.name, error: String(e) });
      return;
    }
    if (!mine || state.current || this.stopped) return;
    await this.execute(state).catch(() => {});
  }

  /** Runs the job once; callers have checked that it is idle. Rejects with the job's error. */
  private execute(state: JobState): Promise<void> {
    const name = state.def.name;
    state.lastRunAt = this.clock.iso();
    const started = performance.now();
    const run = (async () => {
      try {
        await state.def.run();
        if (state.unavailable) this.log.info("job runs again: the database is back", { job: name });
        state.unavailable = false;
        state.lastError = null;
        this.metrics.observeJob(name, "ok", (performance.now() - started) / 1000);
        this.log.debug("job ok", { job: name, ms: Math.round(performance.now() - started) });
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        state.lastError = message;
        this.metrics.observeJob(name, "error", (performance.now() - started) / 1000);
        // A busy or unreachable database: the next tick tries again. Said once per outage,
        // not a stack trace per tick while a long write holds SQLite.
        if (isDatabaseUnavailable(e)) {
          if (!state.unavailable) this.log.warn("job waits for the database (busy or unreachable); it runs again on its next tick", { job: name, error: message });
          state.unavailable = true;
        } else this.log.error("job failed", { job: name, error: message, stack: e instanceof Error ? e.stack : undefined });
        throw e;
      } finally {
        state.current = null;
        const rerun = state.rerun;
        if (rerun) {
          state.rerun = null;
          this.execute(state).then(rerun.resolve, rerun.reject);
        }
      }
    })();
    state.current = run;
    return run;
  }
}
