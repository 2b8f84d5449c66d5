/** SQL of posts, their hashtags and tags (mentions), and the visibility facts reads need. */
import type { Sql } from "../../../core/db";
import type { SqlValue } from "../../../core/store/sql";
import type { Keyset } from "../core/common";
import { feedsChanged, feedWrite } from "../core/feed-changes";

export type PostKind = "text" | "link" | "image" | "quote" | "story" | "poll" | "repost";
export type PostStatus = "draft" | "scheduled" | "published";
export type Visibility = "public" | "followers" | "close_friends";

export interface PostRow {
  id: string;
  community_id: string;
  actor_id: string;
  kind: PostKind;
  status: PostStatus;
  visibility: Visibility;
  body: string | null;
  attributes: string;
  assets: string;
  hashtags: string;
  mentions: string;
  quote_post_id: string | null;
  source_post_id: string | null;
  repost_key: string | null;
  scheduled_for: string | null;
  published_at: string | null;
  expires_at: string | null;
  moderation: string | null;
  deleted_at: string | null;
  reaction_count: number;
  comment_count: number;
  repost_count: number;
  view_count: number;
  created_at: string;
  updated_at: string;
}

/** A post with the author facts visibility needs (private, status, shadow ban). */
export interface PostReadRow extends PostRow {
  a_private: number;
  a_status: string;
  a_shadow_until: string | null;
  a_shadow_at: string | null;
}

const COLS = [
  "id", "community_id", "actor_id", "kind", "status", "visibility", "body", "attributes", "assets", "hashtags", "mentions", "quote_post_id", "source_post_id",
  "repost_key", "scheduled_for", "published_at", "expires_at", "moderation", "deleted_at", "reaction_count", "comment_count", "repost_count", "view_count", "created_at", "updated_at",
] as const;

export async function insertPost(db: Sql, r: PostRow): Promise<void> {
  await db.run(`INSERT INTO social_posts (${COLS.join(", ")}) VALUES (${COLS.map((c) => `$${c}`).join(", ")})`, { ...r });
  await feedsChanged(db);
}

const READ = `SELECT p.*, a.is_private AS a_private, a.status AS a_status, a.shadow_banned_until AS a_shadow_until, a.shadow_banned_at AS a_shadow_at
  FROM social_posts p JOIN social_actors a ON a.id = p.actor_id`;

export const postById = (db: Sql, communityId: string, id: string) =>
  db.get<PostReadRow>(`${READ} WHERE p.id = ? AND p.community_id = ?`, id, communityId);

/** The post row locked for the rest of the transaction (PostgreSQL; SQLite's write transaction is the lock). */
export const lockPost = (db: Sql, communityId: string, id: string) =>
  db.get<PostRow>(`SELECT * FROM social_posts WHERE id = ? AND community_id = ?${db.engine === "postgres" ? " FOR UPDATE" : ""}`, id, communityId);

export async function updatePost(db: Sql, id: string, patch: Partial<PostRow>): Promise<number> {
  const keys = Object.keys(patch);
  if (keys.length === 0) return 0;
  return feedWrite(db, db.run(`UPDATE social_posts SET ${keys.map((k) => `${k} = $${k}`).join(", ")} WHERE id = $id`, { ...patch, id }));
}

/** Publishes a scheduled post once: true only for the call that moved it (exactly once across workers and restarts). */
export async function publishScheduled(db: Sql, id: string, now: string, expiresAt: string | null): Promise<boolean> {
  return (await feedWrite(db, db.run("UPDATE social_posts SET status = 'published', published_at = ?, expires_at = ?, updated_at = ? WHERE id = ? AND status = 'scheduled'", now, expiresAt, now, id))) === 1;
}

/** Scheduled posts due at `now`, oldest first (claimed in the caller's transaction). */
export function duePosts(db: Sql, now: string, limit: number, skipLocked: string): Promise<PostRow[]> {
  return db.all<PostRow>(`SELECT * FROM social_posts WHERE status = 'scheduled' AND scheduled_for <= ? ORDER BY scheduled_for, id LIMIT ?${skipLocked}`, now, limit);
}

/** Counter columns of a post: += delta. */
export async function bumpPost(db: Sql, id: string, col: "reaction_count" | "comment_count" | "repost_count" | "view_count", delta: number): Promise<void> {
  await db.run(`UPDATE social_posts SET ${col} = ${col} + ? WHERE id = ?`, delta, id);
  await feedsChanged(db);
}

/** Author-visibility clause shared by public reads: live author, not shadow-banned at `now`. */
const AUTHOR_OK = `a.status <> 'deleted' AND (a.shadow_banned_at IS NULL OR (a.shadow_banned_until IS NOT NULL AND a.shadow_banned_until <= ?))`;

/** GET /posts: published, live, non-expired, public posts of non-private authors, newest first; optional author. */
export function publicPosts(db: Sql, communityId: string, now: string, authorId: string | null, after: Keyset | null, limit: number): Promise<PostReadRow[]> {
  const where = [
    "p.community_id = ?",
    "p.status = 'published'",
    "p.visibility = 'public'",
    "p.deleted_at IS NULL",
    "p.moderation IS NULL",
    "(p.expires_at IS NULL OR p.expires_at > ?)",
    "a.is_private = 0",
    AUTHOR_OK,
  ];
  const args: SqlValue[] = [communityId, now, now];
  if (authorId) {
    where.push("p.actor_id = ?");
    args.push(authorId);
  }
  if (after) {
    where.push("(p.published_at < ? OR (p.published_at = ? AND p.id < ?))");
    args.push(after.k, after.k, after.id);
  }
  return db.all<PostReadRow>(`${READ} WHERE ${where.join(" AND ")} ORDER BY p.published_at DESC, p.id DESC LIMIT ?`, ...args, limit);
}

/** Live reposts of a post. */
export const liveRepostsOf = (db: Sql, sourceId: string) =>
  db.all<PostRow>("SELECT * FROM social_posts WHERE source_post_id = ? AND deleted_at IS NULL", sourceId);

export const liveRepostBy = (db: Sql, actorId: string, sourceId: string) =>
  db.get<PostRow>("SELECT * FROM social_posts WHERE actor_id = ? AND repost_key = ?", actorId, sourceId);

// ------------------------------------------------------------------ hashtags of published posts

export async function addPostHashtags(db: Sql, communityId: string, postId: string, tags: string[], publishedAt: string): Promise<void> {
  for (const tag of tags) {
    await db.run(
      "INSERT INTO social_post_hashtags (post_id, community_id, tag, published_at) VALUES (?, ?, ?, ?) ON CONFLICT (post_id, tag) DO NOTHING",
      postId, communityId, tag, publishedAt,
    );
  }
  await feedsChanged(db);
}

export const removePostHashtags = (db: Sql, postId: string) => feedWrite(db, db.run("DELETE FROM social_post_hashtags WHERE post_id = ?", postId));

// ------------------------------------------------------------------ tags (@mentions)

export interface TagRow {
  id: string;
  community_id: string;
  post_id: string;
  tagger_actor_id: string;
  tagged_actor_id: string;
  status: "pending" | "approved" | "declined";
  created_at: string;
  updated_at: string;
}

export async function insertTag(db: Sql, r: TagRow): Promise<boolean> {
  const n = await db.run(
    `INSERT INTO social_post_tags (id, community_id, post_id, tagger_actor_id, tagged_actor_id, status, created_at, updated_at)
     VALUES ($id, $community_id, $post_id, $tagger_actor_id, $tagged_actor_id, $status, $created_at, $updated_at) ON CONFLICT (post_id, tagged_actor_id) DO NOTHING`,
    { ...r },
  );
  return n === 1;
}

export const tagOf = (db: Sql, postId: string, taggedId: string) =>
  db.get<TagRow>("SELECT * FROM social_post_tags WHERE post_id = ? AND tagged_actor_id = ?", postId, taggedId);

export const tagsOfPost = (db: Sql, postId: string) => db.all<TagRow>("SELECT * FROM social_post_tags WHERE post_id = ? ORDER BY created_at, id", postId);

export const setTagStatus = (db: Sql, id: string, status: TagRow["status"], now: string) =>
  db.run("UPDATE social_post_tags SET status = ?, updated_at = ? WHERE id = ?", status, now, id);

/** Actors of the community named by these external ids (mentions), any order. */
export async function actorsByExternal(db: Sql, communityId: string, externalIds: string[]): Promise<{ id: string; external_id: string }[]> {
  if (externalIds.length === 0) return [];
  return db.all(`SELECT id, external_id FROM social_actors WHERE community_id = ? AND external_id IN (${externalIds.map(() => "?").join(",")})`, communityId, ...externalIds);
}

// ------------------------------------------------------------------ visibility facts

export async function follows(db: Sql, src: string, dst: string): Promise<boolean> {
  return !!(await db.get("SELECT 1 AS one FROM social_edges WHERE src_actor_id = ? AND kind = 'follow' AND dst_actor_id = ?", src, dst));
}

export async function isCloseFriend(db: Sql, owner: string, member: string): Promise<boolean> {
  return !!(await db.get("SELECT 1 AS one FROM social_close_friends WHERE owner_actor_id = ? AND member_actor_id = ?", owner, member));
}

export async function restricts(db: Sql, owner: string, other: string): Promise<boolean> {
  return !!(await db.get("SELECT 1 AS one FROM social_edges WHERE src_actor_id = ? AND kind = 'restrict' AND dst_actor_id = ?", owner, other));
}

// ------------------------------------------------------------------ reaction counts of many targets

export async function reactionCounts(db: Sql, ids: string[]): Promise<Map<string, Record<string, number>>> {
  const out = new Map<string, Record<string, number>>();
  if (ids.length === 0) return out;
  const rows = await db.all<{ target_id: string; type: string; n: number }>(
    `SELECT target_id, type, n FROM social_reaction_counts WHERE n > 0 AND target_id IN (${ids.map(() => "?").join(",")}) ORDER BY type`,
    ...ids,
  );
  for (const r of rows) {
    const m = out.get(r.target_id) ?? {};
    m[r.type] = Number(r.n);
    out.set(r.target_id, m);
  }
  return out;
}

/** Ready assets of the community owned by `owner` among `ids`. */
export async function readyAssets(db: Sql, communityId: string, owner: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.all<{ id: string }>(
    `SELECT id FROM social_assets WHERE community_id = ? AND owner_actor_id = ? AND status = 'ready' AND id IN (${ids.map(() => "?").join(",")})`,
    communityId, owner, ...ids,
  );
  return new Set(rows.map((r) => r.id));
}

/** Live reposts of a post, newest first, after a keyset. */
export const repostsOf = (db: Sql, sourcePostId: string, after: { k: string; id: string } | null, limit: number) =>
  db.all<PostRow>(
    `SELECT * FROM social_posts WHERE source_post_id = ? AND deleted_at IS NULL${after ? " AND (created_at < ? OR (created_at = ? AND id < ?))" : ""} ORDER BY created_at DESC, id DESC LIMIT ?`,
    sourcePostId, ...(after ? [after.k, after.k, after.id] : []), limit,
  );

export const removePostHashtag = (db: Sql, postId: string, tag: string) => feedWrite(db, db.run("DELETE FROM social_post_hashtags WHERE post_id = ? AND tag = ?", postId, tag));

/** Soft delete (its repost_key, unique among live reposts, is cleared); 1, or 0 when it was already deleted. */
export const softDeletePost = (db: Sql, id: string, now: string) =>
  feedWrite(db, db.run("UPDATE social_posts SET deleted_at = ?, repost_key = NULL, updated_at = ? WHERE id = ? AND deleted_at IS NULL", now, now, id));

