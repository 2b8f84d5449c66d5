/**
 * The reads tenancy makes on every request (workspace by id or slug, membership with its
 * role's policy, enabled services, API keys and personal tokens by hash) and the audit
 * insert every mutation makes. The tables are the platform's (services/platform manages
 * workspaces, members, roles and keys, and reads the audit log); these are the queries the
 * kernel itself runs on them.
 */
import type { Sql } from "../../core/db";

// --- workspaces, memberships, enabled services ----------------------------------------

export interface WorkspaceRow {
  id: string;
  slug: string;
  display_name: string;
  created_by: string;
  status: string;
  settings: string;
  avatar_key: string | null;
  avatar_type: string | null;
  created_at: string;
  updated_at: string;
}

export const workspaceBySlug = (db: Sql, slug: string) => db.get<WorkspaceRow>("SELECT * FROM platform_workspaces WHERE slug = ?", slug);

export const workspaceById = (db: Sql, id: string) => db.get<WorkspaceRow>("SELECT * FROM platform_workspaces WHERE id = ?", id);

export interface MembershipRow {
  id: string;
  workspace_id: string;
  account_id: string;
  role_id: string;
  role_name: string;
  role_policy: string;
}

/** Membership with the role's policy: the authorization lookup of every workspace route. */
export const membership = (db: Sql, workspaceId: string, accountId: string) =>
  db.get<MembershipRow>(
    // Subqueries rather than a JOIN: several times cheaper in bun:sqlite (every workspace request runs this).
    `SELECT m.id, m.workspace_id, m.account_id, m.role_id,
            (SELECT r.name FROM platform_roles r WHERE r.id = m.role_id) AS role_name,
            (SELECT r.policy FROM platform_roles r WHERE r.id = m.role_id) AS role_policy
     FROM platform_members m WHERE m.workspace_id = ? AND m.account_id = ?`,
    workspaceId,
    accountId,
  );

export const enabledServices = async (db: Sql, workspaceId: string) =>
  (await db.all<{ service: string }>("SELECT service FROM platform_workspace_services WHERE workspace_id = ? ORDER BY service", workspaceId)).map((r) => r.service);

// --- API keys and personal access tokens ---------------------------------------------

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

/** Same throttle as API keys: at most one write a minute per token. */
export async function touchPersonalToken(db: Sql, id: string, now: string, notSince: string): Promise<void> {
  await db.run("UPDATE platform_personal_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)", now, id, notSince);
}

// --- audit log -------------------------------------------------------------------------

export interface AuditRow {
  id: string;
  workspace_id: string | null;
  actor_type: string;
  actor_id: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  user_agent: string | null;
  metadata: string;
  created_at: string;
}

export async function insertAudit(db: Sql, r: AuditRow): Promise<void> {
  await db.run(
    `INSERT INTO platform_audit_log (id, workspace_id, actor_type, actor_id, action, target_type, target_id, ip, user_agent, metadata, created_at)
     VALUES ($id, $workspace_id, $actor_type, $actor_id, $action, $target_type, $target_id, $ip, $user_agent, $metadata, $created_at)`,
    { ...r },
  );
}
