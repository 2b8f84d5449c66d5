/**
 * SQL of the feeds, fan-out on read: the home feed reads the posts of the actors the viewer
 * follows (and its own) through the per-author index social_posts_author, plus posts whose
 * hashtags it follows (social_post_hashtags_tag), newest first, with visibility, mutes and
 * blocks checked in the same statement. Discover reads the public index social_posts_public.
 */
import type { Sql } from "../../../core/db";
import type { SqlValue } from "../../../core/store/sql";
import type { Keyset } from "../core/common";
import type { PostReadRow } from "../posts/store";

const READ = `SELECT p.*, a.is_private AS a_private, a.status AS a_status, a.shadow_banned_until AS a_shadow_until, a.shadow_banned_at AS a_shadow_at
  FROM social_posts p JOIN social_actors a ON a.id = p.actor_id`;

/**
 * What `viewer` may see of someone else's live published post (one parameter: viewer, used
 * six times): author not deleted, not shadow-banned, no block either way, not muted by the
 * viewer, and the effective visibility (a private author's public posts count as followers).
 */
const OTHERS = `a.status <> 'deleted'
  AND (a.shadow_banned_at IS NULL OR (a.shadow_banned_until IS NOT NULL AND a.shadow_banned_until <= $now))
  AND NOT EXISTS (SELECT 1 FROM social_edges b WHERE b.kind = 'block' AND ((b.src_actor_id = $viewer AND b.dst_actor_id = p.actor_id) OR (b.src_actor_id = p.actor_id AND b.dst_actor_id = $viewer)))
  AND NOT EXISTS (SELECT 1 FROM social_edges m WHERE m.kind = 'mute' AND m.src_actor_id = $viewer AND m.dst_actor_id = p.actor_id)
  AND ((p.visibility = 'public' AND a.is_private = 0)
    OR (p.visibility IN ('public','followers') AND EXISTS (SELECT 1 FROM social_edges f WHERE f.src_actor_id = $viewer AND f.kind = 'follow' AND f.dst_actor_id = p.actor_id))
    OR (p.visibility = 'close_friends' AND EXISTS (SELECT 1 FROM social_close_friends cf WHERE cf.owner_actor_id = p.actor_id AND cf.member_actor_id = $viewer)))`;

const LIVE = `p.status = 'published' AND p.deleted_at IS NULL AND p.moderation IS NULL AND (p.expires_at IS NULL OR p.expires_at > $now)`;

/** Home feed: followed actors', own and followed hashtags' posts the viewer may see, newest first. */
export function homeFeed(db: Sql, communityId: string, viewer: string, now: string, after: Keyset | null, limit: number): Promise<PostReadRow[]> {
  const args: Record<string, SqlValue> = { community: communityId, viewer, now, limit };
  let cur = "";
  if (after) {
    cur = " AND (p.published_at < $k OR (p.published_at = $k AND p.id < $id))";
    Object.assign(args, { k: after.k, id: after.id });
  }
  return db.all<PostReadRow>(
    `${READ} WHERE p.community_id = $community AND ${LIVE}${cur}
      AND (p.actor_id = $viewer
        OR p.actor_id IN (SELECT e.dst_actor_id FROM social_edges e WHERE e.src_actor_id = $viewer AND e.kind = 'follow')
        OR p.id IN (SELECT h.post_id FROM social_hashtag_follows hf JOIN social_post_hashtags h ON h.community_id = hf.community_id AND h.tag = hf.tag WHERE hf.actor_id = $viewer))
      AND (p.actor_id = $viewer OR (${OTHERS}))
     ORDER BY p.published_at DESC, p.id DESC LIMIT $limit`,
    args,
  );
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
    AND NOT EXISTS (SELECT 1 FROM social_edges m WHERE m.kind = 'mute' AND m.src_actor_id = $viewer AND m.dst_actor_id = p.actor_id)))`;
}
