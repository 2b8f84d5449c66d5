/**
 * The community webhook scope: /social/v1/communities/{community_id}/webhooks/... Endpoints
 * belong to one community; the caller needs social.webhooks.read / write in the community's
 * workspace, which must have the social service enabled. Unknown communities and those of
 * other workspaces answer 404.
 */
import type { ModuleContext } from "../../../kernel/module";
import { registerWebhookActions, webhookAction, type ScopeResolver } from "../../../kernel/webhooks";
import type { CommunityService } from "../communities/service";

export function communityWebhookScope(m: Pick<ModuleContext, "ctx" | "name">, communities: CommunityService): ScopeResolver {
  registerWebhookActions(m.ctx.actions, m.name);
  return async ({ principal, params }, access) => {
    const c = await communities.forPrincipal(principal, params.community_id, webhookAction(m.name, access));
    return { product: m.name, scopeId: c.id, workspaceId: c.workspace_id };
  };
}
