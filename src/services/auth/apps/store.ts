/** SQL for Apps and their RS256 signing keys. */
import type { Sql } from "../../../core/db";

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

export async function insertApp(db: Sql, a: AppRow): Promise<void> {
  await db.run(
    `INSERT INTO auth_apps (id, workspace_id, slug, display_name, settings, publishable_key, created_at, updated_at)
     VALUES ($id, $workspace_id, $slug, $display_name, $settings, $publishable_key, $created_at, $updated_at)`,
    { ...a },
  );
}

export const appById = (db: Sql, id: string) => db.get<AppRow>("SELECT * FROM auth_apps WHERE id = ?", id);
export const appBySlug = (db: Sql, slug: string) => db.get<AppRow>("SELECT * FROM auth_apps WHERE slug = ?", slug);
export const appByPublishableKey = (db: Sql, key: string) => db.get<AppRow>("SELECT * FROM auth_apps WHERE publishable_key = ?", key);
export const slugTaken = async (db: Sql, slug: string, exceptId: string | null) =>
  !!(await db.get<{ x: number }>("SELECT 1 AS x FROM auth_apps WHERE slug = ? AND id <> ?", slug, exceptId ?? ""));

/** Keyset page of a workspace's Apps in id (creation) order. */
export const listApps = (db: Sql, workspaceId: string, after: string | null, limit: number) =>
  db.all<AppRow>("SELECT * FROM auth_apps WHERE workspace_id = ? AND id > ? ORDER BY id LIMIT ?", workspaceId, after ?? "", limit);

export const appIdsInWorkspace = async (db: Sql, workspaceId: string) =>
  (await db.all<{ id: string }>("SELECT id FROM auth_apps WHERE workspace_id = ?", workspaceId)).map((r) => r.id);

export async function updateApp(db: Sql, id: string, f: { slug: string; display_name: string; settings: string; updated_at: string }): Promise<void> {
  await db.run("UPDATE auth_apps SET slug = $slug, display_name = $display_name, settings = $settings, updated_at = $updated_at WHERE id = $id", { id, ...f });
}

export const setPublishableKey = (db: Sql, id: string, key: string, now: string) =>
  db.run("UPDATE auth_apps SET publishable_key = ?, updated_at = ? WHERE id = ?", key, now, id);

export const deleteApp = (db: Sql, id: string) => db.run("DELETE FROM auth_apps WHERE id = ?", id);

// --- signing keys -----------------------------------------------------------------------

export async function insertSigningKey(db: Sql, k: SigningKeyRow): Promise<void> {
  await db.run(
    `INSERT INTO auth_signing_keys (kid, app_id, public_jwk, private_enc, created_at, retired_at, drop_after)
     VALUES ($kid, $app_id, $public_jwk, $private_enc, $created_at, $retired_at, $drop_after)`,
    { ...k },
  );
}

/** The key that signs: the newest one not retired. */
export const activeSigningKey = (db: Sql, appId: string) =>
  db.get<SigningKeyRow>("SELECT * FROM auth_signing_keys WHERE app_id = ? AND retired_at IS NULL ORDER BY created_at DESC, kid DESC LIMIT 1", appId);

/**
 * Keys published in the JWKS: the signing key first, then retired keys whose tokens may
 * still be valid, most recently retired first (created_at alone can tie within a millisecond).
 */
export const publishedKeys = (db: Sql, appId: string, nowMs: number) =>
  db.all<SigningKeyRow>(
    // `(x IS NOT NULL)` sorts false before true on both engines (0/1 on SQLite, boolean on PostgreSQL).
    "SELECT * FROM auth_signing_keys WHERE app_id = ? AND (drop_after IS NULL OR drop_after > ?) ORDER BY (drop_after IS NOT NULL), drop_after DESC, created_at DESC",
    appId,
    nowMs,
  );

export const retireSigningKeys = (db: Sql, appId: string, now: string, dropAfter: number) =>
  db.run("UPDATE auth_signing_keys SET retired_at = ?, drop_after = ? WHERE app_id = ? AND retired_at IS NULL", now, dropAfter, appId);

export const purgeDroppedKeys = (db: Sql, nowMs: number) => db.run("DELETE FROM auth_signing_keys WHERE drop_after IS NOT NULL AND drop_after <= ?", nowMs);
