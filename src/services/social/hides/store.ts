/** Hides: SQL of the hides service (service.ts). */
import type { Sql } from "../../../core/db";
import type { Keyset } from "../core/keyset";
import { feedWrite } from "../core/feed-changes";

export interface HideRow {
  id: string;
  community_id: string;
  src_actor_id: string;
  dst_actor_id: string;
  dst_post_id: string;
  payload: string;
  created_at: string;
}

export const hideOf = (db: Sql, src: string, post: string) => db.get<HideRow>("SELECT * FROM social_hides WHERE src_actor_id = ? AND dst_post_id = ?", src, post);

export function hidesOf(db: Sql, src: string, after: Keyset | null, limit: number): Promise<HideRow[]> {
  return after
    ? db.all<HideRow>("SELECT * FROM social_hides WHERE src_actor_id = ? AND (created_at < ? OR (created_at = ? AND id < ?)) ORDER BY created_at DESC, id DESC LIMIT ?", src, after.k, after.k, after.id, limit)
    : db.all<HideRow>("SELECT * FROM social_hides WHERE src_actor_id = ? ORDER BY created_at DESC, id DESC LIMIT ?", src, limit);
}

/** Rows inserted: 1, or 0 when the actor already hides the post. */
export const insertHide = (db: Sql, row: HideRow) =>
  feedWrite(
    db,
    db.run(
      "INSERT INTO social_hides (id, community_id, src_actor_id, dst_actor_id, dst_post_id, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (src_actor_id, dst_post_id) DO NOTHING",
      row.id, row.community_id, row.src_actor_id, row.dst_actor_id, row.dst_post_id, row.payload, row.created_at,
    ),
  );

export const deleteHide = (db: Sql, communityId: string, src: string, postId: string) =>
  feedWrite(db, db.run("DELETE FROM social_hides WHERE community_id = ? AND src_actor_id = ? AND dst_post_id = ?", communityId, src, postId));
