/** SQL for workspaces, memberships, roles and enabled services. */
import type { Db } from "../../../core/db";

export interface WorkspaceRow {
  id: string;
  slug: string;
  display_name: string;
  created_by: string;
  status: string;
  settings: string;
  avatar_key: string | null;
  avatar_type: string | null;
  created_at: string;
  updated_at: string;
}

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

export function insertWorkspace(db: Db, w: Omit<WorkspaceRow, "avatar_key" | "avatar_type">) {
  db.query(
    `INSERT INTO platform_workspaces (id, slug, display_name, created_by, status, settings, created_at, updated_at)
     VALUES ($id, $slug, $display_name, $created_by, $status, $settings, $created_at, $updated_at)`,
  ).run(w as any);
}

export const workspaceBySlug = (db: Db, slug: string) =>
  db.query<WorkspaceRow, [string]>("SELECT * FROM platform_workspaces WHERE slug = ?").get(slug);

export const workspaceById = (db: Db, id: string) =>
  db.query<WorkspaceRow, [string]>("SELECT * FROM platform_workspaces WHERE id = ?").get(id);

export const slugTaken = (db: Db, slug: string, exceptId: string | null = null) =>
  !!db.query("SELECT 1 FROM platform_workspaces WHERE slug = ? AND id IS NOT ?").get(slug, exceptId);

export function updateWorkspace(db: Db, id: string, fields: { slug: string; display_name: string; settings: string; updated_at: string }) {
  db.query("UPDATE platform_workspaces SET slug = $slug, display_name = $display_name, settings = $settings, updated_at = $updated_at WHERE id = $id").run({
    id,
    ...fields,
  } as any);
}

export function setAvatar(db: Db, id: string, key: string, type: string, now: string) {
  db.query("UPDATE platform_workspaces SET avatar_key = ?, avatar_type = ?, updated_at = ? WHERE id = ?").run(key, type, now, id);
}

export function deleteWorkspace(db: Db, id: string) {
  db.query("DELETE FROM platform_workspaces WHERE id = ?").run(id);
}

export interface MemberWorkspaceRow extends WorkspaceRow {
  member_role_id: string;
  member_role: string;
}

/**
 * The caller's workspaces, keyset-paged by workspace id (UUIDv7: creation order). A scan of
 * the caller's memberships plus primary-key lookups: in bun:sqlite this is several times
 * cheaper than the equivalent JOIN, and introspection runs it on every call.
 */
export function workspacesOfAccount(db: Db, accountId: string, after: string | null, limit: number): MemberWorkspaceRow[] {
  const memberships = db
    .query<{ workspace_id: string; role_id: string }, [string, string | null, number]>(
      "SELECT workspace_id, role_id FROM platform_members WHERE account_id = ?1 AND (?2 IS NULL OR workspace_id > ?2) ORDER BY workspace_id LIMIT ?3",
    )
    .all(accountId, after, limit);
  const out: MemberWorkspaceRow[] = [];
  for (const m of memberships) {
    const w = workspaceById(db, m.workspace_id);
    if (w) out.push({ ...w, member_role_id: m.role_id, member_role: roleName(db, m.role_id) ?? "" });
  }
  return out;
}

const roleName = (db: Db, id: string) => db.query<{ name: string }, [string]>("SELECT name FROM platform_roles WHERE id = ?").get(id)?.name;

export interface MembershipRow {
  id: string;
  workspace_id: string;
  account_id: string;
  role_id: string;
  role_name: string;
  role_policy: string;
}

/** Membership with the role's policy: the authorization lookup of every workspace route. */
export const membership = (db: Db, workspaceId: string, accountId: string) =>
  db
    .query<MembershipRow, [string, string]>(
      // Subqueries rather than a JOIN: several times cheaper in bun:sqlite (every workspace request runs this).
      `SELECT m.id, m.workspace_id, m.account_id, m.role_id,
              (SELECT r.name FROM platform_roles r WHERE r.id = m.role_id) AS role_name,
              (SELECT r.policy FROM platform_roles r WHERE r.id = m.role_id) AS role_policy
       FROM platform_members m WHERE m.workspace_id = ? AND m.account_id = ?`,
    )
    .get(workspaceId, accountId);

export function insertMember(db: Db, m: { id: string; workspace_id: string; account_id: string; role_id: string; created_at: string }) {
  db.query(
    `INSERT INTO platform_members (id, workspace_id, account_id, role_id, created_at, updated_at)
     VALUES ($id, $workspace_id, $account_id, $role_id, $created_at, $created_at)`,
  ).run(m as any);
}

export const enabledServices = (db: Db, workspaceId: string) =>
  db
    .query<{ service: string }, [string]>("SELECT service FROM platform_workspace_services WHERE workspace_id = ? ORDER BY service")
    .all(workspaceId)
    .map((r) => r.service);

export function enableService(db: Db, workspaceId: string, service: string, now: string) {
  db.query("INSERT OR IGNORE INTO platform_workspace_services (workspace_id, service, enabled_at) VALUES (?, ?, ?)").run(workspaceId, service, now);
}

export function disableService(db: Db, workspaceId: string, service: string) {
  return db.query("DELETE FROM platform_workspace_services WHERE workspace_id = ? AND service = ?").run(workspaceId, service).changes;
}

export const isServiceEnabled = (db: Db, workspaceId: string, service: string) =>
  !!db.query("SELECT 1 FROM platform_workspace_services WHERE workspace_id = ? AND service = ?").get(workspaceId, service);


/** Enabled services of a workspace with the time each was switched on. */
export const serviceActivations = (db: Db, workspaceId: string) =>
  db.query<{ service: string; enabled_at: string }, [string]>("SELECT service, enabled_at FROM platform_workspace_services WHERE workspace_id = ?").all(workspaceId);
