/** SQL for workspace members (invitations: identity/store/invitations.ts). */
import type { Sql } from "../../../../core/db";

export interface MemberRow {
  id: string;
  workspace_id: string;
  account_id: string;
  email: string;
  username: string;
  display_name: string | null;
  role_id: string;
  role_name: string;
  role_policy: string;
  created_at: string;
}

const MEMBER_SELECT = `SELECT m.id, m.workspace_id, m.account_id, a.email, a.username, a.display_name,
         m.role_id, r.name AS role_name, r.policy AS role_policy, m.created_at
  FROM platform_members m
  JOIN platform_accounts a ON a.id = m.account_id
  JOIN platform_roles r ON r.id = m.role_id`;

/** Members of a workspace, keyset-paged by member id (UUIDv7: join order). */
export const listMembers = (db: Sql, workspaceId: string, after: string | null, limit: number) =>
  db.all<MemberRow>(`${MEMBER_SELECT} WHERE m.workspace_id = ? AND (CAST(? AS TEXT) IS NULL OR m.id > ?) ORDER BY m.id LIMIT ?`, workspaceId, after, after, limit);

/** Scoped to the workspace, so another workspace's member id is simply not found. */
export const memberById = (db: Sql, workspaceId: string, memberId: string) =>
  db.get<MemberRow>(`${MEMBER_SELECT} WHERE m.workspace_id = ? AND m.id = ?`, workspaceId, memberId);

export const memberOfAccount = (db: Sql, workspaceId: string, accountId: string) =>
  db.get<MemberRow>(`${MEMBER_SELECT} WHERE m.workspace_id = ? AND m.account_id = ?`, workspaceId, accountId);

/** Account emails are case-insensitive (NOCASE / citext), so this matches whatever case the inviter typed. */
export const isMemberByEmail = async (db: Sql, workspaceId: string, email: string) =>
  (await db.get("SELECT 1 AS x FROM platform_members m JOIN platform_accounts a ON a.id = m.account_id WHERE m.workspace_id = ? AND a.email = ?", workspaceId, email)) !== null;

export const countMembersWithRole = async (db: Sql, workspaceId: string, roleId: string) =>
  (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM platform_members WHERE workspace_id = ? AND role_id = ?", workspaceId, roleId))!.n;

export async function setMemberRole(db: Sql, memberId: string, roleId: string, now: string): Promise<void> {
  await db.run("UPDATE platform_members SET role_id = ?, updated_at = ? WHERE id = ?", roleId, now, memberId);
}

export async function deleteMember(db: Sql, memberId: string): Promise<void> {
  await db.run("DELETE FROM platform_members WHERE id = ?", memberId);
}

/**
 * Holds the workspace's row until the transaction ends, so the owner-count checks of one
 * workspace run one at a time (PostgreSQL; SQLite's write transactions already do).
 */
export async function lockWorkspace(db: Sql, workspaceId: string): Promise<void> {
  if (db.engine === "postgres") await db.get("SELECT id FROM platform_workspaces WHERE id = ? FOR NO KEY UPDATE", workspaceId);
}
