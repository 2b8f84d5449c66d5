/** Routes of reactions, bookmarks, reposts, views and viewers, votes and poll results. */
import { t } from "../../../core/schema";
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import { IDEMPOTENT, laneBase, write, type LaneRouteDeps } from "../core/routes";
import { ActorParams, CommentParams, CommunityParams, ErrorBody, errors, laneParams, OneOf, Pagination, PageQuery, PostParams, Uuid, UuidOut, writeErrors } from "../core/schemas";
import { Post } from "../posts/schemas";
import { REACTION_TYPES, type EngageService } from "./service";

const tags = ["Community: reactions, bookmarks, reposts, views, polls"];
/** A reaction type, in the body of a reaction and in the path of its removal (anything else is 400 naming type). */
const ReactionType = OneOf(REACTION_TYPES, "The reaction");
const ReactionBody = t.Object({ actor_id: Uuid("Reacting actor (active)"), type: ReactionType });
const ReactionResult = t.Object({
  reaction: t.Object({ target_type: t.String({ description: "post | comment" }), target_id: UuidOut("The post or comment"), actor_id: UuidOut(), type: t.String(), created_at: t.String() }),
  created: t.Boolean({ description: "false when the actor had already reacted with this type" }),
  reaction_counts: t.Record(t.String(), t.Integer()),
});
const Bookmark = t.Object({ actor_id: UuidOut(), post_id: UuidOut(), created_at: t.String() });
const Viewer = t.Object({ viewer_actor_id: UuidOut(), viewer_external_id: t.String(), viewer_display_name: t.Nullable(t.String()), viewer_avatar_url: t.Nullable(t.String()), viewed_at: t.String() });
const PollResults = t.Object({
  post_id: UuidOut(),
  question: t.String(),
  options: t.Array(t.Object({ index: t.Integer(), label: t.String(), count: t.Integer() }), { description: "Every option, zero-filled" }),
  total_votes: t.Integer(),
  closes_at: t.Nullable(t.String()),
});

export function engageRoutes(engage: EngageService, deps: LaneRouteDeps) {
  return laneBase(deps)
    .post("/posts/:post_id/reactions", (c) => write(deps, c, 201, (p) => engage.react(p, c.params.community_id, c.params.post_id, null, c.body)), {
      params: PostParams,
      body: ReactionBody,
      response: { 201: ReactionResult, ...writeErrors },
      detail: { tags, summary: "React to a post (action social.create)", description: "One reaction per actor and type; a repeat answers created false. Emits post.reaction.created. 404 when the actor cannot see the post; 409 BLOCKED." + IDEMPOTENT },
    })
    .delete("/posts/:post_id/reactions/:actor_id/:type", async (c) => {
      await engage.unreact(requirePrincipal(c.principal), c.params.community_id, c.params.post_id, null, c.params.actor_id, c.params.type);
      c.set.status = 204;
    }, {
      params: t.Object({ ...laneParams("post_id", "actor_id").properties, type: ReactionType }),
      response: errors,
      detail: { tags, summary: "Remove a post reaction (action social.delete); 204 always for a live post", responses: noContent() },
    })
    .post("/posts/:post_id/comments/:comment_id/reactions", (c) => write(deps, c, 201, (p) => engage.react(p, c.params.community_id, c.params.post_id, c.params.comment_id, c.body)), {
      params: CommentParams,
      body: ReactionBody,
      response: { 201: ReactionResult, ...writeErrors },
      detail: { tags, summary: "React to a comment (action social.create)", description: "Emits comment.reaction.created." + IDEMPOTENT },
    })
    .delete("/posts/:post_id/comments/:comment_id/reactions/:actor_id/:type", async (c) => {
      await engage.unreact(requirePrincipal(c.principal), c.params.community_id, c.params.post_id, c.params.comment_id, c.params.actor_id, c.params.type);
      c.set.status = 204;
    }, {
      params: t.Object({ ...laneParams("post_id", "comment_id", "actor_id").properties, type: ReactionType }),
      response: errors,
      detail: { tags, summary: "Remove a comment reaction (action social.delete); 204", responses: noContent() },
    })
    .post("/bookmarks", (c) => write(deps, c, 201, (p) => engage.bookmark(p, c.params.community_id, c.body)), {
      params: CommunityParams,
      body: t.Object({ actor_id: Uuid(), post_id: Uuid("A post the actor can see") }),
      response: { 201: t.Object({ ...Bookmark.properties, created: t.Boolean() }), ...writeErrors },
      detail: { tags, summary: "Bookmark a post (action social.create); idempotent", description: "Bookmarks are private to their actor." + IDEMPOTENT },
    })
    .delete("/bookmarks/:actor_id/:post_id", async (c) => {
      await engage.unbookmark(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id, c.params.post_id);
      c.set.status = 204;
    }, {
      params: laneParams("actor_id", "post_id"),
      response: errors,
      detail: { tags, summary: "Remove a bookmark (action social.delete); 204 always", responses: noContent() },
    })
    .get("/actors/:actor_id/bookmarks", (c) => engage.bookmarks(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id, c.query), {
      params: ActorParams,
      query: PageQuery,
      response: { 200: t.Object({ data: t.Array(t.Object({ ...Bookmark.properties, post: Post })), pagination: Pagination }), ...errors },
      detail: { tags, summary: "The actor's bookmarks, newest first, with their posts (action social.list)", description: "Posts the actor can no longer see are left out (a page may be short; follow has_more)." },
    })
    .post("/posts/:post_id/reposts", (c) => write(deps, c, 201, (p) => engage.repost(p, c.params.community_id, c.params.post_id, c.body)), {
      params: PostParams,
      body: t.Object({ actor_id: Uuid("Reposting actor (active)") }),
      response: { 201: t.Object({ post: Post, created: t.Boolean() }), ...writeErrors, 422: ErrorBody },
      detail: { tags, summary: "Repost a post (action social.create)", description: "Emits repost.created (data.source_post_id). 422 NOT_REPOSTABLE unless published and public; 409 BLOCKED." + IDEMPOTENT },
    })
    .delete("/posts/:post_id/reposts/:actor_id", async (c) => {
      await engage.unrepost(requirePrincipal(c.principal), c.params.community_id, c.params.post_id, c.params.actor_id);
      c.set.status = 204;
    }, {
      params: laneParams("post_id", "actor_id"),
      response: errors,
      detail: { tags, summary: "Undo the actor's repost of this post (action social.delete); 204", description: "Soft-deletes the repost with post.deleted; 204 when there was none.", responses: noContent() },
    })
    .get("/posts/:post_id/reposts", (c) => engage.reposts(requirePrincipal(c.principal), c.params.community_id, c.params.post_id, c.query), {
      params: PostParams,
      query: PageQuery,
      response: { 200: t.Object({ data: t.Array(Post), pagination: Pagination }), ...errors },
      detail: { tags, summary: "Live reposts of a post, newest first (action social.list)" },
    })
    .post("/posts/:post_id/views", (c) => write(deps, c, 204, (p) => engage.view(p, c.params.community_id, c.params.post_id, c.body)), {
      params: PostParams,
      body: t.Object({ viewer_actor_id: Uuid() }),
      response: { ...writeErrors },
      detail: { tags, summary: "Record a view (action social.create); 204 recorded or already existed", description: "404 when the viewer cannot see the post." + IDEMPOTENT, responses: noContent() },
    })
    .get("/posts/:post_id/viewers", (c) => engage.viewers(requirePrincipal(c.principal), c.params.community_id, c.params.post_id, c.query), {
      params: PostParams,
      query: t.Object({ ...PageQuery.properties, requester_id: Uuid("Must be the post's author") }),
      response: { 200: t.Object({ data: t.Array(Viewer), pagination: Pagination }), ...errors },
      detail: { tags, summary: "Viewers of a post, newest view first (action social.list)", description: "403 NOT_POST_AUTHOR for anyone but the author." },
    })
    .post("/posts/:post_id/votes", (c) => write(deps, c, 204, (p) => engage.vote(p, c.params.community_id, c.params.post_id, c.body)), {
      params: PostParams,
      body: t.Object({ actor_id: Uuid(), option_index: t.Number({ description: "Zero-based index into the poll's options" }) }),
      response: { ...writeErrors, 422: ErrorBody },
      detail: {
        tags,
        summary: "Vote on a poll (action social.create); 204",
        description: "A later vote by the same actor replaces the earlier one; the author gets a vote notification. 422 NO_POLL, SELF_VOTE, OPTION_OUT_OF_RANGE, POLL_CLOSED; 409 BLOCKED." + IDEMPOTENT,
        responses: noContent(),
      },
    })
    .get("/posts/:post_id/poll-results", (c) => engage.results(requirePrincipal(c.principal), c.params.community_id, c.params.post_id), {
      params: PostParams,
      response: { 200: PollResults, ...errors, 422: ErrorBody },
      detail: { tags, summary: "Poll results with every option zero-filled (action social.read)", description: "422 NO_POLL when the post has no poll." },
    });
}
