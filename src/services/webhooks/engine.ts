/**
 * The shared webhook engine: products emit events into the core outbox inside their own
 * write transaction; the pump fans each event out to the scope's endpoints and delivers
 * with signed POSTs, retries on the fixed schedule and auto-disables failing endpoints.
 *
 * Guarantees and how they are kept:
 * - Nothing lost on a crash: emit is an outbox insert in the product's transaction; the
 *   fan-out (event row + one delivery row per endpoint + outbox row marked) is one
 *   transaction; a delivery is only finished after the receiver answered. A crash between
 *   send and record repeats the send after the lease: at-least-once, receivers dedupe on
 *   webhook-id.
 * - No delivery sent twice at the same time: a pump claims a delivery by setting
 *   lease_until_ms (conditional UPDATE, in the transaction that picked the due rows; on
 *   PostgreSQL those rows are locked FOR UPDATE SKIP LOCKED, so several nodes claim
 *   different deliveries), and records the outcome fenced by that lease value. The lease
 *   outlives the reply deadline, so it only expires for a pump that died. Endpoint failure
 *   streaks are counted by the UPDATE itself, so outcomes recorded at once all count.
 * - Emits committed on any node kick the pump (a notification on the emitting transaction);
 *   the scheduled pump (every second) catches anything else.
 * - A slow receiver only slows itself: in-flight attempts are capped per endpoint (8, or 2
 *   once its latest attempt timed out) and globally; a full endpoint is skipped by the claim
 *   query and the slots of the others are refilled as soon as any attempt ends, without
 *   waiting for the slow one (which the reply deadline ends after at most 15 s). Attempts
 *   older than slowAfterMs leave the global pool (only a hard maxInFlight still bounds
 *   them), so even several dead endpoints cannot starve healthy ones.
 * - Throughput: the envelope is serialised once at fan-out; outcomes that complete together
 *   are recorded in one transaction; the claim query reads only ids (bodies are read for
 *   claimed rows). Secrets are decrypted once per ciphertext and kept in memory.
 *
 * Status vocabulary (ARCHITECTURE.md): delivery pending | delivered | failed | not_sent.
 */
import type { AppContext } from "../../context";
import { tx, type Sql } from "../../core/db";
import { invalidField, notFound } from "../../core/errors";
import { prefixedId } from "../../core/ids";
import type { JobDefinition } from "../../core/scheduler";
import * as store from "./store/deliveries";
import {
  AUTO_DISABLE_AFTER_MS,
  AUTO_DISABLE_FAILURES,
  EVENT_RETENTION_MS,
  MAX_ATTEMPTS,
  RETRY_DELAYS_MS,
  type AttemptResult,
  type Product,
  type Scope,
} from "./types";
import { SignedSender, type Outcome } from "./sender";
import { DEFAULT_ENGINE_OPTIONS, type DeliverStats, type WebhookEngineOptions } from "./engine-options";
import { SCOPE_PREFIX, envelope, parseScope, parseTypes } from "./envelope";

/** Legacy X-<Product>-Signature headers stop at the spec's sunset. */
export { LEGACY_SUNSET_MS } from "./sender";

export { DEFAULT_ENGINE_OPTIONS, type DeliverStats, type WebhookEngineOptions };

/** A delivery this pump holds the lease of, with what the attempt needs. */
interface Claimed extends store.DueRow {
  target: store.SendTarget;
  body: string;
  leaseUntil: number;
}

const PURGE_BATCH = 500;

/**
 * Notification channel of committed emits: emit notifies on the caller's transaction, so the
 * pump is kicked once that transaction has committed (never for a rolled-back one), on every
 * node listening (PostgreSQL NOTIFY; in-process on SQLite).
 */
export const KICK_CHANNEL = "bunker_webhooks";

/** What the engine needs to know of the products (catalogue.ts: EventCatalogue). */
export interface ProductDirectory {
  hasProduct(product: string): boolean;
  legacyHeader(product: string): string | undefined;
  envelopeScopeField(product: string): string | undefined;
}

export class WebhookEngine {
  /** Tunables; mutable so tests and benches can adjust a running app's engine. */
  readonly options: WebhookEngineOptions;

  private inflightTotal = 0;
  /** Start (performance.now) of each attempt in flight, by delivery id. */
  private readonly inflightStart = new Map<string, number>();
  private readonly inflightByEndpoint = new Map<string, number>();
  private readonly flights = new Set<Promise<unknown>>();
  /** Drain loops waiting for a free slot or new work. */
  private readonly wakers = new Set<() => void>();
  /** Counts wake() calls: a drain that was busy claiming when one came does not wait for the next. */
  private wakeSeq = 0;
  private background: Promise<void> | null = null;
  /** The fan-out loop of pump() while it runs, and whether a pump asked for another round meanwhile. */
  private dispatching: Promise<void> | null = null;
  private dispatchAgain = false;
  /** Claims run one at a time (the in-flight counters they read must not change under them). */
  private fillChain: Promise<unknown> = Promise.resolve();
  private kickScheduled = false;
  private stopping = false;
  /** Endpoints whose latest attempt timed out (see capOf). */
  private readonly timingOut = new Set<string>();
  private recordQueue: { c: Claimed; res: Outcome; resolve: (ok: boolean) => void }[] = [];
  private flushScheduled = false;
  /** The outcome batch being written: one at a time, so endpoint health is read and written in order. */
  private flushing: Promise<void> | null = null;
  /** Transaction handles that already carry a kick notification (one per transaction is enough). */
  private readonly kicked = new WeakSet<Sql>();
  private unlisten: Promise<(() => Promise<void>) | null>;
  private readonly sender: SignedSender;

  constructor(
    private readonly ctx: AppContext,
    private readonly products: ProductDirectory,
    options: Partial<WebhookEngineOptions> = {},
  ) {
    this.options = { ...DEFAULT_ENGINE_OPTIONS, ...options };
    // Read at each attempt: tests shorten the deadline through app.webhooks.options.
    this.sender = new SignedSender(ctx, () => this.options.replyDeadlineMs, (product) => products.legacyHeader(product));
    ctx.metrics.gauge("bunker_webhook_backlog", "Webhook events waiting for fan-out (outbox) and deliveries waiting for an attempt.", async () => [
      [{ stage: "outbox" }, await ctx.events.pendingCount(SCOPE_PREFIX)],
      [{ stage: "deliveries" }, await store.countPendingDeliveries(ctx.db)],
    ]);
    // Emits committed anywhere (this node or another) kick the pump.
    this.unlisten = ctx.db
      .listen(KICK_CHANNEL, () => {
        if (this.options.autoKick) this.kick();
      })
      .catch((e) => {
        // Without it new events wait for the scheduled pump (every second): slower, not lost.
        ctx.log.warn("webhook kick notifications unavailable", { error: (e as Error).message });
        return null;
      });
  }

  /**
   * Resolves once the kick notifications are subscribed (or known to be unavailable). On
   * PostgreSQL LISTEN is a round trip: an emit committed before it would wait for the
   * scheduled pump, so the app finishes starting only after this.
   */
  async ready(): Promise<void> {
    await this.unlisten;
  }

  // ------------------------------------------------------------------ emit

  /**
   * Records an event for a scope's endpoints on `t`: pass the transaction of the change it
   * describes, so the two commit or roll back together. The pump is kicked once `t` commits.
   */
  async emit(t: Sql, scope: Scope, type: string, data: unknown): Promise<{ id: string }> {
    if (!this.products.hasProduct(scope.product)) throw invalidField("product", `unknown webhook product "${scope.product}"`);
    if (!scope.scopeId) throw invalidField("scope_id", "must not be empty");
    if (!type) throw invalidField("type", "must not be empty");
    const { id } = await this.ctx.events.record(t, { type, scope: `${SCOPE_PREFIX}${scope.product}:${scope.scopeId}`, data });
    // A notification on t goes out only if t commits: the kick never runs before the event
    // is visible, and a rolled-back transaction kicks nothing.
    if (this.options.autoKick && !this.kicked.has(t)) {
      // The database handle itself (no transaction) notifies at every emit.
      if (t !== this.ctx.db) this.kicked.add(t);
      await t.notify(KICK_CHANNEL);
    }
    return { id };
  }

  // ------------------------------------------------------------------ fan-out

  /**
   * Moves up to `limit` undispatched webhook outbox rows into webhook_events, with one
   * pending delivery per endpoint receiving the type, in one transaction. Outbox rows of
   * other scopes are left alone. Returns how many outbox rows were taken.
   */
  dispatchPending(limit = this.options.dispatchBatch): Promise<number> {
    const { clock, log } = this.ctx;
    const now = clock.nowMs();
    const at = clock.iso();
    const receivers = new Map<string, { id: string; types: Set<string> | null | "invalid" }[]>();
    // The outbox's claim runs this inside one transaction and marks the rows dispatched:
    // another process or node can't take the same rows (PostgreSQL: locked, skipped).
    return this.ctx.events.claim(SCOPE_PREFIX, limit, async (r, t) => {
      const scope = parseScope(r.scope);
      if (!scope) {
        log.warn("webhook outbox row with a malformed scope skipped", { id: r.id, scope: r.scope });
        return;
      }
      const body = envelope({ id: r.id, type: r.type, created_at: r.created_at, dataJson: r.data, scopeField: this.products.envelopeScopeField(scope.product), scopeId: scope.scopeId });
      const createdMs = Date.parse(r.created_at);
      const fresh = await store.insertEvent(t, {
        id: r.id,
        product: scope.product,
        scope_id: scope.scopeId,
        type: r.type,
        body,
        is_test: 0,
        created_at: r.created_at,
        created_ms: Number.isFinite(createdMs) ? createdMs : now,
      });
      if (!fresh) return;
      const key = `${scope.product}:${scope.scopeId}`;
      let eps = receivers.get(key);
      if (!eps) {
        eps = (await store.selectReceivingEndpoints(t, scope.product, scope.scopeId)).map((e) => ({ id: e.id, types: parseTypes(e.event_types) }));
        receivers.set(key, eps);
      }
      for (const ep of eps) {
        if (ep.types === "invalid") continue;
        if (ep.types !== null && !ep.types.has(r.type)) continue;
        await store.insertDelivery(t, { id: prefixedId("dlv"), event_id: r.id, endpoint_id: ep.id, next_attempt_ms: now, at });
      }
    });
  }

  // ------------------------------------------------------------------ delivery

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

  /**
   * One pump step, as run by the scheduler and kick(): fan out the outbox, then start
   * sending in the background. Resolves once the fan-out is done (sends go on); a running
   * background drain is woken to pick up the new work instead of starting a second one.
   * A pump while another one fans out makes that one go round once more.
   */
  pump(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (this.dispatching) {
      this.dispatchAgain = true;
      return this.dispatching;
    }
    const run = (async () => {
      try {
        do {
          this.dispatchAgain = false;
          const batch = this.options.dispatchBatch;
          // A burst is fanned out in one go (each batch is its own short transaction).
          for (let i = 0; i < 50 && !this.stopping && (await this.dispatchPending(batch)) === batch; i++);
        } while (this.dispatchAgain && !this.stopping);
      } catch (e) {
        this.ctx.log.error("webhook dispatch failed", { error: (e as Error).message });
      } finally {
        this.dispatching = null;
      }
      this.startBackground();
    })();
    this.dispatching = run;
    return run;
  }

  private startBackground() {
    if (this.stopping) return;
    if (this.background) {
      this.wake();
      return;
    }
    this.background = this.deliverDue()
      .then(
        () => undefined,
        (e) => this.ctx.log.error("webhook delivery failed", { error: (e as Error).message }),
      )
      .finally(() => {
        this.background = null;
      });
  }

  /** Runs a pump soon (after the current task), coalescing many calls into one. */
  kick(): void {
    if (this.kickScheduled || this.stopping) return;
    this.kickScheduled = true;
    setImmediate(() => {
      this.kickScheduled = false;
      // pump() logs its own failures.
      void this.pump();
    });
  }

  /** Stops claiming new work and waits for attempts in flight (graceful shutdown). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.dispatching;
    while (this.flights.size) await Promise.allSettled([...this.flights]);
    await this.background;
    await this.flushing;
    const unlisten = await this.unlisten;
    if (unlisten) await unlisten().catch(() => undefined);
  }

  private wake() {
    this.wakeSeq++;
    if (!this.wakers.size) return;
    const ws = [...this.wakers];
    this.wakers.clear();
    for (const w of ws) w();
  }

  /** Claims due deliveries into the free slots and starts them, one claim at a time. Resolves each attempt to success. */
  private fill(): Promise<Promise<boolean>[]> {
    const run = this.fillChain.then(() => this.fillOnce());
    this.fillChain = run.catch(() => undefined);
    return run;
  }

  private async fillOnce(): Promise<Promise<boolean>[]> {
    if (this.stopping) return [];
    const { db, clock } = this.ctx;
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
          if (!(await store.claimLease(t, r.id, now, leaseUntil))) continue;
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
        if (res.error_class === "timeout") this.timingOut.add(c.endpoint_id);
        else this.timingOut.delete(c.endpoint_id);
        return await this.record(c, res);
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

  /**
   * Queues the outcome; outcomes that arrive together are written in one transaction (one
   * commit per batch instead of per attempt). Resolves to whether the attempt succeeded.
   */
  private record(c: Claimed, res: Outcome): Promise<boolean> {
    const { promise, resolve } = Promise.withResolvers<boolean>();
    this.recordQueue.push({ c, res, resolve });
    this.scheduleFlush();
    return promise;
  }

  /** Writes the queued outcomes soon; while a batch is being written the next one waits for it. */
  private scheduleFlush() {
    if (this.flushScheduled || this.flushing) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flushing = this.flushRecords().finally(() => {
        this.flushing = null;
        if (this.recordQueue.length) this.scheduleFlush();
      });
    });
  }

  /** Never rejects: every queued outcome is resolved, recorded or not. */
  private async flushRecords(): Promise<void> {
    const batch = this.recordQueue;
    this.recordQueue = [];
    const { db, log } = this.ctx;
    try {
      await tx(db, async (t) => {
        for (const item of batch) await this.recordScheduled(t, item.c, item.res);
      });
    } catch (e) {
      // One bad record must not cost the others: write them one by one.
      log.warn("webhook outcome batch failed, recording one by one", { error: (e as Error).message });
      for (const item of batch) {
        try {
          await tx(db, (t) => this.recordScheduled(t, item.c, item.res));
        } catch (err) {
          // Not recorded (e.g. the database is gone at shutdown): the lease expires and the
          // delivery is tried again, so nothing is lost.
          log.error("webhook attempt could not be recorded", { delivery: item.c.id, error: (err as Error).message });
        }
      }
    }
    for (const item of batch) {
      this.ctx.metrics.count("bunker_webhook_attempts_total", "Scheduled webhook delivery attempts by outcome.", { outcome: item.res.succeeded ? "succeeded" : "failed" });
      item.resolve(item.res.succeeded);
    }
  }

  /** Outcome of a scheduled attempt: attempt log, delivery schedule, endpoint health. Runs inside the transaction `t`. */
  private async recordScheduled(t: Sql, c: Claimed, res: Outcome): Promise<void> {
    const { clock } = this.ctx;
    const now = clock.nowMs();
    const at = clock.iso();
    const health = await store.selectEndpointHealth(t, c.endpoint_id);
    // Endpoint deleted while the attempt was in flight: its deliveries are gone too.
    if (!health) return;
    await store.insertAttempt(t, {
      id: prefixedId("att"),
      delivery_id: c.id,
      event_id: c.event_id,
      endpoint_id: c.endpoint_id,
      trigger: c.attempts === 0 ? "scheduled" : "retry",
      status_code: res.status_code,
      latency_ms: res.latency_ms,
      error_class: res.error_class,
      response_body: res.response_body,
      created_at: at,
      created_ms: now,
    });
    const attempts = c.attempts + 1;
    if (res.succeeded) {
      await store.finishAttempt(t, { id: c.id, leaseUntilMs: c.leaseUntil, status: "delivered", attempts, nextAttemptMs: null, statusCode: res.status_code, error: null, at });
      await store.recordEndpointSuccess(t, c.endpoint_id, res.status_code!, at);
      return;
    }
    const exhausted = attempts >= MAX_ATTEMPTS;
    await store.finishAttempt(t, {
      id: c.id,
      leaseUntilMs: c.leaseUntil,
      status: exhausted ? "failed" : "pending",
      attempts,
      nextAttemptMs: exhausted ? null : now + RETRY_DELAYS_MS[attempts - 1],
      statusCode: res.status_code,
      error: res.error,
      at,
    });
    // The streak is counted by the UPDATE itself (failures recorded at once on several nodes all count).
    const streak = await store.recordEndpointFailure(t, c.endpoint_id, { statusCode: res.status_code, at });
    if (!streak) return;
    const failures = streak.consecutive_failures;
    const firstFailureAt = streak.first_failure_at;
    const failingSince = Date.parse(firstFailureAt);
    if (streak.status === "enabled" && (failures >= AUTO_DISABLE_FAILURES || now - failingSince >= AUTO_DISABLE_AFTER_MS)) {
      await store.autoDisableEndpoint(t, c.endpoint_id, at);
      const dropped = await store.dropPendingOfEndpoint(t, c.endpoint_id, at);
      this.ctx.log.warn("webhook endpoint auto-disabled", { endpoint: c.endpoint_id, consecutive_failures: failures, first_failure_at: firstFailureAt, dropped });
    }
  }

  // ------------------------------------------------------------------ test / replay

  /**
   * One signed attempt of a stored event to an endpoint, for the test and replay
   * operations: logged in webhook_attempts with that trigger, never retried, and it leaves
   * the delivery's retry schedule alone. The endpoint's last_status_code and last_attempt_at
   * record it like any attempt. Endpoint health follows the spec's "one successful delivery
   * clears consecutive_failures and first_failure_at": a 2xx to a replay or a test is a
   * successful delivery to that receiver, so it clears the streak (the status stays as it
   * is: only PATCH enabled:true lifts an auto-disable). A failed manual send does not add to
   * the streak: a test or replay someone is running by hand must not push an endpoint into
   * auto-disable. It is sent whatever the endpoint's status (checking a disabled endpoint is
   * a use of it).
   */
  async sendOnce(endpointId: string, eventId: string, trigger: "test" | "replay", deliveryId: string | null = null): Promise<AttemptResult> {
    const { db, clock } = this.ctx;
    const target = await store.selectSendTarget(db, endpointId);
    if (!target) throw notFound("Webhook endpoint");
    const event = await store.selectEventBody(db, eventId);
    if (!event) throw notFound("Webhook event");
    const res = await this.sender.post(target, event.id, event.body);
    try {
      await tx(db, async (t) => {
        if (!(await store.selectSendTarget(t, endpointId)) || !(await store.selectEventBody(t, eventId))) return;
        await store.insertAttempt(t, {
          id: prefixedId("att"),
          delivery_id: deliveryId,
          event_id: eventId,
          endpoint_id: endpointId,
          trigger,
          status_code: res.status_code,
          latency_ms: res.latency_ms,
          error_class: res.error_class,
          response_body: res.response_body,
          created_at: clock.iso(),
          created_ms: clock.nowMs(),
        });
        if (res.succeeded) await store.recordEndpointSuccess(t, endpointId, res.status_code!, clock.iso());
        else await store.recordEndpointAttempt(t, endpointId, res.status_code, clock.iso());
      });
    } catch (e) {
      this.ctx.log.error("webhook manual attempt could not be logged", { endpoint: endpointId, event: eventId, error: (e as Error).message });
    }
    const { error: _error, ...result } = res;
    return result;
  }

  // ------------------------------------------------------------------ retention and jobs

  /** Deletes events older than the retention window (their deliveries and attempts go with them). */
  async purgeExpired(): Promise<number> {
    const { db, clock } = this.ctx;
    const cutoff = clock.nowMs() - EVENT_RETENTION_MS;
    let total = 0;
    for (;;) {
      const n = await tx(db, (t) => store.deleteEventsBefore(t, cutoff, PURGE_BATCH));
      total += n;
      if (n < PURGE_BATCH) return total;
    }
  }

  jobs(): JobDefinition[] {
    // pump() resolves once the fan-out is done (sends run in the background), so the
    // scheduler never skips ticks because of a slow receiver and new events are fanned out
    // every second.
    return [
      { name: "webhooks.pump", schedule: "* * * * * *", run: () => this.pump() },
      {
        name: "webhooks.purge",
        schedule: "0 41 3 * * *",
        run: async () => {
          await this.purgeExpired();
        },
      },
    ];
  }
}

export type { Product, Scope };
