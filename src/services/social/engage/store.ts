/** SQL of reactions (posts and comments), bookmarks, views and poll votes. */
import type { Sql } from "../../../core/db";
import type { Keyset } from "../core/common";
import { feedsChanged } from "../core/feed-changes";

export interface ReactionRow {
  target_id: string;
  actor_id: string;
  type: string;
  community_id: string;
  target_type: "post" | "comment";
  created_at: string;
}

/** Adds the reaction unless present; when this call added it, its (target, type) count grows by one. */
export async function addReaction(db: Sql, r: ReactionRow): Promise<boolean> {
  const n = await db.run(
    `INSERT INTO social_reactions (target_id, actor_id, type, community_id, target_type, created_at) VALUES ($target_id, $actor_id, $type, $community_id, $target_type, $created_at)
     ON CONFLICT (target_id, actor_id, type) DO NOTHING`,
    { ...r },
  );
  if (n !== 1) return false;
  await db.run(
    `INSERT INTO social_reaction_counts (target_id, type, community_id, n) VALUES (?, ?, ?, 1)
     ON CONFLICT (target_id, type) DO UPDATE SET n = social_reaction_counts.n + 1`,
    r.target_id, r.type, r.community_id,
  );
  await feedsChanged(db);
  return true;
}

/** Removes the reaction; when this call removed it, its count shrinks by one. */
export async function removeReaction(db: Sql, targetId: string, actorId: string, type: string): Promise<boolean> {
  const n = await db.run("DELETE FROM social_reactions WHERE target_id = ? AND actor_id = ? AND type = ?", targetId, actorId, type);
  if (n !== 1) return false;
  await db.run("UPDATE social_reaction_counts SET n = n - 1 WHERE target_id = ? AND type = ?", targetId, type);
  await feedsChanged(db);
  return true;
}

export async function countsOf(db: Sql, targetId: string): Promise<Record<string, number>> {
  const rows = await db.all<{ type: string; n: number }>("SELECT type, n FROM social_reaction_counts WHERE target_id = ? AND n > 0 ORDER BY type", targetId);
  return Object.fromEntries(rows.map((r) => [r.type, Number(r.n)]));
}

// ------------------------------------------------------------------ bookmarks

export interface BookmarkRow {
  actor_id: string;
  post_id: string;
  community_id: string;
  created_at: string;
}

export async function addBookmark(db: Sql, r: BookmarkRow): Promise<boolean> {
  return (await db.run("INSERT INTO social_bookmarks (actor_id, post_id, community_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (actor_id, post_id) DO NOTHING", r.actor_id, r.post_id, r.community_id, r.created_at)) === 1;
}

export const bookmarkOf = (db: Sql, actorId: string, postId: string) => db.get<BookmarkRow>("SELECT * FROM social_bookmarks WHERE actor_id = ? AND post_id = ?", actorId, postId);

export const removeBookmark = (db: Sql, communityId: string, actorId: string, postId: string) =>
  db.run("DELETE FROM social_bookmarks WHERE community_id = ? AND actor_id = ? AND post_id = ?", communityId, actorId, postId);

export function bookmarksOf(db: Sql, actorId: string, after: Keyset | null, limit: number): Promise<BookmarkRow[]> {
  return after
    ? db.all<BookmarkRow>(
        "SELECT * FROM social_bookmarks WHERE actor_id = ? AND (created_at < ? OR (created_at = ? AND post_id < ?)) ORDER BY created_at DESC, post_id DESC LIMIT ?",
        actorId, after.k, after.k, after.id, limit,
      )
    : db.all<BookmarkRow>("SELECT * FROM social_bookmarks WHERE actor_id = ? ORDER BY created_at DESC, post_id DESC LIMIT ?", actorId, limit);
}

// ------------------------------------------------------------------ views

export async function addView(db: Sql, communityId: string, postId: string, viewer: string, now: string): Promise<boolean> {
  return (await db.run("INSERT INTO social_post_views (post_id, viewer_actor_id, community_id, viewed_at) VALUES (?, ?, ?, ?) ON CONFLICT (post_id, viewer_actor_id) DO NOTHING", postId, viewer, communityId, now)) === 1;
}

export interface ViewerRow {
  viewer_actor_id: string;
  viewer_external_id: string;
  viewer_display_name: string | null;
  viewer_avatar_url: string | null;
  viewed_at: string;
}

/** Viewers of a post, newest view first. */
export function viewersOf(db: Sql, postId: string, after: Keyset | null, limit: number): Promise<ViewerRow[]> {
  const sel = `SELECT v.viewer_actor_id, a.external_id AS viewer_external_id, a.display_name AS viewer_display_name, a.avatar_url AS viewer_avatar_url, v.viewed_at
    FROM social_post_views v JOIN social_actors a ON a.id = v.viewer_actor_id WHERE v.post_id = ?`;
  return after
    ? db.all<ViewerRow>(`${sel} AND (v.viewed_at < ? OR (v.viewed_at = ? AND v.viewer_actor_id < ?)) ORDER BY v.viewed_at DESC, v.viewer_actor_id DESC LIMIT ?`, postId, after.k, after.k, after.id, limit)
    : db.all<ViewerRow>(`${sel} ORDER BY v.viewed_at DESC, v.viewer_actor_id DESC LIMIT ?`, postId, limit);
}

// ------------------------------------------------------------------ votes

/** Records the vote; a later vote by the same actor replaces the earlier one. */
export async function vote(db: Sql, communityId: string, postId: string, actorId: string, index: number, now: string): Promise<void> {
  await db.run(
    `INSERT INTO social_poll_votes (post_id, actor_id, community_id, option_index, voted_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (post_id, actor_id) DO UPDATE SET option_index = excluded.option_index, voted_at = excluded.voted_at`,
    postId, actorId, communityId, index, now,
  );
}

export const tally = (db: Sql, postId: string) =>
  db.all<{ option_index: number; n: number }>("SELECT option_index, COUNT(*) AS n FROM social_poll_votes WHERE post_id = ? GROUP BY option_index", postId);

/** One actor's reaction of one type on a target, or null. */
export const reactionOf = (db: Sql, targetId: string, actorId: string, type: string) =>
  db.get<ReactionRow>("SELECT * FROM social_reactions WHERE target_id = ? AND actor_id = ? AND type = ?", targetId, actorId, type);
