/** SQL for workspace API keys and personal access tokens. */
import type { Db } from "../../../core/db";

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
export const apiKeyForAuth = (db: Db, keyHash: string) =>
  db
    .query<ApiKeyAuthRow, [string]>(
      // Subqueries rather than JOINs: several times cheaper in bun:sqlite on this hot path.
      `SELECT k.*,
              (SELECT r.policy FROM platform_roles r WHERE r.id =
                 (SELECT m.role_id FROM platform_members m WHERE m.workspace_id = k.workspace_id AND m.account_id = k.created_by)) AS minter_policy,
              (SELECT a.status FROM platform_accounts a WHERE a.id = k.created_by) AS minter_status
       FROM platform_api_keys k WHERE k.key_hash = ?`,
    )
    .get(keyHash);

export function insertApiKey(db: Db, k: Omit<ApiKeyRow, "last_used_at" | "revoked_at">) {
  db.query(
    `INSERT INTO platform_api_keys (id, workspace_id, name, prefix, last_four, key_hash, policy, created_by, created_at, expires_at)
     VALUES ($id, $workspace_id, $name, $prefix, $last_four, $key_hash, $policy, $created_by, $created_at, $expires_at)`,
  ).run(k as any);
}

export const apiKeyById = (db: Db, workspaceId: string, id: string) =>
  db.query<ApiKeyRow, [string, string]>("SELECT * FROM platform_api_keys WHERE workspace_id = ? AND id = ?").get(workspaceId, id);

export function listApiKeys(db: Db, workspaceId: string, after: string | null, limit: number) {
  return db
    .query<ApiKeyRow, [string, string | null, string | null, number]>(
      "SELECT * FROM platform_api_keys WHERE workspace_id = ? AND (? IS NULL OR id > ?) ORDER BY id LIMIT ?",
    )
    .all(workspaceId, after, after, limit);
}

export function revokeApiKey(db: Db, workspaceId: string, id: string, now: string) {
  return db.query("UPDATE platform_api_keys SET revoked_at = ? WHERE workspace_id = ? AND id = ? AND revoked_at IS NULL").run(now, workspaceId, id).changes;
}

/** last_used_at is advisory: written at most once a minute per key to keep reads cheap. */
export function touchApiKey(db: Db, id: string, now: string, notSince: string) {
  db.query("UPDATE platform_api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)").run(now, id, notSince);
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

export const personalTokenForAuth = (db: Db, tokenHash: string) =>
  db
    .query<PersonalTokenRow & { status: string; is_operator: number }, [string]>(
      `SELECT t.*, (SELECT a.status FROM platform_accounts a WHERE a.id = t.account_id) AS status,
              (SELECT a.is_operator FROM platform_accounts a WHERE a.id = t.account_id) AS is_operator
       FROM platform_personal_tokens t WHERE t.token_hash = ?`,
    )
    .get(tokenHash);

export function insertPersonalToken(db: Db, t: Omit<PersonalTokenRow, "last_used_at" | "revoked_at">) {
  db.query(
    `INSERT INTO platform_personal_tokens (id, account_id, name, prefix, last_four, token_hash, created_at, expires_at)
     VALUES ($id, $account_id, $name, $prefix, $last_four, $token_hash, $created_at, $expires_at)`,
  ).run(t as any);
}

export function listPersonalTokens(db: Db, accountId: string, after: string | null, limit: number) {
  return db
    .query<PersonalTokenRow, [string, string | null, string | null, number]>(
      "SELECT * FROM platform_personal_tokens WHERE account_id = ? AND (? IS NULL OR id > ?) ORDER BY id LIMIT ?",
    )
    .all(accountId, after, after, limit);
}

export function revokePersonalToken(db: Db, accountId: string, id: string, now: string) {
  return db.query("UPDATE platform_personal_tokens SET revoked_at = ? WHERE account_id = ? AND id = ? AND revoked_at IS NULL").run(now, accountId, id).changes;
}

export const personalTokenById = (db: Db, accountId: string, id: string) =>
  db.query<PersonalTokenRow, [string, string]>("SELECT * FROM platform_personal_tokens WHERE account_id = ? AND id = ?").get(accountId, id);

/** Same throttle as API keys: at most one write a minute per token. */
export function touchPersonalToken(db: Db, id: string, now: string, notSince: string) {
  db.query("UPDATE platform_personal_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)").run(now, id, notSince);
}
