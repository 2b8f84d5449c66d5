/** SQL of the actor graph: edges (follow, mute, block, restrict), follow requests, close friends. */
import type { Sql } from "../../../core/db";
import type { Keyset } from "../core/keyset";
import { feedsChanged, feedWrite } from "../core/feed-changes";

export type EdgeKind = "follow" | "mute" | "block" | "restrict";

export interface EdgeRow {
  id: string;
  community_id: string;
  kind: EdgeKind;
  src_actor_id: string;
  dst_actor_id: string;
  dst_post_id: string | null;
  payload: string;
  created_at: string;
}

export interface RequestRow {
  id: string;
  community_id: string;
  src_actor_id: string;
  dst_actor_id: string;
  payload: string;
  created_at: string;
}

/** The edge src -kind-> dst of the community (another community's pair reads as absent). */
export const edgeOf = (db: Sql, communityId: string, src: string, kind: EdgeKind, dst: string) =>
  db.get<EdgeRow>("SELECT * FROM social_edges WHERE src_actor_id = ? AND kind = ? AND dst_actor_id = ? AND community_id = ?", src, kind, dst, communityId);

/** Inserts the edge unless (src, kind, dst) exists; true when this call inserted it (exact under concurrency). */
export async function insertEdge(db: Sql, r: EdgeRow): Promise<boolean> {
  const n = await db.run(
    `INSERT INTO social_edges (id, community_id, kind, src_actor_id, dst_actor_id, dst_post_id, payload, created_at)
     VALUES ($id, $community_id, $kind, $src_actor_id, $dst_actor_id, $dst_post_id, $payload, $created_at)
     ON CONFLICT (src_actor_id, kind, dst_actor_id) DO NOTHING`,
    { ...r },
  );
  await feedsChanged(db);
  return n === 1;
}

/** Deletes the edge; the deleted row when this call deleted it, else null (exact under concurrency: one of two deleters wins). */
export async function deleteEdge(db: Sql, communityId: string, src: string, kind: EdgeKind, dst: string): Promise<EdgeRow | null> {
  const row = await edgeOf(db, communityId, src, kind, dst);
  if (!row) return null;
  const n = await db.run("DELETE FROM social_edges WHERE id = ?", row.id);
  await feedsChanged(db);
  return n === 1 ? row : null;
}

/** A block between the two actors, in either direction. */
export async function blockBetween(db: Sql, a: string, b: string): Promise<boolean> {
  return !!(await db.get(
    "SELECT 1 AS one FROM social_edges WHERE kind = 'block' AND ((src_actor_id = ? AND dst_actor_id = ?) OR (src_actor_id = ? AND dst_actor_id = ?))",
    a, b, b, a,
  ));
}

/** In one query: the follow src -> dst (if any) and whether a block exists either way. */
export async function followAndBlocks(db: Sql, communityId: string, src: string, dst: string): Promise<{ follow: EdgeRow | null; blocked: boolean }> {
  const rows = await db.all<EdgeRow>(
    `SELECT * FROM social_edges WHERE (src_actor_id = ? AND dst_actor_id = ? AND kind IN ('follow', 'block')) OR (src_actor_id = ? AND dst_actor_id = ? AND kind = 'block')`,
    src, dst, dst, src,
  );
  const follow = rows.find((r) => r.kind === "follow" && r.community_id === communityId) ?? null;
  return { follow, blocked: rows.some((r) => r.kind === "block") };
}

/** Edges of one kind leaving `src`, newest first. */
export function edgesFrom(db: Sql, src: string, kind: EdgeKind, after: Keyset | null, limit: number): Promise<EdgeRow[]> {
  return after
    ? db.all<EdgeRow>(
        "SELECT * FROM social_edges WHERE src_actor_id = ? AND kind = ? AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?",
        src, kind, after.k, after.id, limit,
      )
    : db.all<EdgeRow>("SELECT * FROM social_edges WHERE src_actor_id = ? AND kind = ? ORDER BY created_at DESC, id DESC LIMIT ?", src, kind, limit);
}

/** Edges of one kind reaching `dst`, newest first. */
export function edgesTo(db: Sql, dst: string, kind: EdgeKind, after: Keyset | null, limit: number): Promise<EdgeRow[]> {
  return after
    ? db.all<EdgeRow>(
        "SELECT * FROM social_edges WHERE dst_actor_id = ? AND kind = ? AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?",
        dst, kind, after.k, after.id, limit,
      )
    : db.all<EdgeRow>("SELECT * FROM social_edges WHERE dst_actor_id = ? AND kind = ? ORDER BY created_at DESC, id DESC LIMIT ?", dst, kind, limit);
}

// ------------------------------------------------------------------ follow requests

export const requestOf = (db: Sql, communityId: string, dst: string, src: string) =>
  db.get<RequestRow>("SELECT * FROM social_follow_requests WHERE dst_actor_id = ? AND src_actor_id = ? AND community_id = ?", dst, src, communityId);

export async function insertRequest(db: Sql, r: RequestRow): Promise<boolean> {
  const n = await db.run(
    `INSERT INTO social_follow_requests (id, community_id, src_actor_id, dst_actor_id, payload, created_at)
     VALUES ($id, $community_id, $src_actor_id, $dst_actor_id, $payload, $created_at)
     ON CONFLICT (dst_actor_id, src_actor_id) DO NOTHING`,
    { ...r },
  );
  return n === 1;
}

/** Deletes the pending request; the deleted row when this call deleted it. */
export async function deleteRequest(db: Sql, communityId: string, dst: string, src: string): Promise<RequestRow | null> {
  const row = await requestOf(db, communityId, dst, src);
  if (!row) return null;
  return (await db.run("DELETE FROM social_follow_requests WHERE id = ?", row.id)) === 1 ? row : null;
}

export interface RequestItemRow extends RequestRow {
  src_external_id: string;
  src_display_name: string | null;
  src_avatar_url: string | null;
}

/** Incoming requests of `dst`, newest first, with the requester's profile. */
export function requestsTo(db: Sql, dst: string, after: Keyset | null, limit: number): Promise<RequestItemRow[]> {
  const sel = `SELECT r.*, a.external_id AS src_external_id, a.display_name AS src_display_name, a.avatar_url AS src_avatar_url
    FROM social_follow_requests r JOIN social_actors a ON a.id = r.src_actor_id WHERE r.dst_actor_id = ?`;
  return after
    ? db.all<RequestItemRow>(`${sel} AND (r.created_at, r.id) < (?, ?) ORDER BY r.created_at DESC, r.id DESC LIMIT ?`, dst, after.k, after.id, limit)
    : db.all<RequestItemRow>(`${sel} ORDER BY r.created_at DESC, r.id DESC LIMIT ?`, dst, limit);
}

// ------------------------------------------------------------------ close friends

export async function insertCloseFriend(db: Sql, communityId: string, owner: string, member: string, now: string): Promise<boolean> {
  const n = await db.run(
    "INSERT INTO social_close_friends (community_id, owner_actor_id, member_actor_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (owner_actor_id, member_actor_id) DO NOTHING",
    communityId, owner, member, now,
  );
  await feedsChanged(db);
  return n === 1;
}

export const deleteCloseFriend = (db: Sql, communityId: string, owner: string, member: string) =>
  feedWrite(db, db.run("DELETE FROM social_close_friends WHERE owner_actor_id = ? AND member_actor_id = ? AND community_id = ?", owner, member, communityId));

export interface CloseFriendRow {
  owner_actor_id: string;
  member_actor_id: string;
  member_external_id: string;
  member_display_name: string | null;
  member_avatar_url: string | null;
  created_at: string;
}

export function closeFriendsOf(db: Sql, owner: string, after: Keyset | null, limit: number): Promise<CloseFriendRow[]> {
  const sel = `SELECT f.owner_actor_id, f.member_actor_id, a.external_id AS member_external_id, a.display_name AS member_display_name,
      a.avatar_url AS member_avatar_url, f.created_at
    FROM social_close_friends f JOIN social_actors a ON a.id = f.member_actor_id WHERE f.owner_actor_id = ?`;
  return after
    ? db.all<CloseFriendRow>(`${sel} AND (f.created_at, f.member_actor_id) < (?, ?) ORDER BY f.created_at DESC, f.member_actor_id DESC LIMIT ?`, owner, after.k, after.id, limit)
    : db.all<CloseFriendRow>(`${sel} ORDER BY f.created_at DESC, f.member_actor_id DESC LIMIT ?`, owner, limit);
}

// ------------------------------------------------------------------ blocks and actor deletion

/** Removes what a block between a and b ends: pending requests and close-friends entries both ways (follows go through deleteEdge, for their counters). */
export async function dropPairExtras(db: Sql, a: string, b: string): Promise<void> {
  await db.run("DELETE FROM social_follow_requests WHERE (src_actor_id = ? AND dst_actor_id = ?) OR (src_actor_id = ? AND dst_actor_id = ?)", a, b, b, a);
  await db.run("DELETE FROM social_close_friends WHERE (owner_actor_id = ? AND member_actor_id = ?) OR (owner_actor_id = ? AND member_actor_id = ?)", a, b, b, a);
  await feedsChanged(db);
}

/**
 * Before an actor is deleted (its rows cascade): corrects the counters of the actors on the
 * other side of its follows and of those blocking it. Each pair is unique, so -1 per row is exact.
 */
export async function detachActor(db: Sql, id: string, now: string): Promise<void> {
  await db.run(
    "UPDATE social_counters SET follower_count = follower_count - 1, updated_at = ? WHERE actor_id IN (SELECT dst_actor_id FROM social_edges WHERE src_actor_id = ? AND kind = 'follow' AND dst_actor_id <> ?)",
    now, id, id,
  );
  await db.run(
    "UPDATE social_counters SET following_count = following_count - 1, updated_at = ? WHERE actor_id IN (SELECT src_actor_id FROM social_edges WHERE dst_actor_id = ? AND kind = 'follow' AND src_actor_id <> ?)",
    now, id, id,
  );
  await db.run(
    "UPDATE social_counters SET blocks_count = blocks_count - 1, updated_at = ? WHERE actor_id IN (SELECT src_actor_id FROM social_edges WHERE dst_actor_id = ? AND kind = 'block' AND src_actor_id <> ?)",
    now, id, id,
  );
}

/** Recount of an actor's counters from the edges (tests and repair). */
export async function recount(db: Sql, id: string): Promise<{ follower_count: number; following_count: number; blocks_count: number }> {
  const r = await db.get<{ a: number; b: number; c: number }>(
    `SELECT (SELECT count(*) FROM social_edges WHERE dst_actor_id = ? AND kind = 'follow') AS a,
            (SELECT count(*) FROM social_edges WHERE src_actor_id = ? AND kind = 'follow') AS b,
            (SELECT count(*) FROM social_edges WHERE src_actor_id = ? AND kind = 'block') AS c`,
    id, id, id,
  );
  return { follower_count: Number(r!.a), following_count: Number(r!.b), blocks_count: Number(r!.c) };
}
