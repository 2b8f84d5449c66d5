/** SQL for App roles and the App's permission catalogue. */
import type { Db } from "../../../core/db";

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

// auth_roles.name is COLLATE NOCASE, so `name = ?` and the UNIQUE (app_id, name) are case-insensitive.
export const roleByName = (db: Db, appId: string, name: string) =>
  db.query<RoleRow, [string, string]>("SELECT * FROM auth_roles WHERE app_id = ? AND name = ?").get(appId, name);

export const roleById = (db: Db, appId: string, id: string) =>
  db.query<RoleRow, [string, string]>("SELECT * FROM auth_roles WHERE app_id = ? AND id = ?").get(appId, id);

/** Roles by name (case-insensitive order), keyset after `afterName`. */
export const listRoles = (db: Db, appId: string, afterName: string | null, limit: number) =>
  db
    .query<RoleRow, [string, string | null, string | null, number]>(
      "SELECT * FROM auth_roles WHERE app_id = ? AND (? IS NULL OR name > ?) ORDER BY name LIMIT ?",
    )
    .all(appId, afterName, afterName, limit);

export function insertRole(db: Db, r: RoleRow) {
  db.query(
    `INSERT INTO auth_roles (id, app_id, name, description, permissions, created_at, updated_at)
     VALUES ($id, $app_id, $name, $description, $permissions, $created_at, $updated_at)`,
  ).run(r as any);
}

export function updateRole(db: Db, id: string, f: Pick<RoleRow, "name" | "description" | "permissions" | "updated_at">) {
  db.query("UPDATE auth_roles SET name = $name, description = $description, permissions = $permissions, updated_at = $updated_at WHERE id = $id").run({ id, ...f } as any);
}

export const deleteRole = (db: Db, id: string) => db.query("DELETE FROM auth_roles WHERE id = ?").run(id).changes;

/** Another role of the App already called `name` (case-insensitive)? */
export const roleNameTaken = (db: Db, appId: string, name: string, exceptId: string | null) =>
  !!db
    .query<{ x: number }, [string, string, string | null]>("SELECT 1 AS x FROM auth_roles WHERE app_id = ? AND name = ? AND id IS NOT ?")
    .get(appId, name, exceptId);

/** Who holds a role: app-wide users, and tenant members (tenant UUID, as in the tenant events). */
export function roleHolders(db: Db, roleId: string) {
  const users = db.query<{ id: string }, [string]>("SELECT id FROM auth_users WHERE role_id = ?").all(roleId).map((r) => r.id);
  const members = db
    .query<{ user_id: string; tenant_id: string }, [string]>(
      "SELECT user_id, tenant_id FROM auth_tenant_members WHERE role_id = ?",
    )
    .all(roleId);
  return { users, members };
}

/** Sets a user's app-wide role; false when the user is not in the App. */
export const setUserRole = (db: Db, appId: string, userId: string, roleId: string | null, now: string) =>
  db.query("UPDATE auth_users SET role_id = ?, updated_at = ? WHERE app_id = ? AND id = ?").run(roleId, now, appId, userId).changes > 0;

// ---------------------------------------------------------------- permission catalogue

export const permissionByName = (db: Db, appId: string, name: string) =>
  db.query<PermissionRow, [string, string]>("SELECT * FROM auth_permissions WHERE app_id = ? AND name = ?").get(appId, name);

export const listPermissions = (db: Db, appId: string, afterName: string | null, limit: number) =>
  db
    .query<PermissionRow, [string, string | null, string | null, number]>(
      "SELECT * FROM auth_permissions WHERE app_id = ? AND (? IS NULL OR name > ?) ORDER BY name LIMIT ?",
    )
    .all(appId, afterName, afterName, limit);

export function insertPermission(db: Db, p: PermissionRow) {
  db.query("INSERT INTO auth_permissions (app_id, name, description, created_at) VALUES ($app_id, $name, $description, $created_at)").run(p as any);
}

export const deletePermission = (db: Db, appId: string, name: string) =>
  db.query("DELETE FROM auth_permissions WHERE app_id = ? AND name = ?").run(appId, name).changes;

/** Which of `names` are in the App's catalogue. */
export const registeredPermissions = (db: Db, appId: string, names: string[]) =>
  new Set(
    db
      .query<{ name: string }, [string, string]>("SELECT name FROM auth_permissions WHERE app_id = ? AND name IN (SELECT value FROM json_each(?))")
      .all(appId, JSON.stringify(names))
      .map((r) => r.name),
  );

/** Names of the App's roles that list `permission` literally (wildcards do not count). */
export const rolesUsingPermission = (db: Db, appId: string, permission: string) =>
  db
    .query<{ name: string }, [string, string]>(
      "SELECT name FROM auth_roles r WHERE app_id = ? AND EXISTS (SELECT 1 FROM json_each(r.permissions) WHERE value = ?) ORDER BY name",
    )
    .all(appId, permission)
    .map((r) => r.name);
