/**
 * The Auth product's webhook scope: /auth/v1/apps/{app_id}/webhooks/... Endpoints belong
 * to one App; the caller needs auth.webhooks.read / write in the App's workspace (another
 * workspace's App answers 404, like an unknown one).
 */
import { registerWebhookActions, webhookAction, type ScopeResolver } from "../../kernel/webhooks";
import type { AuthService } from "./service";

export function appWebhookScope(auth: AuthService): ScopeResolver {
  const { ctx, name } = auth.m;
  registerWebhookActions(ctx.actions, name);
  return async ({ principal, params }, access) => {
    const app = await auth.apps.forPrincipal(principal, params.app_id, webhookAction(name, access));
    return { product: name, scopeId: app.id, workspaceId: app.workspaceId };
  };
}
