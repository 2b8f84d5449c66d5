/**
 * The shared webhook routes, one factory for every product and scope kind:
 *
 *   app.use(webhookRoutes(deps, { product: "mail", prefix: "/mail/v1/workspaces/:workspace_id", resolve: workspaceScope(platform, "mail") }))
 *
 * mounts under `${prefix}/webhooks`: event-types, endpoints (CRUD, test, rotate-secret)
 * and the events log (list, read, replay). Auth apps and communities mount the same way
 * with their own resolver.
 */
import { Elysia } from "elysia";
import type { TString } from "@sinclair/typebox";
import { t } from "../../core/schema";
import { principalPlugin } from "../../access/http";
import { idempotentWithSecret } from "../../access/idempotent";
import { requirePrincipal, type Principal, type PrincipalResolver } from "../../access/principal";
import { PLATFORM_CALLER, PUBLIC, secured } from "../../access/openapi";
import { noContent } from "../../core/openapi";
import type { Idempotency } from "../../core/idempotency";
import { ErrorBody, ListQuery } from "../../access/schemas";
import type { EventTypeSource } from "./endpoints";
import { EndpointId, EventId } from "./ids";
import { GRACE_DEFAULT_HOURS, GRACE_MAX_HOURS } from "./limits";
import {
  EndpointCreate,
  EndpointList,
  EndpointPatch,
  EventDetail,
  EventList,
  EventsQuery,
  EventType,
  ReplayResult,
  RotateBody,
  TestBody,
  TestResult,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from "./schemas";
import { registerWebhookActions, type Access, type ScopeResolver } from "./scopes";
import type { WebhookService } from "./service";
import { MAX_ENDPOINTS_PER_SCOPE, type Product } from "./types";

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

// ------------------------------------------------------------------ factory

export interface WebhookRouteDeps {
  webhooks: WebhookService;
  principals: PrincipalResolver;
  idempotency: Idempotency;
}

export interface WebhookRouteOptions {
  product: Product;
  /** Scope path with its parameters, e.g. "/mail/v1/workspaces/:workspace_id". */
  prefix: string;
  resolve: ScopeResolver;
  /** OpenAPI tag; default "<Product>: webhooks". */
  tag?: string;
  /** Schemas of the prefix's parameters that are more than a string (a UUID): validated and documented. */
  params?: Partial<Record<string, TString>>;
}


/** TypeBox object of every ":name" in the prefix plus the route's own parameters (strings unless `schemas` says). */
export function paramsOf(prefix: string, own: string[] = [], schemas: Partial<Record<string, TString>> = {}) {
  const names = [...prefix.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
  return t.Object(Object.fromEntries([...names, ...own].map((n): [string, TString] => [n, schemas[n] ?? t.String()])));
}

/** Idempotency keys belong to the caller: a person (any of their sessions) or one API key. */

export function webhookRoutes(deps: WebhookRouteDeps, opts: WebhookRouteOptions) {
  const { webhooks } = deps;
  const { product } = opts;
  // The product's webhook actions must exist for policies to name them (a no-op when the resolver already registered them).
  registerWebhookActions(webhooks.ctx.actions, product);
  const tags = [opts.tag ?? `${webhooks.catalogue.label(product)}: webhooks`];
  const read = `${product}.webhooks.read`;
  const write = `${product}.webhooks.write`;
  const scopeParams = paramsOf(opts.prefix, [], opts.params);
  const endpointParams = paramsOf(opts.prefix, ["id"], { ...opts.params, id: EndpointId() });
  const eventParams = paramsOf(opts.prefix, ["id"], { ...opts.params, id: EventId() });

  type Ctx = { principal: Principal | null; params: Record<string, string> };
  const auth = async (c: Ctx, access: Access) => {
    const principal = requirePrincipal(c.principal);
    return { principal, scope: await opts.resolve({ principal, params: c.params }, access) };
  };

  return new Elysia({ prefix: `${opts.prefix}/webhooks` })
    .use(principalPlugin(deps.principals))
    .guard(secured(PLATFORM_CALLER))
    .get("/event-types", async (c) => {
      const { scope } = await auth(c, "read");
      return { data: webhooks.catalogue.list(scope.product) };
    }, {
      params: scopeParams,
      response: { 200: t.Object({ data: t.Array(EventType) }), ...errors },
      detail: { tags, summary: `Event types with description and example payload (action ${read})` },
    })
    .get("/endpoints", async (c) => {
      const { scope } = await auth(c, "read");
      return webhooks.endpoints.list(scope, c.query);
    }, {
      params: scopeParams,
      query: ListQuery,
      response: { 200: EndpointList, ...errors },
      detail: { tags, summary: `List webhook endpoints (action ${read}; cursor pages, oldest first; secrets never shown)` },
    })
    .post("/endpoints", async (c) => {
      const { principal, scope } = await auth(c, "write");
      // The secret never rests in plaintext: a replay answers signing_secret null.
      return idempotentWithSecret(deps.idempotency, c, principal, { status: 201, field: "signing_secret" }, () =>
        webhooks.endpoints.create(scope, c.body, { principal, meta: c.meta }),
      );
    }, {
      params: scopeParams,
      body: EndpointCreate,
      response: { 201: WebhookEndpointWithSecret, ...errors, 409: ErrorBody },
      detail: {
        tags,
        summary: `Create a webhook endpoint (action ${write})`,
        description:
          `201 with signing_secret (whsec_...) in this response only; later reads show signing_secret_hint. At most ${MAX_ENDPOINTS_PER_SCOPE} endpoints per scope: ` +
          "the next one is 409 ENDPOINT_LIMIT_REACHED. Unknown event types are 400 (the message lists the valid ones). " +
          "Accepts Idempotency-Key (strongly advised): a replay returns the same endpoint with signing_secret null; if the first response was lost, rotate the secret.",
      },
    })
    .get("/endpoints/:id", async (c) => {
      const { scope } = await auth(c, "read");
      return webhooks.endpoints.get(scope, c.params.id);
    }, {
      params: endpointParams,
      response: { 200: WebhookEndpoint, ...errors },
      detail: { tags, summary: `Read a webhook endpoint (action ${read})` },
    })
    .patch("/endpoints/:id", async (c) => {
      const { principal, scope } = await auth(c, "write");
      return webhooks.endpoints.update(webhooks.ctx.db, scope, c.params.id, c.body, { principal, meta: c.meta });
    }, {
      params: endpointParams,
      body: EndpointPatch,
      response: { 200: WebhookEndpoint, ...errors },
      detail: {
        tags,
        summary: `Update url, description, event_types or enabled (action ${write})`,
        description:
          "enabled:true on a paused or auto_disabled endpoint sets status enabled and clears disabled_reason, consecutive_failures and first_failure_at. " +
          "enabled:false pauses (status is left as it is) and drops queued retries.",
      },
    })
    .delete("/endpoints/:id", async (c) => {
      const { principal, scope } = await auth(c, "write");
      await webhooks.endpoints.remove(webhooks.ctx.db, scope, c.params.id, { principal, meta: c.meta });
      c.set.status = 204;
    }, {
      params: endpointParams,
      detail: { tags, summary: `Delete a webhook endpoint (action ${write}); 204, its queued retries and attempt log are dropped`, responses: noContent() },
    })
    .post("/endpoints/:id/test", async (c) => {
      const { scope } = await auth(c, "write");
      return webhooks.endpoints.test(scope, c.params.id, c.body?.event_type);
    }, {
      params: endpointParams,
      body: TestBody,
      response: { 200: TestResult, ...errors },
      detail: {
        tags,
        summary: `Send a test event now and return what the receiver answered (action ${write})`,
        description: "The payload is the catalogue example with test: true. It appears in the events log (is_test) and is never retried.",
      },
    })
    .post("/endpoints/:id/rotate-secret", async (c) => {
      const { principal, scope } = await auth(c, "write");
      const r = await webhooks.endpoints.rotateSecret(scope, c.params.id, c.body?.grace_hours, { principal, meta: c.meta });
      return { ...r.view, signing_secret: r.secret };
    }, {
      params: endpointParams,
      body: RotateBody,
      response: { 200: WebhookEndpointWithSecret, ...errors },
      detail: {
        tags,
        summary: `Rotate the signing secret (action ${write}); the new secret is in this response only`,
        description: `grace_hours (default ${GRACE_DEFAULT_HOURS}, max ${GRACE_MAX_HOURS}): deliveries carry a second signature with the previous secret until then; 0 ends the old secret now.`,
      },
    })
    .get("/events", async (c) => {
      const { scope } = await auth(c, "read");
      return webhooks.events.list(scope, c.query);
    }, {
      params: scopeParams,
      query: EventsQuery,
      response: { 200: EventList, ...errors },
      detail: {
        tags,
        summary: `Events of the last 30 days, newest first, with each endpoint's delivery state and next retry (action ${read})`,
        description: "Filters: endpoint_id, type, status (pending, delivered, failed, not_sent; with endpoint_id both must hold for that endpoint's delivery). limit 1-100 (default 20), cursor pages.",
      },
    })
    .get("/events/:id", async (c) => {
      const { scope } = await auth(c, "read");
      return webhooks.events.get(scope, c.params.id);
    }, {
      params: eventParams,
      response: { 200: EventDetail, ...errors },
      detail: { tags, summary: `One event with its payload and every attempt (status code, latency, first 1 KiB of the response) (action ${read})` },
    })
    .post("/events/:id/replay", async (c) => {
      const { scope } = await auth(c, "write");
      return webhooks.events.replay(scope, c.params.id, c.query.endpoint_id || undefined);
    }, {
      params: eventParams,
      query: t.Object({ endpoint_id: t.Optional(EndpointId("Only to this endpoint of the scope")) }),
      response: { 200: ReplayResult, ...errors },
      detail: {
        tags,
        summary: `Resend an event now: same body and webhook-id, freshly signed (action ${write})`,
        description:
          "To endpoint_id (any endpoint of this scope), or without it to every endpoint that has a delivery of the event. Returns what each receiver answered; never retried. " +
          "A successful replay marks that endpoint's delivery delivered.",
      },
    });
}

/**
 * A product's public event-type list (no credential), e.g. the community service's
 * GET /social/v1/webhook-event-types: {data: string[]}. The catalogue grows; this is the live list.
 */
export function publicEventTypesRoute(catalogue: EventTypeSource, product: Product, path: string) {
  return new Elysia().get(path, () => ({ data: catalogue.types(product) }), {
    response: { 200: t.Object({ data: t.Array(t.String()) }) },
    detail: { tags: [`${catalogue.label(product)}: webhooks`], summary: "Webhook event types (public, no credential)", security: PUBLIC },
  });
}
