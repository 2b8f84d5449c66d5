/** SQL for workspace roles: the shared built-ins (workspace_id NULL) and custom roles. */
import type { Sql } from "../../../../core/db";
import type { RoleRow } from "./workspaces";

export type { RoleRow } from "./workspaces";

/** The roles a workspace can use. */
const VISIBLE = "(workspace_id IS NULL OR workspace_id = ?)";

/**
 * Built-ins and the workspace's custom roles, keyset-paged by id. Built-in ids are
 * 00000000-..., below any UUIDv7, so the built-ins come first.
 */
export const listRoles = (db: Sql, workspaceId: string, after: string | null, limit: number) =>
  db.all<RoleRow>(`SELECT * FROM platform_roles WHERE ${VISIBLE} AND (CAST(? AS TEXT) IS NULL OR id > ?) ORDER BY id LIMIT ?`, workspaceId, after, after, limit);

/** A role usable in the workspace; another workspace's custom role is not found. */
export const visibleRole = (db: Sql, workspaceId: string, roleId: string) =>
  db.get<RoleRow>(`SELECT * FROM platform_roles WHERE ${VISIBLE} AND id = ?`, workspaceId, roleId);

/** Names are unique per workspace including the built-ins (so "owner" can never be shadowed). */
export const roleNameTaken = async (db: Sql, workspaceId: string, name: string, exceptId: string | null = null) =>
  (await db.get(`SELECT 1 AS x FROM platform_roles WHERE ${VISIBLE} AND name = ? AND id IS DISTINCT FROM ?`, workspaceId, name, exceptId)) !== null;

export async function insertRole(db: Sql, r: Omit<RoleRow, "builtin">): Promise<void> {
  await db.run(
    `INSERT INTO platform_roles (id, workspace_id, name, description, policy, builtin, created_at, updated_at)
     VALUES ($id, $workspace_id, $name, $description, $policy, 0, $created_at, $updated_at)`,
    { ...r },
  );
}

/** Built-ins are never written: the WHERE keeps them out even if a caller forgets to check. */
export async function updateRole(db: Sql, id: string, f: { name: string; description: string; policy: string; updated_at: string }): Promise<void> {
  await db.run("UPDATE platform_roles SET name = $name, description = $description, policy = $policy, updated_at = $updated_at WHERE id = $id AND builtin = 0", {
    id,
    ...f,
  });
}

/** Open invitations still offering the role (revoked/accepted/expired ones are history). */
export const countLiveInvitationsWithRole = async (db: Sql, roleId: string, nowMs: number) =>
  (await db.get<{ n: number }>(
    "SELECT COUNT(*) AS n FROM platform_invitations WHERE role_id = ? AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?",
    roleId,
    nowMs,
  ))!.n;

/**
 * Deletes a custom role. Finished invitations still reference it (role_id is a foreign
 * key), so they go first; the audit log keeps their history.
 */
export async function deleteRole(db: Sql, id: string): Promise<void> {
  await db.run("DELETE FROM platform_invitations WHERE role_id = ?", id);
  await db.run("DELETE FROM platform_roles WHERE id = ? AND builtin = 0", id);
}
