/**
 * The delivery queue as product surfaces use it (the community's webhook records): one
 * endpoint's attempts with their request bodies, a delivery by reference, a delivery put
 * back into the queue, and a one-endpoint event queued like any delivery. The engine's
 * delivery pump (delivery-pump.ts) claims and sends what is queued here.
 */
import type { AppContext } from "../../context";
import { tx, type Sql } from "../../core/db";
import { insertDelivery } from "./store/deliveries";
import { insertEvent } from "./store/events-log";
import * as store from "./store/queue";
import type { Scope } from "./types";

export type { DeliveryRef, EndpointAttemptRow } from "./store/queue";

export class DeliveryQueue {
  constructor(private readonly ctx: AppContext) {}

  /** Attempts made to one endpoint, newest first, keyset-paged by (created_ms, id). */
  attemptsOfEndpoint(endpointId: string, before: { ms: number; id: string } | null, limit: number): Promise<store.EndpointAttemptRow[]> {
    return store.attemptsOfEndpoint(this.ctx.db, endpointId, before, limit);
  }

  /** A delivery of one endpoint, by its id (dlv_...) or by the id of one of its attempts (att_...). On `db` (the caller's transaction, or ctx.db). */
  deliveryOfEndpoint(db: Sql, endpointId: string, ref: string): Promise<store.DeliveryRef | null> {
    return store.deliveryOfEndpoint(db, endpointId, ref);
  }

  /** Due now with a fresh retry schedule; false while an attempt of it is in flight. */
  requeue(db: Sql, deliveryId: string): Promise<boolean> {
    return store.requeueDelivery(db, deliveryId, this.ctx.clock.nowMs(), this.ctx.clock.iso());
  }

  /**
   * Logs an event (is_test) for one endpoint of the scope and queues its delivery, due now:
   * signing, the attempt log, retries and the failure streak are those of any delivery.
   * `body` is the envelope, sent byte for byte; `createdAt` the time it names. Both rows are
   * written in one transaction on `db` (a savepoint when it is the caller's transaction).
   */
  async enqueueTestEvent(db: Sql, scope: Scope, endpointId: string, e: { eventId: string; deliveryId: string; type: string; body: string; createdAt: string }): Promise<void> {
    const now = this.ctx.clock.iso();
    const nowMs = this.ctx.clock.nowMs();
    await tx(db, async (t) => {
      await insertEvent(t, { id: e.eventId, product: scope.product, scope_id: scope.scopeId, type: e.type, body: e.body, is_test: 1, created_at: e.createdAt, created_ms: Date.parse(e.createdAt) });
      await insertDelivery(t, { id: e.deliveryId, event_id: e.eventId, endpoint_id: endpointId, next_attempt_ms: nowMs, at: now });
    });
  }
}
