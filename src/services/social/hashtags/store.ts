/** SQL of the hashtag directory and hashtag follows. */
import type { Sql } from "../../../core/db";
import type { Keyset } from "../core/keyset";
import { feedsChanged, feedWrite } from "../core/feed-changes";

export interface HashtagRow {
  community_id: string;
  tag: string;
  first_used_at: string;
  post_count: number;
}

export interface HashtagFollowRow {
  community_id: string;
  actor_id: string;
  tag: string;
  followed_at: string;
}

/** Alphabetical by code point on both engines. */
const byTag = (db: Sql) => (db.engine === "postgres" ? `tag COLLATE "C"` : "tag");

export const hashtagOf = (db: Sql, communityId: string, tag: string) =>
  db.get<HashtagRow>("SELECT * FROM social_hashtags WHERE community_id = ? AND tag = ?", communityId, tag);

/**
 * A post started using these (normalised) tags: creates missing ones (first_used_at = now)
 * and adds one to post_count. For part 2's post writes, in their transaction.
 */
export async function useHashtags(db: Sql, communityId: string, tags: string[], now: string): Promise<void> {
  for (const tag of [...new Set(tags)].sort()) {
    await db.run(
      `INSERT INTO social_hashtags (community_id, tag, first_used_at, post_count) VALUES (?, ?, ?, 1)
       ON CONFLICT (community_id, tag) DO UPDATE SET post_count = social_hashtags.post_count + 1`,
      communityId, tag, now,
    );
  }
}

/** A post stopped using these tags (deleted, edited): post_count minus one; the directory keeps the tag. */
export async function releaseHashtags(db: Sql, communityId: string, tags: string[]): Promise<void> {
  for (const tag of [...new Set(tags)].sort()) {
    await db.run("UPDATE social_hashtags SET post_count = post_count - 1 WHERE community_id = ? AND tag = ? AND post_count > 0", communityId, tag);
  }
}

/** Tags starting with `prefix` (already normalised; only letters, digits and _), alphabetical. */
export function searchHashtags(db: Sql, communityId: string, prefix: string, limit: number): Promise<HashtagRow[]> {
  const pattern = `${prefix.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
  return db.all<HashtagRow>(`SELECT * FROM social_hashtags WHERE community_id = ? AND tag LIKE ? ESCAPE '\\' ORDER BY ${byTag(db)} LIMIT ?`, communityId, pattern, limit);
}

/** Follows the tag, or refreshes followed_at when already followed. */
export async function followHashtag(db: Sql, r: HashtagFollowRow): Promise<void> {
  await db.run(
    `INSERT INTO social_hashtag_follows (community_id, actor_id, tag, followed_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (actor_id, tag) DO UPDATE SET followed_at = excluded.followed_at`,
    r.community_id, r.actor_id, r.tag, r.followed_at,
  );
  await feedsChanged(db);
}

export const unfollowHashtag = (db: Sql, communityId: string, actorId: string, tag: string) =>
  feedWrite(db, db.run("DELETE FROM social_hashtag_follows WHERE community_id = ? AND actor_id = ? AND tag = ?", communityId, actorId, tag));

/** Newest first. */
export function hashtagFollowsOf(db: Sql, actorId: string, after: Keyset | null, limit: number): Promise<HashtagFollowRow[]> {
  return after
    ? db.all<HashtagFollowRow>(
        "SELECT * FROM social_hashtag_follows WHERE actor_id = ? AND (followed_at, tag) < (?, ?) ORDER BY followed_at DESC, tag DESC LIMIT ?",
        actorId, after.k, after.id, limit,
      )
    : db.all<HashtagFollowRow>("SELECT * FROM social_hashtag_follows WHERE actor_id = ? ORDER BY followed_at DESC, tag DESC LIMIT ?", actorId, limit);
}
