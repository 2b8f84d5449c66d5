/**
 * Scope resolvers: how a webhook route turns its path parameters and the caller into a
 * Scope, enforcing the product's webhook actions on the way.
 *
 * Actions (registered per product): `<product>.webhooks.read` (event types, endpoints, the
 * events log) and `<product>.webhooks.write` (create/update/delete endpoints, rotate
 * secrets, test sends, replays). The built-in admin role covers them through `<product>.*`;
 * the member role does not include them.
 *
 * Workspace-scoped products use workspaceScope. A product with another kind of scope (Auth
 * Apps, communities) brings its own resolver (load the app / community, authorize in its
 * workspace, return {product, scopeId, workspaceId}). Either way the product's module lists
 * its scopes (ServiceModule.webhookScopes) and mount() mounts webhookRoutes for each.
 */
import type { ActionRegistry } from "../../access/actions";
import type { Principal } from "../../access/principal";
import type { Tenancy } from "../tenancy";
import type { ResolvedScope } from "./endpoints";
import type { Product } from "./types";

export type Access = "read" | "write";

/** Turns the caller and the route's path parameters into the scope, or throws (rejects) 403/404. */
export type ScopeResolver = (c: { principal: Principal; params: Record<string, string> }, access: Access) => ResolvedScope | Promise<ResolvedScope>;

export const webhookAction = (product: Product, access: Access) => `${product}.webhooks.${access}`;

/** Registers the product's two webhook actions (once: a second call for the same product is a no-op). */
export function registerWebhookActions(actions: ActionRegistry, product: Product) {
  const read = webhookAction(product, "read");
  const write = webhookAction(product, "write");
  if (actions.has(read) && actions.has(write)) return;
  actions.register(
    product,
    [
      { name: read, description: `List ${product} webhook event types, endpoints and the events log` },
      { name: write, description: `Create, change and delete ${product} webhook endpoints, rotate their secrets, send test events and replay events` },
    ].filter((a) => !actions.has(a.name)),
  );
}

/**
 * Scope of a workspace-scoped product, from the :workspace_id path parameter: unknown
 * workspace, another workspace's key or a non-member answer 404; a policy without the
 * action 403; the product switched off for the workspace 403 SERVICE_NOT_ENABLED.
 */
export function workspaceScope(tenancy: Tenancy, product: Product): ScopeResolver {
  registerWebhookActions(tenancy.ctx.actions, product);
  return async ({ principal, params }, access) => {
    const workspace = await tenancy.guard(principal, params.workspace_id, webhookAction(product, access), product);
    return { product, scopeId: workspace.id, workspaceId: workspace.id };
  };
}
