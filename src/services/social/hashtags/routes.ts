/** Routes of hashtags: /hashtags/{tag}, /search/hashtags, /actors/{actor_id}/hashtag-follows. */
import { t } from "../../../core/schema";
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import { IDEMPOTENT, laneBase, write, type LaneRouteDeps } from "../core/routes";
import { ActorParams, CommunityParams, ErrorBody, errors, laneParams, PageQuery, Pagination, Uuid, UuidOut } from "../core/schemas";
import { HashtagName } from "./schemas";
import type { HashtagService } from "./service";

const tags = ["Community: hashtags"];

const Hashtag = t.Object({ community_id: UuidOut(), tag: t.String({ description: "Lowercase, no leading #" }), first_used_at: t.String(), post_count: t.Integer() });
const HashtagFollow = t.Object({ actor_id: UuidOut(), community_id: UuidOut(), tag: t.String(), followed_at: t.String() });

export function hashtagRoutes(hashtags: HashtagService, deps: LaneRouteDeps) {
  return laneBase(deps)
    .get("/hashtags/:tag", (c) => hashtags.get(requirePrincipal(c.principal), c.params.community_id, c.params.tag), {
      params: t.Object({ community_id: Uuid(), tag: HashtagName() }),
      response: { 200: Hashtag, ...errors },
      detail: { tags, summary: "Read a hashtag of the directory (action social.read)", description: "The tag is normalised (leading # and case ignored); 400 when it cannot be a tag; 404 when not in the directory." },
    })
    .get("/search/hashtags", (c) => hashtags.search(requirePrincipal(c.principal), c.params.community_id, c.query), {
      params: CommunityParams,
      query: t.Object({ q: t.String({ description: "Prefix, 1-32 characters (normalised: lowercase, leading # dropped)" }), limit: t.Optional(t.QueryInteger({ description: "1-200, default 50" })) }),
      response: { 200: t.Object({ data: t.Array(Hashtag) }), ...errors },
      detail: { tags, summary: "Hashtags starting with q, alphabetical (action social.read)" },
    })
    .get("/actors/:actor_id/hashtag-follows", (c) => hashtags.follows(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id, c.query), {
      params: ActorParams,
      query: PageQuery,
      response: { 200: t.Object({ data: t.Array(HashtagFollow), pagination: Pagination }), ...errors },
      detail: { tags, summary: "Hashtags the actor follows, newest first (action social.list)" },
    })
    .post("/actors/:actor_id/hashtag-follows", (c) => write(deps, c, 201, (p) => hashtags.follow(p, c.params.community_id, c.params.actor_id, c.body)), {
      params: ActorParams,
      body: t.Object({ tag: HashtagName("A hashtag (leading # and case ignored) that must already be in the community's directory (404 otherwise); one that cannot be a tag is 400") }),
      response: { 201: HashtagFollow, ...errors, 409: ErrorBody },
      detail: { tags, summary: "Follow a hashtag (action social.create)", description: "Idempotent: following again refreshes followed_at." + IDEMPOTENT },
    })
    .delete("/actors/:actor_id/hashtag-follows/:tag", async (c) => {
      await hashtags.unfollow(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id, c.params.tag);
      c.set.status = 204;
    }, {
      params: t.Object({ ...laneParams("actor_id").properties, tag: HashtagName() }),
      response: errors,
      detail: { tags, summary: "Unfollow a hashtag (action social.delete); 204 always for a well-formed tag (400 for one that cannot be a tag)", responses: noContent() },
    });
}
