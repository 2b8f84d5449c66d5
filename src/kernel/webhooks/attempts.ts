/**
 * What an attempt leaves behind: the attempt log, the delivery's schedule (delivered, retry
 * later, failed after the last attempt) and the endpoint's health (failure streak,
 * auto-disable). Scheduled attempts (delivery-pump.ts) are recorded in batches; test and
 * replay attempts (sendOnce) are sent and recorded here one at a time.
 *
 * A scheduled outcome is fenced by the claim's lease value, so a pump whose lease ran out
 * cannot overwrite a newer attempt's outcome. A 2xx is written at once, on its own
 * (markDelivered), before it joins a batch: a batch can wait behind the one being written
 * (on PostgreSQL several round trips per outcome), and a crash while answered deliveries
 * wait there would send them all again. Endpoint failure streaks are counted by the
 * UPDATE itself, so outcomes recorded at once (on several nodes) all count.
 */
import type { AppContext } from "../../context";
import { tx, type Sql } from "../../core/db";
import { notFound } from "../../core/errors";
import { prefixedId } from "../../core/ids";
import type { Outcome, SignedSender } from "./sender";
import * as store from "./store/deliveries";
import { AUTO_DISABLE_AFTER_MS, AUTO_DISABLE_FAILURES, MAX_ATTEMPTS, RETRY_DELAYS_MS, type AttemptResult } from "./types";

/** A delivery a pump holds the lease of, with what the attempt needs. */
export interface Claimed extends store.DueRow {
  target: store.SendTarget;
  body: string;
  leaseUntil: number;
}

export class AttemptRecorder {
  private recordQueue: { c: Claimed; res: Outcome; resolve: (ok: boolean) => void }[] = [];
  private flushScheduled = false;
  /** The outcome batch being written: one at a time, so endpoint health is read and written in order. */
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly ctx: AppContext,
    private readonly sender: SignedSender,
  ) {}

  /** Resolves once the batch being written (if any) is written (graceful shutdown). */
  async flushed(): Promise<void> {
    await this.flushing;
  }

  /**
   * The receiver answered 2xx: the delivery is delivered, written now (not with the batch).
   * False when the lease was lost meanwhile (nothing written).
   */
  markDelivered(c: Claimed, res: Outcome): Promise<boolean> {
    const at = this.ctx.clock.iso();
    return store.finishAttempt(this.ctx.db, { id: c.id, leaseUntilMs: c.leaseUntil, status: "delivered", attempts: c.attempts + 1, nextAttemptMs: null, statusCode: res.status_code, error: null, at });
  }

  /**
   * Queues the outcome; outcomes that arrive together are written in one transaction (one
   * commit per batch instead of per attempt). Resolves to whether the attempt succeeded.
   */
  record(c: Claimed, res: Outcome): Promise<boolean> {
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
      // Written already when the answer came (markDelivered); this only matters if that failed.
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
}
