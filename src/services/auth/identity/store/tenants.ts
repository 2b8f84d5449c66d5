/** SQL for tenants inside an App and their members. */
import type { Sql } from "../../../../core/db";

export type TenantStatus = "active" | "suspended" | "archived";

export interface TenantRow {
  id: string;
  app_id: string;
  display_id: string;
  slug: string;
  display_name: string;
  status: TenantStatus;
  metadata: string;
  created_at: string;
  updated_at: string;
}

/** A membership row with its role's name (the member view needs both). */
export interface MemberRow {
  id: string;
  tenant_id: string;
  user_id: string;
  role_id: string | null;
  role_name: string | null;
  invited_by: string | null;
  joined_at: string;
}

/** A tenant by UUID or tnt_ display id, inside one App. */
export const tenantByRef = (db: Sql, appId: string, ref: string) =>
  db.get<TenantRow>("SELECT * FROM auth_tenants WHERE app_id = ? AND (id = ? OR display_id = ?)", appId, ref, ref);

/** The user's membership of a tenant with the role's name and permissions (for token claims). */
export const membershipClaims = (db: Sql, tenantId: string, userId: string) =>
  db.get<{ role_name: string | null; role_permissions: string | null }>(
    `SELECT (SELECT name FROM auth_roles r WHERE r.id = m.role_id) AS role_name,
            (SELECT permissions FROM auth_roles r WHERE r.id = m.role_id) AS role_permissions
     FROM auth_tenant_members m WHERE m.tenant_id = ? AND m.user_id = ?`,
    tenantId,
    userId,
  );

// --- tenants ----------------------------------------------------------------------------

export async function insertTenant(db: Sql, t: TenantRow): Promise<void> {
  await db.run(
    `INSERT INTO auth_tenants (id, app_id, display_id, slug, display_name, status, metadata, created_at, updated_at)
     VALUES ($id, $app_id, $display_id, $slug, $display_name, $status, $metadata, $created_at, $updated_at)`,
    { ...t },
  );
}

/** Case-insensitive (the column is NOCASE), optionally ignoring one tenant (its own slug on update). */
export const tenantSlugTaken = async (db: Sql, appId: string, slug: string, exceptId: string | null) =>
  !!(await db.get<{ x: number }>("SELECT 1 AS x FROM auth_tenants WHERE app_id = ? AND slug = ? AND id <> ?", appId, slug, exceptId ?? ""));

export const displayIdTaken = async (db: Sql, displayId: string) => !!(await db.get<{ x: number }>("SELECT 1 AS x FROM auth_tenants WHERE display_id = ?", displayId));

export async function updateTenant(db: Sql, id: string, f: Partial<Pick<TenantRow, "slug" | "display_name" | "status" | "metadata">>, now: string): Promise<void> {
  const keys = Object.keys(f) as (keyof typeof f)[];
  const sets = keys.map((k) => `${k} = $${k}`).concat("updated_at = $updated_at").join(", ");
  await db.run(`UPDATE auth_tenants SET ${sets} WHERE id = $id`, { ...f, id, updated_at: now });
}

/** Memberships go with it (ON DELETE CASCADE); users are untouched. */
export const deleteTenant = (db: Sql, id: string) => db.run("DELETE FROM auth_tenants WHERE id = ?", id);

/** Keyset page, newest first: rows strictly after (created_at, id) in DESC order. */
export function listTenants(db: Sql, appId: string, after: { c: string; i: string } | null, status: TenantStatus | null, limit: number) {
  const where = ["app_id = $app"];
  if (status) where.push("status = $status");
  if (after) where.push("(created_at < $c OR (created_at = $c AND id < $i))");
  return db.all<TenantRow>(`SELECT * FROM auth_tenants WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT $limit`, {
    app: appId,
    limit,
    ...(status ? { status } : {}),
    ...(after ? { c: after.c, i: after.i } : {}),
  });
}

// --- members ----------------------------------------------------------------------------

const MEMBER = `SELECT m.id, m.tenant_id, m.user_id, m.role_id, m.invited_by, m.joined_at,
  (SELECT name FROM auth_roles r WHERE r.id = m.role_id) AS role_name
  FROM auth_tenant_members m`;

export async function insertMember(db: Sql, m: Omit<MemberRow, "role_name">): Promise<void> {
  await db.run(
    `INSERT INTO auth_tenant_members (id, tenant_id, user_id, role_id, invited_by, joined_at)
     VALUES ($id, $tenant_id, $user_id, $role_id, $invited_by, $joined_at)`,
    { ...m },
  );
}

export const memberOf = (db: Sql, tenantId: string, userId: string) => db.get<MemberRow>(`${MEMBER} WHERE m.tenant_id = ? AND m.user_id = ?`, tenantId, userId);

export const setMemberRole = (db: Sql, id: string, roleId: string | null) => db.run("UPDATE auth_tenant_members SET role_id = ? WHERE id = ?", roleId, id);

export const deleteMember = (db: Sql, id: string) => db.run("DELETE FROM auth_tenant_members WHERE id = ?", id);

/** Keyset page of a tenant's members, most recently joined first. */
export function listMembers(db: Sql, tenantId: string, after: { j: string; i: string } | null, limit: number) {
  if (after) {
    return db.all<MemberRow>(
      `${MEMBER} WHERE m.tenant_id = ? AND (m.joined_at < ? OR (m.joined_at = ? AND m.id < ?)) ORDER BY m.joined_at DESC, m.id DESC LIMIT ?`,
      tenantId,
      after.j,
      after.j,
      after.i,
      limit,
    );
  }
  return db.all<MemberRow>(`${MEMBER} WHERE m.tenant_id = ? ORDER BY m.joined_at DESC, m.id DESC LIMIT ?`, tenantId, limit);
}

// --- sessions scoped to a tenant ----------------------------------------------------------

/**
 * Revokes live sessions signed in to a tenant (all of them, or one user's), so a refresh
 * cannot mint tid/trole tokens for a membership or tenant that no longer allows it.
 */
export function revokeTenantSessions(db: Sql, tenantId: string, userId: string | null, now: string): Promise<number> {
  if (userId) return db.run("UPDATE auth_sessions SET revoked_at = ? WHERE tenant_id = ? AND user_id = ? AND revoked_at IS NULL", now, tenantId, userId);
  return db.run("UPDATE auth_sessions SET revoked_at = ? WHERE tenant_id = ? AND revoked_at IS NULL", now, tenantId);
}
