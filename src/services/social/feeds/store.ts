/**
 * SQL of the feeds, fan-out on read: the home feed reads the posts of the actors the viewer
 * follows (and its own) through the per-author index social_posts_author, plus posts whose
 * hashtags it follows (social_post_hashtags_tag), newest first, with visibility, mutes and
 * blocks checked in the same statement. Discover reads the public index social_posts_public.
 */
import type { Sql } from "../../../core/db";
import type { SqlValue } from "../../../core/store/sql";
import type { Keyset } from "../core/common";
import type { PostReadRow, Visibility } from "../posts";

const READ = `SELECT p.*, a.is_private AS a_private, a.status AS a_status, a.shadow_banned_until AS a_shadow_until, a.shadow_banned_at AS a_shadow_at
  FROM social_posts p JOIN social_actors a ON a.id = p.actor_id`;


/**
 * Home feed candidates, newest first: keys (published_at, id) of live published posts of
 * the actors `viewer` follows, its own, and those carrying a hashtag it follows. Each branch
 * reads an index only (social_posts_author is covering for these columns; the hashtag
 * branch reads social_post_hashtags_tag), so the sort handles small tuples; visibility is
 * checked on the few rows kept (FeedService). A post reached twice appears twice.
 */
export async function homeKeys(db: Sql, viewer: string, after: Keyset | null, limit: number, nowIso: string): Promise<{ id: string; published_at: string }[]> {
  // Newest first within a time window that widens (x4) until it holds a page or covers all
  // time: each followed author then contributes only its recent rows, not its history. The
  // work of a read is the rows its windows hold: a window too small costs one more query
  // with fewer than `limit` rows, one too large sorts every followed author's posts in it
  // (the first window was 2 days: 4,000 rows for an actor following 50 busy authors).
  const top = after ? after.k : nowIso;
  for (const hours of HOME_WINDOWS_H) {
    const since = hours === null ? null : new Date(Date.parse(top) - hours * 3_600_000).toISOString();
    const rows = await homeKeysSince(db, viewer, after, limit, since);
    if (rows.length >= limit || since === null) return rows;
  }
  return [];
}

/** The home feed's candidate windows in hours (3 h, 12 h, 2 d, 8 d, 32 d, 128 d, 2 y), then all time. */
const HOME_WINDOWS_H = [3, 12, 48, 192, 768, 3072, 17_520, null] as const;

function homeKeysSince(db: Sql, viewer: string, after: Keyset | null, limit: number, since: string | null): Promise<{ id: string; published_at: string }[]> {
  const args: Record<string, SqlValue> = { viewer, limit };
  const cur = (t: string, id: string) => (after ? ` AND (${t} < $k OR (${t} = $k AND ${id} < $id))` : "") + (since ? ` AND ${t} > $since` : "");
  if (after) Object.assign(args, { k: after.k, id: after.id });
  if (since) args.since = since;
  const live = (p: string) => `${p}.status = 'published' AND ${p}.deleted_at IS NULL`;
  // SQLite's planner may take the (actor_id, repost_key) unique index, which is not covering.
  const by = db.engine === "sqlite" ? " INDEXED BY social_posts_author" : "";
  return db.all(
    `SELECT id, published_at FROM (
       SELECT p.id AS id, p.published_at AS published_at FROM social_edges e JOIN social_posts p${by} ON p.actor_id = e.dst_actor_id
         WHERE e.src_actor_id = $viewer AND e.kind = 'follow' AND ${live("p")}${cur("p.published_at", "p.id")}
       UNION ALL
       SELECT p.id, p.published_at FROM social_posts p${by} WHERE p.actor_id = $viewer AND ${live("p")}${cur("p.published_at", "p.id")}
       UNION ALL
       SELECT h.post_id, h.published_at FROM social_hashtag_follows hf JOIN social_post_hashtags h ON h.community_id = hf.community_id AND h.tag = hf.tag
         WHERE hf.actor_id = $viewer${cur("h.published_at", "h.post_id")}
     ) k ORDER BY published_at DESC, id DESC LIMIT $limit`,
    args,
  );
}

/** What the home feed's filter reads of a candidate: the post's and its author's visibility facts, and whether the viewer hid it. */
export interface FeedFacts {
  id: string;
  community_id: string;
  actor_id: string;
  visibility: Visibility;
  moderation: string | null;
  expires_at: string | null;
  published_at: string;
  a_private: number;
  a_status: string;
  a_shadow_until: string | null;
  a_shadow_at: string | null;
  hidden: number;
}

/**
 * Visibility facts of candidates, by id (any order): a few columns per row instead of the
 * whole post, so the rows the filter drops cost little; the page's posts are read whole
 * afterwards (postsByIds).
 */
export function feedFacts(db: Sql, viewer: string, ids: string[]): Promise<FeedFacts[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.all<FeedFacts>(
    `SELECT p.id, p.community_id, p.actor_id, p.visibility, p.moderation, p.expires_at, p.published_at,
       a.is_private AS a_private, a.status AS a_status, a.shadow_banned_until AS a_shadow_until, a.shadow_banned_at AS a_shadow_at,
       EXISTS (SELECT 1 FROM social_hides hd WHERE hd.src_actor_id = ? AND hd.dst_post_id = p.id) AS hidden
     FROM social_posts p JOIN social_actors a ON a.id = p.actor_id WHERE p.id IN (${ids.map(() => "?").join(",")})`,
    viewer, ...ids,
  );
}

/** Posts with their author facts, by id (any order). */
export function postsByIds(db: Sql, ids: string[]): Promise<PostReadRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.all<PostReadRow>(`${READ} WHERE p.id IN (${ids.map(() => "?").join(",")})`, ...ids);
}

/** What the viewer's feed filter needs: whom it follows and mutes, blocks either way, whose close friend it is. */
export async function viewerGraph(db: Sql, viewer: string): Promise<{ follows: Set<string>; mutes: Set<string>; blocks: Set<string>; closeOf: Set<string> }> {
  const edges = await db.all<{ kind: string; src_actor_id: string; dst_actor_id: string }>(
    "SELECT kind, src_actor_id, dst_actor_id FROM social_edges WHERE src_actor_id = ? AND kind IN ('follow','mute','block') UNION ALL SELECT kind, src_actor_id, dst_actor_id FROM social_edges WHERE dst_actor_id = ? AND kind = 'block'",
    viewer, viewer,
  );
  const out = { follows: new Set<string>(), mutes: new Set<string>(), blocks: new Set<string>(), closeOf: new Set<string>() };
  for (const e of edges) {
    if (e.kind === "follow") out.follows.add(e.dst_actor_id);
    else if (e.kind === "mute") out.mutes.add(e.dst_actor_id);
    else out.blocks.add(e.src_actor_id === viewer ? e.dst_actor_id : e.src_actor_id);
  }
  for (const r of await db.all<{ owner_actor_id: string }>("SELECT owner_actor_id FROM social_close_friends WHERE member_actor_id = ?", viewer)) out.closeOf.add(r.owner_actor_id);
  return out;
}

/** Discover, latest: public posts newest first (with a viewer: minus muted, blocked; its own shadow-banned posts kept). */
export function discoverLatest(db: Sql, communityId: string, viewer: string | null, now: string, asOf: string, after: Keyset | null, limit: number): Promise<PostReadRow[]> {
  const args: Record<string, SqlValue> = { community: communityId, now, asOf, limit };
  let cur = "";
  if (after) {
    cur = " AND (p.published_at < $k OR (p.published_at = $k AND p.id < $id))";
    Object.assign(args, { k: after.k, id: after.id });
  }
  return db.all<PostReadRow>(`${READ} WHERE ${discoverWhere(viewer, args)} AND p.published_at <= $asOf${cur} ORDER BY p.published_at DESC, p.id DESC LIMIT $limit`, args);
}

/** What ranking reads of a discover candidate (the page's posts are read whole afterwards). */
export interface RankFacts {
  id: string;
  published_at: string;
  reaction_count: number;
  comment_count: number;
  repost_count: number;
}

/** Discover candidates for hot and top: public posts published in [since, asOf], newest first, at most `cap`. */
export function discoverWindow(db: Sql, communityId: string, viewer: string | null, now: string, since: string, asOf: string, cap: number): Promise<RankFacts[]> {
  const args: Record<string, SqlValue> = { community: communityId, now, since, asOf, limit: cap };
  return db.all<RankFacts>(
    `SELECT p.id, p.published_at, p.reaction_count, p.comment_count, p.repost_count FROM social_posts p JOIN social_actors a ON a.id = p.actor_id
     WHERE ${discoverWhere(viewer, args)} AND p.published_at >= $since AND p.published_at <= $asOf ORDER BY p.published_at DESC, p.id DESC LIMIT $limit`,
    args,
  );
}

function discoverWhere(viewer: string | null, args: Record<string, SqlValue>): string {
  const base = `p.community_id = $community AND p.status = 'published' AND p.visibility = 'public' AND p.deleted_at IS NULL AND p.moderation IS NULL AND (p.expires_at IS NULL OR p.expires_at > $now) AND a.is_private = 0 AND a.status <> 'deleted'`;
  const shadow = `(a.shadow_banned_at IS NULL OR (a.shadow_banned_until IS NOT NULL AND a.shadow_banned_until <= $now))`;
  if (viewer === null) return `${base} AND ${shadow}`;
  args.viewer = viewer;
  return `${base} AND (p.actor_id = $viewer OR (${shadow}
    AND NOT EXISTS (SELECT 1 FROM social_edges b WHERE b.kind = 'block' AND ((b.src_actor_id = $viewer AND b.dst_actor_id = p.actor_id) OR (b.src_actor_id = p.actor_id AND b.dst_actor_id = $viewer)))
    AND NOT EXISTS (SELECT 1 FROM social_edges m WHERE m.kind = 'mute' AND m.src_actor_id = $viewer AND m.dst_actor_id = p.actor_id)))
    AND NOT EXISTS (SELECT 1 FROM social_hides hd WHERE hd.src_actor_id = $viewer AND hd.dst_post_id = p.id)`;
}

/** The soonest end of a shadow ban in the community after `now` (its author's posts come back then), or null. */
export async function nextBanEnd(db: Sql, communityId: string, now: string): Promise<string | null> {
  const r = await db.get<{ t: string | null }>(
    "SELECT MIN(shadow_banned_until) AS t FROM social_actors WHERE community_id = ? AND shadow_banned_until > ? AND shadow_banned_at IS NOT NULL",
    communityId, now,
  );
  return r?.t ?? null;
}
