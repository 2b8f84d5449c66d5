/** All SQL of the community service (this slice: communities). */
import type { Sql } from "../../../core/db";
import { updateById } from "../../../core/store/sql";

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

export async function insertCommunity(db: Sql, r: CommunityRow): Promise<void> {
  await db.run(
    `INSERT INTO social_communities (id, workspace_id, slug, display_name, name_fold, description, app_id, settings, status, created_at, updated_at)
     VALUES ($id, $workspace_id, $slug, $display_name, $name_fold, $description, $app_id, $settings, $status, $created_at, $updated_at)`,
    { ...r },
  );
}

export const communityById = (db: Sql, id: string) => db.get<CommunityRow>("SELECT * FROM social_communities WHERE id = ?", id);

/** One community of a workspace; another workspace's id reads as absent. */
export const communityInWorkspace = (db: Sql, workspaceId: string, id: string) =>
  db.get<CommunityRow>("SELECT * FROM social_communities WHERE workspace_id = ? AND id = ?", workspaceId, id);

export const communityIdsInWorkspace = async (db: Sql, workspaceId: string): Promise<string[]> =>
  (await db.all<{ id: string }>("SELECT id FROM social_communities WHERE workspace_id = ?", workspaceId)).map((r) => r.id);

export const slugTaken = async (db: Sql, workspaceId: string, slug: string): Promise<boolean> =>
  !!(await db.get("SELECT 1 AS one FROM social_communities WHERE workspace_id = ? AND slug = ?", workspaceId, slug));

export const appConnected = async (db: Sql, appId: string): Promise<boolean> => !!(await db.get("SELECT 1 AS one FROM social_communities WHERE app_id = ?", appId));

export interface CommunityFilter {
  workspaceId: string;
  /** LIKE pattern (already escaped with backslash, lower-cased), or null. */
  pattern: string | null;
  status: CommunityStatus | null;
  /** Keyset position: the last row of the previous page (newest first). */
  before: { created_at: string; id: string } | null;
  limit: number;
}

/** Communities of a workspace, newest first; q matches the folded display name or the slug (both lower case: LIKE's case rules don't matter). */
export function listCommunities(db: Sql, f: CommunityFilter): Promise<CommunityRow[]> {
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
  return db.all<CommunityRow>(`SELECT * FROM social_communities WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`, ...args);
}

export type CommunityPatch = Partial<Pick<CommunityRow, "display_name" | "name_fold" | "description" | "settings" | "status">>;
const PATCHABLE = ["display_name", "name_fold", "description", "settings", "status"] as const;

export async function updateCommunity(db: Sql, id: string, patch: CommunityPatch, updatedAt: string): Promise<void> {
  await updateById(db, "social_communities", id, patch, PATCHABLE, updatedAt);
}

/** Deletes the community; every social row that references it goes with it (ON DELETE CASCADE). */
export const deleteCommunity = (db: Sql, id: string): Promise<number> => db.run("DELETE FROM social_communities WHERE id = ?", id);
