/**
 * SQL of the feeds, fan-out on read: the home feed reads the posts of the actors the viewer
 * follows (and its own) through the per-author index social_posts_author, plus posts whose
 * hashtags it follows (social_post_hashtags_tag), newest first, with visibility, mutes and
 * blocks checked in the same statement. Discover reads the public index social_posts_public.
 */
import type { Sql } from "../../../core/db";
import type { SqlValue } from "../../../core/store/sql";
import type { Keyset } from "../core/common";
import type { PostReadRow } from "../posts";

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
  // Newest first within a time window that widens until it holds a page (or covers all
  // time): each followed author then contributes only its recent rows, not its history.
  const top = after ? after.k : nowIso;
  for (const days of [2, 14, 90, 730, null]) {
    const since = days === null ? null : new Date(Date.parse(top) - days * 86_400_000).toISOString();
    const rows = await homeKeysSince(db, viewer, after, limit, since);
    if (rows.length >= limit || since === null) return rows;
  }
  return [];
}

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

/** Which of these posts the viewer hid. */
export async function hiddenAmong(db: Sql, viewer: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.all<{ dst_post_id: string }>(`SELECT dst_post_id FROM social_hides WHERE src_actor_id = ? AND dst_post_id IN (${ids.map(() => "?").join(",")})`, viewer, ...ids);
  return new Set(rows.map((r) => r.dst_post_id));
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

/** Discover candidates for hot and top: public posts published in [since, asOf], newest first, at most `cap`. */
export function discoverWindow(db: Sql, communityId: string, viewer: string | null, now: string, since: string, asOf: string, cap: number): Promise<PostReadRow[]> {
  const args: Record<string, SqlValue> = { community: communityId, now, since, asOf, limit: cap };
  return db.all<PostReadRow>(`${READ} WHERE ${discoverWhere(viewer, args)} AND p.published_at >= $since AND p.published_at <= $asOf ORDER BY p.published_at DESC, p.id DESC LIMIT $limit`, args);
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
