/** SQL for Apps and their RS256 signing keys. */
import type { Db } from "../../../core/db";

export interface AppRow {
  id: string;
  workspace_id: string;
  slug: string;
  display_name: string;
  settings: string;
  publishable_key: string;
  created_at: string;
  updated_at: string;
}

export interface SigningKeyRow {
  kid: string;
  app_id: string;
  public_jwk: string;
  private_enc: string;
  created_at: string;
  retired_at: string | null;
  drop_after: number | null;
}

export function insertApp(db: Db, a: AppRow) {
  db.query(
    `INSERT INTO auth_apps (id, workspace_id, slug, display_name, settings, publishable_key, created_at, updated_at)
     VALUES ($id, $workspace_id, $slug, $display_name, $settings, $publishable_key, $created_at, $updated_at)`,
  ).run(a as any);
}

export const appById = (db: Db, id: string) => db.query<AppRow, [string]>("SELECT * FROM auth_apps WHERE id = ?").get(id);
export const appBySlug = (db: Db, slug: string) => db.query<AppRow, [string]>("SELECT * FROM auth_apps WHERE slug = ?").get(slug);
export const appByPublishableKey = (db: Db, key: string) => db.query<AppRow, [string]>("SELECT * FROM auth_apps WHERE publishable_key = ?").get(key);
export const slugTaken = (db: Db, slug: string, exceptId: string | null) =>
  !!db.query<{ x: number }, [string, string]>("SELECT 1 AS x FROM auth_apps WHERE slug = ? AND id <> ?").get(slug, exceptId ?? "");

/** Keyset page of a workspace's Apps in id (creation) order. */
export const listApps = (db: Db, workspaceId: string, after: string | null, limit: number) =>
  db
    .query<AppRow, [string, string, number]>("SELECT * FROM auth_apps WHERE workspace_id = ? AND id > ? ORDER BY id LIMIT ?")
    .all(workspaceId, after ?? "", limit);

export const appIdsInWorkspace = (db: Db, workspaceId: string) =>
  db.query<{ id: string }, [string]>("SELECT id FROM auth_apps WHERE workspace_id = ?").all(workspaceId).map((r) => r.id);

export function updateApp(db: Db, id: string, f: { slug: string; display_name: string; settings: string; updated_at: string }) {
  db.query("UPDATE auth_apps SET slug = $slug, display_name = $display_name, settings = $settings, updated_at = $updated_at WHERE id = $id").run({ id, ...f } as any);
}

export const setPublishableKey = (db: Db, id: string, key: string, now: string) =>
  db.query("UPDATE auth_apps SET publishable_key = ?, updated_at = ? WHERE id = ?").run(key, now, id);

export const deleteApp = (db: Db, id: string) => db.query("DELETE FROM auth_apps WHERE id = ?").run(id).changes;

// --- signing keys -----------------------------------------------------------------------

export function insertSigningKey(db: Db, k: SigningKeyRow) {
  db.query(
    `INSERT INTO auth_signing_keys (kid, app_id, public_jwk, private_enc, created_at, retired_at, drop_after)
     VALUES ($kid, $app_id, $public_jwk, $private_enc, $created_at, $retired_at, $drop_after)`,
  ).run(k as any);
}

/** The key that signs: the newest one not retired. */
export const activeSigningKey = (db: Db, appId: string) =>
  db
    .query<SigningKeyRow, [string]>("SELECT * FROM auth_signing_keys WHERE app_id = ? AND retired_at IS NULL ORDER BY created_at DESC, kid DESC LIMIT 1")
    .get(appId);

/**
 * Keys published in the JWKS: the signing key first, then retired keys whose tokens may
 * still be valid, most recently retired first (created_at alone can tie within a millisecond).
 */
export const publishedKeys = (db: Db, appId: string, nowMs: number) =>
  db
    .query<SigningKeyRow, [string, number]>(
      "SELECT * FROM auth_signing_keys WHERE app_id = ? AND (drop_after IS NULL OR drop_after > ?) ORDER BY drop_after IS NOT NULL, drop_after DESC, created_at DESC",
    )
    .all(appId, nowMs);

export const retireSigningKeys = (db: Db, appId: string, now: string, dropAfter: number) =>
  db.query("UPDATE auth_signing_keys SET retired_at = ?, drop_after = ? WHERE app_id = ? AND retired_at IS NULL").run(now, dropAfter, appId);

export const purgeDroppedKeys = (db: Db, nowMs: number) =>
  db.query("DELETE FROM auth_signing_keys WHERE drop_after IS NOT NULL AND drop_after <= ?").run(nowMs).changes;
