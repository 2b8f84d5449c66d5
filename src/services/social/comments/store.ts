/** SQL of comments. */
import type { Sql } from "../../../core/db";
import type { SqlValue } from "../../../core/store/sql";

export type CommentStatus = "published" | "pending_approval" | "hidden" | "removed";

export interface CommentRow {
  id: string;
  community_id: string;
  post_id: string;
  parent_id: string | null;
  actor_id: string;
  body: string;
  depth: number;
  status: CommentStatus;
  visibility: "public" | "author_only";
  pinned: number;
  pinned_at: string | null;
  assets: string;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

const COLS = ["id", "community_id", "post_id", "parent_id", "actor_id", "body", "depth", "status", "visibility", "pinned", "pinned_at", "assets", "deleted_at", "created_at", "updated_at"] as const;

export async function insertComment(db: Sql, r: CommentRow): Promise<void> {
  await db.run(`INSERT INTO social_comments (${COLS.join(", ")}) VALUES (${COLS.map((c) => `$${c}`).join(", ")})`, { ...r });
}

export const commentById = (db: Sql, postId: string, id: string) =>
  db.get<CommentRow>("SELECT * FROM social_comments WHERE id = ? AND post_id = ?", id, postId);

export async function updateComment(db: Sql, id: string, patch: Partial<CommentRow>): Promise<number> {
  const keys = Object.keys(patch);
  if (keys.length === 0) return 0;
  return db.run(`UPDATE social_comments SET ${keys.map((k) => `${k} = $${k}`).join(", ")} WHERE id = $id`, { ...patch, id });
}

/** Conditional status move (exact under concurrency): true when this call moved it. */
export async function moveStatus(db: Sql, id: string, from: CommentStatus, to: CommentStatus, now: string): Promise<boolean> {
  return (await db.run("UPDATE social_comments SET status = ?, updated_at = ? WHERE id = ? AND status = ? AND deleted_at IS NULL", to, now, id, from)) === 1;
}

/**
 * Who sees what: everybody sees published public comments; the comment's author sees its own
 * (pending or author_only ones too); the post's author sees every pending and author_only
 * comment on its post. Hidden, removed and deleted comments are in no listing.
 */
function visible(viewer: string | null, postAuthor: string): { sql: string; args: SqlValue[] } {
  if (viewer === null) return { sql: "c.status = 'published' AND c.visibility = 'public'", args: [] };
  if (viewer === postAuthor) return { sql: "c.status IN ('published','pending_approval')", args: [] };
  return {
    sql: "((c.status = 'published' AND c.visibility = 'public') OR (c.actor_id = ? AND c.status IN ('published','pending_approval'))) AND NOT EXISTS (SELECT 1 FROM social_edges b WHERE b.kind = 'block' AND ((b.src_actor_id = ? AND b.dst_actor_id = c.actor_id) OR (b.src_actor_id = c.actor_id AND b.dst_actor_id = ?)))",
    args: [viewer, viewer, viewer],
  };
}

export interface ListArgs {
  postId: string;
  viewer: string | null;
  postAuthor: string;
  limit: number;
}

/** Pinned top-level comments (most recently pinned first), after (pinned_at, id) when given. */
export function pinnedTop(db: Sql, a: ListArgs, after: { k: string; id: string } | null): Promise<CommentRow[]> {
  const v = visible(a.viewer, a.postAuthor);
  const cur = after ? " AND (c.pinned_at < ? OR (c.pinned_at = ? AND c.id < ?))" : "";
  return db.all<CommentRow>(
    `SELECT c.* FROM social_comments c WHERE c.post_id = ? AND c.parent_id IS NULL AND c.pinned = 1 AND c.deleted_at IS NULL AND ${v.sql}${cur} ORDER BY c.pinned_at DESC, c.id DESC LIMIT ?`,
    a.postId, ...v.args, ...(after ? [after.k, after.k, after.id] : []), a.limit,
  );
}

/** Unpinned top-level comments, newest first. */
export function unpinnedTop(db: Sql, a: ListArgs, after: { k: string; id: string } | null): Promise<CommentRow[]> {
  const v = visible(a.viewer, a.postAuthor);
  const cur = after ? " AND (c.created_at < ? OR (c.created_at = ? AND c.id < ?))" : "";
  return db.all<CommentRow>(
    `SELECT c.* FROM social_comments c WHERE c.post_id = ? AND c.parent_id IS NULL AND c.pinned = 0 AND c.deleted_at IS NULL AND ${v.sql}${cur} ORDER BY c.created_at DESC, c.id DESC LIMIT ?`,
    a.postId, ...v.args, ...(after ? [after.k, after.k, after.id] : []), a.limit,
  );
}

/** Replies of a parent, oldest first. */
export function replies(db: Sql, a: ListArgs, parentId: string, after: { k: string; id: string } | null): Promise<CommentRow[]> {
  const v = visible(a.viewer, a.postAuthor);
  const cur = after ? " AND (c.created_at > ? OR (c.created_at = ? AND c.id > ?))" : "";
  return db.all<CommentRow>(
    `SELECT c.* FROM social_comments c WHERE c.parent_id = ? AND c.post_id = ? AND c.deleted_at IS NULL AND ${v.sql}${cur} ORDER BY c.created_at, c.id LIMIT ?`,
    parentId, a.postId, ...v.args, ...(after ? [after.k, after.k, after.id] : []), a.limit,
  );
}

/** Whether `viewer` (or the public, null) may see this one comment. */
export function visibleTo(c: CommentRow, viewer: string | null, postAuthor: string): boolean {
  if (c.deleted_at !== null || c.status === "hidden" || c.status === "removed") return false;
  if (viewer !== null && (viewer === postAuthor || viewer === c.actor_id)) return true;
  return c.status === "published" && c.visibility === "public";
}

/** Soft delete (unpinned too); 1, or 0 when it was already deleted. */
export const softDeleteComment = (db: Sql, id: string, now: string) =>
  db.run("UPDATE social_comments SET deleted_at = ?, pinned = 0, pinned_at = NULL, updated_at = ? WHERE id = ? AND deleted_at IS NULL", now, now, id);

/** A comment of a community by id (deleted ones too), or null. */
export const commentInCommunity = (db: Sql, communityId: string, id: string) =>
  db.get<CommentRow>("SELECT * FROM social_comments WHERE id = ? AND community_id = ?", id, communityId);
