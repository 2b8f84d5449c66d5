/**
 * The deprecated per-scope webhook surface (the extraction-job service's "legacy workspace
 * webhook record", kept for every workspace product until the sunset on 15 January 2027):
 *
 *   {scope}/webhooks                      GET list (page), POST create
 *   {scope}/webhooks/{id}                 GET, PATCH {url, active, events}, DELETE
 *   {scope}/webhooks/{id}/deliveries      GET recent attempts
 *   {scope}/webhooks/{id}/rotate-secret   POST
 *   {scope}/webhooks/{id}/test            POST (asynchronous)
 *
 * A legacy webhook is an ordinary row of webhook_endpoints with legacy = 1, an id prefixed
 * whk_ and a pre-move secret (generateLegacySecret: a plain string, used as stored). The
 * shared engine delivers to it like to any endpoint; because legacy = 1 every delivery also
 * carries X-<Product>-Signature (t=<unix>,v1=<hex HMAC of "<t>.<body>" keyed by the secret
 * string) next to the Standard Webhooks headers (keyed by the secret's UTF-8 bytes, so a
 * receiver verifies with "whsec_" + base64(secret)).
 *
 * Decisions the spec leaves open:
 * - Legacy and shared endpoints share the cap of 10 per scope (409 ENDPOINT_LIMIT_REACHED).
 *   The shared surface ({scope}/webhooks/endpoints) also lists and manages legacy rows; this
 *   surface only shows legacy rows (a shared endpoint's ep_ id here is 400 naming id: not a
 *   legacy id; the route's schema says so before any lookup).
 * - The record has exactly the spec's fields: id, workspace_id, url, active, failure_count,
 *   last_status_code, last_attempt_at, auto_disabled_at, first_failure_at, created_at
 *   (signing_secret on create and rotate only). Create takes url and active, PATCH url and
 *   active, as the spec lists; a legacy webhook receives every event type of its product.
 *   An event filter, if wanted, is set through the shared route, which lists legacy rows
 *   too (event_types).
 * - `active` is true exactly when the endpoint is enabled and its status is enabled.
 *   PATCH active:true on an inactive webhook re-enables it and clears the auto-disable:
 *   status enabled, failure_count (consecutive_failures) 0, first_failure_at and
 *   auto_disabled_at null. PATCH active:false pauses it (enabled false) and drops queued
 *   retries. Both are the shared endpoint update (same state machine).
 * - rotate-secret answers 201 with a new legacy secret and has NO grace period: the old
 *   secret stops signing at once. The legacy header is only ever signed with the current
 *   secret, so a grace period would keep just one of the two headers verifiable; a clean cut
 *   keeps both schemes consistent (the shared route with grace_hours remains available).
 * - test answers 202 {accepted, event_id} at once. The synthetic event (catalogue example
 *   with test: true, logged with is_test) gets its own delivery row that starts as not_sent,
 *   which the pump never picks up, and is sent once by engine.sendOnce in the background
 *   (a tracked promise, see idle()). Its outcome finishes that row (delivered / failed) and
 *   the attempt (trigger test) appears in the deliveries list. Test sends are never retried;
 *   like the shared test send, a 2xx clears the failure streak and a failure does not add to it.
 * - deliveries lists attempts (not delivery rows): limit default 50, max 200, newest first.
 */
import type { AppContext } from "../../context";
import { tx, type Sql } from "../../core/db";
import { badRequest, invalidField, notFound } from "../../core/errors";
import { prefixedId } from "../../core/ids";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../core/pagination";
import type { Actor, ManualSender, ResolvedScope } from "./endpoints";
import type { WebhookService } from "./service";
import { generateLegacySecret } from "./signing";
import type { Scope } from "./types";
import * as endpointsStore from "./store/endpoints";
import * as store from "./store/legacy";
import { legacyWebhookView, type LegacyAttemptView, type LegacyWebhookView } from "./views";

/** Sunset of the legacy routes (and of the legacy signature header), as the Sunset header writes it. */
export const LEGACY_SUNSET = "Fri, 15 Jan 2027 00:00:00 GMT";
/** Headers of every response of the legacy routes. */
export const DEPRECATION_HEADERS = { deprecation: "true", sunset: LEGACY_SUNSET } as const;

export const LEGACY_LIST_DEFAULT = 20;
export const LEGACY_LIST_MAX = 100;
export const DELIVERIES_DEFAULT = 50;
export const DELIVERIES_MAX = 200;

export interface LegacyInput {
  url?: unknown;
  active?: unknown;
}

export class LegacyWebhookService {
  /** Background test sends in flight. */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    readonly ctx: AppContext,
    readonly api: WebhookService,
    private readonly sender: ManualSender,
  ) {}

  view(r: endpointsStore.EndpointRow): LegacyWebhookView {
    return legacyWebhookView(r);
  }

  /** The legacy webhook of this scope, or 404 (another scope's id or a shared endpoint's id too). */
  async row(db: Sql, scope: Scope, id: string): Promise<endpointsStore.EndpointRow> {
    const r = await store.legacyInScope(db, scope.product, scope.scopeId, id);
    if (!r) throw notFound("Webhook");
    return r;
  }

  // ------------------------------------------------------------------ operations

  async list(scope: Scope, q: { limit?: unknown; cursor?: string }): Promise<Page<LegacyWebhookView>> {
    const limit = parseLimit(q.limit, LEGACY_LIST_DEFAULT, LEGACY_LIST_MAX);
    const c = decodeCursor<{ c?: unknown; id?: unknown }>(q.cursor);
    if (c && (typeof c.c !== "string" || typeof c.id !== "string")) {
      throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");
    }
    const rows = await store.listLegacy(this.ctx.db, scope.product, scope.scopeId, c ? { created_at: c.c as string, id: c.id as string } : null, limit + 1);
    return buildPage(rows, limit, (r) => ({ c: r.created_at, id: r.id }), (r) => this.view(r));
  }

  async get(scope: Scope, id: string): Promise<LegacyWebhookView> {
    return this.view(await this.row(this.ctx.db, scope, id));
  }

  /** Returns the record and the plaintext secret, which the caller shows once. */
  async create(scope: ResolvedScope, input: LegacyInput, actor: Actor): Promise<{ view: LegacyWebhookView; secret: string }> {
    const url = this.api.endpoints.validateUrl(input.url);
    if (input.active !== undefined && typeof input.active !== "boolean") throw invalidField("active", "must be true or false");
    const active = input.active !== false;
    const secret = generateLegacySecret();
    const id = prefixedId("whk");
    // Shares the shared surface's cap (one count for both) and its "paused" state.
    await this.api.endpoints.insertWithinCap(scope, actor, {
      id, url, description: "", eventTypes: [], secret, legacy: true, paused: !active, auditMetadata: { url, active, legacy: true },
    });
    return { view: await this.get(scope, id), secret };
  }

  async update(scope: ResolvedScope, id: string, input: LegacyInput, actor: Actor): Promise<LegacyWebhookView> {
    await this.row(this.ctx.db, scope, id);
    if (input.active !== undefined && typeof input.active !== "boolean") throw invalidField("active", "must be true or false");
    // The shared update: url validation, re-enable (clears consecutive_failures,
    // first_failure_at, auto_disabled_at) and pause (drops queued retries).
    await this.api.endpoints.update(this.ctx.db, scope, id, { url: input.url, enabled: input.active }, actor);
    return this.get(scope, id);
  }

  async remove(scope: ResolvedScope, id: string, actor: Actor): Promise<void> {
    await this.row(this.ctx.db, scope, id);
    // Deliveries (queued retries included) and attempts go with the endpoint.
    await this.api.endpoints.remove(this.ctx.db, scope, id, actor);
  }

  /** A new legacy secret, effective at once (no grace period: see the module comment). */
  async rotateSecret(scope: ResolvedScope, id: string, actor: Actor): Promise<{ view: LegacyWebhookView; secret: string }> {
    const secret = generateLegacySecret();
    await tx(this.ctx.db, async (t) => {
      await this.row(t, scope, id);
      await endpointsStore.setSecrets(t, id, { secret_enc: this.ctx.secretBox.encrypt(secret), prev_secret_enc: null, prev_secret_expires_ms: null }, this.ctx.clock.iso());
      await this.api.endpoints.audit(t, scope, actor, "webhooks.endpoint.rotate_secret", id, { grace_hours: 0, legacy: true });
    });
    return { view: await this.get(scope, id), secret };
  }

  async deliveries(scope: Scope, id: string, q: { limit?: unknown }): Promise<{ data: LegacyAttemptView[] }> {
    const limit = parseLimit(q.limit, DELIVERIES_DEFAULT, DELIVERIES_MAX);
    const ep = await this.row(this.ctx.db, scope, id);
    return { data: (await store.recentAttempts(this.ctx.db, ep.id, limit)).map((a) => ({ ...a })) };
  }

  /**
   * Records a synthetic test event for the webhook and sends it once in the background.
   * Returns as soon as the event is recorded.
   */
  async test(scope: Scope, id: string, eventType: unknown): Promise<{ accepted: true; event_id: string }> {
    const ep = await this.row(this.ctx.db, scope, id);
    const { eventId, deliveryId } = await this.api.endpoints.prepareTestEvent(scope, ep.id, eventType);

    const run: Promise<void> = (async () => {
      try {
        const r = await this.sender.sendOnce(ep.id, eventId, "test", deliveryId);
        await this.api.endpoints.finishManual(deliveryId, r);
      } catch (e) {
        // The webhook was deleted meanwhile, or the app is shutting down: nothing to record.
        this.ctx.log.warn("legacy webhook test send not recorded", { endpoint: ep.id, event: eventId, error: (e as Error).message });
      }
    })();
    this.pending.add(run);
    void run.finally(() => this.pending.delete(run));
    return { accepted: true, event_id: eventId };
  }

  /** Resolves once every background test send started so far has been sent and recorded. */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }
}
