/** SQL of uploaded assets. */
import type { Sql } from "../../../core/db";
import type { Keyset } from "../core/keyset";
import type { RenditionName } from "./renditions";

export interface AssetRow {
  id: string;
  community_id: string;
  owner_actor_id: string;
  kind: string;
  status: "uploading" | "processing" | "ready" | "failed";
  content_type: string | null;
  byte_size: number | null;
  width: number | null;
  height: number | null;
  duration_s: number | null;
  failure_reason: string | null;
  renditions: string;
  object_key: string | null;
  lease_until: string | null;
  created_at: string;
  updated_at: string;
}

export interface Rendition {
  name: RenditionName;
  key: string;
  content_type: string;
  width: number;
  height: number;
  byte_size: number;
}

export async function insertAsset(db: Sql, r: AssetRow): Promise<void> {
  const cols = Object.keys(r);
  await db.run(`INSERT INTO social_assets (${cols.join(", ")}) VALUES (${cols.map((c) => `$${c}`).join(", ")})`, { ...r });
}

export const assetById = (db: Sql, communityId: string, id: string) => db.get<AssetRow>("SELECT * FROM social_assets WHERE id = ? AND community_id = ?", id, communityId);

/** The community's assets, newest first; only `ownerId`'s when given. */
export function listAssets(db: Sql, communityId: string, ownerId: string | null, after: Keyset | null, limit: number): Promise<AssetRow[]> {
  const where = ["community_id = ?"];
  const args: (string | number)[] = [communityId];
  if (ownerId) {
    where.push("owner_actor_id = ?");
    args.push(ownerId);
  }
  if (after) {
    where.push("(created_at, id) < (?, ?)");
    args.push(after.k, after.id);
  }
  return db.all<AssetRow>(`SELECT * FROM social_assets WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`, ...args, limit);
}

export const deleteAsset = (db: Sql, id: string) => db.run("DELETE FROM social_assets WHERE id = ?", id);

/** Claims up to `limit` processing assets whose lease is free (the caller's transaction; skipLocked on PostgreSQL). */
export async function claim(db: Sql, now: string, leaseUntil: string, limit: number, skipLocked: string): Promise<AssetRow[]> {
  const rows = await db.all<AssetRow>(
    `SELECT * FROM social_assets WHERE status = 'processing' AND (lease_until IS NULL OR lease_until <= ?) ORDER BY created_at, id LIMIT ?${skipLocked}`,
    now, limit,
  );
  for (const r of rows) await db.run("UPDATE social_assets SET lease_until = ? WHERE id = ?", leaseUntil, r.id);
  return rows;
}

/** Finishes processing once (status processing -> ready or failed); true for the call that did. */
export async function finish(db: Sql, id: string, patch: Partial<AssetRow>): Promise<boolean> {
  const keys = Object.keys(patch);
  return (await db.run(`UPDATE social_assets SET ${keys.map((k) => `${k} = $${k}`).join(", ")} WHERE id = $id AND status = 'processing'`, { ...patch, id })) === 1;
}

/** The bytes of a two-step upload arrived: processing from now on. 1, or 0 when they had already. */
export const markUploaded = (db: Sql, id: string, objectKey: string, byteSize: number, now: string) =>
  db.run("UPDATE social_assets SET status = 'processing', object_key = ?, byte_size = ?, updated_at = ? WHERE id = ? AND status = 'uploading'", objectKey, byteSize, now, id);
