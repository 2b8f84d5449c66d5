/**
 * Routes of the community service's webhook records (spec 3), next to the shared
 * webhookRoutes of the same scope:
 *
 *   app.use(communityWebhookRoutes(deps, { prefix: "/social/v1/communities/:community_id", resolve }))
 *
 * mounts {prefix}/webhooks and {prefix}/webhooks/:id/... Static segments win over :id in
 * Elysia's router, so the shared {prefix}/webhooks/endpoints, /events and /event-types keep
 * answering (these records are whk_...). Every response carries Deprecation: true and
 * Sunset. Behaviour and decisions: webhooks.ts.
 */
import { Elysia } from "elysia";
import type { TString } from "@sinclair/typebox";
import { t } from "../../../core/schema";
import { principalPlugin } from "../../../access/http";
import { callerKey, idempotent, idempotentWithSecret } from "../../../access/idempotent";
import { requirePrincipal, type Principal, type PrincipalResolver } from "../../../access/principal";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import { noContent } from "../../../core/openapi";
import type { Idempotency } from "../../../core/idempotency";
import { ErrorBody, Pagination } from "../../../access/schemas";
import { LEGACY_SUNSET, deprecationHeaders, paramsOf, registerWebhookActions, webhookAction, type Access, type ScopeResolver, MAX_ENDPOINTS_PER_SCOPE } from "../../../kernel/webhooks";
import { Attempt, CommunityWebhook, CommunityWebhookWithSecret, CreateBody, DeliveryRef, PatchBody, Queued, WebhookList, WebhookRecordId } from "./schemas";
import { COMMUNITY_DELIVERIES_DEFAULT, COMMUNITY_DELIVERIES_MAX, type CommunityWebhookService } from "./service";
import type { CommunityWebhookView } from "./views";

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
/** Writes also answer 409 (cap, disabled, in flight, IDEMPOTENCY_KEY_REUSE). */
const writeErrors = { ...errors, 409: ErrorBody };

// ------------------------------------------------------------------ factory

export interface CommunityWebhookRouteDeps {
  webhooks: CommunityWebhookService;
  /** The module's webhook product (its name): the records' actions. */
  product: string;
  principals: PrincipalResolver;
  idempotency: Idempotency;
}

export interface CommunityWebhookRouteOptions {
  /** Scope path with its parameters, e.g. "/social/v1/communities/:community_id". */
  prefix: string;
  resolve: ScopeResolver;
  tag?: string;
  /**
   * Schemas of the prefix's parameters that are more than a string (the community_id UUID:
   * 400 when malformed). The routes' own id and delivery_id are WebhookRecordId and DeliveryRef.
   */
  params?: Record<string, TString>;
}

export function communityWebhookRoutes(deps: CommunityWebhookRouteDeps, opts: CommunityWebhookRouteOptions) {
  const { webhooks, product } = deps;
  registerWebhookActions(webhooks.ctx.actions, product);
  const tags = [opts.tag ?? "Community: webhooks"];
  const read = webhookAction(product, "read");
  const write = webhookAction(product, "write");
  const schemas = { ...opts.params, id: WebhookRecordId, delivery_id: DeliveryRef };
  const scopeParams = paramsOf(opts.prefix, [], schemas);
  const idParams = paramsOf(opts.prefix, ["id"], schemas);
  const note = `Deprecated route shape: answers with Deprecation: true and Sunset: ${LEGACY_SUNSET}; {scope}/webhooks/endpoints is the successor.`;
  const detail = (summary: string, description?: string) => ({ tags, summary, description: description ? `${description} ${note}` : note });

  type Ctx = { principal: Principal | null; params: Record<string, string> };
  const auth = async (c: Ctx, access: Access) => {
    const principal = requirePrincipal(c.principal);
    return { principal, scope: await opts.resolve({ principal, params: c.params }, access) };
  };
  /** Write routes accept Idempotency-Key: a replay answers the first response (secrets null). */
  type IdemCtx = Parameters<typeof idempotent>[1];
  const once = <T>(c: IdemCtx, principal: Principal, status: number, exec: () => Promise<T>) =>
    idempotent(deps.idempotency, c, callerKey(principal), async () => ({ status, body: await exec() })) as Promise<T>;
  /**
   * Create and rotate-secret: the idempotency record stores signing_secret null (the secret
   * never rests in plaintext) and the first response alone gets the secret.
   */
  const withSecret = (c: IdemCtx, principal: Principal, status: number, make: () => Promise<{ view: CommunityWebhookView; secret: string }>) =>
    idempotentWithSecret(deps.idempotency, c, principal, { status, field: "signing_secret" }, make);

  return new Elysia({ prefix: `${opts.prefix}/webhooks` })
    .use(principalPlugin(deps.principals))
    .guard(secured(PLATFORM_CALLER))
    .use(deprecationHeaders())
    .get("", async (c) => webhooks.list((await auth(c, "read")).scope), {
      params: scopeParams,
      response: { 200: WebhookList, ...errors },
      detail: detail(`Every webhook of the community, disabled ones included (action ${read}); secrets masked`),
    })
    .post("", async (c) => {
      const { principal, scope } = await auth(c, "write");
      return withSecret(c, principal, 201, () => webhooks.create(scope, c.body, { principal, meta: c.meta }));
    }, {
      params: scopeParams,
      body: CreateBody,
      response: { 201: CommunityWebhookWithSecret, ...writeErrors },
      detail: detail(
        `Create a webhook (action ${write}); signing_secret in this response only`,
        "Deliveries: POST of {id, type, created_at, community_id, data} with webhook-id / webhook-timestamp / webhook-signature (Standard Webhooks, verify with signing_secret) " +
          "and X-Svc-Signature: t=<unix>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\" keyed by signing_secret>. " +
          `Unknown event types are 400 naming the valid set. At most ${MAX_ENDPOINTS_PER_SCOPE} per community (409 ENDPOINT_LIMIT_REACHED). Accepts Idempotency-Key.`,
      ),
    })
    .get("/:id", async (c) => webhooks.get((await auth(c, "read")).scope, c.params.id), {
      params: idParams,
      response: { 200: CommunityWebhook, ...errors },
      detail: detail(`Read a webhook (action ${read})`),
    })
    .patch("/:id", async (c) => {
      const { principal, scope } = await auth(c, "write");
      return once(c, principal, 200, () => webhooks.update(scope, c.params.id, c.body, { principal, meta: c.meta }));
    }, {
      params: idParams,
      body: PatchBody,
      response: { 200: CommunityWebhook, ...writeErrors },
      detail: detail(
        `Pause, re-enable or change a webhook (action ${write})`,
        "disabled:false re-enables and clears the failure streak; disabled:true is a manual pause. event_types replaces the subscription (the way to receive types added later).",
      ),
    })
    .delete("/:id", async (c) => {
      const { principal, scope } = await auth(c, "write");
      await webhooks.remove(scope, c.params.id, { principal, meta: c.meta });
      c.set.status = 204;
    }, {
      params: idParams,
      detail: { ...detail(`Delete a webhook (action ${write}); 204, queued retries are dropped`), responses: noContent() },
    })
    .post("/:id/rotate-secret", async (c) => {
      const { principal, scope } = await auth(c, "write");
      return withSecret(c, principal, 200, () => webhooks.rotateSecret(scope, c.params.id, { principal, meta: c.meta }));
    }, {
      params: idParams,
      response: { 200: CommunityWebhookWithSecret, ...writeErrors },
      detail: detail(`New signing secret, effective at once; also re-enables (action ${write})`, "The new secret is in this response only."),
    })
    .get("/:id/deliveries", async (c) => webhooks.deliveries((await auth(c, "read")).scope, c.params.id, c.query), {
      params: idParams,
      query: t.Object({
        limit: t.Optional(t.QueryInteger({ description: `1-${COMMUNITY_DELIVERIES_MAX}, default ${COMMUNITY_DELIVERIES_DEFAULT}` })),
        cursor: t.Optional(t.String()),
      }),
      response: { 200: t.Object({ data: t.Array(Attempt), pagination: Pagination }), ...errors },
      detail: detail(`Delivery attempts, newest first (action ${read})`, "Each with the request body, response status, first KiB of the response, error class, latency and attempt_number."),
    })
    .post("/:id/test", async (c) => {
      const { principal, scope } = await auth(c, "write");
      return once(c, principal, 202, () => webhooks.test(scope, c.params.id));
    }, {
      params: idParams,
      response: { 202: Queued, ...writeErrors },
      detail: detail(
        `Queue a signed ping event to this webhook (action ${write}); 202`,
        "Envelope {id, type: \"ping\", created_at, community_id, data: {webhook_id}}, delivered through the queue like any event (attempt log, retries). 409 WEBHOOK_DISABLED when disabled.",
      ),
    })
    .post("/:id/deliveries/:delivery_id/redeliver", async (c) => {
      const { principal, scope } = await auth(c, "write");
      return once(c, principal, 202, () => webhooks.redeliver(scope, c.params.id, c.params.delivery_id));
    }, {
      params: paramsOf(opts.prefix, ["id", "delivery_id"], schemas),
      response: { 202: Queued, ...writeErrors },
      detail: detail(
        `Send a delivery again: the same bytes and event id (action ${write}); 202`,
        "The delivery goes back into the queue, due now, with a fresh retry schedule. delivery_id is a deliveries item's delivery_id (its att_ id works too). " +
          "409 WEBHOOK_DISABLED when disabled, DELIVERY_IN_FLIGHT while an attempt of it is running.",
      ),
    });
}
