/** SQL for workspaces, memberships, roles and enabled services. */
import type { Sql } from "../../../../core/db";
import { workspaceById, type WorkspaceRow } from "../../../../kernel/tenancy";

// The reads tenancy makes on every request are the kernel's (kernel/tenancy/store.ts).
export { enabledServices, membership, workspaceById, workspaceBySlug, type MembershipRow, type WorkspaceRow } from "../../../../kernel/tenancy";

export interface RoleRow {
  id: string;
  workspace_id: string | null;
  name: string;
  description: string;
  policy: string;
  builtin: number;
  created_at: string;
  updated_at: string;
}

export const BUILTIN_ROLE_IDS = {
  owner: "00000000-0000-7000-8000-000000000001",
  admin: "00000000-0000-7000-8000-000000000002",
  member: "00000000-0000-7000-8000-000000000003",
} as const;

export async function insertWorkspace(db: Sql, w: Omit<WorkspaceRow, "avatar_key" | "avatar_type">): Promise<void> {
  await db.run(
    `INSERT INTO platform_workspaces (id, slug, display_name, created_by, status, settings, created_at, updated_at)
     VALUES ($id, $slug, $display_name, $created_by, $status, $settings, $created_at, $updated_at)`,
    { ...w },
  );
}

export const slugTaken = async (db: Sql, slug: string, exceptId: string | null = null) =>
  (await db.get("SELECT 1 AS x FROM platform_workspaces WHERE slug = ? AND id IS DISTINCT FROM ?", slug, exceptId)) !== null;

export async function updateWorkspace(db: Sql, id: string, fields: { slug: string; display_name: string; settings: string; updated_at: string }): Promise<void> {
  await db.run("UPDATE platform_workspaces SET slug = $slug, display_name = $display_name, settings = $settings, updated_at = $updated_at WHERE id = $id", {
    id,
    ...fields,
  });
}

export async function setAvatar(db: Sql, id: string, key: string, type: string, now: string): Promise<void> {
  await db.run("UPDATE platform_workspaces SET avatar_key = ?, avatar_type = ?, updated_at = ? WHERE id = ?", key, type, now, id);
}

export async function deleteWorkspace(db: Sql, id: string): Promise<void> {
  await db.run("DELETE FROM platform_workspaces WHERE id = ?", id);
}

export interface MemberWorkspaceRow extends WorkspaceRow {
  member_role_id: string;
  member_role: string;
}

/**
 * The caller's workspaces, keyset-paged by workspace id (UUIDv7: creation order).
 * SQLite: a scan of the caller's memberships plus primary-key lookups, several times cheaper
 * in bun:sqlite than the equivalent JOIN (introspection runs it on every call). PostgreSQL:
 * one query, since there every statement is a round trip.
 */
export async function workspacesOfAccount(db: Sql, accountId: string, after: string | null, limit: number): Promise<MemberWorkspaceRow[]> {
  if (db.engine === "postgres") {
    return db.all<MemberWorkspaceRow>(
      `SELECT w.*, m.role_id AS member_role_id, COALESCE((SELECT r.name FROM platform_roles r WHERE r.id = m.role_id), '') AS member_role
       FROM platform_members m JOIN platform_workspaces w ON w.id = m.workspace_id
       WHERE m.account_id = ?1 AND (CAST(?2 AS TEXT) IS NULL OR m.workspace_id > ?2) ORDER BY m.workspace_id LIMIT ?3`,
      accountId,
      after,
      limit,
    );
  }
  const memberships = await db.all<{ workspace_id: string; role_id: string }>(
    "SELECT workspace_id, role_id FROM platform_members WHERE account_id = ?1 AND (CAST(?2 AS TEXT) IS NULL OR workspace_id > ?2) ORDER BY workspace_id LIMIT ?3",
    accountId,
    after,
    limit,
  );
  const out: MemberWorkspaceRow[] = [];
  for (const m of memberships) {
    const w = await workspaceById(db, m.workspace_id);
    if (w) out.push({ ...w, member_role_id: m.role_id, member_role: (await roleName(db, m.role_id)) ?? "" });
  }
  return out;
}

const roleName = async (db: Sql, id: string) => (await db.get<{ name: string }>("SELECT name FROM platform_roles WHERE id = ?", id))?.name;

export async function insertMember(db: Sql, m: { id: string; workspace_id: string; account_id: string; role_id: string; created_at: string }): Promise<void> {
  await db.run(
    `INSERT INTO platform_members (id, workspace_id, account_id, role_id, created_at, updated_at)
     VALUES ($id, $workspace_id, $account_id, $role_id, $created_at, $created_at)`,
    { ...m },
  );
}

export async function enableService(db: Sql, workspaceId: string, service: string, now: string): Promise<void> {
  await db.run("INSERT INTO platform_workspace_services (workspace_id, service, enabled_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", workspaceId, service, now);
}

export function disableService(db: Sql, workspaceId: string, service: string): Promise<number> {
  return db.run("DELETE FROM platform_workspace_services WHERE workspace_id = ? AND service = ?", workspaceId, service);
}

export const isServiceEnabled = async (db: Sql, workspaceId: string, service: string) =>
  (await db.get("SELECT 1 AS x FROM platform_workspace_services WHERE workspace_id = ? AND service = ?", workspaceId, service)) !== null;

/** Enabled services of a workspace with the time each was switched on. */
export const serviceActivations = (db: Sql, workspaceId: string) =>
  db.all<{ service: string; enabled_at: string }>("SELECT service, enabled_at FROM platform_workspace_services WHERE workspace_id = ?", workspaceId);
