/** SQL for workspace members and invitations. */
import type { Db } from "../../../core/db";

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
export const listMembers = (db: Db, workspaceId: string, after: string | null, limit: number) =>
  db
    .query<MemberRow, [string, string | null, string | null, number]>(
      `${MEMBER_SELECT} WHERE m.workspace_id = ? AND (? IS NULL OR m.id > ?) ORDER BY m.id LIMIT ?`,
    )
    .all(workspaceId, after, after, limit);

/** Scoped to the workspace, so another workspace's member id is simply not found. */
export const memberById = (db: Db, workspaceId: string, memberId: string) =>
  db.query<MemberRow, [string, string]>(`${MEMBER_SELECT} WHERE m.workspace_id = ? AND m.id = ?`).get(workspaceId, memberId);

export const memberOfAccount = (db: Db, workspaceId: string, accountId: string) =>
  db.query<MemberRow, [string, string]>(`${MEMBER_SELECT} WHERE m.workspace_id = ? AND m.account_id = ?`).get(workspaceId, accountId);

/** Account emails are NOCASE, so this matches whatever case the inviter typed. */
export const isMemberByEmail = (db: Db, workspaceId: string, email: string) =>
  !!db
    .query("SELECT 1 FROM platform_members m JOIN platform_accounts a ON a.id = m.account_id WHERE m.workspace_id = ? AND a.email = ?")
    .get(workspaceId, email);

export const countMembersWithRole = (db: Db, workspaceId: string, roleId: string) =>
  db.query<{ n: number }, [string, string]>("SELECT COUNT(*) AS n FROM platform_members WHERE workspace_id = ? AND role_id = ?").get(workspaceId, roleId)!.n;

export function setMemberRole(db: Db, memberId: string, roleId: string, now: string) {
  db.query("UPDATE platform_members SET role_id = ?, updated_at = ? WHERE id = ?").run(roleId, now, memberId);
}

export function deleteMember(db: Db, memberId: string) {
  db.query("DELETE FROM platform_members WHERE id = ?").run(memberId);
}

// --- invitations ----------------------------------------------------------------------

export interface InvitationRow {
  id: string;
  workspace_id: string;
  email: string;
  role_id: string;
  role_name: string;
  token_hash: string;
  invited_by: string;
  created_at: string;
  expires_at: number;
  accepted_at: string | null;
  revoked_at: string | null;
}

const INVITATION_SELECT = `SELECT i.*, r.name AS role_name FROM platform_invitations i JOIN platform_roles r ON r.id = i.role_id`;
/** Open and not yet expired: the only invitations that can still be accepted. */
const LIVE = "i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > ?";

export function insertInvitation(
  db: Db,
  i: { id: string; workspace_id: string; email: string; role_id: string; token_hash: string; invited_by: string; created_at: string; expires_at: number },
) {
  db.query(
    `INSERT INTO platform_invitations (id, workspace_id, email, role_id, token_hash, invited_by, created_at, expires_at)
     VALUES ($id, $workspace_id, $email, $role_id, $token_hash, $invited_by, $created_at, $expires_at)`,
  ).run(i as any);
}

/** Revokes the open invitation of an email (expired or not); returns its id, if there was one. */
export function revokeOpenInvitationFor(db: Db, workspaceId: string, email: string, now: string): string | null {
  const row = db
    .query<{ id: string }, [string, string]>(
      "SELECT id FROM platform_invitations WHERE workspace_id = ? AND email = ? AND accepted_at IS NULL AND revoked_at IS NULL",
    )
    .get(workspaceId, email);
  if (!row) return null;
  db.query("UPDATE platform_invitations SET revoked_at = ? WHERE id = ?").run(now, row.id);
  return row.id;
}

export const liveInvitationById = (db: Db, workspaceId: string, id: string, nowMs: number) =>
  db.query<InvitationRow, [string, string, number]>(`${INVITATION_SELECT} WHERE i.workspace_id = ? AND i.id = ? AND ${LIVE}`).get(workspaceId, id, nowMs);

export const liveInvitationByTokenHash = (db: Db, tokenHash: string, nowMs: number) =>
  db.query<InvitationRow, [string, number]>(`${INVITATION_SELECT} WHERE i.token_hash = ? AND ${LIVE}`).get(tokenHash, nowMs);

/** Pending invitations of a workspace, keyset-paged by id (UUIDv7: creation order). */
export const listLiveInvitations = (db: Db, workspaceId: string, nowMs: number, after: string | null, limit: number) =>
  db
    .query<InvitationRow, [string, number, string | null, string | null, number]>(
      `${INVITATION_SELECT} WHERE i.workspace_id = ? AND ${LIVE} AND (? IS NULL OR i.id > ?) ORDER BY i.id LIMIT ?`,
    )
    .all(workspaceId, nowMs, after, after, limit);

/** Whether any workspace holds a live invitation for the address (CONSOLE_SIGNUP=invite_only). */
export const hasLiveInvitationFor = (db: Db, email: string, nowMs: number) =>
  db.query<{ one: number }, [string, number]>(`SELECT 1 AS one FROM platform_invitations i WHERE i.email = ? AND ${LIVE} LIMIT 1`).get(email, nowMs) !== null;

export function revokeInvitation(db: Db, id: string, now: string) {
  db.query("UPDATE platform_invitations SET revoked_at = ? WHERE id = ?").run(now, id);
}

/** Single use: only the caller that flips accepted_at from NULL gets true. */
export function markInvitationAccepted(db: Db, id: string, now: string): boolean {
  return db.query("UPDATE platform_invitations SET accepted_at = ? WHERE id = ? AND accepted_at IS NULL AND revoked_at IS NULL").run(now, id).changes === 1;
}
