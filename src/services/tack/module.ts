/**
 * The card board (tack) as a module, under {tack_base_url} = /tack/api: board workspaces,
 * projects, lists, labels, cards, comments and activity (board/), the webhook event
 * catalogue, the workspace webhook scope (the shared routes; {workspace} is the id or the
 * name) and the board's own webhook records (routes.ts, webhooks.ts).
 */
import { Elysia } from "elysia";
import { defineService } from "../../kernel/module";
import { TACK_ACTIONS } from "./actions";
import { cardRoutes } from "./board/card-routes";
import { boardCaller, boardRequestHook, RATE_LIMIT_HEADERS } from "./board/guard";
import { Cards } from "./board/cards";
import { boardRoutes } from "./board/routes";
import { Board } from "./board/service";
import { dropSearchRows, workspaceIdsOfOwner } from "./board";
import { TACK_WEBHOOKS } from "./board/events";
import { TACK_SCOPE_PARAMS, TACK_SCOPE_PREFIX, tackWebhookRoutes } from "./routes";
import { TackWebhookService, tackWorkspaceScope } from "./webhooks";
import { migrations } from "./migrations";
import { TACK_SETTINGS } from "./settings";

export const tackModule = defineService({
  name: "tack",
  migrations,
  settings: TACK_SETTINGS,
  description: "Card board: workspaces, projects, lists and cards",
  prefix: "/tack",
  // The spec gives the board no description version, only "/v1 below /api": v1.0.0.
  openapi: { title: "Bunker card board", description: "Card board: workspaces, projects, lists, cards, labels, comments and activity (paths under /tack/api/v1).", version: "v1.0.0", responseHeaders: RATE_LIMIT_HEADERS },
  actions: TACK_ACTIONS,
  webhooks: TACK_WEBHOOKS,
  create: (d) => {
    const board = new Board(d);
    return { board, cards: new Cards(d, board), api: d.webhooks.api, webhooks: new TackWebhookService(d.ctx, d.webhooks.api), scope: tackWorkspaceScope(d) };
  },
  // Board workspaces go with their platform workspace (foreign keys); their webhook
  // endpoints (scoped to the board workspace) and FTS rows here.
  onWorkspaceDelete: async (tack, t, workspaceId, actor) => {
    for (const scopeId of await workspaceIdsOfOwner(t, workspaceId)) {
      await tack.api.endpoints.removeScope(t, { product: TACK_WEBHOOKS.product, scopeId, workspaceId }, actor);
    }
    await dropSearchRows(t, { ownerWorkspaceId: workspaceId });
  },
  // Rate limits and their headers on every request under /tack/api (board/guard.ts).
  requestHooks: (_tack, d) => [boardRequestHook(d)],
  webhookScopes: (tack) => [{ prefix: TACK_SCOPE_PREFIX, resolve: tack.scope, params: TACK_SCOPE_PARAMS }],
  routes: (tack, d) =>
    new Elysia({ name: "tack-routes" })
      .use(boardRoutes(tack.board, d))
      .use(cardRoutes(tack.cards, d))
      .use(tackWebhookRoutes(tack.webhooks, tack.scope, { principals: d.tenancy.authz, idempotency: d.ctx.idempotency, caller: boardCaller(d) })),
});
