/**
 * The in-process, durable extraction worker. The scheduler job (trawl.worker, every second)
 * calls tick(): jobs whose lease ran out after their last attempt are failed (WORKER_LOST),
 * then up to TRAWL_CONCURRENCY minus the jobs running here are claimed (queued ones, and
 * running ones whose lease expired: their process died) and started in the background.
 * The limit is exact: each claim reserves its slots before it awaits the database, so
 * overlapping ticks never claim the same free slot twice.
 *
 * - Claim: in a transaction, SKIP LOCKED on PostgreSQL; the job becomes running under a
 *   lease (LEASE_MS) with an owner token, attempts + 1 (at most MAX_ATTEMPTS). While it runs
 *   a heartbeat extends the lease; a heartbeat that finds the claim gone (cancelled through
 *   another node, or taken over) aborts the run.
 * - A SIGKILL loses nothing: the job stays running with a lease that expires, and the next
 *   tick on any node claims it again (a new attempt from the start).
 * - Each attempt gets timeout_s of wall clock (real time): then the in-flight call is
 *   aborted and the job fails with TIMEOUT. Cancel aborts the in-flight call at once.
 * - Outcomes are written only while the owner still holds the claim (a lost lease never
 *   overwrites a newer state); each final state emits its event in the same transaction.
 * - A finished job frees its slot and the worker claims again at once (throughput does not
 *   wait for the next tick).
 * - A busy or unreachable database (SQLite held by another process's long write, PostgreSQL
 *   connection lost): the scheduler warns once and ticks again; a run's outcome is written
 *   again until the database takes it.
 * - stop() (shutdown): no new claims, in-flight attempts are aborted and their jobs handed
 *   back to the queue (their attempt does not count).
 */
import { randomBytes } from "node:crypto";
import { tx } from "../../../core/db";
import { isDatabaseUnavailable } from "../../../core/store/sql";
import type { OutboundHttp } from "../../../core/outbound-http";
import { withoutRequired, type JsonObject } from "../schema";
import { JobError, runJob, type Progress } from "./pipeline/run";
import type { LlmClient } from "./pipeline/llm";
import { claimDue, claimExhausted, extendLease, jobView, release, type JobRow, type JobService, type TrawlContext } from "../jobs";

export const MAX_ATTEMPTS = 3;
export const LEASE_MS = 60_000;
export const HEARTBEAT_MS = 10_000;

class Cancelled extends Error {}
class Shutdown extends Error {}

export interface WorkerOptions {
  concurrency: number;
  http: Pick<OutboundHttp, "request">;
  llm: LlmClient | null;
  models: { standard: string; pro: string };
  leaseMs?: number;
  heartbeatMs?: number;
}

interface Running {
  controller: AbortController;
  done: Promise<void>;
}

export class TrawlWorker {
  private readonly running = new Map<string, Running>();
  /** Claims started when a job finished (awaited by stop). */
  private readonly chained = new Set<Promise<void>>();
  /** Slots taken by claims in progress (not yet in `running`). */
  private reserved = 0;
  private stopped = false;
  readonly leaseMs: number;

  constructor(
    private readonly m: TrawlContext,
    private readonly svc: JobService,
    private readonly o: WorkerOptions,
  ) {
    this.leaseMs = o.leaseMs ?? LEASE_MS;
    svc.onCancel = (id) => this.running.get(id)?.controller.abort(new Cancelled("cancelled"));
  }

  /** Jobs running in this process. */
  get active(): number {
    return this.running.size;
  }

  /** Fails exhausted jobs, claims what fits and starts it; returns how many were started. */
  async tick(): Promise<number> {
    if (this.stopped) return 0;
    const now = this.m.ctx.clock.nowMs();
    const exhausted = await tx(this.m.ctx.db, (t) => claimExhausted(t, now, MAX_ATTEMPTS, 50));
    for (const j of exhausted) {
      await this.svc.finishJob(j.id, j.lease_owner, {
        status: "failed",
        result: null,
        result_meta: j.result_meta,
        error: `WORKER_LOST: the worker stopped during each of ${j.attempts} attempts (lease expired)`,
        error_code: "WORKER_LOST",
        steps: j.steps,
        pages_fetched: j.pages_fetched,
        bytes_fetched: Number(j.bytes_fetched),
        tokens_in: j.tokens_in,
        tokens_out: j.tokens_out,
      });
    }
    // Read and reserved in one synchronous step: ticks overlap (the scheduler's, and one per
    // finished job), and a count read before another tick's claim lands would let each of
    // them claim the same free slots.
    const free = this.o.concurrency - this.running.size - this.reserved;
    if (free <= 0) return 0;
    this.reserved += free;
    try {
      return await this.claim(now, free);
    } finally {
      this.reserved -= free;
    }
  }

  /** Claims up to `free` due jobs and starts them (their slots are reserved by the caller). */
  private async claim(now: number, free: number): Promise<number> {
    const owner = randomBytes(12).toString("hex");
    const claimed = await tx(this.m.ctx.db, async (t) => {
      const rows = await claimDue(t, now, now + this.leaseMs, owner, this.m.ctx.clock.iso(), MAX_ATTEMPTS, free);
      for (const r of rows) await this.m.emit(t, r.workspace_id, "job.running", jobView(r));
      return rows;
    });
    if (this.stopped) {
      // stop() began while this claim ran: hand the jobs back instead of starting them.
      for (const job of claimed) await release(this.m.ctx.db, job.id, owner);
      return 0;
    }
    // start() takes each job's slot in `running` before the caller gives the reservation back.
    for (const job of claimed) this.start(job, owner);
    return claimed.length;
  }

  /** Resolves when no job runs in this process. */
  async idle(): Promise<void> {
    while (this.running.size || this.chained.size) await Promise.allSettled([...[...this.running.values()].map((r) => r.done), ...this.chained]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const r of this.running.values()) r.controller.abort(new Shutdown("shutdown"));
    await this.idle();
  }

  private start(job: JobRow, owner: string) {
    const controller = new AbortController();
    const done = this.run(job, owner, controller)
      .catch((e) => this.m.ctx.log.error("extraction job run failed", { job: job.id, error: String(e) }))
      .finally(() => {
        this.running.delete(job.id);
        // A freed slot takes the next queued job at once rather than at the next tick.
        if (this.stopped) return;
        // A busy or unreachable database is said by the scheduler's tick, which tries again.
        const next = this.tick()
          .then(() => {})
          .catch((e) => void (isDatabaseUnavailable(e) || this.m.ctx.log.warn("extraction worker: claim after a finished job failed", { error: String(e) })))
          .finally(() => this.chained.delete(next));
        this.chained.add(next);
      });
    this.running.set(job.id, { controller, done });
  }

  /**
   * Writes a run's outcome, trying again while the database is busy or unreachable: a finished
   * job whose outcome is lost runs again after its lease (its fetches and LLM calls paid twice).
   * Gives up at shutdown or after a lease's time (by then another node may own the job; the
   * claim fence keeps a late write from overwriting it).
   */
  private async persist(jobId: string, write: () => Promise<unknown>): Promise<void> {
    const giveUpAt = performance.now() + this.leaseMs;
    for (let wait = 250; ; wait = Math.min(wait * 2, 5000)) {
      try {
        await write();
        return;
      } catch (e) {
        if (!isDatabaseUnavailable(e) || this.stopped || performance.now() + wait > giveUpAt) throw e;
        if (wait === 250) this.m.ctx.log.warn("extraction job: the database is busy or unreachable; writing the outcome again shortly", { job: jobId, error: String(e) });
        await Bun.sleep(wait);
      }
    }
  }

  private async run(job: JobRow, owner: string, controller: AbortController): Promise<void> {
    const { signal } = controller;
    const progress: Progress = { steps: 0, pages_fetched: 0, bytes_fetched: 0, tokens_in: 0, tokens_out: 0 };
    const deadline = setTimeout(() => controller.abort(new JobError("TIMEOUT", `the job ran longer than timeout_s (${job.timeout_s} s)`)), job.timeout_s * 1000);
    const heartbeat = setInterval(() => {
      extendLease(this.m.ctx.db, job.id, owner, this.m.ctx.clock.nowMs() + this.leaseMs)
        .then((held) => {
          if (!held && !signal.aborted) controller.abort(new Cancelled("claim lost"));
        })
        .catch(() => {});
    }, this.o.heartbeatMs ?? HEARTBEAT_MS);
    const schema = JSON.parse(job.json_schema) as JsonObject;
    const usage = () => ({ ...progress });
    try {
      const llm = this.o.llm;
      const model = llm ? (job.model_tier === "pro" ? this.o.models.pro : this.o.models.standard) : null;
      const validate = this.svc.schemas.compile(schema, job.json_schema);
      const validatePartial = this.svc.schemas.compile(withoutRequired(schema) as JsonObject);
      const r = await runJob(
        { schema, description: job.description, urls: JSON.parse(job.suggested_urls), maxSteps: job.max_steps, model },
        { http: this.o.http, llm, validate, validatePartial, signal, progress },
      );
      if (signal.aborted) throw signal.reason;
      await this.persist(job.id, () => this.svc.finishJob(job.id, owner, { status: "succeeded", result: JSON.stringify(r.result), result_meta: JSON.stringify(r.meta), error: null, error_code: null, ...usage() }));
    } catch (e) {
      const reason = signal.aborted ? signal.reason : e;
      if (reason instanceof Cancelled) {
        await this.persist(job.id, () => this.svc.recordCancelledUsage(job.id, usage()));
        return;
      }
      if (reason instanceof Shutdown) {
        await this.persist(job.id, () => release(this.m.ctx.db, job.id, owner));
        return;
      }
      const err = reason instanceof JobError ? reason : new JobError("FETCH_FAILED", `unexpected error: ${(reason as Error)?.message ?? String(reason)}`);
      if (!(reason instanceof JobError)) this.m.ctx.log.warn("extraction job: unexpected error", { job: job.id, error: String(reason) });
      await this.persist(job.id, () =>
        this.svc.finishJob(job.id, owner, {
          status: "failed",
          result: null,
          result_meta: err.meta ? JSON.stringify(err.meta) : null,
          error: `${err.code}: ${err.message}`,
          error_code: err.code,
          ...usage(),
        }),
      );
    } finally {
      clearTimeout(deadline);
      clearInterval(heartbeat);
    }
  }
}
