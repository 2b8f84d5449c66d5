/**
 * Feeds: the home feed of an actor and the community's discover feed.
 *
 * Home (fan-out on read): posts of the actors the viewer follows, its own posts and posts
 * carrying a hashtag it follows, newest first, each visible to the viewer (followers and
 * close-friends posts checked, private authors capped at followers), minus muted and
 * blocked actors and the posts it hid; shadow-banned actors' posts only reach themselves. Reading at request
 * time keeps writes O(1) (a post by an actor with 100,000 followers writes one row) and
 * unfollows, blocks and mutes take effect at once; the per-author index
 * (actor_id, published_at, id) keeps the read to the followed authors' newest rows.
 * Keyset cursors (published_at, id) make paging stable while new posts arrive.
 *
 * Discover: public posts (a viewer's mutes and blocks applied when actor_id is given).
 *   ranking=latest  newest first (keyset; default)
 *   ranking=top     engagement E = reactions + 2 x comments + 3 x reposts, highest first,
 *                   among the newest 10,000 posts published within `window`
 *   ranking=hot     Lemmy / Hacker News style: log10(max(1, 3 + E)) / (age_hours + 2)^1.8,
 *                   age measured at the first page's time (as_of, kept in the cursor),
 *                   among the newest 1,000 posts within `window`
 *   window = 1h | 24h | 7d (default) | 30d | all
 * hot and top pages are keyed by (score, id) against a fixed as_of, so posts published
 * after the first page never shift later pages.
 */
import type { Principal } from "../../../access/principal";
import { invalidField } from "../../../core/errors";
import { decodeCursor, encodeCursor, parseLimit } from "../../../core/pagination";
import { badCursor, page, pageArgs, PAGE_DEFAULT, PAGE_MAX } from "../core/common";
import type { PostService } from "../posts/service";
import type { PostReadRow } from "../posts";
import { postViews, type PostView } from "../posts/views";
import { effectiveVisibility, shadowBanned } from "../posts/visibility";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { lazy } from "../../../core/lazy";
import { earlier, FeedPageCache } from "./page-cache";
import { FeedPage } from "./schemas";
import * as store from "./store";

export const HOT_CANDIDATES = 1_000;
export const TOP_CANDIDATES = 10_000;
const WINDOWS: Record<string, number | null> = { "1h": 3600_000, "24h": 86_400_000, "7d": 7 * 86_400_000, "30d": 30 * 86_400_000, all: null };

export const engagement = (p: { reaction_count: number; comment_count: number; repost_count: number }) => Number(p.reaction_count) + 2 * Number(p.comment_count) + 3 * Number(p.repost_count);

export function hotScore(p: { reaction_count: number; comment_count: number; repost_count: number; published_at: string | null }, asOfMs: number): number {
  const hours = Math.max(0, asOfMs - Date.parse(p.published_at as string)) / 3600_000;
  return Math.log10(Math.max(1, 3 + engagement(p))) / Math.pow(hours + 2, 1.8);
}

/** When a row read for a page stops being what it was by the clock alone: a story's expiry, its author's ban end (future ones only). */
function changesAt(p: { expires_at: string | null; a_shadow_at: string | null; a_shadow_until: string | null }, now: string): string | null {
  const expiry = p.expires_at !== null && p.expires_at > now ? p.expires_at : null;
  const banEnd = p.a_shadow_at !== null && p.a_shadow_until !== null && p.a_shadow_until > now ? p.a_shadow_until : null;
  return earlier(expiry, banEnd);
}

/** Compiled with the first page built, not at start-up (every import is paid by each start). */
const feedPage = lazy(() => TypeCompiler.Compile(FeedPage));

interface RankCursor {
  k: string;
  id: string;
  as_of: string;
  r: string;
  w: string;
}

type FeedPageBody = { data: PostView[]; pagination: { next_cursor: string | null; has_more: boolean } };

export class FeedService {
  /** First pages of home and discover latest (page-cache.ts). */
  readonly pages: FeedPageCache;

  constructor(private readonly posts: PostService) {
    this.pages = new FeedPageCache(posts.lane.ctx.db);
  }

  private get lane() {
    return this.posts.lane;
  }

  async home(pr: Principal, communityId: string, actorId: string, q: { limit?: number; cursor?: string }): Promise<string> {
    const c = await this.lane.community(pr, communityId, "social.list");
    const { limit, after } = pageArgs(q);
    const now = this.posts.now();
    // A kept page was built for this actor of this community, and deleting or changing an
    // actor drops every kept page: a hit needs no actor lookup.
    const key = after === null ? `home:${c.id}:${actorId}:${limit}` : null;
    const kept = key === null ? null : this.pages.get(key, now);
    if (kept !== null) return kept;
    const viewer = await this.lane.actor(this.lane.ctx.db, c.id, actorId);
    const mark = this.pages.mark();
    // The soonest time a row read here changes by the clock alone (a story expiring, a ban ending).
    let until: string | null = null;
    const g = await store.viewerGraph(this.lane.ctx.db, viewer.id);
    const sees = (p: store.FeedFacts) => {
      if (p.community_id !== c.id || p.hidden || p.moderation !== null || (p.expires_at !== null && p.expires_at <= now)) return false;
      if (p.actor_id === viewer.id) return true;
      if (p.a_status === "deleted" || shadowBanned(p, now) || g.blocks.has(p.actor_id) || g.mutes.has(p.actor_id)) return false;
      const v = effectiveVisibility(p);
      return v === "public" || (v === "followers" ? g.follows.has(p.actor_id) : g.closeOf.has(p.actor_id));
    };
    // Candidates in batches until a page and one more are visible (or none are left); the
    // filter reads each candidate's visibility facts only, and the page's posts are read whole.
    const out: store.FeedFacts[] = [];
    const seen = new Set<string>();
    let from = after;
    const batch = 2 * (limit + 1);
    for (;;) {
      const keys = await store.homeKeys(this.lane.ctx.db, viewer.id, from, batch, now);
      const fresh = keys.filter((k) => !seen.has(k.id) && (seen.add(k.id), true));
      const facts = new Map((await store.feedFacts(this.lane.ctx.db, viewer.id, fresh.map((k) => k.id))).map((r) => [r.id, r]));
      for (const p of facts.values()) until = earlier(until, changesAt(p, now));
      for (const k of fresh) {
        const p = facts.get(k.id);
        if (p && sees(p) && out.length <= limit) out.push(p);
      }
      if (out.length > limit || keys.length < batch) break;
      const last = keys[keys.length - 1];
      from = { k: last.published_at, id: last.id };
    }
    const pg = page(out, limit, (r) => ({ k: r.published_at, id: r.id }), (r) => r.id);
    const rows = new Map((await store.postsByIds(this.lane.ctx.db, pg.data)).map((r) => [r.id, r]));
    // A post gone between the two reads (deleted, no longer published) is left out.
    const data = pg.data.map((id) => rows.get(id)).filter((r): r is PostReadRow => r !== undefined && r.status === "published" && r.deleted_at === null);
    return this.answer(key, { data: await postViews(this.lane.ctx.db, data), pagination: pg.pagination }, mark, until);
  }

  /**
   * The page's JSON, checked against the routes' schema first (the routes answer it as it is,
   * so this check stands in for the one Elysia makes of an object); a first page (key not
   * null) is kept for the next reader.
   */
  private answer(key: string | null, body: FeedPageBody, mark: number, until: string | null): string {
    if (!feedPage().Check(body)) throw new Error(`feed page does not match its schema: ${JSON.stringify([...feedPage().Errors(body)].slice(0, 3))}`);
    const json = JSON.stringify(body);
    if (key !== null) this.pages.put(key, json, mark, until);
    return json;
  }

  async discover(pr: Principal, communityId: string, q: { limit?: number; cursor?: string; ranking?: string; window?: string; actor_id?: string }): Promise<string> {
    const c = await this.lane.community(pr, communityId, "social.list");
    const ranking = q.ranking ?? "latest";
    if (!["latest", "hot", "top"].includes(ranking)) throw invalidField("ranking", "latest, hot or top");
    const window = q.window ?? "7d";
    if (!(window in WINDOWS)) throw invalidField("window", "1h, 24h, 7d, 30d or all");
    const viewer = q.actor_id !== undefined ? (await this.lane.actor(this.lane.ctx.db, c.id, q.actor_id)).id : null;
    const now = this.posts.now();
    if (ranking === "latest") {
      const { limit, after } = pageArgs(q);
      const key = after === null ? `discover:${c.id}:${viewer ?? ""}:${limit}` : null;
      const kept = key === null ? null : this.pages.get(key, now);
      if (kept !== null) return kept;
      const mark = this.pages.mark();
      // A shadow ban ending brings its author's posts back; a story on the page expires.
      let until = key === null ? null : await store.nextBanEnd(this.lane.ctx.db, c.id, now);
      const rows = await store.discoverLatest(this.lane.ctx.db, c.id, viewer, now, now, after, limit + 1);
      for (const p of rows) until = earlier(until, changesAt(p, now));
      const pg = page(rows, limit, (r) => ({ k: r.published_at as string, id: r.id }), (r) => r);
      return this.answer(key, { data: await postViews(this.lane.ctx.db, pg.data), pagination: pg.pagination }, mark, until);
    }
    const limit = parseLimit(q.limit, PAGE_DEFAULT, PAGE_MAX);
    const cur = decodeCursor<Partial<RankCursor>>(q.cursor);
    if (cur && (typeof cur.k !== "string" || typeof cur.id !== "string" || typeof cur.as_of !== "string" || cur.r !== ranking || cur.w !== window || !Number.isFinite(Number(cur.k)))) throw badCursor();
    const asOf = cur?.as_of ?? now;
    const asOfMs = Date.parse(asOf);
    const span = WINDOWS[window];
    const since = span === null ? "0000" : new Date(asOfMs - span).toISOString();
    const rows = await store.discoverWindow(this.lane.ctx.db, c.id, viewer, now, since, asOf, ranking === "hot" ? HOT_CANDIDATES : TOP_CANDIDATES);
    const score = (p: store.RankFacts) => (ranking === "hot" ? hotScore(p, asOfMs) : engagement(p));
    const ranked = rows.map((p) => ({ p, s: score(p) })).sort((a, b) => b.s - a.s || (a.p.id < b.p.id ? 1 : a.p.id > b.p.id ? -1 : 0));
    const ks = cur ? Number(cur.k) : null;
    const rest = ks === null ? ranked : ranked.filter((x) => x.s < ks || (x.s === ks && x.p.id < (cur?.id as string)));
    const slice = rest.slice(0, limit);
    const more = rest.length > limit;
    const last = slice[slice.length - 1];
    const next = more && last ? encodeCursor({ k: String(last.s), id: last.p.id, as_of: asOf, r: ranking, w: window } satisfies RankCursor) : null;
    // Ranked on a few columns per candidate; only the page's posts are read whole (in rank order).
    const full = new Map((await store.postsByIds(this.lane.ctx.db, slice.map((x) => x.p.id))).map((r) => [r.id, r]));
    const data = slice.map((x) => full.get(x.p.id)).filter((r): r is PostReadRow => r !== undefined);
    return this.answer(null, { data: await postViews(this.lane.ctx.db, data), pagination: { next_cursor: next, has_more: more } }, 0, null);
  }
}
