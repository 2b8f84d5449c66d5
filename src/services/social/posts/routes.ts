/** Routes of posts: /posts, /posts/{post_id}, tags of a post. */
import { t } from "../../../core/schema";
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import { IDEMPOTENT, laneBase, write, type LaneRouteDeps } from "../core/routes";
import { CommunityParams, errors, laneParams, Pagination, PageQuery, PostParams, Uuid, writeErrors, ErrorBody } from "../core/schemas";
import { Post, PostCreate, PostPatch, Tag } from "./schemas";
import type { PostService } from "./service";

const tags = ["Community: posts"];
const TagParams = laneParams("post_id", "actor_id");

export function postRoutes(posts: PostService, deps: LaneRouteDeps) {
  return laneBase(deps)
    .post("/posts", (c) => write(deps, c, 201, (p) => posts.create(p, c.params.community_id, c.body)), {
      params: CommunityParams,
      body: PostCreate,
      response: { 201: Post, ...writeErrors, 422: ErrorBody },
      detail: {
        tags,
        summary: "Create a post, draft or scheduled post (action social.create)",
        description:
          "Emits post.created (data.status tells draft, scheduled or published). Hashtags and @mentions (by external_id) are parsed from body; a mentioned actor gets a pending tag (tag.created) when the post is published. " +
          "403 ACTOR_SUSPENDED / ACTOR_DELETED; 404 unknown author or quoted post; 422 INVALID_ASSET." + IDEMPOTENT,
      },
    })
    .get("/posts", (c) => posts.list(requirePrincipal(c.principal), c.params.community_id, c.query), {
      params: CommunityParams,
      query: t.Object({ ...PageQuery.properties, author_id: t.Optional(Uuid("Only this author's posts")) }),
      response: { 200: t.Object({ data: t.Array(Post), pagination: Pagination }), ...errors },
      detail: { tags, summary: "Published, non-expired, public posts, newest first (action social.list)", description: "Private and shadow-banned authors' posts and moderated posts are left out." },
    })
    .get("/posts/:post_id", (c) => posts.get(requirePrincipal(c.principal), c.params.community_id, c.params.post_id, c.query), {
      params: PostParams,
      query: t.Object({ actor_id: t.Optional(Uuid("Viewer: 404 unless the viewer may see the post")) }),
      response: { 200: Post, ...errors },
      detail: { tags, summary: "Read a post (action social.read)", description: "Without actor_id the backend reads any live post (drafts included). Soft-deleted posts and expired stories are 404." },
    })
    .patch("/posts/:post_id", (c) => write(deps, c, 200, (p) => posts.patch(p, c.params.community_id, c.params.post_id, c.body)), {
      params: PostParams,
      body: PostPatch,
      response: { 200: Post, ...writeErrors, 422: ErrorBody },
      detail: { tags, summary: "Edit or publish a post (action social.update)", description: "Only sent fields change; emits post.updated with changed_fields. 409 INVALID_TRANSITION for a published post sent back to draft or scheduled." + IDEMPOTENT },
    })
    .delete("/posts/:post_id", async (c) => {
      await posts.remove(requirePrincipal(c.principal), c.params.community_id, c.params.post_id);
      c.set.status = 204;
    }, {
      params: PostParams,
      response: errors,
      detail: { tags, summary: "Soft-delete a post and its reposts (action social.delete); 204", description: "Emits post.deleted for the post and each of its reposts. 404 when already deleted.", responses: noContent() },
    })
    .get("/posts/:post_id/tags", (c) => posts.tags(requirePrincipal(c.principal), c.params.community_id, c.params.post_id), {
      params: PostParams,
      response: { 200: t.Object({ data: t.Array(Tag) }), ...errors },
      detail: { tags, summary: "Tags (@mentions) of a post (action social.read)" },
    })
    .post("/posts/:post_id/tags/:actor_id/approve", (c) => write(deps, c, 200, (p) => posts.decideTag(p, c.params.community_id, c.params.post_id, c.params.actor_id, "approved")), {
      params: TagParams,
      response: { 200: Tag, ...writeErrors },
      detail: { tags, summary: "The tagged actor approves its tag (action social.update)", description: "Idempotent." + IDEMPOTENT },
    })
    .post("/posts/:post_id/tags/:actor_id/decline", (c) => write(deps, c, 200, (p) => posts.decideTag(p, c.params.community_id, c.params.post_id, c.params.actor_id, "declined")), {
      params: TagParams,
      response: { 200: Tag, ...writeErrors },
      detail: { tags, summary: "The tagged actor declines its tag (action social.update)", description: "Idempotent." + IDEMPOTENT },
    });
}
