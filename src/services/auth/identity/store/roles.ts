/** SQL for App roles and the App's permission catalogue. */
import type { Sql } from "../../../../core/db";

export interface RoleRow {
  id: string;
  app_id: string;
  name: string;
  description: string;
  permissions: string;
  created_at: string;
  updated_at: string;
}

export interface PermissionRow {
  app_id: string;
  name: string;
  description: string;
  created_at: string;
}

// auth_roles.name is COLLATE NOCASE (citext on PostgreSQL), so `name = ?` and the UNIQUE (app_id, name) are case-insensitive.
export const roleByName = (db: Sql, appId: string, name: string) => db.get<RoleRow>("SELECT * FROM auth_roles WHERE app_id = ? AND name = ?", appId, name);

export const roleById = (db: Sql, appId: string, id: string) => db.get<RoleRow>("SELECT * FROM auth_roles WHERE app_id = ? AND id = ?", appId, id);

/** Roles by name (case-insensitive order), keyset after `afterName`. */
export const listRoles = (db: Sql, appId: string, afterName: string | null, limit: number) =>
  db.all<RoleRow>("SELECT * FROM auth_roles WHERE app_id = ? AND (CAST(? AS TEXT) IS NULL OR name > ?) ORDER BY name LIMIT ?", appId, afterName, afterName, limit);

export async function insertRole(db: Sql, r: RoleRow): Promise<void> {
  await db.run(
    `INSERT INTO auth_roles (id, app_id, name, description, permissions, created_at, updated_at)
     VALUES ($id, $app_id, $name, $description, $permissions, $created_at, $updated_at)`,
    { ...r },
  );
}

export async function updateRole(db: Sql, id: string, f: Pick<RoleRow, "name" | "description" | "permissions" | "updated_at">): Promise<void> {
  await db.run("UPDATE auth_roles SET name = $name, description = $description, permissions = $permissions, updated_at = $updated_at WHERE id = $id", { id, ...f });
}

export const deleteRole = (db: Sql, id: string) => db.run("DELETE FROM auth_roles WHERE id = ?", id);

/** Another role of the App already called `name` (case-insensitive)? */
export const roleNameTaken = async (db: Sql, appId: string, name: string, exceptId: string | null) =>
  !!(await db.get<{ x: number }>("SELECT 1 AS x FROM auth_roles WHERE app_id = ? AND name = ? AND id <> ?", appId, name, exceptId ?? ""));

/** Who holds a role: app-wide users, and tenant members (tenant UUID, as in the tenant events). */
export async function roleHolders(db: Sql, roleId: string) {
  const users = (await db.all<{ id: string }>("SELECT id FROM auth_users WHERE role_id = ?", roleId)).map((r) => r.id);
  const members = await db.all<{ user_id: string; tenant_id: string }>("SELECT user_id, tenant_id FROM auth_tenant_members WHERE role_id = ?", roleId);
  return { users, members };
}

/** Sets a user's app-wide role; false when the user is not in the App. */
export const setUserRole = async (db: Sql, appId: string, userId: string, roleId: string | null, now: string) =>
  (await db.run("UPDATE auth_users SET role_id = ?, updated_at = ? WHERE app_id = ? AND id = ?", roleId, now, appId, userId)) > 0;

// ---------------------------------------------------------------- permission catalogue

export const permissionByName = (db: Sql, appId: string, name: string) =>
  db.get<PermissionRow>("SELECT * FROM auth_permissions WHERE app_id = ? AND name = ?", appId, name);

export const listPermissions = (db: Sql, appId: string, afterName: string | null, limit: number) =>
  db.all<PermissionRow>("SELECT * FROM auth_permissions WHERE app_id = ? AND (CAST(? AS TEXT) IS NULL OR name > ?) ORDER BY name LIMIT ?", appId, afterName, afterName, limit);

export async function insertPermission(db: Sql, p: PermissionRow): Promise<void> {
  await db.run("INSERT INTO auth_permissions (app_id, name, description, created_at) VALUES ($app_id, $name, $description, $created_at)", { ...p });
}

export const deletePermission = (db: Sql, appId: string, name: string) => db.run("DELETE FROM auth_permissions WHERE app_id = ? AND name = ?", appId, name);

/** Which of `names` are in the App's catalogue (a role lists at most 100, so one IN list). */
export async function registeredPermissions(db: Sql, appId: string, names: string[]): Promise<Set<string>> {
  if (!names.length) return new Set();
  const rows = await db.all<{ name: string }>(`SELECT name FROM auth_permissions WHERE app_id = ? AND name IN (${names.map(() => "?").join(", ")})`, appId, ...names);
  return new Set(rows.map((r) => r.name));
}

/** Names of the App's roles that list `permission` literally (wildcards do not count). */
export async function rolesUsingPermission(db: Sql, appId: string, permission: string): Promise<string[]> {
  const elements = db.engine === "postgres" ? "jsonb_array_elements_text(r.permissions::jsonb) AS e(value)" : "json_each(r.permissions)";
  const rows = await db.all<{ name: string }>(
    `SELECT name FROM auth_roles r WHERE app_id = ? AND EXISTS (SELECT 1 FROM ${elements} WHERE value = ?) ORDER BY name`,
    appId,
    permission,
  );
  return rows.map((r) => r.name);
}
