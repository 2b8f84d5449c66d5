/**
 * Webhook endpoints of one scope (a product's workspace, app or community): create, list,
 * read, update, delete, rotate the signing secret, and send a test event.
 *
 * Decisions the spec leaves open (also in the route descriptions):
 * - The 11th endpoint of a scope is 409 ENDPOINT_LIMIT_REACHED.
 * - Signing secrets are stored encrypted with the master key; the plaintext is in the
 *   create and rotate-secret responses only, later reads show signing_secret_hint (last 4).
 * - `enabled` reads true exactly when the endpoint receives events: false while paused
 *   (PATCH enabled:false) and false while auto_disabled, until PATCH enabled:true (the spec's
 *   "auto_disabled -> PATCH enabled true -> enabled"). `status` says which: enabled |
 *   auto_disabled (disabled_reason "failing" while auto_disabled, else null), so a pause reads
 *   enabled false with status enabled. The row keeps the owner's switch (enabled) and the
 *   engine's verdict (status) apart; the views fold them, as the legacy and board records do.
 *   PATCH enabled:false pauses: enabled false, status unchanged, queued retries dropped
 *   (pending deliveries become not_sent), like an auto-disable does.
 *   PATCH enabled:true on a paused or auto_disabled endpoint sets enabled true and status
 *   "enabled", and clears disabled_reason, consecutive_failures, first_failure_at and
 *   auto_disabled_at.
 * - DELETE removes the endpoint; its deliveries (queued retries included) and its attempt
 *   log go with it. Events themselves stay in the log for the scope's other endpoints.
 * - rotate-secret answers 200. With grace_hours > 0 the previous secret keeps signing (a
 *   second v1 signature) until the grace ends; 0 drops it at once. Rotating again during a
 *   grace period replaces the previous secret with the one being rotated out.
 * - A test send may target any endpoint state (disabled ones included: that is how one
 *   checks a fixed receiver before re-enabling) and any catalogue type, whatever the
 *   endpoint's event_types filter says.
 */
import type { Principal } from "../../access/principal";
import type { RequestMeta } from "../../access/http";
import { lockKey } from "../../core/store/sql";
import { tx, type Sql } from "../../core/db";
import { ApiError, badRequest, conflict, invalidField, notFound } from "../../core/errors";
import { prefixedId } from "../../core/ids";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../core/pagination";
import type { AppContext } from "../../context";
import { audit } from "../tenancy";
import { generateSecret } from "./signing";
import { MAX_ENDPOINTS_PER_SCOPE, type AttemptResult, type EventTypeInfo, type Product, type Scope } from "./types";
import * as store from "./store/endpoints";
import * as log from "./store/events-log";
import * as legacyStore from "./store/legacy";
import { DESCRIPTION_MAX, GRACE_DEFAULT_HOURS, GRACE_MAX_HOURS, URL_MAX } from "./limits";
import { endpointView, type EndpointView } from "./views";

/** An endpoint as stored: product surfaces (the card board's, the community's records) build their views from it. */
export type EndpointRecord = store.EndpointRow;

const HOUR_MS = 3_600_000;

/** A scope as the routes resolve it; workspaceId (when the scope lives in one) goes into audit entries. */
export interface ResolvedScope extends Scope {
  workspaceId?: string | null;
}

/** What the endpoints need of the event catalogue (catalogue.ts: EventCatalogue). */
export interface EventTypeSource {
  label(product: Product): string;
  envelopeScopeField(product: Product): string | undefined;
  has(product: Product, type: string): boolean;
  list(product: Product): EventTypeInfo[];
  types(product: Product): string[];
}

/** What the endpoints need of the delivery engine (engine.ts: WebhookEngine). */
export interface ManualSender {
  sendOnce(endpointId: string, eventId: string, trigger: "test" | "replay", deliveryId?: string): Promise<AttemptResult>;
}

export interface EndpointInput {
  url?: unknown;
  description?: unknown;
  event_types?: unknown;
  enabled?: unknown;
}

export interface TestSendResult extends AttemptResult {
  trigger: "test";
  event_id: string;
}

export interface Actor {
  principal: Principal;
  meta?: RequestMeta;
}

export class EndpointService {
  constructor(
    private readonly ctx: AppContext,
    private readonly catalogue: EventTypeSource,
    private readonly sender: ManualSender,
  ) {}

  view(r: store.EndpointRow): EndpointView {
    return endpointView(r, this.ctx.secretBox.decrypt(r.secret_enc), this.ctx.clock.nowMs());
  }

  /** The endpoint row of this scope on `db` (a transaction, or ctx.db), or 404 (another scope's id is not found either). */
  async row(db: Sql, scope: Scope, id: string): Promise<store.EndpointRow> {
    const r = await store.endpointInScope(db, scope.product, scope.scopeId, id);
    if (!r) throw notFound("Webhook endpoint");
    return r;
  }

  // ------------------------------------------------------------------ reads for product surfaces

  /** The endpoint of this scope, or null (another scope's id too). On `db`: a transaction, or ctx.db. */
  find(db: Sql, scope: Scope, id: string): Promise<EndpointRecord | null> {
    return store.endpointInScope(db, scope.product, scope.scopeId, id);
  }

  /** An endpoint of this scope created through the old routes (legacy = 1), or null. On `db`: a transaction, or ctx.db. */
  findLegacy(db: Sql, scope: Scope, id: string): Promise<EndpointRecord | null> {
    return legacyStore.legacyInScope(db, scope.product, scope.scopeId, id);
  }

  /** The scope's legacy endpoints, newest first (at most `limit`). */
  listLegacy(scope: Scope, limit: number): Promise<EndpointRecord[]> {
    return legacyStore.listLegacy(this.ctx.db, scope.product, scope.scopeId, null, limit);
  }

  count(scope: Scope): Promise<number> {
    return store.countEndpoints(this.ctx.db, scope.product, scope.scopeId);
  }

  /** Every endpoint of the scope, oldest first, one offset page. */
  pageByOffset(scope: Scope, limit: number, offset: number): Promise<EndpointRecord[]> {
    return store.listByOffset(this.ctx.db, scope.product, scope.scopeId, limit, offset);
  }

  /** Last 4 characters of the endpoint's current secret. */
  secretHint(r: EndpointRecord): string {
    return this.ctx.secretBox.decrypt(r.secret_enc).slice(-4);
  }

  /** Enabled, with the failure streak and any auto-disable cleared (whatever its state was). On `db`: a transaction, or ctx.db. */
  reenable(db: Sql, id: string): Promise<void> {
    return store.updateEndpoint(
      db,
      id,
      { enabled: 1, status: "enabled", disabled_reason: null, consecutive_failures: 0, first_failure_at: null, auto_disabled_at: null },
      this.ctx.clock.iso(),
    );
  }

  /** A new signing secret effective at once: no grace period for the old one. On `db`: a transaction, or ctx.db. */
  replaceSecret(db: Sql, id: string, secret: string): Promise<void> {
    return store.setSecrets(db, id, { secret_enc: this.ctx.secretBox.encrypt(secret), prev_secret_enc: null, prev_secret_expires_ms: null }, this.ctx.clock.iso());
  }

  // ------------------------------------------------------------------ validation

  /** Shared by the legacy surface: the same URL rules everywhere. */
  validateUrl(v: unknown): string {
    if (typeof v !== "string" || v.trim() === "") throw invalidField("url", "required");
    const url = v.trim();
    if (url.length > URL_MAX) throw invalidField("url", `at most ${URL_MAX} characters`);
    // Scheme, https in production, no loopback/private targets unless ALLOW_PRIVATE_TARGETS.
    // Name resolution is checked again at every delivery (DNS can change).
    this.ctx.outbound.checkUrl(url);
    return url;
  }

  private description(v: unknown): string {
    if (v === null) return "";
    if (typeof v !== "string") throw invalidField("description", "must be a string");
    if (v.length > DESCRIPTION_MAX) throw invalidField("description", `at most ${DESCRIPTION_MAX} characters`);
    return v;
  }

  /** Shared by the legacy surface, whose field is called `events`. */
  validateEventTypes(product: Product, v: unknown, field = "event_types"): string[] {
    if (v === null) return [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) throw invalidField(field, "must be an array of event type names");
    const unknown = v.filter((x) => !this.catalogue.has(product, x));
    if (unknown.length) throw this.unknownType(field, unknown, product);
    return [...new Set(v as string[])];
  }

  unknownType(field: string, unknown: string[], product: Product): ApiError {
    const valid = this.catalogue.types(product);
    return badRequest(`Unknown event type${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}. Valid types: ${valid.join(", ") || "(none)"}`, [
      { field, reason: `unknown event type ${unknown.join(", ")}; valid: ${valid.join(", ")}` },
    ]);
  }

  // ------------------------------------------------------------------ operations

  async list(scope: Scope, q: { limit?: unknown; cursor?: string }): Promise<Page<EndpointView>> {
    const limit = parseLimit(q.limit, 20, 100);
    const c = decodeCursor<{ id?: unknown }>(q.cursor);
    if (c && typeof c.id !== "string") throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");
    const rows = await store.listEndpoints(this.ctx.db, scope.product, scope.scopeId, (c?.id as string | undefined) ?? null, limit + 1);
    return buildPage(rows, limit, (r) => ({ id: r.id }), (r) => this.view(r));
  }

  async get(scope: Scope, id: string): Promise<EndpointView> {
    return this.view(await this.row(this.ctx.db, scope, id));
  }

  /** Returns the view and the plaintext secret, which the caller shows once. */
  async create(scope: ResolvedScope, input: EndpointInput, actor: Actor): Promise<{ view: EndpointView; secret: string }> {
    const url = this.validateUrl(input.url);
    const description = input.description === undefined ? "" : this.description(input.description);
    const eventTypes = input.event_types === undefined ? [] : this.validateEventTypes(scope.product, input.event_types);
    const secret = generateSecret();
    const id = prefixedId("ep");
    await this.insertWithinCap(scope, actor, { id, url, description, eventTypes, secret, legacy: false, auditMetadata: { url, event_types: eventTypes } });
    return { view: await this.get(scope, id), secret };
  }

  /**
   * Inserts an endpoint of either surface (shared or legacy) under the one cap of
   * MAX_ENDPOINTS_PER_SCOPE per scope, checked and written in one transaction, and audits it.
   * A paused endpoint starts in the state PATCH enabled:false leaves.
   */
  async insertWithinCap(
    scope: ResolvedScope,
    actor: Actor,
    e: { id: string; url: string; description: string; eventTypes: string[]; secret: string; legacy: boolean; paused?: boolean; auditMetadata: Record<string, unknown> },
  ): Promise<void> {
    const now = this.ctx.clock.iso();
    await tx(this.ctx.db, async (t) => {
      // Two creates in one scope on two nodes must not both pass the count.
      await lockKey(t, `webhook-endpoints:${scope.product}:${scope.scopeId}`);
      if ((await store.countEndpoints(t, scope.product, scope.scopeId)) >= MAX_ENDPOINTS_PER_SCOPE) {
        throw conflict(`At most ${MAX_ENDPOINTS_PER_SCOPE} webhook endpoints per ${scope.product} scope; delete one first`, "ENDPOINT_LIMIT_REACHED");
      }
      await store.insertEndpoint(t, {
        id: e.id,
        product: scope.product,
        scope_id: scope.scopeId,
        url: e.url,
        description: e.description,
        event_types: JSON.stringify(e.eventTypes),
        secret_enc: this.ctx.secretBox.encrypt(e.secret),
        legacy: e.legacy ? 1 : 0,
        created_at: now,
        updated_at: now,
      });
      if (e.paused) await store.updateEndpoint(t, e.id, { enabled: 0 }, now);
      await this.audit(t, scope, actor, "webhooks.endpoint.create", e.id, e.auditMetadata);
    });
  }

  /** Runs in one transaction on `db` (a savepoint when it is the caller's transaction). */
  async update(db: Sql, scope: ResolvedScope, id: string, input: EndpointInput, actor: Actor): Promise<EndpointView> {
    const patch: store.EndpointPatch = {};
    if (input.url !== undefined) patch.url = this.validateUrl(input.url);
    if (input.description !== undefined) patch.description = this.description(input.description);
    if (input.event_types !== undefined) patch.event_types = JSON.stringify(this.validateEventTypes(scope.product, input.event_types));
    if (input.enabled !== undefined && typeof input.enabled !== "boolean") throw invalidField("enabled", "must be true or false");
    return tx(db, async (t) => {
      const r = await this.row(t, scope, id);
      const now = this.ctx.clock.iso();
      if (input.enabled === true && (r.enabled !== 1 || r.status !== "enabled")) {
        Object.assign(patch, { enabled: 1, status: "enabled", disabled_reason: null, consecutive_failures: 0, first_failure_at: null, auto_disabled_at: null });
      } else if (input.enabled === false && r.enabled === 1) {
        // A pause leaves status alone: an auto_disabled endpoint paused stays auto_disabled.
        patch.enabled = 0;
        await store.dropQueuedDeliveries(t, id, now);
      }
      if (Object.keys(patch).length === 0) return this.view(r);
      await store.updateEndpoint(t, id, patch, now);
      await this.audit(t, scope, actor, "webhooks.endpoint.update", id, { fields: Object.keys(input).filter((k) => (input as Record<string, unknown>)[k] !== undefined) });
      return this.view(await this.row(t, scope, id));
    });
  }

  /** Runs in one transaction on `db` (a savepoint when it is the caller's transaction). */
  async remove(db: Sql, scope: ResolvedScope, id: string, actor: Actor): Promise<void> {
    await tx(db, async (t) => {
      await this.row(t, scope, id);
      // Cascades: the endpoint's deliveries (queued retries included) and attempts go too.
      await store.deleteEndpoint(t, id);
      await this.audit(t, scope, actor, "webhooks.endpoint.delete", id);
    });
  }

  /**
   * Deletes every endpoint of a scope, of either surface: the owner of the scope (a
   * workspace, an App, a community) is being deleted. Pass the owner's transaction as `db`.
   */
  async removeScope(db: Sql, scope: ResolvedScope, actor: Actor): Promise<void> {
    await tx(db, async (t) => {
      for (const id of await store.endpointIds(t, scope.product, scope.scopeId)) await this.remove(t, scope, id, actor);
    });
  }

  async rotateSecret(scope: ResolvedScope, id: string, graceHours: unknown, actor: Actor): Promise<{ view: EndpointView; secret: string }> {
    const grace = graceHours === undefined || graceHours === null ? GRACE_DEFAULT_HOURS : graceHours;
    if (typeof grace !== "number" || !Number.isInteger(grace) || grace < 0 || grace > GRACE_MAX_HOURS) {
      throw invalidField("grace_hours", `an integer from 0 to ${GRACE_MAX_HOURS}`);
    }
    const secret = generateSecret();
    await tx(this.ctx.db, async (t) => {
      const r = await this.row(t, scope, id);
      await store.setSecrets(
        t,
        id,
        {
          secret_enc: this.ctx.secretBox.encrypt(secret),
          prev_secret_enc: grace > 0 ? r.secret_enc : null,
          prev_secret_expires_ms: grace > 0 ? this.ctx.clock.nowMs() + grace * HOUR_MS : null,
        },
        this.ctx.clock.iso(),
      );
      await this.audit(t, scope, actor, "webhooks.endpoint.rotate_secret", id, { grace_hours: grace });
    });
    return { view: await this.get(scope, id), secret };
  }

  /**
   * Sends a synthetic event (catalogue example with test: true) to the endpoint now and
   * answers with what the receiver said. It is logged like any event (is_test) and never
   * retried: its delivery row is final after this one attempt.
   */
  async test(scope: Scope, id: string, eventType: unknown): Promise<TestSendResult> {
    const ep = await this.row(this.ctx.db, scope, id);
    const { eventId, deliveryId } = await this.prepareTestEvent(scope, ep.id, eventType);
    const r = await this.sender.sendOnce(ep.id, eventId, "test", deliveryId);
    await this.finishManual(deliveryId, r);
    return { ...pickResult(r), trigger: "test", event_id: eventId };
  }

  /**
   * Records a synthetic test event for one endpoint: the catalogue example of `eventType`
   * (default: the product's first type) marked test: true at the top and inside data,
   * with a delivery row that starts not_sent so the pump never retries it. Shared by the
   * synchronous test here and the asynchronous legacy test.
   */
  async prepareTestEvent(scope: Scope, endpointId: string, eventType: unknown): Promise<{ eventId: string; deliveryId: string }> {
    let type: string;
    if (eventType === undefined || eventType === null) {
      const first = this.catalogue.types(scope.product)[0];
      if (!first) throw badRequest(`The ${scope.product} service has no event types yet`, [{ field: "event_type", reason: "no event types" }]);
      type = first;
    } else if (typeof eventType !== "string") {
      throw invalidField("event_type", "must be a string");
    } else if (!this.catalogue.has(scope.product, eventType)) {
      throw this.unknownType("event_type", [eventType], scope.product);
    } else type = eventType;
    const example = this.catalogue.list(scope.product).find((e) => e.type === type)?.example ?? {};

    const eventId = prefixedId("evt");
    const deliveryId = prefixedId("dlv");
    const now = this.ctx.clock.iso();
    const scopeField = this.catalogue.envelopeScopeField(scope.product);
    const body = JSON.stringify({
      id: eventId,
      type,
      created_at: now,
      ...(scopeField ? { [scopeField]: scope.scopeId } : {}),
      test: true,
      data: { ...example, test: true },
    });
    await tx(this.ctx.db, async (t) => {
      await log.insertEvent(t, { id: eventId, product: scope.product, scope_id: scope.scopeId, type, body, is_test: 1, created_at: now, created_ms: this.ctx.clock.nowMs() });
      await log.insertManualDelivery(t, { id: deliveryId, event_id: eventId, endpoint_id: endpointId, now });
    });
    return { eventId, deliveryId };
  }

  /** Records the outcome of a one-off send on its own (never retried) delivery row. */
  finishManual(deliveryId: string, r: AttemptResult): Promise<void> {
    // The endpoint may have been deleted while the request was in flight: nothing to record then.
    return log.finishManualDelivery(this.ctx.db, deliveryId, { succeeded: r.succeeded, status_code: r.status_code, error: r.error_class }, this.ctx.clock.iso());
  }

  /** Audit entry for an endpoint change, on `t` (the change's transaction); the legacy surface adds legacy: true to metadata. */
  async audit(t: Sql, scope: ResolvedScope, actor: Actor, action: string, id: string, metadata: Record<string, unknown> = {}): Promise<void> {
    await audit(t, this.ctx, {
      actor: actor.principal,
      action,
      workspaceId: scope.workspaceId ?? null,
      target: { type: "webhook_endpoint", id },
      meta: actor.meta,
      metadata: { product: scope.product, scope_id: scope.scopeId, ...metadata },
    });
  }
}

/** Exactly the AttemptResult fields (the engine may return more). */
export const pickResult = (r: AttemptResult): AttemptResult => ({
  succeeded: r.succeeded,
  status_code: r.status_code,
  latency_ms: r.latency_ms,
  error_class: r.error_class,
  response_body: r.response_body,
});
