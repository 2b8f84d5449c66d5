/** SQL for workspace API keys and personal access tokens. */
import type { Sql } from "../../../core/db";
import type { ApiKeyRow, PersonalTokenRow } from "../../../kernel/tenancy";

// The lookups by hash that resolve a credential are the kernel's (kernel/tenancy/store.ts).
export type { ApiKeyRow, PersonalTokenRow } from "../../../kernel/tenancy";

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

