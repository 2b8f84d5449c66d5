/** The community service (social) as a module (spec 3): communities, their webhooks, actors, the social graph and conversations. */
import type { AuthService } from "../auth/service";
import { defineService, type WebhookScopeMount } from "../../kernel/module";
import { withListeners, workspaceScope } from "../../kernel/webhooks";
import { ActorService } from "./actors/service";
import { CommunityService, SOCIAL_ACTIONS } from "./communities/service";
import { ConversationService } from "./conversations/service";
import { Lane } from "./actors/lane";
import { detachActor } from "./graph";
import { detachContent } from "./posts";
import { Uuid } from "./core/schemas";
import { EdgeService } from "./graph/edges";
import { FollowService } from "./graph/follows";
import { HashtagService } from "./hashtags/service";
import { SOCIAL_WEBHOOKS } from "./events";
import { COMMUNITY_SCOPE_PREFIX, socialRoutes, type SocialService } from "./routes";
import { communityWebhookScope } from "./webhooks/scope";
import { CommunityWebhookService } from "./webhooks/service";
// Community part 2 (content).
import { CONTENT_BODY_ROUTES, contentParts, contentJobs } from "./content";
import { followNotifications } from "./notifications/service";
import { migrations } from "./migrations";

export const socialModule = defineService({
  name: "social",
  migrations,
  description: "Community: posts, comments and reactions",
  prefix: "/social",
  openapi: { title: "Bunker community", description: "Communities, their content and their webhooks.", version: "v0.1.0" },
  bodyRoutes: CONTENT_BODY_ROUTES,
  actions: SOCIAL_ACTIONS,
  webhooks: SOCIAL_WEBHOOKS,
  create: (d): SocialService => {
    // A community's app_id must be an App of its workspace when the Auth service is mounted.
    const communities = new CommunityService(d, { apps: d.service<AuthService>("auth")?.apps });
    const lane = new Lane(d.ctx, communities);
    // Part 2: follow events also write in-app notifications (notifications/service.ts).
    const follows = new FollowService(lane, withListeners(d.emit, followNotifications(() => d.ctx.clock.iso())));
    const content = contentParts(lane, d.webhooks.engine);
    return {
      ...content,
      follows,
      edges: new EdgeService(lane, follows),
      hashtags: new HashtagService(lane),
      conversations: new ConversationService(lane, d.webhooks.engine),
      communities,
      // Deleting an actor first takes it out of the graph, then its marks on others' content.
      actors: new ActorService(lane, d.webhooks.engine, [detachActor, detachContent]),
      webhooks: new CommunityWebhookService(d.ctx, d.webhooks.api, d.webhooks.engine),
      communityScope: communityWebhookScope(d, communities),
    };
  },
  webhookScopes: (social, d): WebhookScopeMount[] => [
    { prefix: "/social/v1/workspaces/:workspace_id", resolve: workspaceScope(d.tenancy, d.name), tag: "Community: workspace webhooks", params: { workspace_id: Uuid() } },
    { prefix: COMMUNITY_SCOPE_PREFIX, resolve: social.communityScope, tag: "Community: community webhooks", params: { community_id: Uuid() } },
  ],
  jobs: (social) => contentJobs(social),
  routes: (social, d) => socialRoutes(social, { product: d.name, principals: d.tenancy.authz, idempotency: d.ctx.idempotency, catalogue: d.webhooks.api.catalogue }),
  // A deleted workspace takes its communities along (foreign key); their webhook endpoints go here.
  onWorkspaceDelete: async (social, t, workspaceId, actor) => {
    for (const id of await social.communities.idsInWorkspace(t, workspaceId)) await social.communities.dropWebhooks(t, { id, workspace_id: workspaceId }, actor);
  },
});
