/** SQL of actors and their counters. */
import type { Sql } from "../../../core/db";
import type { Keyset } from "../core/keyset";
import { feedsChanged, feedWrite } from "../core/feed-changes";

export type ActorStatus = "active" | "suspended" | "deleted";

export interface ActorRow {
  id: string;
  community_id: string;
  external_id: string;
  display_name: string | null;
  avatar_url: string | null;
  metadata: string;
  status: ActorStatus;
  is_private: number;
  shadow_banned_at: string | null;
  shadow_banned_until: string | null;
  shadow_banned_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface CounterRow {
  actor_id: string;
  community_id: string;
  follower_count: number;
  following_count: number;
  post_count: number;
  comment_count: number;
  blocks_count: number;
  updated_at: string;
}

export const actorById = (db: Sql, id: string) => db.get<ActorRow>("SELECT * FROM social_actors WHERE id = ?", id);

export const actorByExternal = (db: Sql, communityId: string, externalId: string) =>
  db.get<ActorRow>("SELECT * FROM social_actors WHERE community_id = ? AND external_id = ?", communityId, externalId);

/** Actors of the community among `ids` (any order). */
export async function actorsByIds(db: Sql, communityId: string, ids: string[]): Promise<ActorRow[]> {
  if (ids.length === 0) return [];
  return db.all<ActorRow>(`SELECT * FROM social_actors WHERE community_id = ? AND id IN (${ids.map(() => "?").join(",")})`, communityId, ...ids);
}

export async function actorsByExternalIds(db: Sql, communityId: string, externalIds: string[]): Promise<ActorRow[]> {
  if (externalIds.length === 0) return [];
  return db.all<ActorRow>(`SELECT * FROM social_actors WHERE community_id = ? AND external_id IN (${externalIds.map(() => "?").join(",")})`, communityId, ...externalIds);
}

export interface ActorWrite {
  display_name: string | null;
  avatar_url: string | null;
  metadata: string;
  is_private: number;
}

/**
 * Inserts the actor (and its zeroed counters) unless (community, external_id) exists; true
 * when this call inserted it. Concurrent upserts of one external_id: exactly one inserts.
 */
export async function insertActorIfAbsent(db: Sql, r: ActorRow): Promise<boolean> {
  const n = await db.run(
    `INSERT INTO social_actors (id, community_id, external_id, display_name, avatar_url, metadata, status, is_private, created_at, updated_at)
     VALUES ($id, $community_id, $external_id, $display_name, $avatar_url, $metadata, $status, $is_private, $created_at, $updated_at)
     ON CONFLICT (community_id, external_id) DO NOTHING`,
    { id: r.id, community_id: r.community_id, external_id: r.external_id, display_name: r.display_name, avatar_url: r.avatar_url, metadata: r.metadata, status: r.status, is_private: r.is_private, created_at: r.created_at, updated_at: r.updated_at },
  );
  if (n === 0) return false;
  await db.run("INSERT INTO social_counters (actor_id, community_id, updated_at) VALUES (?, ?, ?)", r.id, r.community_id, r.created_at);
  await feedsChanged(db);
  return true;
}

/** Locks the actor row for the rest of the transaction (PostgreSQL FOR UPDATE; SQLite's writer lock already serialises). */
export const lockActor = (db: Sql, id: string) =>
  db.get<ActorRow>(`SELECT * FROM social_actors WHERE id = ?${db.engine === "postgres" ? " FOR UPDATE" : ""}`, id);

const PATCHABLE = ["display_name", "avatar_url", "metadata", "status", "is_private"] as const;
export type ActorPatch = Partial<Pick<ActorRow, (typeof PATCHABLE)[number]>>;

export async function updateActor(db: Sql, id: string, patch: ActorPatch, updatedAt: string): Promise<void> {
  const cols = PATCHABLE.filter((k) => patch[k] !== undefined);
  const sets = [...cols.map((k) => `${k} = $${k}`), "updated_at = $updated_at"];
  const params: Record<string, string | number | null> = { id, updated_at: updatedAt };
  for (const k of cols) params[k] = patch[k] as string | number | null;
  await db.run(`UPDATE social_actors SET ${sets.join(", ")} WHERE id = $id`, params);
  await feedsChanged(db);
}

export const deleteActor = (db: Sql, id: string) => feedWrite(db, db.run("DELETE FROM social_actors WHERE id = ?", id));

/** Newest first. */
export function listActors(db: Sql, communityId: string, after: Keyset | null, limit: number): Promise<ActorRow[]> {
  return after
    ? db.all<ActorRow>(
        "SELECT * FROM social_actors WHERE community_id = ? AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?",
        communityId, after.k, after.id, limit,
      )
    : db.all<ActorRow>("SELECT * FROM social_actors WHERE community_id = ? ORDER BY created_at DESC, id DESC LIMIT ?", communityId, limit);
}

// ------------------------------------------------------------------ counters

export const countersOf = (db: Sql, actorId: string) => db.get<CounterRow>("SELECT * FROM social_counters WHERE actor_id = ?", actorId);

export async function countersOfMany(db: Sql, communityId: string, ids: string[]): Promise<CounterRow[]> {
  if (ids.length === 0) return [];
  return db.all<CounterRow>(`SELECT * FROM social_counters WHERE community_id = ? AND actor_id IN (${ids.map(() => "?").join(",")})`, communityId, ...ids);
}

export type CounterName = "follower_count" | "following_count" | "post_count" | "comment_count" | "blocks_count";

/** Adds `delta` to one counter of an actor, in the caller's transaction (the write that changed the underlying rows). */
export async function bumpCounter(db: Sql, actorId: string, name: CounterName, delta: number, now: string): Promise<void> {
  await db.run(`UPDATE social_counters SET ${name} = ${name} + ?, updated_at = ? WHERE actor_id = ?`, delta, now, actorId);
}

/** Moderation restore: active again, shadow ban lifted (a deleted actor stays deleted). */
export const reinstateActor = (db: Sql, id: string, now: string) =>
  feedWrite(db, db.run("UPDATE social_actors SET status = 'active', shadow_banned_at = NULL, shadow_banned_until = NULL, shadow_banned_reason = NULL, updated_at = ? WHERE id = ? AND status <> 'deleted'", now, id));

/** Moderation ban, shadow: the actor's content is visible to itself only until `until` (null: no end). */
export const shadowBanActor = (db: Sql, id: string, until: string | null, reason: string | null, now: string) =>
  feedWrite(db, db.run("UPDATE social_actors SET shadow_banned_at = ?, shadow_banned_until = ?, shadow_banned_reason = ?, updated_at = ? WHERE id = ?", now, until, reason, now, id));

/** Moderation ban: suspended (only an active actor). */
export const suspendActor = (db: Sql, id: string, now: string) =>
  feedWrite(db, db.run("UPDATE social_actors SET status = 'suspended', updated_at = ? WHERE id = ? AND status = 'active'", now, id));
