/**
 * Posts: create (draft, scheduled or published), read, patch, soft delete, the public list
 * (GET /posts), the scheduler's publishing of due posts, and tags from @mentions.
 *
 * Decisions the spec leaves open (documented in docs/community.md, "Posts"):
 * - Publishing (at creation, by PATCH status, or by the scheduler) is the moment a post
 *   counts: the author's post_count, the hashtag directory (post_count, first_used_at),
 *   hashtag feeds, @mention tags (tag.created, pending) and mention notifications.
 * - A scheduled post is published by the job social.posts.publish (every 5 s) once
 *   scheduled_for has passed: one conditional UPDATE (status = 'scheduled') decides, so it
 *   happens exactly once across workers and restarts; post.updated carries
 *   changed_fields ["status", "published_at"].
 * - Stories expire 24 h after publication and then 404 / vanish from every read.
 * - Status moves draft -> scheduled | published, scheduled -> draft | published; a
 *   published post cannot go back (409 INVALID_TRANSITION).
 */
import type { Principal } from "../../../access/principal";
import { dialect } from "../../../core/store/sql";
import { tx, type Sql } from "../../../core/db";
import { ApiError, invalidField, notFound } from "../../../core/errors";
import { isUuid, uuid } from "../../../core/ids";
import { type WebhookEngine, emitEvent } from "../../../kernel/webhooks";
import { bumpCounter, type ActorRow } from "../actors";
import type { Lane } from "../actors/lane";
import { isObject, page, pageArgs } from "../core/common";
import { releaseHashtags, useHashtags } from "../hashtags";
import { extractTags } from "../hashtags/tags";
import { blockBetween } from "../graph";
import { addActivity } from "../notifications";
import * as input from "./input";
import type { ContentScreen } from "./screening";
import * as store from "./store";
import { newPostView, postView, postViews, type PostView } from "./views";
import { canSee, isLive, publiclyVisible } from "./visibility";
import { SOCIAL_WEBHOOKS, type SocialEvents } from "../events";

/** Attachments of a post, comment or message: each a ready asset of the community owned by `owner`, else 422 INVALID_ASSET. */
export async function checkAssets(t: Sql, communityId: string, owner: string, assets: { asset_id: string }[]): Promise<void> {
  if (assets.length === 0) return;
  const ok = await store.readyAssets(t, communityId, owner, assets.map((a) => a.asset_id));
  const bad = assets.findIndex((a) => !ok.has(a.asset_id));
  if (bad >= 0) throw new ApiError(422, "INVALID_ASSET", "Every asset must be a ready asset of this community owned by the author", [{ field: `assets[${bad}].asset_id`, reason: "not a ready asset owned by the author" }]);
}

export class PostService {
  constructor(
    readonly lane: Lane,
    readonly engine: WebhookEngine,
    /** The keyword filters (comments use them too). */
    readonly screening: ContentScreen,
  ) {}

  now() {
    return this.lane.ctx.clock.iso();
  }

  emit<K extends keyof SocialEvents>(t: Sql, communityId: string, type: K, data: SocialEvents[K]) {
    return emitEvent(this.engine, SOCIAL_WEBHOOKS, t, communityId, type, data);
  }

  /** An actor allowed to write: active (suspended or deleted actors are 403). */
  async writer(t: Sql, communityId: string, id: unknown, field = "actor_id"): Promise<ActorRow> {
    const a = await this.lane.actor(t, communityId, id, field);
    if (a.status !== "active") throw input.inactiveActor(a.status);
    return a;
  }

  /** A post of the community by id (404 when unknown, malformed, soft-deleted or an expired story). */
  async live(db: Sql, communityId: string, id: string): Promise<store.PostReadRow> {
    if (!isUuid(id)) throw notFound("Post");
    const p = await store.postById(db, communityId, id.toLowerCase());
    if (!p || !isLive(p, this.now())) throw notFound("Post");
    return p;
  }

  /** A post `viewer` may see (404 otherwise, so existence does not leak). */
  async visibleTo(db: Sql, communityId: string, id: string, viewer: string): Promise<store.PostReadRow> {
    const p = await this.live(db, communityId, id);
    if (!(await canSee(db, p, viewer, this.now()))) throw notFound("Post");
    return p;
  }

  async create(pr: Principal, communityId: string, body: unknown): Promise<PostView> {
    const c = await this.lane.community(pr, communityId, "social.create");
    const o = isObject(body) ? body : {};
    const now = this.now();
    const kind = input.oneOf(o.kind, "kind", input.KINDS, "text");
    const status = input.oneOf(o.status, "status", input.STATUSES, "published");
    const visibility = input.oneOf(o.visibility, "visibility", input.VISIBILITIES, "public");
    const text = input.bodyText(o.body);
    const assets = input.assetRefs(o.assets);
    const attributes = input.attributesFor(kind, o.attributes, now);
    const quoteId = o.quote_post_id === undefined || o.quote_post_id === null ? null : String(o.quote_post_id);
    input.checkContent(kind, text, assets, quoteId);
    const scheduled = status === "scheduled" ? input.scheduledFor(o.scheduled_for, now) : null;
    if (status !== "scheduled" && o.scheduled_for !== undefined && o.scheduled_for !== null) throw invalidField("scheduled_for", "only for status scheduled");
    return tx(this.lane.ctx.db, async (t) => {
      const author = await this.writer(t, c.id, o.actor_id);
      const held = await this.screening.screen(t, c.id, [text, JSON.stringify(attributes.poll ?? null)]);
      await checkAssets(t, c.id, author.id, assets);
      if (quoteId !== null) await this.visibleTo(t, c.id, quoteId, author.id);
      const row: store.PostRow = {
        id: uuid(),
        community_id: c.id,
        actor_id: author.id,
        kind,
        status,
        visibility,
        body: text,
        attributes: JSON.stringify(attributes),
        assets: JSON.stringify(assets),
        hashtags: JSON.stringify(extractTags(text ?? "")),
        mentions: "[]",
        quote_post_id: quoteId?.toLowerCase() ?? null,
        source_post_id: null,
        repost_key: null,
        scheduled_for: scheduled,
        published_at: null,
        expires_at: null,
        moderation: held ? "hidden" : null,
        deleted_at: null,
        reaction_count: 0,
        comment_count: 0,
        repost_count: 0,
        view_count: 0,
        created_at: now,
        updated_at: now,
      };
      row.mentions = JSON.stringify(await this.mentionIds(t, c.id, author.id, text));
      if (status === "published") Object.assign(row, this.publishFields(row, now));
      await store.insertPost(t, row);
      if (status === "published") await this.onPublish(t, row, now);
      if (held) await this.screening.hold(t, c.id, "post", row.id, author.id, held, now);
      const view = newPostView(row);
      await this.emit(t, c.id, "post.created", view);
      return view;
    });
  }

  /** Mentioned actors (other than the author), by external id. */
  async mentionIds(t: Sql, communityId: string, authorId: string, text: string | null): Promise<string[]> {
    const ext = input.extractMentions(text);
    const found = await store.actorsByExternal(t, communityId, ext);
    const byExt = new Map(found.map((a) => [a.external_id, a.id]));
    return ext.map((e) => byExt.get(e)).filter((id): id is string => !!id && id !== authorId);
  }

  publishFields(r: store.PostRow, now: string): Partial<store.PostRow> {
    return { status: "published", published_at: now, expires_at: r.kind === "story" ? new Date(Date.parse(now) + input.STORY_TTL_MS).toISOString() : null, updated_at: now };
  }

  /** What publishing a post sets off, in its transaction. */
  async onPublish(t: Sql, r: store.PostRow, now: string): Promise<void> {
    await bumpCounter(t, r.actor_id, "post_count", 1, now);
    const tags = JSON.parse(r.hashtags) as string[];
    await useHashtags(t, r.community_id, tags, now);
    await store.addPostHashtags(t, r.community_id, r.id, tags, r.published_at ?? now);
    await this.addTags(t, r, JSON.parse(r.mentions) as string[], now);
  }

  /** Pending tags for newly mentioned actors: tag.created and a mention notification each. */
  async addTags(t: Sql, r: store.PostRow, actorIds: string[], now: string): Promise<void> {
    for (const tagged of actorIds) {
      if (await blockBetween(t, r.actor_id, tagged)) continue; // no tag, no notification across a block
      const tag: store.TagRow = { id: uuid(), community_id: r.community_id, post_id: r.id, tagger_actor_id: r.actor_id, tagged_actor_id: tagged, status: "pending", created_at: now, updated_at: now };
      if (!(await store.insertTag(t, tag))) continue;
      await this.emit(t, r.community_id, "tag.created", tag);
      await addActivity(t, { community_id: r.community_id, recipient: tagged, type: "mention", target_type: "post", target_id: r.id, from: r.actor_id, now });
    }
  }

  /** What a published post stops counting for when deleted. */
  async onUnpublish(t: Sql, r: store.PostRow, now: string): Promise<void> {
    if (r.kind !== "repost") await bumpCounter(t, r.actor_id, "post_count", -1, now); // reposts do not count as posts
    await releaseHashtags(t, r.community_id, JSON.parse(r.hashtags) as string[]);
    await store.removePostHashtags(t, r.id);
  }

  async get(pr: Principal, communityId: string, id: string, q: { actor_id?: string }): Promise<PostView> {
    const c = await this.lane.community(pr, communityId, "social.read");
    if (q.actor_id !== undefined) {
      const viewer = await this.lane.actor(this.lane.ctx.db, c.id, q.actor_id);
      return postView(this.lane.ctx.db, await this.visibleTo(this.lane.ctx.db, c.id, id, viewer.id));
    }
    return postView(this.lane.ctx.db, await this.live(this.lane.ctx.db, c.id, id));
  }

  async list(pr: Principal, communityId: string, q: { limit?: number; cursor?: string; author_id?: string }) {
    const c = await this.lane.community(pr, communityId, "social.list");
    const { limit, after } = pageArgs(q);
    // A filter by an actor that does not exist is 404, like every other unknown id.
    const author = q.author_id === undefined ? null : (await this.lane.actor(this.lane.ctx.db, c.id, q.author_id, "author_id")).id;
    const rows = await store.publicPosts(this.lane.ctx.db, c.id, this.now(), author, after, limit + 1);
    const pg = page(rows, limit, (r) => ({ k: r.published_at as string, id: r.id }), (r) => r);
    return { data: await postViews(this.lane.ctx.db, pg.data), pagination: pg.pagination };
  }

  async patch(pr: Principal, communityId: string, id: string, body: unknown): Promise<PostView> {
    const c = await this.lane.community(pr, communityId, "social.update");
    const o = isObject(body) ? body : {};
    const now = this.now();
    return tx(this.lane.ctx.db, async (t) => {
      await this.live(t, c.id, id);
      const cur = (await store.lockPost(t, c.id, id.toLowerCase())) as store.PostRow;
      if (cur.kind === "repost") throw new ApiError(409, "REPOST_IMMUTABLE", "A repost cannot be edited; delete it instead");
      const next: store.PostRow = { ...cur };
      const changed: string[] = [];
      if (o.body !== undefined) next.body = input.bodyText(o.body);
      if (o.visibility !== undefined) next.visibility = input.oneOf(o.visibility, "visibility", input.VISIBILITIES);
      if (o.attributes !== undefined) next.attributes = JSON.stringify(input.attributesFor(cur.kind, o.attributes, now));
      let assets = JSON.parse(cur.assets) as input.AssetRef[];
      if (o.assets !== undefined) {
        assets = input.assetRefs(o.assets);
        await checkAssets(t, c.id, cur.actor_id, assets);
        next.assets = JSON.stringify(assets);
      }
      input.checkContent(cur.kind, next.body, assets, cur.quote_post_id);
      let publishing = false;
      if (o.status !== undefined) {
        const st = input.oneOf(o.status, "status", input.STATUSES);
        if (st !== cur.status) {
          if (cur.status === "published") throw new ApiError(409, "INVALID_TRANSITION", "A published post cannot go back to draft or scheduled");
          next.status = st;
          publishing = st === "published";
        }
      }
      if (next.status === "scheduled" && (o.scheduled_for !== undefined || cur.status !== "scheduled")) next.scheduled_for = input.scheduledFor(o.scheduled_for, now);
      else if (next.status !== "scheduled") next.scheduled_for = null;
      const held = next.body !== cur.body ? await this.screening.screen(t, c.id, [next.body]) : null;
      if (held && cur.moderation === null) {
        next.moderation = "hidden";
        await this.screening.hold(t, c.id, "post", cur.id, cur.actor_id, held, now);
      }
      if (next.body !== cur.body) {
        next.hashtags = JSON.stringify(extractTags(next.body ?? ""));
        next.mentions = JSON.stringify(await this.mentionIds(t, c.id, cur.actor_id, next.body));
      }
      if (publishing) Object.assign(next, this.publishFields(next, now));
      for (const k of ["body", "visibility", "attributes", "assets", "status", "scheduled_for", "published_at"] as const) if (next[k] !== cur[k]) changed.push(k);
      if (changed.length === 0) return postView(t, cur);
      next.updated_at = now;
      const { id: _id, ...patch } = next;
      await store.updatePost(t, cur.id, patch);
      if (publishing) await this.onPublish(t, next, now);
      else if (cur.status === "published" && next.hashtags !== cur.hashtags) {
        const before = JSON.parse(cur.hashtags) as string[];
        const after = JSON.parse(next.hashtags) as string[];
        await releaseHashtags(t, c.id, before.filter((x) => !after.includes(x)));
        const added = after.filter((x) => !before.includes(x));
        await useHashtags(t, c.id, added, now);
        await store.addPostHashtags(t, c.id, cur.id, added, cur.published_at ?? now);
        for (const gone of before.filter((x) => !after.includes(x))) await store.removePostHashtag(t, cur.id, gone);
      }
      if (!publishing && cur.status === "published") await this.addTags(t, next, JSON.parse(next.mentions) as string[], now);
      const view = await postView(t, next);
      await this.emit(t, c.id, "post.updated", { ...view, changed_fields: changed });
      return view;
    });
  }

  async remove(pr: Principal, communityId: string, id: string): Promise<void> {
    const c = await this.lane.community(pr, communityId, "social.delete");
    await tx(this.lane.ctx.db, async (t) => {
      await this.live(t, c.id, id);
      const cur = (await store.lockPost(t, c.id, id.toLowerCase())) as store.PostRow;
      await this.softDelete(t, cur, this.now());
    });
  }

  /** Soft-deletes a live post and its live reposts (post.deleted for each), in `t`. */
  async softDelete(t: Sql, cur: store.PostRow, now: string): Promise<void> {
    if (cur.deleted_at !== null) return;
    const n = await store.softDeletePost(t, cur.id, now);
    if (n !== 1) return;
    if (cur.status === "published") await this.onUnpublish(t, cur, now);
    if (cur.source_post_id !== null) await store.bumpPost(t, cur.source_post_id, "repost_count", -1);
    const view = await postView(t, { ...cur, deleted_at: now, repost_key: null, updated_at: now });
    await this.emit(t, cur.community_id, "post.deleted", { ...view, deleted_at: now });
    for (const r of await store.liveRepostsOf(t, cur.id)) await this.softDelete(t, r, now);
  }

  /** The scheduler's job: publish every due scheduled post (batches of 100, each in its own transaction). */
  async publishDue(): Promise<number> {
    let total = 0;
    for (;;) {
      const { seen, done } = await tx(this.lane.ctx.db, async (t) => {
        const now = this.now();
        const due = await store.duePosts(t, now, 100, dialect(t).skipLocked);
        let published = 0;
        for (const p of due) {
          const fields = this.publishFields(p, now);
          if (!(await store.publishScheduled(t, p.id, now, fields.expires_at ?? null))) continue;
          const next = { ...p, ...fields };
          await this.onPublish(t, next, now);
          await this.emit(t, p.community_id, "post.updated", { ...(await postView(t, next)), changed_fields: ["status", "published_at"] });
          published++;
        }
        return { seen: due.length, done: published };
      });
      total += done;
      if (seen < 100) return total;
    }
  }

  // ------------------------------------------------------------------ tags

  async decideTag(pr: Principal, communityId: string, postId: string, actorId: string, decision: "approved" | "declined") {
    const c = await this.lane.community(pr, communityId, "social.update");
    return tx(this.lane.ctx.db, async (t) => {
      const p = await this.live(t, c.id, postId);
      const a = await this.lane.actor(t, c.id, actorId);
      const tag = await store.tagOf(t, p.id, a.id);
      if (!tag) throw notFound("Tag");
      const now = this.now();
      if (tag.status !== decision) {
        await store.setTagStatus(t, tag.id, decision, now);
        // The tagger learns that the tag was approved (type tag); a decline is silent.
        if (decision === "approved") await addActivity(t, { community_id: c.id, recipient: tag.tagger_actor_id, type: "tag", target_type: "post", target_id: p.id, from: a.id, now });
      }
      return { ...tag, status: decision, updated_at: tag.status !== decision ? now : tag.updated_at };
    });
  }

  async tags(pr: Principal, communityId: string, postId: string) {
    const c = await this.lane.community(pr, communityId, "social.read");
    const p = await this.live(this.lane.ctx.db, c.id, postId);
    return { data: await store.tagsOfPost(this.lane.ctx.db, p.id) };
  }
}

export { publiclyVisible };
