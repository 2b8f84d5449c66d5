/**
 * Hashtags: the community's directory (filled by posts, part 2) and hashtag follows.
 *
 * Decisions the spec leaves open:
 * - A tag in a path or body may carry its leading # and any case: it is normalised
 *   (hashtags/tags.ts). A tag that cannot be valid is 400 naming the field: VALIDATION_ERROR
 *   from the route's schema (ASCII other than letters, digits and _; core/schemas.ts Tag),
 *   INVALID_TAG from normalizeTag (over 64, non-ASCII characters that are not letters or
 *   digits); a valid one not in the directory is 404.
 * - Search q is normalised the same way (a leading # and upper case are accepted), 1-32
 *   characters; limit 1-200, default 50; alphabetical by code point.
 * - Hashtag follows page newest first (followed_at, refreshed by following again).
 * - DELETE of a hashtag follow is 204 always for a valid tag (followed or not, known actor
 *   or not); a tag that cannot be valid is 400 like on the other routes.
 */
import type { Principal } from "../../../access/principal";
import { tx } from "../../../core/db";
import { badRequest, invalidField, notFound } from "../../../core/errors";
import { parseLimit } from "../../../core/pagination";
import type { Lane } from "../actors/lane";
import { isObject, page, pageArgs, PAGE_DEFAULT, PAGE_MAX } from "../core/common";
import * as store from "./store";
import { normalizeTag } from "./tags";

export const SEARCH_Q_MAX = 32;

const invalidTag = (field: string) => badRequest("Invalid hashtag: 1-64 letters, digits or underscores, optionally after #", [{ field, reason: "1-64 Unicode letters, digits or underscores" }], "INVALID_TAG");

const hashtagView = (r: store.HashtagRow) => ({ community_id: r.community_id, tag: r.tag, first_used_at: r.first_used_at, post_count: Number(r.post_count) });
const followView = (r: store.HashtagFollowRow) => ({ actor_id: r.actor_id, community_id: r.community_id, tag: r.tag, followed_at: r.followed_at });

export class HashtagService {
  constructor(private readonly lane: Lane) {}

  async get(p: Principal, communityId: string, raw: string) {
    const c = await this.lane.community(p, communityId, "social.read");
    const tag = normalizeTag(raw);
    if (!tag) throw invalidTag("tag");
    const r = await store.hashtagOf(this.lane.ctx.db, c.id, tag);
    if (!r) throw notFound("Hashtag");
    return hashtagView(r);
  }

  async search(p: Principal, communityId: string, q: { q?: string; limit?: number }) {
    const c = await this.lane.community(p, communityId, "social.read");
    const limit = parseLimit(q.limit, PAGE_DEFAULT, PAGE_MAX);
    const raw = q.q ?? "";
    const text = raw.startsWith("#") ? raw.slice(1) : raw;
    if (text.length < 1 || [...text].length > SEARCH_Q_MAX) throw invalidField("q", `required, 1-${SEARCH_Q_MAX} characters`);
    const prefix = normalizeTag(text);
    if (!prefix) return { data: [] };
    return { data: (await store.searchHashtags(this.lane.ctx.db, c.id, prefix, limit)).map(hashtagView) };
  }

  async follow(p: Principal, communityId: string, actorId: string, body: unknown) {
    const c = await this.lane.community(p, communityId, "social.create");
    const raw = isObject(body) ? body.tag : undefined;
    if (typeof raw !== "string") throw invalidField("tag", "required");
    const tag = normalizeTag(raw);
    if (!tag) throw invalidTag("tag");
    return tx(this.lane.ctx.db, async (t) => {
      const a = await this.lane.actor(t, c.id, actorId);
      if (!(await store.hashtagOf(t, c.id, tag))) throw notFound("Hashtag");
      const row = { community_id: c.id, actor_id: a.id, tag, followed_at: this.lane.ctx.clock.iso() };
      await store.followHashtag(t, row);
      return followView(row);
    });
  }

  async unfollow(p: Principal, communityId: string, actorId: string, raw: string): Promise<void> {
    const c = await this.lane.community(p, communityId, "social.delete");
    const tag = normalizeTag(raw);
    if (!tag) throw invalidTag("tag");
    await store.unfollowHashtag(this.lane.ctx.db, c.id, actorId.toLowerCase(), tag);
  }

  async follows(p: Principal, communityId: string, actorId: string, q: { limit?: number; cursor?: string }) {
    const c = await this.lane.community(p, communityId, "social.list");
    const a = await this.lane.actor(this.lane.ctx.db, c.id, actorId);
    const { limit, after } = pageArgs(q);
    const rows = await store.hashtagFollowsOf(this.lane.ctx.db, a.id, after, limit + 1);
    return page(rows, limit, (r) => ({ k: r.followed_at, id: r.tag }), followView);
  }
}
