/**
 * The community (social) service's routes, under /social/v1:
 * - admin lane: /workspaces/{workspace_id}/communities (create, list, read, update, delete);
 * - the community webhook records of spec 3: /communities/{community_id}/webhooks[/{id}/...];
 * - GET /webhook-event-types (no credential).
 * The shared webhook routes at both community-service scopes (/workspaces/{workspace_id}/webhooks/...
 * and /communities/{community_id}/webhooks/...: event-types, endpoints, events, replay) are
 * mounted by mount() from the module's webhookScopes (module.ts).
 */
import { Elysia } from "elysia";
import { t } from "../../core/schema";
import { principalPlugin } from "../../access/http";
import { callerKey, idempotent } from "../../access/idempotent";
import { requirePrincipal, type PrincipalResolver } from "../../access/principal";
import { PLATFORM_CALLER, secured } from "../../access/openapi";
import { noContent } from "../../core/openapi";
import type { Idempotency } from "../../core/idempotency";
import { type EventTypeSource, publicEventTypesRoute, type ScopeResolver } from "../../kernel/webhooks";
import { actorRoutes } from "./actors/routes";
import type { ActorService } from "./actors/service";
import type { CommunityService } from "./communities/service";
import type { CommunityView } from "./communities/views";
import { conversationRoutes } from "./conversations/routes";
import type { ConversationService } from "./conversations/service";
import type { EdgeService } from "./graph/edges";
import type { FollowService } from "./graph/follows";
import { edgeRoutes, followRoutes } from "./graph/routes";
import { hashtagRoutes } from "./hashtags/routes";
import type { HashtagService } from "./hashtags/service";
import { Community, CommunityCreate, CommunityList, CommunityListQuery, CommunityPatch, ErrorBody } from "./communities/schemas";
import { communityWebhookRoutes } from "./webhooks/routes";
import { Uuid } from "./core/schemas";
import type { CommunityWebhookService } from "./webhooks/service";
// Community part 2 (content).
import { contentRoutes, type ContentParts } from "./content";

/** The community service's parts, as its module creates them (module.ts). */
export interface SocialService extends ContentParts {
  communities: CommunityService;
  webhooks: CommunityWebhookService;
  actors: ActorService;
  follows: FollowService;
  edges: EdgeService;
  hashtags: HashtagService;
  conversations: ConversationService;
  /** The community webhook scope: /social/v1/communities/{community_id}. */
  communityScope: ScopeResolver;
}

export const COMMUNITY_SCOPE_PREFIX = "/social/v1/communities/:community_id";

const tags = ["Community: communities"];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const wsParams = t.Object({ workspace_id: Uuid() });
const communityParams = t.Object({ workspace_id: Uuid(), community_id: Uuid() });

function communityRoutes(communities: CommunityService, deps: { principals: PrincipalResolver; idempotency: Idempotency }) {
  return new Elysia({ prefix: "/social/v1/workspaces/:workspace_id/communities" })
    .use(principalPlugin(deps.principals))
    .guard(secured(PLATFORM_CALLER))
    .post("", (c) => {
      const p = requirePrincipal(c.principal);
      return idempotent(deps.idempotency, c, callerKey(p), async () => ({ status: 201, body: await communities.create(p, c.params.workspace_id, c.body, c.meta) })) as Promise<CommunityView>;
    }, {
      params: wsParams,
      body: CommunityCreate,
      response: { 201: Community, ...errors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Create a community (action social.create)",
        description:
          "400 for a malformed slug, display_name length, settings or Idempotency-Key; 404 when app_id is not an App of this workspace; " +
          "409 SLUG_TAKEN, APP_ALREADY_CONNECTED or IDEMPOTENCY_KEY_REUSE. Accepts Idempotency-Key (24 h).",
      },
    })
    .get("", (c) => communities.list(requirePrincipal(c.principal), c.params.workspace_id, c.query), {
      params: wsParams,
      query: CommunityListQuery,
      response: { 200: CommunityList, ...errors },
      detail: {
        tags,
        summary: "List communities, newest first (action social.list)",
        description: "400 for an unknown status, q over 128 characters or a malformed cursor. Follow-up pages keep the first page's filters (repeat them or omit them).",
      },
    })
    .get("/:community_id", (c) => communities.get(requirePrincipal(c.principal), c.params.workspace_id, c.params.community_id), {
      params: communityParams,
      response: { 200: Community, ...errors },
      detail: { tags, summary: "Read a community (action social.read)" },
    })
    .patch("/:community_id", (c) => {
      const p = requirePrincipal(c.principal);
      return idempotent(deps.idempotency, c, callerKey(p), async () => ({
        status: 200,
        body: await communities.update(p, c.params.workspace_id, c.params.community_id, c.body, c.meta),
      })) as Promise<CommunityView>;
    }, {
      params: communityParams,
      body: CommunityPatch,
      response: { 200: Community, ...errors, 409: ErrorBody },
      detail: {
        tags,
        summary: "Update display_name, description, settings or status (action social.update)",
        description: "Only sent fields change; settings merge key by key. Status moves freely between active and suspended; archived is final (409 COMMUNITY_ARCHIVED).",
      },
    })
    .delete("/:community_id", async (c) => {
      const p = requirePrincipal(c.principal);
      await communities.remove(p, c.params.workspace_id, c.params.community_id, c.meta);
      c.set.status = 204;
    }, {
      params: communityParams,
      detail: { tags, summary: "Delete a community with everything in it, its webhooks included (action social.delete); 204, not reversible", responses: noContent() },
    });
}

export function socialRoutes(social: SocialService, deps: { product: string; principals: PrincipalResolver; idempotency: Idempotency; catalogue: EventTypeSource }) {
  const routeDeps = { principals: deps.principals, idempotency: deps.idempotency };
  return new Elysia()
    .use(publicEventTypesRoute(deps.catalogue, deps.product, "/social/v1/webhook-event-types"))
    .use(communityRoutes(social.communities, routeDeps))
    .use(actorRoutes(social.actors, routeDeps))
    .use(followRoutes(social.follows, routeDeps))
    .use(edgeRoutes(social.edges, social.follows, routeDeps))
    .use(hashtagRoutes(social.hashtags, routeDeps))
    .use(conversationRoutes(social.conversations, routeDeps))
    .use(contentRoutes(social, routeDeps))
    .use(
      communityWebhookRoutes(
        { webhooks: social.webhooks, product: deps.product, ...routeDeps },
        { prefix: COMMUNITY_SCOPE_PREFIX, resolve: social.communityScope, tag: "Community: community webhooks (spec 3 records)", params: { community_id: Uuid() } },
      ),
    );
}
