/**
 * The community service's webhook records (spec 3): /social/v1/communities/{id}/webhooks.
 *
 *   POST   /webhooks                                   create (url, event_types) -> 201 with signing_secret once
 *   GET    /webhooks                                   every subscriber of the community, disabled ones included
 *   GET    /webhooks/{id}, PATCH (url, event_types, disabled), DELETE
 *   POST   /webhooks/{id}/rotate-secret                new secret; also re-enables
 *   GET    /webhooks/{id}/deliveries                   attempts with request body, response, error class, latency
 *   POST   /webhooks/{id}/test                         202; a signed ping through the delivery queue
 *   POST   /webhooks/{id}/deliveries/{dlv}/redeliver   202; the same bytes and event id, through the queue
 *
 * A subscriber is an ordinary webhook endpoint (product social, scope = the community,
 * legacy = 1, id whk_...), read and written through WebhookService (this service touches
 * no webhook_* table): the shared engine fans out, signs, retries and auto-disables it
 * like any endpoint, and because legacy = 1 every delivery carries X-Svc-Signature
 * (t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by the signing secret string)
 * next to the Standard Webhooks headers. The shared routes under the same scope
 * ({scope}/webhooks/endpoints, /events) see and manage these rows too.
 *
 * Decisions the spec leaves open:
 * - signing_secret is a Standard Webhooks secret (whsec_...): the same string verifies both
 *   schemes (as a whsec_ secret for webhook-signature, as the HMAC key string for
 *   X-Svc-Signature). Later reads show signing_secret_hint (last 4).
 * - event_types: a subscriber receives exactly the types it lists. Omitted or empty means
 *   every type of the catalogue at that moment, stored as an explicit list, so types added
 *   later never fire for it until it subscribes to them (PATCH event_types). Unknown types
 *   (ping included: it is not subscribable) are 400 naming the valid set.
 * - The cap of 10 per community is shared with the shared-route endpoints of the same scope
 *   (409 ENDPOINT_LIMIT_REACHED). This surface lists only its own records.
 * - disabled is true when paused (PATCH disabled:true, disabled_reason manual: queued
 *   retries are dropped) or auto-disabled by the engine (20 consecutive failures or 24 h of
 *   only failures: disabled_reason failing, queued retries dropped). disabled_at is the
 *   auto-disable time, or for a manual pause the row's last change (the pause itself unless
 *   the record was edited through the shared routes while paused).
 * - PATCH disabled:false and rotate-secret both re-enable and clear the failure streak
 *   (consecutive_failures, first_failure_at), even on a subscriber that was not disabled.
 *   Dropped deliveries are not brought back (redeliver them one by one).
 * - rotate-secret answers 200 and has no grace period: the old secret stops at once (the
 *   X-Svc-Signature header can only carry one signature; the shared route offers grace).
 * - test records a ping event ({id, type: "ping", created_at, community_id, data:
 *   {webhook_id}}, is_test in the events log) with one delivery to this subscriber only and
 *   queues it: signing, the attempt log, retries and the failure streak are those of any
 *   delivery. A disabled subscriber gets nothing from the queue, so test and redeliver on
 *   one are 409 WEBHOOK_DISABLED (re-enable first; the shared test route sends to any state).
 * - redeliver takes the delivery id (delivery_id of a deliveries item; the item's own att_
 *   id is accepted too) and puts that delivery back into the queue due now with a fresh
 *   retry schedule: the stored envelope is sent again byte for byte under the same event id
 *   (webhook-id), freshly signed. 409 DELIVERY_IN_FLIGHT while an attempt of it is running.
 * - deliveries: attempts newest first (scheduled, retry, test, replay), limit default 50,
 *   max 200, cursor pages; attempt_number counts every attempt of that event to the subscriber.
 * - Every route of this surface answers with Deprecation: true and Sunset (15 January 2027),
 *   like the other products' old {scope}/webhooks routes.
 */
import type { AppContext } from "../../../context";
import { tx, type Sql } from "../../../core/db";
import { badRequest, conflict, invalidField, notFound } from "../../../core/errors";
import { prefixedId } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../../core/pagination";
import { type Actor, type EndpointRecord, type ResolvedScope, type WebhookEngine, type WebhookService, generateSecret, type Scope } from "../../../kernel/webhooks";
import { communityAttemptView, communityWebhookView, type CommunityAttemptView, type CommunityWebhookView } from "./views";

export const PING_TYPE = "ping";
export const COMMUNITY_DELIVERIES_DEFAULT = 50;
export const COMMUNITY_DELIVERIES_MAX = 200;

export interface CommunityWebhookInput {
  url?: unknown;
  event_types?: unknown;
  disabled?: unknown;
}

export interface Queued {
  accepted: true;
  event_id: string;
  delivery_id: string;
}

export class CommunityWebhookService {
  constructor(
    readonly ctx: AppContext,
    private readonly api: WebhookService,
    private readonly engine: WebhookEngine,
  ) {}

  private view(r: EndpointRecord): CommunityWebhookView {
    return communityWebhookView(r, this.api.endpoints.secretHint(r));
  }

  /** A subscriber of this community created through this surface, or 404. On `db`: a transaction, or ctx.db. */
  async row(db: Sql, scope: Scope, id: string): Promise<EndpointRecord> {
    const r = await this.api.endpoints.findLegacy(db, scope, id);
    if (!r) throw notFound("Webhook");
    return r;
  }

  /** The explicit subscription: given types (validated), or every current type when omitted or empty. */
  private subscription(scope: Scope, v: unknown): string[] {
    if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) return this.api.catalogue.types(scope.product);
    return this.api.endpoints.validateEventTypes(scope.product, v);
  }

  private kick() {
    // Tests turn autoKick off and drive the engine themselves.
    if (this.engine.options.autoKick) this.engine.kick();
  }

  private requireEnabled(r: EndpointRecord) {
    if (r.enabled !== 1 || r.status !== "enabled") throw conflict("The webhook is disabled; re-enable it first (PATCH disabled: false)", "WEBHOOK_DISABLED");
  }

  // ------------------------------------------------------------------ operations

  async list(scope: Scope): Promise<{ data: CommunityWebhookView[]; pagination: { next_cursor: null; has_more: false } }> {
    // At most 10 per community (the shared cap), so one page holds them all.
    const rows = await this.api.endpoints.listLegacy(scope, 1000);
    return { data: rows.map((r) => this.view(r)), pagination: { next_cursor: null, has_more: false } };
  }

  async get(scope: Scope, id: string): Promise<CommunityWebhookView> {
    return this.view(await this.row(this.ctx.db, scope, id));
  }

  /** Returns the record and the plaintext secret, which the caller shows once. */
  async create(scope: ResolvedScope, input: CommunityWebhookInput, actor: Actor): Promise<{ view: CommunityWebhookView; secret: string }> {
    const url = this.api.endpoints.validateUrl(input.url);
    const eventTypes = this.subscription(scope, input.event_types);
    const secret = generateSecret();
    const id = prefixedId("whk");
    await this.api.endpoints.insertWithinCap(scope, actor, {
      id, url, description: "", eventTypes, secret, legacy: true, auditMetadata: { url, event_types: eventTypes, legacy: true, surface: "community" },
    });
    return { view: await this.get(scope, id), secret };
  }

  async update(scope: ResolvedScope, id: string, input: CommunityWebhookInput, actor: Actor): Promise<CommunityWebhookView> {
    if (input.disabled !== undefined && typeof input.disabled !== "boolean") throw invalidField("disabled", "must be true or false");
    return tx(this.ctx.db, async (t) => {
      await this.row(t, scope, id);
      const eventTypes = input.event_types === undefined ? undefined : this.subscription(scope, input.event_types);
      // The shared update: url validation, and the pause (enabled false, queued retries
      // dropped) for disabled:true.
      await this.api.endpoints.update(t, scope, id, { url: input.url, event_types: eventTypes, enabled: input.disabled === true ? false : undefined }, actor);
      if (input.disabled === false) {
        await this.api.endpoints.reenable(t, id);
        await this.api.endpoints.audit(t, scope, actor, "webhooks.endpoint.update", id, { fields: ["disabled"], disabled: false, legacy: true });
      }
      return this.view(await this.row(t, scope, id));
    });
  }

  async remove(scope: ResolvedScope, id: string, actor: Actor): Promise<void> {
    await this.row(this.ctx.db, scope, id);
    await this.api.endpoints.remove(this.ctx.db, scope, id, actor);
  }

  /** A new secret, effective at once (no grace period), and the subscriber re-enabled. */
  async rotateSecret(scope: ResolvedScope, id: string, actor: Actor): Promise<{ view: CommunityWebhookView; secret: string }> {
    const secret = generateSecret();
    await tx(this.ctx.db, async (t) => {
      await this.row(t, scope, id);
      await this.api.endpoints.replaceSecret(t, id, secret);
      await this.api.endpoints.reenable(t, id);
      await this.api.endpoints.audit(t, scope, actor, "webhooks.endpoint.rotate_secret", id, { grace_hours: 0, legacy: true, reenabled: true });
    });
    return { view: await this.get(scope, id), secret };
  }

  async deliveries(scope: Scope, id: string, q: { limit?: unknown; cursor?: string }): Promise<Page<CommunityAttemptView>> {
    const limit = parseLimit(q.limit, COMMUNITY_DELIVERIES_DEFAULT, COMMUNITY_DELIVERIES_MAX);
    const c = decodeCursor<{ ms?: unknown; id?: unknown }>(q.cursor);
    if (c && (typeof c.ms !== "number" || typeof c.id !== "string")) {
      throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");
    }
    const ep = await this.row(this.ctx.db, scope, id);
    const rows = await this.api.queue.attemptsOfEndpoint(ep.id, c ? { ms: c.ms as number, id: c.id as string } : null, limit + 1);
    return buildPage(rows, limit, (r) => ({ ms: r.created_ms, id: r.id }), communityAttemptView);
  }

  /** Records a ping event for this subscriber only and queues its delivery. */
  async test(scope: Scope, id: string): Promise<Queued> {
    const eventId = prefixedId("evt");
    const deliveryId = prefixedId("dlv");
    await tx(this.ctx.db, async (t) => {
      const ep = await this.row(t, scope, id);
      this.requireEnabled(ep);
      // The community envelope (same field order as the engine's), serialised once: retries
      // and redeliveries send these bytes.
      const createdAt = this.ctx.clock.iso();
      const body = JSON.stringify({ id: eventId, type: PING_TYPE, created_at: createdAt, community_id: scope.scopeId, data: { webhook_id: ep.id } });
      await this.api.queue.enqueueTestEvent(t, scope, ep.id, { eventId, deliveryId, type: PING_TYPE, body, createdAt });
    });
    this.kick();
    return { accepted: true, event_id: eventId, delivery_id: deliveryId };
  }

  /** Puts one delivery of this subscriber back into the queue (same stored body and event id). */
  async redeliver(scope: Scope, id: string, deliveryRef: string): Promise<Queued> {
    const d = await tx(this.ctx.db, async (t) => {
      const ep = await this.row(t, scope, id);
      const d = await this.api.queue.deliveryOfEndpoint(t, ep.id, deliveryRef);
      if (!d) throw notFound("Delivery");
      this.requireEnabled(ep);
      if (!(await this.api.queue.requeue(t, d.id))) {
        throw conflict("An attempt of this delivery is in flight; try again once it has finished", "DELIVERY_IN_FLIGHT");
      }
      return d;
    });
    this.kick();
    return { accepted: true, event_id: d.event_id, delivery_id: d.id };
  }
}
