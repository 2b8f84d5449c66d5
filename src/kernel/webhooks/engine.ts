/**
 * The shared webhook engine: products emit events into the core outbox inside their own
 * write transaction; the pump fans each event out to the scope's endpoints and delivers
 * with signed POSTs, retries on the fixed schedule and auto-disables failing endpoints.
 *
 * WebhookEngine is the one object products, routes and tests hold. It builds the parts and
 * keeps the scheduling that ties them together (below); the work is in:
 * - outbox.ts: emit() and the fan-out of outbox rows into events and deliveries;
 * - delivery-pump.ts: claiming due deliveries and the attempts in flight (concurrency caps);
 * - attempts.ts: recording outcomes (retries, endpoint health, auto-disable) and the one-off
 *   test/replay sends; sender.ts: one signed POST.
 *
 * Scheduling and wake-up (here):
 * - Emits committed on any node kick the pump (a notification on the emitting transaction,
 *   heard through the database's LISTEN); the scheduled pump (every second) catches
 *   anything else.
 * - A pump fans the outbox out, then leaves the sending to one background drain per
 *   process; later pumps wake that drain instead of starting another, so the scheduler never
 *   waits on a slow receiver.
 * - Secrets are decrypted once per ciphertext and kept in memory (sender.ts); outcomes that
 *   complete together are recorded in one transaction (attempts.ts).
 *
 * Status vocabulary (ARCHITECTURE.md): delivery pending | delivered | failed | not_sent.
 */
import type { AppContext } from "../../context";
import { tx, type Sql } from "../../core/db";
import type { JobDefinition } from "../../core/scheduler";
import { AttemptRecorder } from "./attempts";
import { DeliveryPump } from "./delivery-pump";
import { DEFAULT_ENGINE_OPTIONS, type DeliverStats, type WebhookEngineOptions } from "./engine-options";
import { SCOPE_PREFIX } from "./envelope";
import { KICK_CHANNEL, WebhookOutbox, type ProductDirectory } from "./outbox";
import { SignedSender } from "./sender";
import * as store from "./store/deliveries";
import { EVENT_RETENTION_MS, type AttemptResult, type Product, type Scope } from "./types";

/** Legacy X-<Product>-Signature headers stop at the spec's sunset. */
export { LEGACY_SUNSET_MS } from "./sender";

export { DEFAULT_ENGINE_OPTIONS, KICK_CHANNEL, type DeliverStats, type ProductDirectory, type WebhookEngineOptions };

const PURGE_BATCH = 500;

export class WebhookEngine {
  /** Tunables; mutable so tests and benches can adjust a running app's engine. */
  readonly options: WebhookEngineOptions;

  private readonly outbox: WebhookOutbox;
  private readonly recorder: AttemptRecorder;
  private readonly deliveries: DeliveryPump;
  private background: Promise<void> | null = null;
  /** The fan-out loop of pump() while it runs, and whether a pump asked for another round meanwhile. */
  private dispatching: Promise<void> | null = null;
  private dispatchAgain = false;
  private kickScheduled = false;
  private stopping = false;
  private unlisten: Promise<(() => Promise<void>) | null>;

  constructor(
    private readonly ctx: AppContext,
    products: ProductDirectory,
    options: Partial<WebhookEngineOptions> = {},
  ) {
    this.options = { ...DEFAULT_ENGINE_OPTIONS, ...options };
    // Read at each attempt: tests shorten the deadline through app.webhooks.options.
    const sender = new SignedSender(ctx, () => this.options.replyDeadlineMs, (product) => products.legacyHeader(product));
    this.outbox = new WebhookOutbox(ctx, products, this.options);
    this.recorder = new AttemptRecorder(ctx, sender);
    this.deliveries = new DeliveryPump(ctx, this.options, sender, this.recorder, () => this.stopping);
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

  // ------------------------------------------------------------------ the parts' operations

  /** Records an event on `t`, the transaction of the change it describes (outbox.ts). */
  emit(t: Sql, scope: Scope, type: string, data: unknown): Promise<{ id: string }> {
    return this.outbox.emit(t, scope, type, data);
  }

  /** Fans out up to `limit` outbox rows (outbox.ts). */
  dispatchPending(limit?: number): Promise<number> {
    return this.outbox.dispatchPending(limit);
  }

  /** Sends every due delivery and resolves when none it started is in flight (delivery-pump.ts). */
  deliverDue(): Promise<DeliverStats> {
    return this.deliveries.deliverDue();
  }

  /** One logged test or replay attempt (attempts.ts). */
  sendOnce(endpointId: string, eventId: string, trigger: "test" | "replay", deliveryId: string | null = null): Promise<AttemptResult> {
    return this.recorder.sendOnce(endpointId, eventId, trigger, deliveryId);
  }

  // ------------------------------------------------------------------ scheduling and wake-up

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
      this.deliveries.wake();
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
    this.deliveries.wake();
    await this.dispatching;
    await this.deliveries.settled();
    await this.background;
    await this.recorder.flushed();
    const unlisten = await this.unlisten;
    if (unlisten) await unlisten().catch(() => undefined);
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
