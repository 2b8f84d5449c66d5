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
import { ErrorBody, JsonObject, ListQuery, Pagination } from "../../access/schemas";
import { DESCRIPTION_MAX, GRACE_DEFAULT_HOURS, GRACE_MAX_HOURS, URL_MAX, type EventTypeSource } from "./endpoints";
import { DELIVERY_STATUSES } from "./events-log";
import { EndpointId, EventId } from "./ids";
import { registerWebhookActions, type Access, type ScopeResolver } from "./scopes";
import type { WebhookService } from "./service";
import { MAX_ENDPOINTS_PER_SCOPE, type Product } from "./types";

// ------------------------------------------------------------------ schemas


export const WebhookEndpoint = t.Object({
  id: t.String({ description: "ep_..." }),
  url: t.String(),
  description: t.String(),
  event_types: t.Array(t.String(), { description: "Empty: every event type, including future ones" }),
  enabled: t.Boolean({ description: "True exactly when events are delivered: false while paused (PATCH enabled:false) or auto_disabled (see status), until PATCH enabled:true" }),
  status: t.Union([t.Literal("enabled"), t.Literal("auto_disabled")], {
    description: "auto_disabled after 20 consecutive failures or 24 h of only failures (disabled_reason failing); PATCH enabled:true brings it back",
  }),
  signing_secret_hint: t.String({ description: "Last 4 characters of the current signing secret" }),
  consecutive_failures: t.Integer(),
  first_failure_at: t.Nullable(t.String()),
  disabled_reason: t.Nullable(t.String({ description: "failing while auto_disabled, else null" })),
  previous_secret_expires_at: t.Nullable(t.String({ description: "End of the rotation grace period while the previous secret still signs" })),
  created_at: t.String(),
  updated_at: t.String(),
});
export const WebhookEndpointWithSecret = t.Composite([
  WebhookEndpoint,
  t.Object({ signing_secret: t.Nullable(t.String({ description: "whsec_...; only in this response (null on an Idempotency-Key replay)" })) }),
]);
const EndpointList = t.Object({ data: t.Array(WebhookEndpoint), pagination: Pagination });

const EventTypesSchema = t.Array(t.String({ maxLength: 200 }), { maxItems: 200, description: "Catalogue types of this product; empty or omitted: all, including future ones" });
const EndpointCreate = t.Object({
  url: t.String({ maxLength: URL_MAX, description: "https in production; private and loopback targets are refused" }),
  description: t.Optional(t.String({ maxLength: DESCRIPTION_MAX })),
  event_types: t.Optional(EventTypesSchema),
});
const EndpointPatch = t.Object({
  url: t.Optional(t.String({ maxLength: URL_MAX })),
  description: t.Optional(t.String({ maxLength: DESCRIPTION_MAX })),
  event_types: t.Optional(EventTypesSchema),
  enabled: t.Optional(t.Boolean({ description: "true re-enables (clears the failure streak and an auto-disable); false pauses and drops queued retries" })),
});
const RotateBody = t.Optional(
  t.Object({ grace_hours: t.Optional(t.Integer({ minimum: 0, maximum: GRACE_MAX_HOURS, default: GRACE_DEFAULT_HOURS, description: "0 ends the old secret now" })) }),
);
const TestBody = t.Optional(t.Object({ event_type: t.Optional(t.String({ description: "Default: the first type of the catalogue" })) }));

const AttemptFields = {
  succeeded: t.Boolean(),
  status_code: t.Nullable(t.Integer()),
  latency_ms: t.Integer(),
  error_class: t.Nullable(t.String({ description: "null on 2xx; http_status | timeout | connection | blocked | redirect | tls | invalid_url" })),
  response_body: t.Nullable(t.String({ description: "First 1 KiB of the response" })),
};
const TestResult = t.Object({ ...AttemptFields, trigger: t.Literal("test"), event_id: t.String() });
const ReplayResult = t.Object({ data: t.Array(t.Object({ endpoint_id: t.String(), ...AttemptFields, trigger: t.Literal("replay") })) });

const EventType = t.Object({ type: t.String(), description: t.String(), example: JsonObject() });
const LatestAttempt = t.Object({
  attempt_number: t.Integer(),
  trigger: t.String({ description: "scheduled | retry | test | replay" }),
  status_code: t.Nullable(t.Integer()),
  error_class: t.Nullable(t.String()),
  latency_ms: t.Integer(),
  created_at: t.String(),
});
const Delivery = t.Object({
  endpoint_id: t.String(),
  status: t.Union([t.Literal("pending"), t.Literal("delivered"), t.Literal("failed"), t.Literal("not_sent")]),
  attempts: t.Integer({ description: "Every attempt of this event to the endpoint, replays and tests included" }),
  last_status_code: t.Nullable(t.Integer({ description: "Status code of the latest attempt" })),
  latest_attempt: t.Nullable(LatestAttempt),
  next_attempt_at: t.Nullable(t.String({ description: "Next retry while pending" })),
});
const Event = t.Object({ id: t.String(), type: t.String(), created_at: t.String(), is_test: t.Boolean(), deliveries: t.Array(Delivery) });
const EventList = t.Object({ data: t.Array(Event), pagination: Pagination });
const Attempt = t.Object({
  endpoint_id: t.String(),
  attempt_number: t.Integer(),
  trigger: t.String({ description: "scheduled | retry | test | replay" }),
  status_code: t.Nullable(t.Integer()),
  latency_ms: t.Integer(),
  error_class: t.Nullable(t.String()),
  response_body: t.Nullable(t.String()),
  created_at: t.String(),
});
const EventDetail = t.Composite([Event, t.Object({ payload: t.Unknown({ description: "The envelope as delivered: {id, type, created_at, data}" }), attempts: t.Array(Attempt) })]);

const EventsQuery = t.Object({
  endpoint_id: t.Optional(EndpointId("Only this endpoint's deliveries (ep_... or whk_...)")),
  type: t.Optional(t.String()),
  status: t.Optional(t.UnionEnum(DELIVERY_STATUSES)),
  limit: t.Optional(t.QueryInteger({ description: "1-100, default 20" })),
  cursor: t.Optional(t.String()),
});

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
