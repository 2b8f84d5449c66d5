/**
 * The card board (tack) as a module, under {tack_base_url} = /tack/api. Its boards come
 * with their own issue; today the module carries the webhook event catalogue, the
 * workspace webhook scope (the shared routes; {workspace} is the id or the name) and the
 * board's own webhook records (routes.ts, webhooks.ts).
 */
import { defineService } from "../module";
import { TACK_WEBHOOKS } from "./events";
import { TACK_SCOPE_PREFIX, tackWebhookRoutes } from "./routes";
import { TackWebhookService, tackWorkspaceScope } from "./webhooks";

export const tackModule = defineService({
  name: "tack",
  description: "Card board: boards, columns and cards",
  prefix: "/tack",
  // The spec gives the board no description version, only "/v1 below /api": v1.0.0.
  openapi: { title: "Bunker card board", description: "Card board: boards, columns and cards (paths under /tack/api/v1).", version: "v1.0.0" },
  webhooks: TACK_WEBHOOKS,
  create: (d) => ({ webhooks: new TackWebhookService(d.ctx, d.webhooks.api), scope: tackWorkspaceScope(d.platform) }),
  webhookScopes: (tack) => [{ prefix: TACK_SCOPE_PREFIX, resolve: tack.scope }],
  routes: (tack, d) => tackWebhookRoutes(tack.webhooks, tack.scope, { principals: d.platform.authz, idempotency: d.ctx.idempotency }),
});
