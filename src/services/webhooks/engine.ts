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
 *   lease_until_ms (conditional UPDATE), and records the outcome fenced by that lease value.
 *   The lease outlives the reply deadline, so it only expires for a pump that died.
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
import { tx } from "../../core/db";
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
  private background: Promise<void> | null = null;
  private kickScheduled = false;
  private stopping = false;
  /** Decrypted secrets by ciphertext: AES-GCM per attempt is wasted work at 1,000+/s. */
  /** Endpoints whose latest attempt timed out (see capOf). */
  private readonly timingOut = new Set<string>();
  private recordQueue: { c: Claimed; res: Outcome; resolve: (ok: boolean) => void }[] = [];
  private flushScheduled = false;
  private readonly sender: SignedSender;

  constructor(
    private readonly ctx: AppContext,
    private readonly products: ProductDirectory,
    options: Partial<WebhookEngineOptions> = {},
  ) {
    this.options = { ...DEFAULT_ENGINE_OPTIONS, ...options };
    // Read at each attempt: tests shorten the deadline through app.webhooks.options.
    this.sender = new SignedSender(ctx, () => this.options.replyDeadlineMs, (product) => products.legacyHeader(product));
    ctx.metrics.gauge("bunker_webhook_backlog", "Webhook events waiting for fan-out (outbox) and deliveries waiting for an attempt.", () => [
      [{ stage: "outbox" }, ctx.events.pendingCount(SCOPE_PREFIX)],
      [{ stage: "deliveries" }, store.countPendingDeliveries(ctx.db)],
    ]);
  }

  // ------------------------------------------------------------------ emit

  /**
   * Records an event for a scope's endpoints. Synchronous: call it inside the transaction
   * of the change it describes, so the two commit or roll back together.
   */
  emit(scope: Scope, type: string, data: unknown): { id: string } {
    if (!this.products.hasProduct(scope.product)) throw invalidField("product", `unknown webhook product "${scope.product}"`);
    if (!scope.scopeId) throw invalidField("scope_id", "must not be empty");
    if (!type) throw invalidField("type", "must not be empty");
    const { id } = this.ctx.events.record({ type, scope: `${SCOPE_PREFIX}${scope.product}:${scope.scopeId}`, data });
    // bun:sqlite transactions are synchronous, so by the time the kick runs (setImmediate)
    // the caller's transaction has committed or rolled back; a rolled-back one finds nothing.
    if (this.options.autoKick) this.kick();
    return { id };
  }

  // ------------------------------------------------------------------ fan-out

  /**
   * Moves up to `limit` undispatched webhook outbox rows into webhook_events, with one
   * pending delivery per endpoint receiving the type, in one transaction. Outbox rows of
   * other scopes are left alone. Returns how many outbox rows were taken.
   */
  dispatchPending(limit = this.options.dispatchBatch): number {
    const { db, clock, log } = this.ctx;
    const now = clock.nowMs();
    const at = clock.iso();
    const receivers = new Map<string, { id: string; types: Set<string> | null | "invalid" }[]>();
    // The outbox's claim runs this inside one IMMEDIATE transaction and marks the rows
    // dispatched: another process can't take the same rows.
    return this.ctx.events.claim(SCOPE_PREFIX, limit, (r) => {
      const scope = parseScope(r.scope);
      if (!scope) {
        log.warn("webhook outbox row with a malformed scope skipped", { id: r.id, scope: r.scope });
        return;
      }
      const body = envelope({ id: r.id, type: r.type, created_at: r.created_at, dataJson: r.data, scopeField: this.products.envelopeScopeField(scope.product), scopeId: scope.scopeId });
      const createdMs = Date.parse(r.created_at);
      const fresh = store.insertEvent(db, {
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
        eps = store.selectReceivingEndpoints(db, scope.product, scope.scopeId).map((e) => ({ id: e.id, types: parseTypes(e.event_types) }));
        receivers.set(key, eps);
      }
      for (const ep of eps) {
        if (ep.types === "invalid") continue;
        if (ep.types !== null && !ep.types.has(r.type)) continue;
        store.insertDelivery(db, { id: prefixedId("dlv"), event_id: r.id, endpoint_id: ep.id, next_attempt_ms: now, at });
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
    const refill = () => {
      for (const attempt of this.fill()) {
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
    refill();
    while (mine.size) {
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
      refill();
    }
    return stats;
  }

  /**
   * One pump step, as run by the scheduler and kick(): fan out the outbox, then start
   * sending in the background. Returns at once; a running background drain is woken to
   * pick up the new work instead of starting a second one.
   */
  pump(): void {
    if (this.stopping) return;
    try {
      const batch = this.options.dispatchBatch;
      // A burst is fanned out in one go (each batch is its own short transaction).
      for (let i = 0; i < 50 && this.dispatchPending(batch) === batch; i++);
    } catch (e) {
      this.ctx.log.error("webhook dispatch failed", { error: (e as Error).message });
    }
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
      this.pump();
    });
  }

  /** Stops claiming new work and waits for attempts in flight (graceful shutdown). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    while (this.flights.size) await Promise.allSettled([...this.flights]);
    await this.background;
  }

  private wake() {
    if (!this.wakers.size) return;
    const ws = [...this.wakers];
    this.wakers.clear();
    for (const w of ws) w();
  }

  /** Claims due deliveries into the free slots and starts them. Resolves each to success. */
  private fill(): Promise<boolean>[] {
    if (this.stopping) return [];
    const { db, clock } = this.ctx;
    const { maxConcurrency, leaseMs } = this.options;
    const started: Promise<boolean>[] = [];
    const now = clock.nowMs();
    const at = clock.iso();
    // A few rounds: when the first rows all belong to endpoints that fill up, the next
    // round excludes those and reaches the others.
    for (let round = 0; round < 4; round++) {
      const free = Math.min(maxConcurrency - this.youngInFlight(), this.options.maxInFlight - this.inflightTotal);
      if (free <= 0) break;
      const full: string[] = [];
      for (const [id, n] of this.inflightByEndpoint) if (n >= this.capOf(id)) full.push(id);
      const limit = free + this.options.perEndpointConcurrency;
      const rows = store.selectDue(db, now, JSON.stringify(full), limit);
      if (!rows.length) break;
      const picked: store.DueRow[] = [];
      const notSent: string[] = [];
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
      const leaseUntil = now + leaseMs;
      const claimed = tx(db, () => {
        for (const id of notSent) store.markNotSent(db, id, at);
        const targets = new Map<string, store.SendTarget | null>();
        const out: Claimed[] = [];
        for (const r of picked) {
          if (!store.claimLease(db, r.id, now, leaseUntil)) continue;
          if (!targets.has(r.endpoint_id)) targets.set(r.endpoint_id, store.selectSendTarget(db, r.endpoint_id));
          const target = targets.get(r.endpoint_id);
          const event = store.selectEventBody(db, r.event_id);
          // Foreign keys with cascades make both always present; a lease that expires
          // untouched is the safe outcome if that ever breaks.
          if (target && event) out.push({ ...r, target, body: event.body, leaseUntil });
        }
        return out;
      });
      for (const c of claimed) started.push(this.startAttempt(c));
      if (rows.length < limit || (!claimed.length && !notSent.length)) break;
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
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flushRecords());
    }
    return promise;
  }

  private flushRecords() {
    this.flushScheduled = false;
    const batch = this.recordQueue;
    this.recordQueue = [];
    const { db, log } = this.ctx;
    try {
      tx(db, () => {
        for (const item of batch) this.recordScheduled(item.c, item.res);
      });
    } catch (e) {
      // One bad record must not cost the others: write them one by one.
      log.warn("webhook outcome batch failed, recording one by one", { error: (e as Error).message });
      for (const item of batch) {
        try {
          tx(db, () => this.recordScheduled(item.c, item.res));
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

  /** Outcome of a scheduled attempt: attempt log, delivery schedule, endpoint health. Runs inside a transaction. */
  private recordScheduled(c: Claimed, res: Outcome) {
    const { db, clock } = this.ctx;
    const now = clock.nowMs();
    const at = clock.iso();
    const health = store.selectEndpointHealth(db, c.endpoint_id);
    // Endpoint deleted while the attempt was in flight: its deliveries are gone too.
    if (!health) return;
    store.insertAttempt(db, {
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
      store.finishAttempt(db, { id: c.id, leaseUntilMs: c.leaseUntil, status: "delivered", attempts, nextAttemptMs: null, statusCode: res.status_code, error: null, at });
      store.recordEndpointSuccess(db, c.endpoint_id, res.status_code!, at);
      return;
    }
    const exhausted = attempts >= MAX_ATTEMPTS;
    store.finishAttempt(db, {
      id: c.id,
      leaseUntilMs: c.leaseUntil,
      status: exhausted ? "failed" : "pending",
      attempts,
      nextAttemptMs: exhausted ? null : now + RETRY_DELAYS_MS[attempts - 1],
      statusCode: res.status_code,
      error: res.error,
      at,
    });
    const failures = health.consecutive_failures + 1;
    const firstFailureAt = health.first_failure_at ?? at;
    store.recordEndpointFailure(db, c.endpoint_id, { consecutiveFailures: failures, firstFailureAt, statusCode: res.status_code, at });
    const failingSince = Date.parse(firstFailureAt);
    if (health.status === "enabled" && (failures >= AUTO_DISABLE_FAILURES || now - failingSince >= AUTO_DISABLE_AFTER_MS)) {
      store.autoDisableEndpoint(db, c.endpoint_id, at);
      const dropped = store.dropPendingOfEndpoint(db, c.endpoint_id, at);
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
    const target = store.selectSendTarget(db, endpointId);
    if (!target) throw notFound("Webhook endpoint");
    const event = store.selectEventBody(db, eventId);
    if (!event) throw notFound("Webhook event");
    const res = await this.sender.post(target, event.id, event.body);
    try {
      tx(db, () => {
        if (!store.selectSendTarget(db, endpointId) || !store.selectEventBody(db, eventId)) return;
        store.insertAttempt(db, {
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
        if (res.succeeded) store.recordEndpointSuccess(db, endpointId, res.status_code!, clock.iso());
        else store.recordEndpointAttempt(db, endpointId, res.status_code, clock.iso());
      });
    } catch (e) {
      this.ctx.log.error("webhook manual attempt could not be logged", { endpoint: endpointId, event: eventId, error: (e as Error).message });
    }
    const { error: _error, ...result } = res;
    return result;
  }

  // ------------------------------------------------------------------ retention and jobs

  /** Deletes events older than the retention window (their deliveries and attempts go with them). */
  purgeExpired(): number {
    const { db, clock } = this.ctx;
    const cutoff = clock.nowMs() - EVENT_RETENTION_MS;
    let total = 0;
    for (;;) {
      const n = tx(db, () => store.deleteEventsBefore(db, cutoff, PURGE_BATCH));
      total += n;
      if (n < PURGE_BATCH) return total;
    }
  }

  jobs(): JobDefinition[] {
    // pump() returns at once (sends run in the background), so the scheduler never skips
    // ticks because of a slow receiver and new events are fanned out every second.
    return [
      { name: "webhooks.pump", schedule: "* * * * * *", run: () => this.pump() },
      { name: "webhooks.purge", schedule: "0 41 3 * * *", run: () => void this.purgeExpired() },
    ];
  }
}

export type { Product, Scope };
