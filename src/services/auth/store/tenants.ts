/** SQL for tenants inside an App and their members. */
import type { Db } from "../../../core/db";

export interface TenantRow {
  id: string;
  app_id: string;
  display_id: string;
  slug: string;
  display_name: string;
  status: "active" | "suspended" | "archived";
  metadata: string;
  created_at: string;
  updated_at: string;
}

/** A tenant by UUID or tnt_ display id, inside one App. */
export const tenantByRef = (db: Db, appId: string, ref: string) =>
  db.query<TenantRow, [string, string, string]>("SELECT * FROM auth_tenants WHERE app_id = ? AND (id = ? OR display_id = ?)").get(appId, ref, ref);

/** The user's membership of a tenant with the role's name and permissions (for token claims). */
export const membershipClaims = (db: Db, tenantId: string, userId: string) =>
  db
    .query<{ role_name: string | null; role_permissions: string | null }, [string, string]>(
      `SELECT (SELECT name FROM auth_roles r WHERE r.id = m.role_id) AS role_name,
              (SELECT permissions FROM auth_roles r WHERE r.id = m.role_id) AS role_permissions
       FROM auth_tenant_members m WHERE m.tenant_id = ? AND m.user_id = ?`,
    )
    .get(tenantId, userId);
