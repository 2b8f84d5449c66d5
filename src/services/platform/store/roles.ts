/** SQL for workspace roles: the shared built-ins (workspace_id NULL) and custom roles. */
import type { Db } from "../../../core/db";
import type { RoleRow } from "./workspaces";

export type { RoleRow } from "./workspaces";

/** The roles a workspace can use. */
const VISIBLE = "(workspace_id IS NULL OR workspace_id = ?)";

/**
 * Built-ins and the workspace's custom roles, keyset-paged by id. Built-in ids are
 * 00000000-..., below any UUIDv7, so the built-ins come first.
 */
export const listRoles = (db: Db, workspaceId: string, after: string | null, limit: number) =>
  db
    .query<RoleRow, [string, string | null, string | null, number]>(
      `SELECT * FROM platform_roles WHERE ${VISIBLE} AND (? IS NULL OR id > ?) ORDER BY id LIMIT ?`,
    )
    .all(workspaceId, after, after, limit);

/** A role usable in the workspace; another workspace's custom role is not found. */
export const visibleRole = (db: Db, workspaceId: string, roleId: string) =>
  db.query<RoleRow, [string, string]>(`SELECT * FROM platform_roles WHERE ${VISIBLE} AND id = ?`).get(workspaceId, roleId);

/** Names are unique per workspace including the built-ins (so "owner" can never be shadowed). */
export const roleNameTaken = (db: Db, workspaceId: string, name: string, exceptId: string | null = null) =>
  !!db.query(`SELECT 1 FROM platform_roles WHERE ${VISIBLE} AND name = ? AND id IS NOT ?`).get(workspaceId, name, exceptId);

export function insertRole(db: Db, r: Omit<RoleRow, "builtin">) {
  db.query(
    `INSERT INTO platform_roles (id, workspace_id, name, description, policy, builtin, created_at, updated_at)
     VALUES ($id, $workspace_id, $name, $description, $policy, 0, $created_at, $updated_at)`,
  ).run(r as any);
}

/** Built-ins are never written: the WHERE keeps them out even if a caller forgets to check. */
export function updateRole(db: Db, id: string, f: { name: string; description: string; policy: string; updated_at: string }) {
  db.query("UPDATE platform_roles SET name = $name, description = $description, policy = $policy, updated_at = $updated_at WHERE id = $id AND builtin = 0").run({
    id,
    ...f,
  } as any);
}

/** Open invitations still offering the role (revoked/accepted/expired ones are history). */
export const countLiveInvitationsWithRole = (db: Db, roleId: string, nowMs: number) =>
  db
    .query<{ n: number }, [string, number]>(
      "SELECT COUNT(*) AS n FROM platform_invitations WHERE role_id = ? AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?",
    )
    .get(roleId, nowMs)!.n;

/**
 * Deletes a custom role. Finished invitations still reference it (role_id is a foreign
 * key), so they go first; the audit log keeps their history.
 */
export function deleteRole(db: Db, id: string) {
  db.query("DELETE FROM platform_invitations WHERE role_id = ?").run(id);
  db.query("DELETE FROM platform_roles WHERE id = ? AND builtin = 0").run(id);
}
