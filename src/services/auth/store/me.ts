/** SQL the end user's own profile (/me) needs beyond store/users.ts. */
import type { Db } from "../../../core/db";

export interface MyTenantRow {
  id: string;
  display_id: string;
  slug: string;
  display_name: string;
  status: string;
  role: string | null;
}

/** The tenants a user belongs to, with their role there, oldest membership first. */
export const tenantsOfUser = (db: Db, appId: string, userId: string) =>
  db
    .query<MyTenantRow, [string, string]>(
      `SELECT t.id, t.display_id, t.slug, t.display_name, t.status,
              (SELECT name FROM auth_roles r WHERE r.id = m.role_id) AS role
       FROM auth_tenant_members m JOIN auth_tenants t ON t.id = m.tenant_id
       WHERE t.app_id = ? AND m.user_id = ? ORDER BY m.joined_at, m.id`,
    )
    .all(appId, userId);

/** Enabled MFA factors: confirmed and not disabled. */
export const enabledFactorCount = (db: Db, userId: string) =>
  db
    .query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM auth_mfa_factors WHERE user_id = ? AND confirmed_at IS NOT NULL AND disabled_at IS NULL")
    .get(userId)!.n;

/** Revokes every live session of the user except `keepSessionId`. */
export const revokeOtherSessions = (db: Db, userId: string, keepSessionId: string, now: string) =>
  db.query("UPDATE auth_sessions SET revoked_at = ? WHERE user_id = ? AND id <> ? AND revoked_at IS NULL").run(now, userId, keepSessionId).changes;
