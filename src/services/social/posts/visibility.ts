/**
 * Who may see a post. Rules (Mastodon, Instagram):
 * - the author always sees its own live posts (drafts, scheduled, moderated ones too);
 * - anybody else needs: published, not soft-deleted, not expired (stories), not hidden or
 *   removed by moderation, an author who is not deleted and not shadow-banned, no block
 *   between viewer and author (either way), and the effective visibility:
 *   public (anyone), followers (viewer follows the author), close_friends (viewer is on the
 *   author's close-friends list). A private author's public posts count as followers.
 */
import type { Sql } from "../../../core/db";
import { blockBetween } from "../graph";
import * as store from "./store";

export function effectiveVisibility(p: { visibility: store.Visibility; a_private: number }): store.Visibility {
  return p.visibility === "public" && Number(p.a_private) === 1 ? "followers" : p.visibility;
}

export function shadowBanned(p: { a_shadow_at: string | null; a_shadow_until: string | null }, now: string): boolean {
  return p.a_shadow_at !== null && (p.a_shadow_until === null || p.a_shadow_until > now);
}

/** Live (not deleted, not expired) for everybody. */
export const isLive = (p: store.PostRow, now: string) => p.deleted_at === null && (p.expires_at === null || p.expires_at > now);

/** Readable by the public (no viewer): published, live, unmoderated, public, author fine. */
export function publiclyVisible(p: store.PostReadRow, now: string): boolean {
  return isLive(p, now) && p.status === "published" && p.moderation === null && p.a_status !== "deleted" && !shadowBanned(p, now) && effectiveVisibility(p) === "public";
}

export async function canSee(db: Sql, p: store.PostReadRow, viewer: string, now: string): Promise<boolean> {
  if (!isLive(p, now)) return false;
  if (p.actor_id === viewer) return true;
  if (p.status !== "published" || p.moderation !== null || p.a_status === "deleted" || shadowBanned(p, now)) return false;
  if (await blockBetween(db, viewer, p.actor_id)) return false;
  const v = effectiveVisibility(p);
  if (v === "public") return true;
  if (v === "followers") return store.follows(db, viewer, p.actor_id);
  return store.isCloseFriend(db, p.actor_id, viewer);
}
