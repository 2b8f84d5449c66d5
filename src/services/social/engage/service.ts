/**
 * Engagement with posts and comments: reactions, bookmarks, reposts, views and viewers,
 * poll votes and results.
 *
 * Decisions the spec leaves open (Stream, Mastodon):
 * - Reaction types: like, love, haha, wow, sad, angry, celebrate, insightful; one per actor
 *   and type (several types per actor allowed); POST answers 201 {reaction, created,
 *   reaction_counts}; DELETE is 204 always. The reacting actor must see the post (404) and
 *   have no block with its author (409 BLOCKED).
 * - Bookmarks are private to their actor: only GET /actors/{id}/bookmarks lists them, and it
 *   leaves out posts the actor can no longer see.
 * - Reposts: only published posts whose effective visibility is public can be reposted
 *   (422 NOT_REPOSTABLE); a repost of a repost reposts the original; one live repost per
 *   actor and source (a repeat answers created false); reposts are posts of kind repost and
 *   do not count in post_count. Deleting the repost (either route) or its source
 *   soft-deletes it with post.deleted.
 * - Votes: 422 NO_POLL, SELF_VOTE, OPTION_OUT_OF_RANGE and POLL_CLOSED (after closes_at);
 *   409 BLOCKED; each vote call adds a vote activity to the author's notifications.
 */
import type { Principal } from "../../../access/principal";
import { tx } from "../../../core/db";
import { ApiError, forbidden, invalidField, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { isObject, page, pageArgs } from "../core/common";
import { blocked } from "../graph/follows";
import { blockBetween } from "../graph";
import { addActivity } from "../notifications";
import * as commentRecords from "../comments";
import type { PostService } from "../posts/service";
import * as postRecords from "../posts";
import { newPostView, postView, postViews, type PostView } from "../posts/views";
import { effectiveVisibility } from "../posts/visibility";
import * as store from "./store";

/** The reaction types; the routes' schema (ReactionType) refuses any other with 400 naming type. */
export const REACTION_TYPES = ["like", "love", "haha", "wow", "sad", "angry", "celebrate", "insightful"] as const;
export type ReactionTypeName = (typeof REACTION_TYPES)[number];

export class EngageService {
  constructor(private readonly posts: PostService) {}

  private get lane() {
    return this.posts.lane;
  }

  // ------------------------------------------------------------------ reactions

  async react(pr: Principal, communityId: string, postId: string, commentId: string | null, body: { actor_id: string; type: ReactionTypeName }) {
    const c = await this.lane.community(pr, communityId, "social.create");
    const type = body.type;
    const now = this.posts.now();
    return tx(this.lane.ctx.db, async (t) => {
      const actor = await this.posts.writer(t, c.id, body.actor_id);
      const post = await this.posts.live(t, c.id, postId);
      let targetAuthor = post.actor_id;
      let comment: commentRecords.CommentRow | null | undefined;
      if (commentId !== null) {
        comment = await commentRecords.commentById(t, post.id, commentId.toLowerCase());
        if (!comment || !commentRecords.visibleTo(comment, actor.id, post.actor_id)) throw notFound("Comment");
        targetAuthor = comment.actor_id;
      }
      if (actor.id !== targetAuthor && (await blockBetween(t, actor.id, targetAuthor))) throw blocked();
      await this.posts.visibleTo(t, c.id, post.id, actor.id);
      const targetId = comment?.id ?? post.id;
      const row: store.ReactionRow = { target_id: targetId, actor_id: actor.id, type, community_id: c.id, target_type: comment ? "comment" : "post", created_at: now };
      const created = await store.addReaction(t, row);
      if (created && !comment) await postRecords.bumpPost(t, post.id, "reaction_count", 1);
      const counts = await store.countsOf(t, targetId);
      if (created) {
        if (comment) await this.posts.emit(t, c.id, "comment.reaction.created", { comment_id: comment.id, post_id: post.id, actor_id: actor.id, reaction: type, reaction_counts: counts, created_at: now });
        else await this.posts.emit(t, c.id, "post.reaction.created", { post_id: post.id, actor_id: actor.id, reaction: type, reaction_counts: counts, created_at: now });
        await addActivity(t, { community_id: c.id, recipient: targetAuthor, type: "reaction", target_type: row.target_type, target_id: targetId, from: actor.id, data: { post_id: post.id, reaction: type }, now });
      }
      const existing = created ? row : ((await store.reactionOf(t, targetId, actor.id, type)) ?? row);
      return { reaction: { target_type: existing.target_type, target_id: targetId, actor_id: actor.id, type, created_at: existing.created_at }, created, reaction_counts: counts };
    });
  }

  async unreact(pr: Principal, communityId: string, postId: string, commentId: string | null, actorId: string, type: ReactionTypeName): Promise<void> {
    const c = await this.lane.community(pr, communityId, "social.delete");
    await tx(this.lane.ctx.db, async (t) => {
      const post = await this.posts.live(t, c.id, postId);
      let targetId = post.id;
      if (commentId !== null) {
        const cm = await commentRecords.commentById(t, post.id, commentId.toLowerCase());
        if (!cm) throw notFound("Comment");
        targetId = cm.id;
      }
      if (await store.removeReaction(t, targetId, actorId.toLowerCase(), type)) {
        if (commentId === null) await postRecords.bumpPost(t, post.id, "reaction_count", -1);
      }
    });
  }

  // ------------------------------------------------------------------ bookmarks

  async bookmark(pr: Principal, communityId: string, body: unknown) {
    const c = await this.lane.community(pr, communityId, "social.create");
    const o = isObject(body) ? body : {};
    if (typeof o.post_id !== "string") throw invalidField("post_id", "required, a post uuid");
    return tx(this.lane.ctx.db, async (t) => {
      const actor = await this.posts.writer(t, c.id, o.actor_id);
      const post = await this.posts.visibleTo(t, c.id, o.post_id as string, actor.id);
      const row: store.BookmarkRow = { actor_id: actor.id, post_id: post.id, community_id: c.id, created_at: this.posts.now() };
      const created = await store.addBookmark(t, row);
      const b = created ? row : ((await store.bookmarkOf(t, actor.id, post.id)) as store.BookmarkRow);
      return { actor_id: b.actor_id, post_id: b.post_id, created_at: b.created_at, created };
    });
  }

  async unbookmark(pr: Principal, communityId: string, actorId: string, postId: string): Promise<void> {
    const c = await this.lane.community(pr, communityId, "social.delete");
    await store.removeBookmark(this.lane.ctx.db, c.id, actorId.toLowerCase(), postId.toLowerCase());
  }

  async bookmarks(pr: Principal, communityId: string, actorId: string, q: { limit?: number; cursor?: string }) {
    const c = await this.lane.community(pr, communityId, "social.list");
    const actor = await this.lane.actor(this.lane.ctx.db, c.id, actorId);
    const { limit, after } = pageArgs(q);
    const rows = await store.bookmarksOf(this.lane.ctx.db, actor.id, after, limit + 1);
    const pg = page(rows, limit, (r) => ({ k: r.created_at, id: r.post_id }), (r) => r);
    const out: { actor_id: string; post_id: string; created_at: string; post: PostView }[] = [];
    for (const b of pg.data) {
      const p = await this.posts.visibleTo(this.lane.ctx.db, c.id, b.post_id, actor.id).catch(() => null);
      if (p) out.push({ actor_id: b.actor_id, post_id: b.post_id, created_at: b.created_at, post: await postView(this.lane.ctx.db, p) });
    }
    return { data: out, pagination: pg.pagination };
  }

  // ------------------------------------------------------------------ reposts

  async repost(pr: Principal, communityId: string, postId: string, body: unknown): Promise<{ post: PostView; created: boolean }> {
    const c = await this.lane.community(pr, communityId, "social.create");
    const o = isObject(body) ? body : {};
    const now = this.posts.now();
    return tx(this.lane.ctx.db, async (t) => {
      const actor = await this.posts.writer(t, c.id, o.actor_id);
      let src = await this.posts.live(t, c.id, postId);
      if (src.source_post_id) src = await this.posts.live(t, c.id, src.source_post_id);
      if (actor.id !== src.actor_id && (await blockBetween(t, actor.id, src.actor_id))) throw blocked();
      await this.posts.visibleTo(t, c.id, src.id, actor.id);
      if (src.status !== "published" || effectiveVisibility(src) !== "public") throw new ApiError(422, "NOT_REPOSTABLE", "Only published public posts can be reposted");
      const existing = await postRecords.liveRepostBy(t, actor.id, src.id);
      if (existing) return { post: await postView(t, existing), created: false };
      const row: postRecords.PostRow = {
        id: uuid(), community_id: c.id, actor_id: actor.id, kind: "repost", status: "published", visibility: "public", body: null, attributes: "{}", assets: "[]", hashtags: "[]", mentions: "[]",
        quote_post_id: null, source_post_id: src.id, repost_key: src.id, scheduled_for: null, published_at: now, expires_at: null, moderation: null, deleted_at: null,
        reaction_count: 0, comment_count: 0, repost_count: 0, view_count: 0, created_at: now, updated_at: now,
      };
      await postRecords.insertPost(t, row);
      await postRecords.bumpPost(t, src.id, "repost_count", 1);
      const view = newPostView(row);
      await this.posts.emit(t, c.id, "repost.created", { ...view, source_post_id: src.id });
      await addActivity(t, { community_id: c.id, recipient: src.actor_id, type: "repost", target_type: "post", target_id: src.id, from: actor.id, data: { repost_id: row.id }, now });
      return { post: view, created: true };
    });
  }

  async unrepost(pr: Principal, communityId: string, postId: string, actorId: string): Promise<void> {
    const c = await this.lane.community(pr, communityId, "social.delete");
    await tx(this.lane.ctx.db, async (t) => {
      const src = await this.posts.live(t, c.id, postId);
      const r = await postRecords.liveRepostBy(t, actorId.toLowerCase(), src.id);
      if (r) await this.posts.softDelete(t, r, this.posts.now());
    });
  }

  async reposts(pr: Principal, communityId: string, postId: string, q: { limit?: number; cursor?: string }) {
    const c = await this.lane.community(pr, communityId, "social.list");
    const src = await this.posts.live(this.lane.ctx.db, c.id, postId);
    const { limit, after } = pageArgs(q);
    const rows = await postRecords.repostsOf(this.lane.ctx.db, src.id, after, limit + 1);
    const pg = page(rows, limit, (r) => ({ k: r.created_at, id: r.id }), (r) => r);
    return { data: await postViews(this.lane.ctx.db, pg.data), pagination: pg.pagination };
  }

  // ------------------------------------------------------------------ views

  async view(pr: Principal, communityId: string, postId: string, body: unknown): Promise<void> {
    const c = await this.lane.community(pr, communityId, "social.create");
    const o = isObject(body) ? body : {};
    await tx(this.lane.ctx.db, async (t) => {
      const viewer = await this.lane.actor(t, c.id, o.viewer_actor_id, "viewer_actor_id");
      const post = await this.posts.visibleTo(t, c.id, postId, viewer.id);
      if (await store.addView(t, c.id, post.id, viewer.id, this.posts.now())) await postRecords.bumpPost(t, post.id, "view_count", 1);
    });
  }

  async viewers(pr: Principal, communityId: string, postId: string, q: { requester_id?: string; limit?: number; cursor?: string }) {
    const c = await this.lane.community(pr, communityId, "social.list");
    if (q.requester_id === undefined) throw invalidField("requester_id", "required: the post author's uuid");
    const post = await this.posts.live(this.lane.ctx.db, c.id, postId);
    const req = await this.lane.actor(this.lane.ctx.db, c.id, q.requester_id, "requester_id");
    if (req.id !== post.actor_id) throw forbidden("Only the post's author may list its viewers", "NOT_POST_AUTHOR");
    const { limit, after } = pageArgs(q);
    const rows = await store.viewersOf(this.lane.ctx.db, post.id, after, limit + 1);
    return page(rows, limit, (r) => ({ k: r.viewed_at, id: r.viewer_actor_id }), (r) => r);
  }

  // ------------------------------------------------------------------ polls

  private poll(p: postRecords.PostRow): { question: string; options: string[]; closes_at: string | null } {
    const poll = (JSON.parse(p.attributes) as { poll?: { question: string; options: string[]; closes_at: string | null } }).poll;
    if (p.kind !== "poll" || !poll) throw new ApiError(422, "NO_POLL", "The post has no poll");
    return poll;
  }

  async vote(pr: Principal, communityId: string, postId: string, body: unknown): Promise<void> {
    const c = await this.lane.community(pr, communityId, "social.create");
    const o = isObject(body) ? body : {};
    if (typeof o.option_index !== "number" || !Number.isInteger(o.option_index)) throw invalidField("option_index", "required, an integer (zero-based)");
    const index = o.option_index;
    const now = this.posts.now();
    await tx(this.lane.ctx.db, async (t) => {
      const voter = await this.posts.writer(t, c.id, o.actor_id);
      const post = await this.posts.live(t, c.id, postId);
      const poll = this.poll(post);
      if (voter.id === post.actor_id) throw new ApiError(422, "SELF_VOTE", "An author cannot vote on its own poll");
      if (await blockBetween(t, voter.id, post.actor_id)) throw blocked();
      await this.posts.visibleTo(t, c.id, post.id, voter.id);
      if (index < 0 || index >= poll.options.length) throw new ApiError(422, "OPTION_OUT_OF_RANGE", `option_index must be 0-${poll.options.length - 1}`);
      if (poll.closes_at !== null && poll.closes_at <= now) throw new ApiError(422, "POLL_CLOSED", "The poll is closed");
      await store.vote(t, c.id, post.id, voter.id, index, now);
      await addActivity(t, { community_id: c.id, recipient: post.actor_id, type: "vote", target_type: "post", target_id: post.id, from: voter.id, data: { option_index: index }, now });
    });
  }

  async results(pr: Principal, communityId: string, postId: string) {
    const c = await this.lane.community(pr, communityId, "social.read");
    const post = await this.posts.live(this.lane.ctx.db, c.id, postId);
    const poll = this.poll(post);
    const counts = new Map((await store.tally(this.lane.ctx.db, post.id)).map((r) => [Number(r.option_index), Number(r.n)]));
    const options = poll.options.map((label, index) => ({ index, label, count: counts.get(index) ?? 0 }));
    return { post_id: post.id, question: poll.question, options, total_votes: options.reduce((n, o) => n + o.count, 0), closes_at: poll.closes_at };
  }
}
