/** All SQL of the community service (this slice: communities). */
import type { Db } from "../../core/db";

export type CommunityStatus = "active" | "suspended" | "archived";

export interface CommunityRow {
  id: string;
  workspace_id: string;
  slug: string;
  display_name: string;
  name_fold: string;
  description: string | null;
  app_id: string | null;
  /** JSON object. */
  settings: string;
  status: CommunityStatus;
  created_at: string;
  updated_at: string;
}

export function insertCommunity(db: Db, r: CommunityRow) {
  db.query(
    `INSERT INTO social_communities (id, workspace_id, slug, display_name, name_fold, description, app_id, settings, status, created_at, updated_at)
     VALUES ($id, $workspace_id, $slug, $display_name, $name_fold, $description, $app_id, $settings, $status, $created_at, $updated_at)`,
  ).run(r as any);
}

export const communityById = (db: Db, id: string) => db.query<CommunityRow, [string]>("SELECT * FROM social_communities WHERE id = ?").get(id);

/** One community of a workspace; another workspace's id reads as absent. */
export const communityInWorkspace = (db: Db, workspaceId: string, id: string) =>
  db.query<CommunityRow, [string, string]>("SELECT * FROM social_communities WHERE workspace_id = ? AND id = ?").get(workspaceId, id);

export const communityIdsInWorkspace = (db: Db, workspaceId: string) =>
  db.query<{ id: string }, [string]>("SELECT id FROM social_communities WHERE workspace_id = ?").all(workspaceId).map((r) => r.id);

export const slugTaken = (db: Db, workspaceId: string, slug: string) =>
  !!db.query("SELECT 1 FROM social_communities WHERE workspace_id = ? AND slug = ?").get(workspaceId, slug);

export const appConnected = (db: Db, appId: string) => !!db.query("SELECT 1 FROM social_communities WHERE app_id = ?").get(appId);

export interface CommunityFilter {
  workspaceId: string;
  /** LIKE pattern (already escaped with backslash, lower-cased), or null. */
  pattern: string | null;
  status: CommunityStatus | null;
  /** Keyset position: the last row of the previous page (newest first). */
  before: { created_at: string; id: string } | null;
  limit: number;
}

/** Communities of a workspace, newest first; q matches the folded display name or the slug. */
export function listCommunities(db: Db, f: CommunityFilter): CommunityRow[] {
  const where = ["workspace_id = ?"];
  const args: (string | number)[] = [f.workspaceId];
  if (f.pattern !== null) {
    where.push("(name_fold LIKE ? ESCAPE '\\' OR slug LIKE ? ESCAPE '\\')");
    args.push(f.pattern, f.pattern);
  }
  if (f.status !== null) {
    where.push("status = ?");
    args.push(f.status);
  }
  if (f.before) {
    where.push("(created_at < ? OR (created_at = ? AND id < ?))");
    args.push(f.before.created_at, f.before.created_at, f.before.id);
  }
  args.push(f.limit);
  return db
    .query<CommunityRow, (string | number)[]>(`SELECT * FROM social_communities WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`)
    .all(...args);
}

export type CommunityPatch = Partial<Pick<CommunityRow, "display_name" | "name_fold" | "description" | "settings" | "status">>;
const PATCHABLE = ["display_name", "name_fold", "description", "settings", "status"] as const;

export function updateCommunity(db: Db, id: string, patch: CommunityPatch, updatedAt: string) {
  const sets: string[] = [];
  const values: (string | null)[] = [];
  for (const k of PATCHABLE) {
    if (patch[k] === undefined) continue;
    sets.push(`${k} = ?`);
    values.push(patch[k] as string | null);
  }
  sets.push("updated_at = ?");
  values.push(updatedAt, id);
  db.query(`UPDATE social_communities SET ${sets.join(", ")} WHERE id = ?`).run(...values);
}

/** Deletes the community; every social row that references it goes with it (ON DELETE CASCADE). */
export const deleteCommunity = (db: Db, id: string) => db.query("DELETE FROM social_communities WHERE id = ?").run(id).changes;
