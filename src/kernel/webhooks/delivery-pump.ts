/**
 * Sending due deliveries: claims them under a lease, starts one signed POST each within the
 * concurrency limits, and hands each outcome to the recorder (attempts.ts).
 *
 * - No delivery sent twice at the same time: a claim sets lease_until_ms (conditional
 *   UPDATE, in the transaction that picked the due rows; on PostgreSQL those rows are locked
 *   FOR UPDATE SKIP LOCKED, so several nodes claim different deliveries). The lease outlives
 *   the reply deadline, so it only expires for a pump that died; a crash between send and
 *   record repeats the send (at-least-once, receivers dedupe on webhook-id). A 2xx is
 *   recorded as soon as it comes (attempts.ts markDelivered), so that window is one write.
 * - Leases carry their owner, `<node>/<process>` (core/node-id.ts). A node's first claim
 *   after a start ends the leases its previous process died holding, so a restarted node
 *   sends those deliveries at once instead of after the lease; other nodes' are untouched.
 * - A slow receiver only slows itself: in-flight attempts are capped per endpoint (8, or 2
 *   once its latest attempt timed out) and globally; a full endpoint is skipped by the claim
 *   query and the slots of the others are refilled as soon as any attempt ends, without
 *   waiting for the slow one (which the reply deadline ends after at most 15 s). Attempts
 *   older than slowAfterMs leave the global pool (only a hard maxInFlight still bounds
 *   them), so even several dead endpoints cannot starve healthy ones.
 * - The claim query reads only ids; bodies are read for claimed rows.
 *
 * The in-flight counters live here, in memory: they are this process's sockets.
 */
import type { AppContext } from "../../context";
import { tx } from "../../core/db";
import { nodeOf } from "../../core/node-id";
import type { AttemptRecorder, Claimed } from "./attempts";
import type { DeliverStats, WebhookEngineOptions } from "./engine-options";
import type { SignedSender } from "./sender";
import * as store from "./store/deliveries";

export class DeliveryPump {
  private inflightTotal = 0;
  /** Start (performance.now) of each attempt in flight, by delivery id. */
  private readonly inflightStart = new Map<string, number>();
  private readonly inflightByEndpoint = new Map<string, number>();
  private readonly flights = new Set<Promise<unknown>>();
  /** Endpoints whose latest attempt timed out (see capOf). */
  private readonly timingOut = new Set<string>();
  /** Drain loops waiting for a free slot or new work. */
  private readonly wakers = new Set<() => void>();
  /** Counts wake() calls: a drain that was busy claiming when one came does not wait for the next. */
  private wakeSeq = 0;
  /** Claims run one at a time (the in-flight counters they read must not change under them). */
  private fillChain: Promise<unknown> = Promise.resolve();
  /** The first claim's take-back of the leases this node's previous process died holding. */
  private reclaimed = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly options: WebhookEngineOptions,
    private readonly sender: SignedSender,
    private readonly recorder: AttemptRecorder,
    /** The engine is shutting down: claim nothing more. */
    private readonly stopping: () => boolean,
  ) {}

  /**
   * Sends every due delivery (with bounded concurrency) and returns when none of the
   * attempts it started is in flight and nothing more is due. Slots freed by fast receivers
   * are refilled while slow ones are still pending.
   */
  async deliverDue(): Promise<DeliverStats> {
    const stats: DeliverStats = { attempted: 0, delivered: 0, failed: 0 };
    const mine = new Set<Promise<void>>();
    const refill = async () => {
      for (const attempt of await this.fill()) {
        const tracked: Promise<void> = attempt.then((ok) => {
          stats.attempted++;
          if (ok) stats.delivered++;
          else stats.failed++;
          mine.delete(tracked);
          // Any drain (this one or another) may use the freed slot.
          this.wake();
        });
        mine.add(tracked);
      }
    };
    let seen = this.wakeSeq;
    await refill();
    for (;;) {
      if (!mine.size) {
        // Attempts that ended while the last claim ran may have freed an endpoint it passed
        // over as full: one more claim before this drain ends.
        seen = this.wakeSeq;
        await refill();
        if (!mine.size) break;
        continue;
      }
      // A wake that came while this drain was claiming is not waited for again.
      if (this.wakeSeq === seen) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            this.wakers.delete(done);
            resolve();
          };
          // Also look again once the attempts in flight count as slow: if they are stuck,
          // their slots go back to the pool then (see maxConcurrency).
          const timer = setTimeout(done, this.options.slowAfterMs);
          timer.unref();
          this.wakers.add(done);
        });
      }
      seen = this.wakeSeq;
      await refill();
    }
    return stats;
  }

  /** Tells waiting drains to look again: a slot was freed, new work came, or the engine stops. */
  wake() {
    this.wakeSeq++;
    if (!this.wakers.size) return;
    const ws = [...this.wakers];
    this.wakers.clear();
    for (const w of ws) w();
  }

  /** Resolves once no attempt is in flight (graceful shutdown, after stopping() turned true). */
  async settled(): Promise<void> {
    while (this.flights.size) await Promise.allSettled([...this.flights]);
  }

  /** Claims due deliveries into the free slots and starts them, one claim at a time. Resolves each attempt to success. */
  private fill(): Promise<Promise<boolean>[]> {
    const run = this.fillChain.then(() => this.fillOnce());
    this.fillChain = run.catch(() => undefined);
    return run;
  }

  private async fillOnce(): Promise<Promise<boolean>[]> {
    if (this.stopping()) return [];
    const { db, clock } = this.ctx;
    const node = nodeOf(this.ctx);
    if (!this.reclaimed) {
      const n = await store.reclaimInterrupted(db, node.patterns);
      this.reclaimed = true;
      if (n) this.ctx.log.info("webhook deliveries interrupted by a stop are due again", { count: n, node: node.id });
    }
    const { maxConcurrency, leaseMs } = this.options;
    const started: Promise<boolean>[] = [];
    const now = clock.nowMs();
    const at = clock.iso();
    // A few rounds: when the first rows all belong to endpoints that fill up, the next
    // round excludes those and reaches the others.
    for (let round = 0; round < 4; round++) {
      const leaseUntil = now + leaseMs;
      let limit = 0;
      // Picked and leased in one transaction: on PostgreSQL the due rows are locked while
      // this runs and other nodes skip them; everywhere the lease is the claim. The free
      // slots are counted when the transaction runs, not before: on SQLite it may start a
      // moment later (group commit), after attempts in flight have ended.
      const { rows, claimed, notSent } = await tx(db, async (t) => {
        const free = Math.min(maxConcurrency - this.youngInFlight(), this.options.maxInFlight - this.inflightTotal);
        if (free <= 0) return { rows: 0, claimed: [] as Claimed[], notSent: 0 };
        const full: string[] = [];
        for (const [id, n] of this.inflightByEndpoint) if (n >= this.capOf(id)) full.push(id);
        limit = free + this.options.perEndpointConcurrency;
        const rows = await store.selectDue(t, now, full, limit);
        const picked: store.DueRow[] = [];
        const notSent: string[] = [];
        const claimed: Claimed[] = [];
        if (!rows.length) return { rows: 0, claimed, notSent: 0 };
        const adding = new Map<string, number>();
        for (const r of rows) {
          if (picked.length >= free) break;
          if (this.inflightStart.has(r.id)) continue;
          if (r.enabled !== 1 || r.status !== "enabled") {
            notSent.push(r.id);
            continue;
          }
          const n = (this.inflightByEndpoint.get(r.endpoint_id) ?? 0) + (adding.get(r.endpoint_id) ?? 0);
          if (n >= this.capOf(r.endpoint_id)) continue;
          adding.set(r.endpoint_id, (adding.get(r.endpoint_id) ?? 0) + 1);
          picked.push(r);
        }
        for (const id of notSent) await store.markNotSent(t, id, at);
        const targets = new Map<string, store.SendTarget | null>();
        for (const r of picked) {
          if (!(await store.claimLease(t, r.id, now, leaseUntil, node.owner))) continue;
          if (!targets.has(r.endpoint_id)) targets.set(r.endpoint_id, await store.selectSendTarget(t, r.endpoint_id));
          const target = targets.get(r.endpoint_id);
          const event = await store.selectEventBody(t, r.event_id);
          // Foreign keys with cascades make both always present; a lease that expires
          // untouched is the safe outcome if that ever breaks.
          if (target && event) claimed.push({ ...r, target, body: event.body, leaseUntil });
        }
        return { rows: rows.length, claimed, notSent: notSent.length };
      });
      if (!rows) break;
      for (const c of claimed) started.push(this.startAttempt(c));
      if (rows < limit || (!claimed.length && !notSent)) break;
    }
    return started;
  }

  /**
   * Attempts in flight that are not slow yet. Real elapsed time (performance.now), not the
   * domain clock: this is about sockets actually waiting, and tests move the clock by hours.
   */
  private youngInFlight(): number {
    const since = performance.now() - this.options.slowAfterMs;
    let n = 0;
    for (const t of this.inflightStart.values()) if (t > since) n++;
    return n;
  }

  /**
   * Slots an endpoint may hold. One whose last attempt timed out gets fewer: a dead
   * receiver would otherwise keep perEndpointConcurrency slots waiting out the deadline
   * again and again, and a handful of dead endpoints could take the whole global pool.
   */
  private capOf(endpointId: string): number {
    const cap = this.options.perEndpointConcurrency;
    return this.timingOut.has(endpointId) ? Math.min(cap, this.options.slowEndpointConcurrency) : cap;
  }

  private startAttempt(c: Claimed): Promise<boolean> {
    this.inflightTotal++;
    this.inflightStart.set(c.id, performance.now());
    this.inflightByEndpoint.set(c.endpoint_id, (this.inflightByEndpoint.get(c.endpoint_id) ?? 0) + 1);
    const run = (async () => {
      try {
        const res = await this.sender.post(c.target, c.event_id, c.body);
        // Before anything else: a crash from here on must not send it again.
        if (res.succeeded) await this.recorder.markDelivered(c, res).catch((e: Error) => this.ctx.log.warn("webhook delivery could not be marked delivered", { delivery: c.id, error: e.message }));
        if (res.error_class === "timeout") this.timingOut.add(c.endpoint_id);
        else this.timingOut.delete(c.endpoint_id);
        return await this.recorder.record(c, res);
      } finally {
        this.inflightTotal--;
        this.inflightStart.delete(c.id);
        const n = (this.inflightByEndpoint.get(c.endpoint_id) ?? 1) - 1;
        if (n > 0) this.inflightByEndpoint.set(c.endpoint_id, n);
        else this.inflightByEndpoint.delete(c.endpoint_id);
      }
    })();
    this.flights.add(run);
    void run.finally(() => this.flights.delete(run));
    return run;
  }
}
