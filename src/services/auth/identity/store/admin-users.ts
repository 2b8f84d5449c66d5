/** SQL the admin user routes need beyond store/users.ts. */
import type { Sql } from "../../../../core/db";

/** Bumps updated_at when only a contact changed (the user row itself did not). */
export const touchUser = (db: Sql, id: string, now: string) => db.run("UPDATE auth_users SET updated_at = ? WHERE id = ?", now, id);

/** Marks the primary email unverified, keeping its address. */
export const unverifyPrimaryEmail = (db: Sql, userId: string) =>
  db.run("UPDATE auth_contacts SET verified_at = NULL WHERE user_id = ? AND kind = 'email' AND is_primary = 1", userId);

/** The user's live sessions (not revoked, not expired), newest first (at most `limit`). */
export const liveSessionsOfUser = (db: Sql, appId: string, userId: string, nowMs: number, limit: number) =>
  db.all<{ id: string; tenant_id: string | null; amr: string; mfa_at: string | null; created_at: string; expires_at: number; ip: string | null; user_agent: string | null }>(
    "SELECT id, tenant_id, amr, mfa_at, created_at, expires_at, ip, user_agent FROM auth_sessions WHERE app_id = ? AND user_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at DESC, id DESC LIMIT ?",
    appId,
    userId,
    nowMs,
    limit,
  );

/** Revokes one live session of the user; 1 when it was live. */
export const revokeUserSession = (db: Sql, appId: string, userId: string, sessionId: string, now: string, nowMs: number) =>
  db.run("UPDATE auth_sessions SET revoked_at = ? WHERE id = ? AND app_id = ? AND user_id = ? AND revoked_at IS NULL AND expires_at > ?", now, sessionId, appId, userId, nowMs);

/** Removes every MFA factor, recovery code and open sign-in challenge of the user; resolves to the number of factors removed. */
export async function deleteUserMfa(db: Sql, appId: string, userId: string): Promise<number> {
  const n = await db.run("DELETE FROM auth_mfa_factors WHERE app_id = ? AND user_id = ?", appId, userId);
  await db.run("DELETE FROM auth_recovery_codes WHERE user_id = ?", userId);
  await db.run("DELETE FROM auth_mfa_challenges WHERE app_id = ? AND user_id = ? AND consumed_at IS NULL", appId, userId);
  return n;
}
