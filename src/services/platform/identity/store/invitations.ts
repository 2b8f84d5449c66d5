/** SQL for workspace invitations (members: workspaces/store/members.ts). */
import type { Sql } from "../../../../core/db";

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

export async function insertInvitation(
  db: Sql,
  i: { id: string; workspace_id: string; email: string; role_id: string; token_hash: string; invited_by: string; created_at: string; expires_at: number },
): Promise<void> {
  await db.run(
    `INSERT INTO platform_invitations (id, workspace_id, email, role_id, token_hash, invited_by, created_at, expires_at)
     VALUES ($id, $workspace_id, $email, $role_id, $token_hash, $invited_by, $created_at, $expires_at)`,
    { ...i },
  );
}

/** Revokes the open invitation of an email (expired or not); returns its id, if there was one. */
export async function revokeOpenInvitationFor(db: Sql, workspaceId: string, email: string, now: string): Promise<string | null> {
  const row = await db.get<{ id: string }>(
    "SELECT id FROM platform_invitations WHERE workspace_id = ? AND email = ? AND accepted_at IS NULL AND revoked_at IS NULL",
    workspaceId,
    email,
  );
  if (!row) return null;
  await db.run("UPDATE platform_invitations SET revoked_at = ? WHERE id = ?", now, row.id);
  return row.id;
}

export const liveInvitationById = (db: Sql, workspaceId: string, id: string, nowMs: number) =>
  db.get<InvitationRow>(`${INVITATION_SELECT} WHERE i.workspace_id = ? AND i.id = ? AND ${LIVE}`, workspaceId, id, nowMs);

export const liveInvitationByTokenHash = (db: Sql, tokenHash: string, nowMs: number) =>
  db.get<InvitationRow>(`${INVITATION_SELECT} WHERE i.token_hash = ? AND ${LIVE}`, tokenHash, nowMs);

/** Pending invitations of a workspace, keyset-paged by id (UUIDv7: creation order). */
export const listLiveInvitations = (db: Sql, workspaceId: string, nowMs: number, after: string | null, limit: number) =>
  db.all<InvitationRow>(
    `${INVITATION_SELECT} WHERE i.workspace_id = ? AND ${LIVE} AND (CAST(? AS TEXT) IS NULL OR i.id > ?) ORDER BY i.id LIMIT ?`,
    workspaceId,
    nowMs,
    after,
    after,
    limit,
  );

/** Whether any workspace holds a live invitation for the address (CONSOLE_SIGNUP=invite_only). */
export const hasLiveInvitationFor = async (db: Sql, email: string, nowMs: number) =>
  (await db.get<{ one: number }>(`SELECT 1 AS one FROM platform_invitations i WHERE i.email = ? AND ${LIVE} LIMIT 1`, email, nowMs)) !== null;

export async function revokeInvitation(db: Sql, id: string, now: string): Promise<void> {
  await db.run("UPDATE platform_invitations SET revoked_at = ? WHERE id = ?", now, id);
}

/** Single use: only the caller that flips accepted_at from NULL gets true. */
export async function markInvitationAccepted(db: Sql, id: string, now: string): Promise<boolean> {
  return (await db.run("UPDATE platform_invitations SET accepted_at = ? WHERE id = ? AND accepted_at IS NULL AND revoked_at IS NULL", now, id)) === 1;
}
