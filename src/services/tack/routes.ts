/**
 * The card board's (tack) webhook routes under {tack_base_url} = /tack/api:
 *
 *   /tack/api/v1/workspaces/{workspace}/webhooks               GET list, POST register
 *   /tack/api/v1/workspaces/{workspace}/webhooks/{webhook_id}  GET, PATCH, DELETE
 *
 * next to the shared webhook surface of the same scope, which mount() mounts from the
 * module's webhookScopes (module.ts):
 * /tack/api/v1/workspaces/{workspace}/webhooks/{event-types, endpoints..., events...}.
 * Static segments win over :webhook_id in Elysia's router, so /webhooks/endpoints, /events
 * and /event-types keep answering. Behaviour and decisions: webhooks.ts.
 *
 * The path parameter is named :workspace_id (it accepts the id or the name): Elysia requires
 * one parameter name per path position, so every route the card board mounts under
 * /tack/api/v1/workspaces/ must use :workspace_id too.
 */
import { Elysia } from "elysia";
import { t } from "../../core/schema";
import { principalPlugin } from "../../access/http";
import { idempotentWithSecret } from "../../access/idempotent";
import { requirePrincipal, type Principal, type PrincipalResolver } from "../../access/principal";
import { PLATFORM_CALLER, secured } from "../../access/openapi";
import type { Idempotency } from "../../core/idempotency";
import { noContent } from "../../core/openapi";
import { ErrorBody } from "../../access/schemas";
import type { boardCaller } from "./board/guard";
import { WorkspaceRef } from "./board/schemas";
import { URL_MAX, EndpointId, paramsOf, type Access, type ScopeResolver, MAX_ENDPOINTS_PER_SCOPE, webhookAction } from "../../kernel/webhooks";
import { SECRET_MAX, SECRET_MIN, TACK_LIST_DEFAULT, TACK_LIST_MAX, type TackWebhookService } from "./webhooks";
import { TackWebhook, TackWebhookList } from "./webhook-views";
import { TACK_WEBHOOKS } from "./board/events";

export const TACK_SCOPE_PREFIX = "/tack/api/v1/workspaces/:workspace_id";
/** The scope's parameter: the board workspace's name or id (here and on the shared routes, module.ts). */
export const TACK_SCOPE_PARAMS = { workspace_id: WorkspaceRef };

// ------------------------------------------------------------------ schemas

const TackWebhookCreated = t.Composite([
  TackWebhook,
  t.Object({
    signing_secret: t.Nullable(
      t.String({ description: "The generated whsec_ secret, only in this response. null when you supplied your own secret (never echoed) and on an Idempotency-Key replay" }),
    ),
  }),
]);

const Events = t.Array(t.String({ maxLength: 200 }), { maxItems: 200, description: "Card-board event types (card.*, comment.created); empty or omitted: all, including future ones" });
const RegisterBody = t.Object({
  url: t.String({ maxLength: URL_MAX, description: "https in production; private and loopback targets are refused" }),
  events: t.Optional(Events),
  secret: t.Optional(
    t.String({
      minLength: SECRET_MIN,
      maxLength: SECRET_MAX,
      description:
        `Your own signing secret, ${SECRET_MIN}-${SECRET_MAX} visible ASCII characters (no spaces). Deliveries then carry the Standard Webhooks headers ` +
        `(verify with "whsec_" + base64(secret), or with the secret itself when it already is a whsec_ secret of 24-64 bytes) and X-Tack-Signature. ` +
        "Omitted: a whsec_ secret is generated and returned once; deliveries carry the Standard Webhooks headers only.",
    }),
  ),
});
const PatchBody = t.Object({
  url: t.Optional(t.String({ maxLength: URL_MAX })),
  events: t.Optional(Events),
  active: t.Optional(t.Boolean({ description: "true re-activates and clears the failure streak; false pauses and drops queued retries" })),
});

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody };

// ------------------------------------------------------------------ factory

export function tackWebhookRoutes(
  tack: TackWebhookService,
  resolve: ScopeResolver,
  deps: { principals: PrincipalResolver; idempotency: Idempotency; caller: ReturnType<typeof boardCaller> },
) {
  const tags = ["Card board: webhooks"];
  const read = webhookAction(TACK_WEBHOOKS.product, "read");
  const write = webhookAction(TACK_WEBHOOKS.product, "write");
  const scopeParams = paramsOf(TACK_SCOPE_PREFIX, [], TACK_SCOPE_PARAMS);
  const idParams = paramsOf(TACK_SCOPE_PREFIX, ["webhook_id"], { ...TACK_SCOPE_PARAMS, webhook_id: EndpointId("whk_... (registered here) or ep_... (created through /webhooks/endpoints), followed by 32 hex digits") });
  const workspaceNote = "{workspace} is the workspace id or name; another workspace's, unknown or foreign workspaces answer 404.";

  type Ctx = { principal: Principal | null; params: Record<string, string> };
  const auth = async (c: Ctx, access: Access) => {
    const principal = requirePrincipal(c.principal);
    return { principal, scope: await resolve({ principal, params: c.params }, access) };
  };

  // The board's caller (board/guard.ts, counted by its request hook) before the principal plugin.
  return new Elysia({ prefix: TACK_SCOPE_PREFIX })
    .use(deps.caller)
    .use(principalPlugin(deps.principals))
    .guard(secured(PLATFORM_CALLER))
    .get("/webhooks", async (c) => {
      const { scope } = await auth(c, "read");
      return tack.list(scope, c.query);
    }, {
      params: scopeParams,
      query: t.Object({
        limit: t.Optional(t.QueryInteger({ description: `1-${TACK_LIST_MAX}, default ${TACK_LIST_DEFAULT}` })),
        offset: t.Optional(t.QueryInteger({ description: "default 0" })),
      }),
      response: { 200: TackWebhookList, ...errors },
      detail: {
        tags,
        summary: `List the workspace's webhooks (action ${read}); oldest first, offset pages; secrets never shown`,
        description: `Every endpoint of the card board's scope, those created through /webhooks/endpoints included. ${workspaceNote}`,
      },
    })
    .post("/webhooks", async (c) => {
      const { principal, scope } = await auth(c, "write");
      // As on the shared create: a generated secret is in the first response only.
      return idempotentWithSecret(deps.idempotency, c, principal, { status: 201, field: "signing_secret" }, () =>
        tack.register(scope, c.body, { principal, meta: c.meta }),
      );
    }, {
      params: scopeParams,
      body: RegisterBody,
      response: { 201: TackWebhookCreated, ...errors, 409: ErrorBody },
      detail: {
        tags,
        summary: `Register a webhook (action ${write}); 201, active`,
        description:
          "Unknown event types are 400 (the message lists the valid ones). " +
          `At most ${MAX_ENDPOINTS_PER_SCOPE} webhooks per workspace, shared with /webhooks/endpoints (409 ENDPOINT_LIMIT_REACHED). ` +
          `Accepts Idempotency-Key (24 h). Not deprecated. ${workspaceNote}`,
      },
    })
    .get("/webhooks/:webhook_id", async (c) => {
      const { scope } = await auth(c, "read");
      return tack.get(scope, c.params.webhook_id);
    }, {
      params: idParams,
      response: { 200: TackWebhook, ...errors },
      detail: { tags, summary: `Read a webhook (action ${read})` },
    })
    .patch("/webhooks/:webhook_id", async (c) => {
      const { principal, scope } = await auth(c, "write");
      return tack.update(scope, c.params.webhook_id, c.body, { principal, meta: c.meta });
    }, {
      params: idParams,
      body: PatchBody,
      response: { 200: TackWebhook, ...errors },
      detail: {
        tags,
        summary: `Update url, events or active (action ${write})`,
        description:
          "active:true re-activates (also after an auto-disable) and clears the failure streak; active:false pauses and drops queued retries. " +
          "The secret is changed with POST /webhooks/endpoints/{webhook_id}/rotate-secret.",
      },
    })
    .delete("/webhooks/:webhook_id", async (c) => {
      const { principal, scope } = await auth(c, "write");
      await tack.remove(scope, c.params.webhook_id, { principal, meta: c.meta });
      c.set.status = 204;
    }, {
      params: idParams,
      detail: { tags, summary: `Delete a webhook (action ${write}); 204, queued retries are dropped`, responses: noContent() },
    });
}
