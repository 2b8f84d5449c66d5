/** SQL for workspace API keys and personal access tokens. */
import type { Sql } from "../../../core/db";

export interface ApiKeyRow {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  last_four: string;
  key_hash: string;
  policy: string;
  created_by: string;
  created_at: string;
  expires_at: number | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface ApiKeyAuthRow extends ApiKeyRow {
  /** Policy of the minter's current role in the key's workspace (NULL when no longer a member). */
  minter_policy: string | null;
  minter_status: string | null;
}

/** One query resolves a key together with its minter's current role policy. */
export const apiKeyForAuth = (db: Sql, keyHash: string) =>
  db.get<ApiKeyAuthRow>(
    // Subqueries rather than JOINs: several times cheaper in bun:sqlite on this hot path.
    `SELECT k.*,
            (SELECT r.policy FROM platform_roles r WHERE r.id =
               (SELECT m.role_id FROM platform_members m WHERE m.workspace_id = k.workspace_id AND m.account_id = k.created_by)) AS minter_policy,
            (SELECT a.status FROM platform_accounts a WHERE a.id = k.created_by) AS minter_status
     FROM platform_api_keys k WHERE k.key_hash = ?`,
    keyHash,
  );

export async function insertApiKey(db: Sql, k: Omit<ApiKeyRow, "last_used_at" | "revoked_at">): Promise<void> {
  await db.run(
    `INSERT INTO platform_api_keys (id, workspace_id, name, prefix, last_four, key_hash, policy, created_by, created_at, expires_at)
     VALUES ($id, $workspace_id, $name, $prefix, $last_four, $key_hash, $policy, $created_by, $created_at, $expires_at)`,
    { ...k },
  );
}

export const apiKeyById = (db: Sql, workspaceId: string, id: string) =>
  db.get<ApiKeyRow>("SELECT * FROM platform_api_keys WHERE workspace_id = ? AND id = ?", workspaceId, id);

export function listApiKeys(db: Sql, workspaceId: string, after: string | null, limit: number) {
  return db.all<ApiKeyRow>(
    "SELECT * FROM platform_api_keys WHERE workspace_id = ? AND (CAST(? AS TEXT) IS NULL OR id > ?) ORDER BY id LIMIT ?",
    workspaceId,
    after,
    after,
    limit,
  );
}

export function revokeApiKey(db: Sql, workspaceId: string, id: string, now: string): Promise<number> {
  return db.run("UPDATE platform_api_keys SET revoked_at = ? WHERE workspace_id = ? AND id = ? AND revoked_at IS NULL", now, workspaceId, id);
}

/** last_used_at is advisory: written at most once a minute per key to keep reads cheap. */
export async function touchApiKey(db: Sql, id: string, now: string, notSince: string): Promise<void> {
  await db.run("UPDATE platform_api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)", now, id, notSince);
}

export interface PersonalTokenRow {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  last_four: string;
  token_hash: string;
  created_at: string;
  expires_at: number | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

export const personalTokenForAuth = (db: Sql, tokenHash: string) =>
  db.get<PersonalTokenRow & { status: string; is_operator: number }>(
    `SELECT t.*, (SELECT a.status FROM platform_accounts a WHERE a.id = t.account_id) AS status,
            (SELECT a.is_operator FROM platform_accounts a WHERE a.id = t.account_id) AS is_operator
     FROM platform_personal_tokens t WHERE t.token_hash = ?`,
    tokenHash,
  );

export async function insertPersonalToken(db: Sql, t: Omit<PersonalTokenRow, "last_used_at" | "revoked_at">): Promise<void> {
  await db.run(
    `INSERT INTO platform_personal_tokens (id, account_id, name, prefix, last_four, token_hash, created_at, expires_at)
     VALUES ($id, $account_id, $name, $prefix, $last_four, $token_hash, $created_at, $expires_at)`,
    { ...t },
  );
}

export function listPersonalTokens(db: Sql, accountId: string, after: string | null, limit: number) {
  return db.all<PersonalTokenRow>(
    "SELECT * FROM platform_personal_tokens WHERE account_id = ? AND (CAST(? AS TEXT) IS NULL OR id > ?) ORDER BY id LIMIT ?",
    accountId,
    after,
    after,
    limit,
  );
}

export function revokePersonalToken(db: Sql, accountId: string, id: string, now: string): Promise<number> {
  return db.run("UPDATE platform_personal_tokens SET revoked_at = ? WHERE account_id = ? AND id = ? AND revoked_at IS NULL", now, accountId, id);
}

export const personalTokenById = (db: Sql, accountId: string, id: string) =>
  db.get<PersonalTokenRow>("SELECT * FROM platform_personal_tokens WHERE account_id = ? AND id = ?", accountId, id);

/** Same throttle as API keys: at most one write a minute per token. */
export async function touchPersonalToken(db: Sql, id: string, now: string, notSince: string): Promise<void> {
  await db.run("UPDATE platform_personal_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)", now, id, notSince);
}
