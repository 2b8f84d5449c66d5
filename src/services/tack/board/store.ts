/**
 * SQL of the card board's structure: board workspaces, projects, lists and labels
 * (migration 0060). Cards, comments, activity and search: cards-store.ts.
 * Every function takes the handle it runs on (the database or the caller's transaction).
 */
import { conflict } from "../../../core/errors";
import { isUniqueViolation, updateById, type Sql, type SqlValue } from "../../../core/store/sql";

export interface WorkspaceRow {
  id: string;
  owner_workspace_id: string;
  name: string;
  display_name: string;
  metadata: string;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ProjectRow {
  id: string;
  workspace_id: string;
  name: string;
  display_name: string;
  status: "active" | "archived";
  archived_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ListRow {
  id: string;
  project_id: string;
  name: string;
  display_name: string;
  position: number;
  created_at: string;
  updated_at: string;
}

export interface LabelRow {
  id: string;
  workspace_id: string;
  name: string;
  color: string;
  created_at: string;
  updated_at: string;
}

/** A unique (parent, name) refused the write: 409 NAME_TAKEN. */
async function named<T>(what: string, name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`A ${what} named "${name}" already exists here`, "NAME_TAKEN");
    throw e;
  }
}

function insert(db: Sql, table: string, row: Record<string, SqlValue>): Promise<number> {
  const cols = Object.keys(row);
  return db.run(`INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`, ...cols.map((c) => row[c]!));
}

const archivedFilter = (include: boolean) => (include ? "" : " AND archived_at IS NULL");

// ------------------------------------------------------------------ workspaces

export const insertWorkspace = (db: Sql, row: WorkspaceRow) => named("workspace", row.name, () => insert(db, "tack_workspaces", { ...row }));

/** By id or name (names are slugs: no underscore, so never an id), within the owner's. */
export const workspaceByRef = (db: Sql, owner: string, ref: string) =>
  db.get<WorkspaceRow>("SELECT * FROM tack_workspaces WHERE owner_workspace_id = ? AND " + (ref.startsWith("ws_") ? "id = ?" : "name = ?"), owner, ref);

export const workspaceById = (db: Sql, id: string) => db.get<WorkspaceRow>("SELECT * FROM tack_workspaces WHERE id = ?", id);

export async function pageWorkspaces(db: Sql, owner: string, includeArchived: boolean, limit: number, offset: number) {
  const where = `owner_workspace_id = ?${archivedFilter(includeArchived)}`;
  const total = (await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM tack_workspaces WHERE ${where}`, owner))!.n;
  const rows = await db.all<WorkspaceRow>(`SELECT * FROM tack_workspaces WHERE ${where} ORDER BY created_at, id LIMIT ? OFFSET ?`, owner, limit, offset);
  return { total: Number(total), rows };
}

export const updateWorkspace = (db: Sql, id: string, patch: Partial<WorkspaceRow>, at: string) =>
  named("workspace", patch.name ?? "", () => updateById(db, "tack_workspaces", id, patch, ["name", "display_name", "metadata", "archived_at"], at));

/** Board workspace ids of a platform workspace (archived ones too). */
export const workspaceIdsOfOwner = async (db: Sql, owner: string) =>
  (await db.all<{ id: string }>("SELECT id FROM tack_workspaces WHERE owner_workspace_id = ?", owner)).map((r) => r.id);

// ------------------------------------------------------------------ projects

export const insertProject = (db: Sql, row: ProjectRow) => named("project", row.name, () => insert(db, "tack_projects", { ...row }));

export const projectByRef = (db: Sql, workspaceId: string, ref: string) =>
  db.get<ProjectRow>("SELECT * FROM tack_projects WHERE workspace_id = ? AND " + (ref.startsWith("proj_") ? "id = ?" : "name = ?"), workspaceId, ref);

export async function pageProjects(db: Sql, workspaceId: string, includeArchived: boolean, limit: number, offset: number) {
  const where = `workspace_id = ?${archivedFilter(includeArchived)}`;
  const total = (await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM tack_projects WHERE ${where}`, workspaceId))!.n;
  const rows = await db.all<ProjectRow>(`SELECT * FROM tack_projects WHERE ${where} ORDER BY created_at, id LIMIT ? OFFSET ?`, workspaceId, limit, offset);
  return { total: Number(total), rows };
}

export const updateProject = (db: Sql, id: string, patch: Partial<ProjectRow>, at: string) =>
  named("project", patch.name ?? "", () => updateById(db, "tack_projects", id, patch, ["name", "display_name", "status", "archived_at"], at));

// ------------------------------------------------------------------ lists

export const insertList = (db: Sql, row: ListRow) => named("list", row.name, () => insert(db, "tack_lists", { ...row }));

export const listByRef = (db: Sql, projectId: string, ref: string) =>
  db.get<ListRow>("SELECT * FROM tack_lists WHERE project_id = ? AND " + (ref.startsWith("list_") ? "id = ?" : "name = ?"), projectId, ref);

export const listsOfProject = (db: Sql, projectId: string) => db.all<ListRow>("SELECT * FROM tack_lists WHERE project_id = ? ORDER BY position, id", projectId);

/** Lists of several projects at once (project views), in position order. */
export async function listsOfProjects(db: Sql, projectIds: string[]): Promise<Map<string, ListRow[]>> {
  const out = new Map<string, ListRow[]>(projectIds.map((id) => [id, []]));
  if (!projectIds.length) return out;
  const rows = await db.all<ListRow>(`SELECT * FROM tack_lists WHERE project_id IN (${projectIds.map(() => "?").join(", ")}) ORDER BY position, id`, ...projectIds);
  for (const r of rows) out.get(r.project_id)!.push(r);
  return out;
}

export const countLists = async (db: Sql, projectId: string) => Number((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM tack_lists WHERE project_id = ?", projectId))!.n);

/** Shifts the positions in [from, to] of a project's lists by delta (+1 or -1). */
export const shiftLists = (db: Sql, projectId: string, from: number, to: number, delta: number) =>
  db.run("UPDATE tack_lists SET position = position + ? WHERE project_id = ? AND position >= ? AND position <= ?", delta, projectId, from, to);

export const updateList = (db: Sql, id: string, patch: Partial<ListRow>, at: string) =>
  named("list", patch.name ?? "", () => updateById(db, "tack_lists", id, patch, ["name", "display_name", "position"], at));

export const deleteList = (db: Sql, id: string) => db.run("DELETE FROM tack_lists WHERE id = ?", id);

// ------------------------------------------------------------------ labels

export const insertLabel = (db: Sql, row: LabelRow) => named("label", row.name, () => insert(db, "tack_labels", { ...row }));

export const labelByRef = (db: Sql, workspaceId: string, ref: string) =>
  db.get<LabelRow>("SELECT * FROM tack_labels WHERE workspace_id = ? AND " + (ref.startsWith("lbl_") ? "id = ?" : "name = ?"), workspaceId, ref);

export async function labelsByName(db: Sql, workspaceId: string, names: string[]): Promise<LabelRow[]> {
  if (!names.length) return [];
  return db.all<LabelRow>(`SELECT * FROM tack_labels WHERE workspace_id = ? AND name IN (${names.map(() => "?").join(", ")})`, workspaceId, ...names);
}

export async function pageLabels(db: Sql, workspaceId: string, limit: number, offset: number) {
  const total = (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM tack_labels WHERE workspace_id = ?", workspaceId))!.n;
  const rows = await db.all<LabelRow>("SELECT * FROM tack_labels WHERE workspace_id = ? ORDER BY name LIMIT ? OFFSET ?", workspaceId, limit, offset);
  return { total: Number(total), rows };
}

export const updateLabel = (db: Sql, id: string, patch: Partial<LabelRow>, at: string) =>
  named("label", patch.name ?? "", () => updateById(db, "tack_labels", id, patch, ["name", "color"], at));

export const deleteLabel = (db: Sql, id: string) => db.run("DELETE FROM tack_labels WHERE id = ?", id);
