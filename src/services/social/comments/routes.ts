/** Routes of comments: /posts/{post_id}/comments[/{comment_id}[/approve]]. */
import { t } from "../../../core/schema";
import { requirePrincipal } from "../../../access/principal";
import { noContent } from "../../../core/openapi";
import { IDEMPOTENT, laneBase, write, type LaneRouteDeps } from "../core/routes";
import { AssetRef, CommentParams, ErrorBody, errors, Pagination, PageQuery, PostParams, Uuid, UuidOut, writeErrors } from "../core/schemas";
import type { CommentService } from "./service";

const tags = ["Community: comments"];

export const Comment = t.Object({
  id: UuidOut(),
  community_id: UuidOut(),
  post_id: UuidOut(),
  parent_id: t.Nullable(UuidOut("null for top-level")),
  actor_id: UuidOut("Author"),
  body: t.String({ description: "1-10000 characters after trim" }),
  depth: t.Integer({ description: "0 top-level; capped by the community setting max_comment_depth" }),
  status: t.String({ description: "published | pending_approval | hidden | removed" }),
  visibility: t.String({ description: "public | author_only (post author and comment author only)" }),
  reaction_counts: t.Record(t.String(), t.Integer()),
  pinned: t.Boolean(),
  pinned_at: t.Nullable(t.String()),
  assets: t.Array(t.Object({ asset_id: UuidOut(), alt_text: t.Nullable(t.String()) })),
  deleted_at: t.Nullable(t.String()),
  created_at: t.String(),
  updated_at: t.String(),
});

export function commentRoutes(comments: CommentService, deps: LaneRouteDeps) {
  return laneBase(deps)
    .post("/posts/:post_id/comments", (c) => write(deps, c, 201, (p) => comments.create(p, c.params.community_id, c.params.post_id, c.body)), {
      params: PostParams,
      body: t.Object({
        actor_id: Uuid("Author (active)"),
        body: t.String({ description: "1-10000 characters after trim" }),
        parent_id: t.Optional(t.Nullable(Uuid("Comment replied to; below the depth cap the reply joins its parent's level"))),
        visibility: t.Optional(t.String({ description: "public (default) | author_only" })),
        assets: t.Optional(t.Array(AssetRef, { description: "At most 20 ready assets owned by the author" })),
      }),
      response: { 201: Comment, ...writeErrors, 422: ErrorBody },
      detail: {
        tags,
        summary: "Comment on a post (action social.create)",
        description: "A commenter the post author restricts is held as pending_approval. Emits comment.created. 404 post not visible to the commenter; 409 BLOCKED or POST_NOT_PUBLISHED; 422 INVALID_ASSET." + IDEMPOTENT,
      },
    })
    .get("/posts/:post_id/comments", (c) => comments.list(requirePrincipal(c.principal), c.params.community_id, c.params.post_id, c.query), {
      params: PostParams,
      query: t.Object({
        ...PageQuery.properties,
        parent_id: t.Optional(Uuid("List this comment's replies, oldest first")),
        requester_id: t.Optional(Uuid("Viewer")),
        actor_id: t.Optional(Uuid("Viewer (same as requester_id)")),
      }),
      response: { 200: t.Object({ data: t.Array(Comment), pagination: Pagination }), ...errors },
      detail: { tags, summary: "Top-level comments (pinned first, then newest first) or a parent's replies (oldest first) (action social.list)" },
    })
    .get("/posts/:post_id/comments/:comment_id", (c) => comments.get(requirePrincipal(c.principal), c.params.community_id, c.params.post_id, c.params.comment_id, c.query), {
      params: CommentParams,
      query: t.Object({ actor_id: t.Optional(Uuid("Viewer")) }),
      response: { 200: Comment, ...errors },
      detail: { tags, summary: "Read a comment (action social.read)", description: "404 when the viewer (or, without actor_id, the public) may not see it." },
    })
    .patch("/posts/:post_id/comments/:comment_id", (c) => write(deps, c, 200, (p) => comments.patch(p, c.params.community_id, c.params.post_id, c.params.comment_id, c.body)), {
      params: CommentParams,
      body: t.Object({
        body: t.Optional(t.String()),
        status: t.Optional(t.String({ description: "published | hidden | removed" })),
        visibility: t.Optional(t.String()),
        pinned: t.Optional(t.Boolean({ description: "Pin or unpin a top-level comment; needs actor_id = the post author" })),
        actor_id: t.Optional(Uuid("Who pins (the post author)")),
      }),
      response: { 200: Comment, ...writeErrors, 422: ErrorBody },
      detail: { tags, summary: "Edit a comment (action social.update)", description: "Emits comment.updated with changed_fields." + IDEMPOTENT },
    })
    .delete("/posts/:post_id/comments/:comment_id", async (c) => {
      await comments.remove(requirePrincipal(c.principal), c.params.community_id, c.params.post_id, c.params.comment_id);
      c.set.status = 204;
    }, {
      params: CommentParams,
      response: errors,
      detail: { tags, summary: "Soft-delete a comment (action social.delete); 204", description: "Emits comment.deleted; 404 when already deleted.", responses: noContent() },
    })
    .post("/posts/:post_id/comments/:comment_id/approve", (c) => write(deps, c, 200, (p) => comments.approve(p, c.params.community_id, c.params.post_id, c.params.comment_id, c.body)), {
      params: CommentParams,
      body: t.Object({ approver_actor_id: Uuid("Must be the post's author") }),
      response: { 200: Comment, ...writeErrors },
      detail: { tags, summary: "The post author approves a pending comment (action social.update)", description: "No-op when already published; 403 NOT_POST_AUTHOR; 409 NOT_PENDING for hidden or removed comments." + IDEMPOTENT },
    });
}
