/**
 * The deprecated webhook routes, one factory per scope (next to the shared webhookRoutes):
 *
 *   app.use(legacyWebhookRoutes(deps, { product: "trawl", prefix: "/trawl/v1/workspaces/:workspace_id", resolve: workspaceScope(platform, "trawl") }))
 *
 * mounts {prefix}/webhooks (list, create) and {prefix}/webhooks/:id (read, update, delete,
 * deliveries, rotate-secret, test). Static segments win over :id in Elysia's router, so the
 * shared {prefix}/webhooks/endpoints, /events and /event-types keep answering (legacy ids
 * are whk_...: any other {id} is 400 naming it, an unknown whk_ id 404). Every response, errors included, carries Deprecation: true and
 * Sunset: Fri, 15 Jan 2027 00:00:00 GMT. Behaviour and decisions: legacy.ts.
 */
import { Elysia } from "elysia";
import { t } from "../../core/schema";
import type { TString } from "@sinclair/typebox";
import { paramsOf } from "./routes";
import { LegacyWebhookId } from "./ids";
import { principalPlugin } from "../../access/http";
import { idempotentWithSecret } from "../../access/idempotent";
import { requirePrincipal, type Principal, type PrincipalResolver } from "../../access/principal";
import { PLATFORM_CALLER, secured } from "../../access/openapi";
import { noContent } from "../../core/openapi";
import type { Idempotency } from "../../core/idempotency";
import { ErrorBody } from "../../access/schemas";
import { CreateBody, DeliveryAttempt, LegacyList, LegacyWebhook, LegacyWebhookWithSecret, PatchBody, TestBody } from "./legacy-schemas";
import { DELIVERIES_DEFAULT, DELIVERIES_MAX, DEPRECATION_HEADERS, LEGACY_LIST_DEFAULT, LEGACY_LIST_MAX, LEGACY_SUNSET, type LegacyWebhookService } from "./legacy";
import { registerWebhookActions, type Access, type ScopeResolver } from "./scopes";
import { MAX_ENDPOINTS_PER_SCOPE, type Product } from "./types";

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

// ------------------------------------------------------------------ deprecation headers

/**
 * Deprecation: true and Sunset on every response of the routes of the instance that uses
 * this plugin (its hooks are scoped to that one parent), errors and validation failures
 * included. Shared by every deprecated webhook surface (also the community records of
 * social/webhook-routes.ts). Success responses: the headers go on through `set`. Errors (thrown
 * anywhere, the kernel's onError builds a fresh Response) and validation failures:
 * mapResponse sees that Response and adds them.
 */
export function deprecationHeaders() {
  return new Elysia()
    .onTransform({ as: "scoped" }, ({ set }) => {
      Object.assign(set.headers, DEPRECATION_HEADERS);
    })
    // Destructured: Elysia infers from a hook's source which request parts to prepare, for
    // every route of the app (`c` alone made every route, /healthz too, parse the query).
    .mapResponse({ as: "scoped" }, ({ set, responseValue: res }) => {
      if (!(res instanceof Response)) {
        Object.assign(set.headers, DEPRECATION_HEADERS);
        return;
      }
      try {
        for (const [k, v] of Object.entries(DEPRECATION_HEADERS)) res.headers.set(k, v);
        return res;
      } catch {
        // Immutable headers: copy the response.
        const copy = new Response(res.body, res);
        for (const [k, v] of Object.entries(DEPRECATION_HEADERS)) copy.headers.set(k, v);
        return copy;
      }
    });
}

// ------------------------------------------------------------------ factory

export interface LegacyWebhookRouteDeps {
  legacy: LegacyWebhookService;
  principals: PrincipalResolver;
  idempotency: Idempotency;
}

export interface LegacyWebhookRouteOptions {
  product: Product;
  /** Scope path with its parameters, e.g. "/trawl/v1/workspaces/:workspace_id". */
  prefix: string;
  resolve: ScopeResolver;
  /** OpenAPI tag; default "<Product>: webhooks (deprecated)". */
  tag?: string;
  /** Documented in /docs/json only, not in the product's own document (core/openapi.ts `unlisted`). */
  unlisted?: boolean;
  /** Schemas of the prefix's parameters that are more than a string (a UUID). */
  params?: Partial<Record<string, TString>>;
}

export function legacyWebhookRoutes(deps: LegacyWebhookRouteDeps, opts: LegacyWebhookRouteOptions) {
  const { legacy } = deps;
  const { product } = opts;
  registerWebhookActions(legacy.ctx.actions, product);
  const tags = [opts.tag ?? `${legacy.api.catalogue.label(product)}: webhooks (deprecated)`];
  const read = `${product}.webhooks.read`;
  const write = `${product}.webhooks.write`;
  const scopeParams = paramsOf(opts.prefix, [], opts.params);
  // Only legacy records answer here: an ep_ id (the shared surface's) is malformed.
  const idParams = paramsOf(opts.prefix, ["id"], { ...opts.params, id: LegacyWebhookId() });
  const deprecated = `Deprecated: answers with Deprecation: true and Sunset: ${LEGACY_SUNSET}. Use {scope}/webhooks/endpoints instead.`;
  const detail = (summary: string, description?: string) => ({
    tags,
    summary,
    description: description ? `${description} ${deprecated}` : deprecated,
    deprecated: true,
    ...(opts.unlisted ? { unlisted: true } : {}),
  });

  type Ctx = { principal: Principal | null; params: Record<string, string> };
  const auth = async (c: Ctx, access: Access) => {
    const principal = requirePrincipal(c.principal);
    return { principal, scope: await opts.resolve({ principal, params: c.params }, access) };
  };

  return (
    new Elysia({ prefix: opts.prefix })
      .use(principalPlugin(deps.principals))
      .guard(secured(PLATFORM_CALLER))
      .use(deprecationHeaders())
      .get("/webhooks", async (c) => {
        const { scope } = await auth(c, "read");
        return legacy.list(scope, c.query);
      }, {
        params: scopeParams,
        query: t.Object({
          limit: t.Optional(t.QueryInteger({ description: `1-${LEGACY_LIST_MAX}, default ${LEGACY_LIST_DEFAULT}` })),
          cursor: t.Optional(t.String({ description: "next_cursor of the previous page" })),
        }),
        response: { 200: LegacyList, ...errors },
        detail: detail(`List legacy webhooks (action ${read}; newest first, cursor pages; secrets masked)`),
      })
      .post("/webhooks", async (c) => {
        const { principal, scope } = await auth(c, "write");
        // As on the shared create: a replay answers signing_secret null.
        return idempotentWithSecret(deps.idempotency, c, principal, { status: 201, field: "signing_secret" }, () =>
          legacy.create(scope, c.body, { principal, meta: c.meta }),
        );
      }, {
        params: scopeParams,
        body: CreateBody,
        response: { 201: LegacyWebhookWithSecret, ...errors, 409: ErrorBody },
        detail: detail(
          `Create a legacy webhook (action ${write}); signing_secret in this response only`,
          `Deliveries carry the Standard Webhooks headers (verify with "whsec_" + base64(signing_secret)) and the legacy X-${product[0].toUpperCase()}${product.slice(1)}-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by signing_secret>. ` +
            `At most ${MAX_ENDPOINTS_PER_SCOPE} endpoints per scope, shared with {scope}/webhooks/endpoints (409 ENDPOINT_LIMIT_REACHED). Idempotency-Key accepted (24 h); a replay returns signing_secret null.`,
        ),
      })
      .get("/webhooks/:id", async (c) => {
        const { scope } = await auth(c, "read");
        return legacy.get(scope, c.params.id);
      }, {
        params: idParams,
        response: { 200: LegacyWebhook, ...errors },
        detail: detail(`Read a legacy webhook (action ${read})`),
      })
      .patch("/webhooks/:id", async (c) => {
        const { principal, scope } = await auth(c, "write");
        return legacy.update(scope, c.params.id, c.body, { principal, meta: c.meta });
      }, {
        params: idParams,
        body: PatchBody,
        response: { 200: LegacyWebhook, ...errors },
        detail: detail(
          `Update url or active (action ${write})`,
          "active:true re-activates and clears the auto-disable (failure_count 0, first_failure_at and auto_disabled_at null); active:false pauses and drops queued retries.",
        ),
      })
      .delete("/webhooks/:id", async (c) => {
        const { principal, scope } = await auth(c, "write");
        await legacy.remove(scope, c.params.id, { principal, meta: c.meta });
        c.set.status = 204;
      }, {
        params: idParams,
        detail: { ...detail(`Delete a legacy webhook (action ${write}); 204, queued retries are dropped`), responses: noContent() },
      })
      .get("/webhooks/:id/deliveries", async (c) => {
        const { scope } = await auth(c, "read");
        return legacy.deliveries(scope, c.params.id, c.query);
      }, {
        params: idParams,
        query: t.Object({ limit: t.Optional(t.QueryInteger({ description: `1-${DELIVERIES_MAX}, default ${DELIVERIES_DEFAULT}` })) }),
        response: { 200: t.Object({ data: t.Array(DeliveryAttempt) }), ...errors },
        detail: detail(`Recent delivery attempts, newest first (action ${read})`, "Every attempt: scheduled, retries, tests and replays."),
      })
      .post("/webhooks/:id/rotate-secret", async (c) => {
        const { principal, scope } = await auth(c, "write");
        const r = await legacy.rotateSecret(scope, c.params.id, { principal, meta: c.meta });
        c.set.status = 201;
        return { ...r.view, signing_secret: r.secret };
      }, {
        params: idParams,
        response: { 201: LegacyWebhookWithSecret, ...errors },
        detail: detail(`Rotate the signing secret (action ${write}); 201, the new secret is in this response only`, "No grace period: the old secret stops signing at once."),
      })
      .post("/webhooks/:id/test", async (c) => {
        const { scope } = await auth(c, "write");
        const r = await legacy.test(scope, c.params.id, c.body?.event_type);
        c.set.status = 202;
        return r;
      }, {
        params: idParams,
        body: TestBody,
        response: { 202: t.Object({ accepted: t.Literal(true), event_id: t.String() }), ...errors },
        detail: detail(
          `Send a synthetic test event asynchronously (action ${write}); 202`,
          "The payload is the catalogue example with test: true. It is sent once in the background, never retried; the attempt then shows in /deliveries.",
        ),
      })
  );
}
