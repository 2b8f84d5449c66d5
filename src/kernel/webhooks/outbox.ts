/**
 * The engine's way in and first step: emit() records a product's event in core's outbox
 * inside the product's own transaction, and dispatchPending() fans committed outbox rows out
 * into webhook_events with one pending delivery per receiving endpoint (delivery-pump.ts
 * sends those).
 *
 * Nothing is lost on a crash: emit is an outbox insert in the product's transaction, and
 * the fan-out (event row + one delivery row per endpoint + outbox row marked) is one
 * transaction. The envelope is serialised once, here.
 */
import type { AppContext } from "../../context";
import type { Sql } from "../../core/db";
import { invalidField } from "../../core/errors";
import { prefixedId } from "../../core/ids";
import type { WebhookEngineOptions } from "./engine-options";
import { SCOPE_PREFIX, envelope, parseScope, parseTypes } from "./envelope";
import * as store from "./store/deliveries";
import type { Scope } from "./types";

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

export class WebhookOutbox {
  /** Transaction handles that already carry a kick notification (one per transaction is enough). */
  private readonly kicked = new WeakSet<Sql>();

  constructor(
    private readonly ctx: AppContext,
    private readonly products: ProductDirectory,
    private readonly options: WebhookEngineOptions,
  ) {}

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
}
