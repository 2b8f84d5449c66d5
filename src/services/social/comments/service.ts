/**
 * Comments on posts (spec 3): create with depth computed and capped by the community
 * setting max_comment_depth, pending_approval for commenters the post author restricts,
 * approve by the post author, author_only visibility, pinned comments first, soft delete.
 *
 * Decisions the spec leaves open:
 * - A reply whose depth would pass the cap joins its parent's level: it is filed under the
 *   parent's parent (so depth = parent depth + 1 always holds, Facebook style).
 * - Commenting needs an active commenter (403 ACTOR_SUSPENDED / ACTOR_DELETED), a published
 *   post the commenter may see (404 otherwise) and no block with the post author (409 BLOCKED).
 * - comment_count (post and author counters) counts published, non-deleted comments; a
 *   status change to or from published moves them.
 * - Pinning: PATCH {pinned, actor_id} where actor_id must be the post author (403) and the
 *   comment top-level (422 NOT_TOP_LEVEL).
 * - Notifications: comment (to the post author) and reply (to the parent's author) when a
 *   comment becomes published.
 */
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { ApiError, forbidden, invalidField, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { encodeCursor } from "../../../core/pagination";
import { bumpCounter } from "../actors";
import { badCursor, isObject, pageArgs, type Keyset } from "../core/common";
import { blocked } from "../graph/follows";
import { blockBetween } from "../graph";
import { addActivity } from "../notifications";
import * as input from "../posts/input";
import { checkAssets, type PostService } from "../posts/service";
import * as postRecords from "../posts";
import { parseSettings } from "../communities/settings";
import * as store from "./store";

export type CommentView = ReturnType<typeof commentView>;

export function commentView(r: store.CommentRow, counts: Record<string, number> = {}) {
  return {
    id: r.id,
    community_id: r.community_id,
    post_id: r.post_id,
    parent_id: r.parent_id,
    actor_id: r.actor_id,
    body: r.body,
    depth: Number(r.depth),
    status: r.status,
    visibility: r.visibility,
    reaction_counts: counts,
    pinned: Number(r.pinned) === 1,
    pinned_at: r.pinned_at,
    assets: JSON.parse(r.assets) as input.AssetRef[],
    deleted_at: r.deleted_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

async function views(db: Sql, rows: store.CommentRow[]): Promise<CommentView[]> {
  const counts = await postRecords.reactionCounts(db, rows.map((r) => r.id));
  return rows.map((r) => commentView(r, counts.get(r.id) ?? {}));
}

/** Body: 1-10,000 characters after trim. */
function commentBody(v: unknown): string {
  if (typeof v !== "string") throw invalidField("body", "required: 1-10000 characters after trim");
  const s = v.trim();
  const n = [...s].length;
  if (n < 1 || n > input.BODY_MAX) throw invalidField("body", "1-10000 characters after trim");
  return s;
}

const visibilityOf = (v: unknown) => input.oneOf(v, "visibility", ["public", "author_only"] as const, "public");
const optionalViewer = (q: { actor_id?: string; requester_id?: string }) => q.requester_id ?? q.actor_id;

export class CommentService {
  constructor(private readonly posts: PostService) {}

  private get lane() {
    return this.posts.lane;
  }

  /** A live comment of a live post (404 otherwise). */
  private async comment(db: Sql, post: postRecords.PostRow, id: string): Promise<store.CommentRow> {
    const c = await store.commentById(db, post.id, id.toLowerCase());
    if (!c || c.deleted_at !== null) throw notFound("Comment");
    return c;
  }

  /** Counts and notifications of a comment becoming published. */
  private async onPublished(t: Sql, post: postRecords.PostRow, c: store.CommentRow, now: string): Promise<void> {
    await postRecords.bumpPost(t, post.id, "comment_count", 1);
    await bumpCounter(t, c.actor_id, "comment_count", 1, now);
    await addActivity(t, { community_id: c.community_id, recipient: post.actor_id, type: "comment", target_type: "post", target_id: post.id, from: c.actor_id, data: { post_id: post.id, comment_id: c.id }, now });
    if (c.parent_id) {
      const parent = await store.commentById(t, post.id, c.parent_id);
      if (parent && parent.actor_id !== post.actor_id) {
        await addActivity(t, { community_id: c.community_id, recipient: parent.actor_id, type: "reply", target_type: "comment", target_id: parent.id, from: c.actor_id, data: { post_id: post.id, comment_id: c.id }, now });
      }
    }
  }

  private async onUnpublished(t: Sql, post: postRecords.PostRow, c: store.CommentRow, now: string): Promise<void> {
    await postRecords.bumpPost(t, post.id, "comment_count", -1);
    await bumpCounter(t, c.actor_id, "comment_count", -1, now);
  }

  async create(pr: Principal, communityId: string, postId: string, body: unknown): Promise<CommentView> {
    const cm = await this.lane.community(pr, communityId, "social.create");
    const o = isObject(body) ? body : {};
    const text = commentBody(o.body);
    const visibility = visibilityOf(o.visibility);
    const assets = input.assetRefs(o.assets);
    const cap = parseSettings(cm.settings).max_comment_depth;
    const now = this.posts.now();
    return tx(this.lane.ctx.db, async (t) => {
      const author = await this.posts.writer(t, cm.id, o.actor_id);
      const post = await this.posts.live(t, cm.id, postId);
      if (await blockBetween(t, author.id, post.actor_id)) throw blocked();
      const p = await this.posts.visibleTo(t, cm.id, post.id, author.id);
      if (p.status !== "published") throw new ApiError(409, "POST_NOT_PUBLISHED", "Only published posts take comments");
      await checkAssets(t, cm.id, author.id, assets);
      let parent: store.CommentRow | null = null;
      if (o.parent_id !== undefined && o.parent_id !== null) {
        if (typeof o.parent_id !== "string") throw invalidField("parent_id", "a comment uuid");
        parent = await this.comment(t, p, o.parent_id);
        if (!store.visibleTo(parent, author.id, p.actor_id)) throw notFound("Comment");
        while (parent && Number(parent.depth) + 1 > cap) parent = parent.parent_id ? await store.commentById(t, p.id, parent.parent_id) : null;
      }
      const held = await this.posts.screening.screen(t, cm.id, [text]);
      const restricted = author.id !== p.actor_id && (await postRecords.restricts(t, p.actor_id, author.id));
      const row: store.CommentRow = {
        id: uuid(),
        community_id: cm.id,
        post_id: p.id,
        parent_id: parent?.id ?? null,
        actor_id: author.id,
        body: text,
        depth: parent ? Number(parent.depth) + 1 : 0,
        status: held ? "hidden" : restricted ? "pending_approval" : "published",
        visibility,
        pinned: 0,
        pinned_at: null,
        assets: JSON.stringify(assets),
        deleted_at: null,
        created_at: now,
        updated_at: now,
      };
      await store.insertComment(t, row);
      if (row.status === "published") await this.onPublished(t, p, row, now);
      if (held) await this.posts.screening.hold(t, cm.id, "comment", row.id, author.id, held, now);
      const view = commentView(row);
      await this.posts.emit(t, cm.id, "comment.created", view);
      return view;
    });
  }

  async list(pr: Principal, communityId: string, postId: string, q: { limit?: number; cursor?: string; parent_id?: string; actor_id?: string; requester_id?: string }) {
    const cm = await this.lane.community(pr, communityId, "social.list");
    const post = await this.posts.live(this.lane.ctx.db, cm.id, postId);
    const viewerId = optionalViewer(q);
    let viewer: string | null = null;
    if (viewerId !== undefined) {
      viewer = (await this.lane.actor(this.lane.ctx.db, cm.id, viewerId, q.requester_id !== undefined ? "requester_id" : "actor_id")).id;
      await this.posts.visibleTo(this.lane.ctx.db, cm.id, post.id, viewer);
    }
    const { limit, after } = pageArgs(q);
    const a = { postId: post.id, viewer, postAuthor: post.actor_id, limit: limit + 1 };
    let rows: store.CommentRow[];
    let keyOf: (r: store.CommentRow) => Keyset;
    if (q.parent_id !== undefined) {
      const parent = await this.comment(this.lane.ctx.db, post, q.parent_id);
      rows = await store.replies(this.lane.ctx.db, a, parent.id, after);
      keyOf = (r) => ({ k: r.created_at, id: r.id });
    } else {
      // Pinned first (k "p:<pinned_at>"), then the rest newest first (k "u:<created_at>").
      if (after && !/^[pu]:/.test(after.k)) throw badCursor();
      rows = [];
      if (!after || after.k.startsWith("p:")) rows = await store.pinnedTop(this.lane.ctx.db, a, after ? { k: after.k.slice(2), id: after.id } : null);
      if (rows.length <= limit) rows = rows.concat(await store.unpinnedTop(this.lane.ctx.db, { ...a, limit: limit + 1 - rows.length }, after?.k.startsWith("u:") ? { k: after.k.slice(2), id: after.id } : null));
      keyOf = (r) => (Number(r.pinned) === 1 ? { k: `p:${r.pinned_at}`, id: r.id } : { k: `u:${r.created_at}`, id: r.id });
    }
    const more = rows.length > limit;
    const pageRows = rows.slice(0, limit);
    const last = pageRows[pageRows.length - 1];
    return { data: await views(this.lane.ctx.db, pageRows), pagination: { next_cursor: more && last ? encodeCursor(keyOf(last)) : null, has_more: more } };
  }

  async get(pr: Principal, communityId: string, postId: string, id: string, q: { actor_id?: string }) {
    const cm = await this.lane.community(pr, communityId, "social.read");
    const post = await this.posts.live(this.lane.ctx.db, cm.id, postId);
    const c = await this.comment(this.lane.ctx.db, post, id);
    let viewer: string | null = null;
    if (q.actor_id !== undefined) {
      viewer = (await this.lane.actor(this.lane.ctx.db, cm.id, q.actor_id)).id;
      await this.posts.visibleTo(this.lane.ctx.db, cm.id, post.id, viewer);
      if (viewer !== c.actor_id && (await blockBetween(this.lane.ctx.db, viewer, c.actor_id))) throw notFound("Comment");
    }
    if (!store.visibleTo(c, viewer, post.actor_id)) throw notFound("Comment");
    return (await views(this.lane.ctx.db, [c]))[0];
  }

  async patch(pr: Principal, communityId: string, postId: string, id: string, body: unknown) {
    const cm = await this.lane.community(pr, communityId, "social.update");
    const o = isObject(body) ? body : {};
    const now = this.posts.now();
    return tx(this.lane.ctx.db, async (t) => {
      const post = await this.posts.live(t, cm.id, postId);
      const cur = await this.comment(t, post, id);
      const next: store.CommentRow = { ...cur };
      if (o.body !== undefined) next.body = commentBody(o.body);
      const held = next.body !== cur.body ? await this.posts.screening.screen(t, cm.id, [next.body]) : null;
      if (o.visibility !== undefined) next.visibility = visibilityOf(o.visibility);
      if (o.status !== undefined) next.status = input.oneOf(o.status, "status", ["published", "hidden", "removed"] as const);
      if (o.pinned !== undefined) {
        if (typeof o.pinned !== "boolean") throw invalidField("pinned", "a boolean");
        const by = await this.lane.actor(t, cm.id, o.actor_id);
        if (by.id !== post.actor_id) throw forbidden("Only the post's author may pin comments", "NOT_POST_AUTHOR");
        if (cur.parent_id !== null) throw new ApiError(422, "NOT_TOP_LEVEL", "Only top-level comments can be pinned");
        if (o.pinned !== (Number(cur.pinned) === 1)) {
          next.pinned = o.pinned ? 1 : 0;
          next.pinned_at = o.pinned ? now : null;
        }
      }
      if (held && next.status === "published") {
        next.status = "hidden";
        await this.posts.screening.hold(t, cm.id, "comment", cur.id, cur.actor_id, held, now);
      }
      const changed = (["body", "visibility", "status", "pinned"] as const).filter((k) => next[k] !== cur[k]);
      if (changed.length === 0) return (await views(t, [cur]))[0];
      next.updated_at = now;
      const { id: _id, ...patch } = next;
      await store.updateComment(t, cur.id, patch);
      if (cur.status !== "published" && next.status === "published") await this.onPublished(t, post, next, now);
      if (cur.status === "published" && next.status !== "published") await this.onUnpublished(t, post, cur, now);
      const view = (await views(t, [next]))[0];
      await this.posts.emit(t, cm.id, "comment.updated", { ...view, changed_fields: changed });
      return view;
    });
  }

  async remove(pr: Principal, communityId: string, postId: string, id: string): Promise<void> {
    const cm = await this.lane.community(pr, communityId, "social.delete");
    const now = this.posts.now();
    await tx(this.lane.ctx.db, async (t) => {
      const post = await this.posts.live(t, cm.id, postId);
      const cur = await this.comment(t, post, id);
      if ((await store.softDeleteComment(t, cur.id, now)) !== 1) throw notFound("Comment");
      if (cur.status === "published") await this.onUnpublished(t, post, cur, now);
      const view = commentView({ ...cur, deleted_at: now, pinned: 0, pinned_at: null, updated_at: now });
      await this.posts.emit(t, cm.id, "comment.deleted", { ...view, deleted_at: now });
    });
  }

  async approve(pr: Principal, communityId: string, postId: string, id: string, body: unknown) {
    const cm = await this.lane.community(pr, communityId, "social.update");
    const o = isObject(body) ? body : {};
    const now = this.posts.now();
    return tx(this.lane.ctx.db, async (t) => {
      const post = await this.posts.live(t, cm.id, postId);
      const approver = await this.lane.actor(t, cm.id, o.approver_actor_id, "approver_actor_id");
      if (approver.id !== post.actor_id) throw forbidden("Only the post's author may approve its comments", "NOT_POST_AUTHOR");
      const cur = await this.comment(t, post, id);
      if (cur.status === "published") return (await views(t, [cur]))[0];
      if (cur.status !== "pending_approval") throw new ApiError(409, "NOT_PENDING", `The comment is ${cur.status}, not pending approval`);
      if (!(await store.moveStatus(t, cur.id, "pending_approval", "published", now))) return (await views(t, [cur]))[0];
      const next: store.CommentRow = { ...cur, status: "published", updated_at: now };
      await this.onPublished(t, post, next, now);
      const view = (await views(t, [next]))[0];
      await this.posts.emit(t, cm.id, "comment.updated", { ...view, changed_fields: ["status"] });
      return view;
    });
  }
}
