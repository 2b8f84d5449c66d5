/** What the card board's routes answer: rows turned into the spec's records. */
import type { ActivityRow, CardRow, CommentRow } from "./cards-store";
import type { Priority } from "./validate";
import type { LabelRow, ListRow, ProjectRow, WorkspaceRow } from "./store";

export const workspaceView = (r: WorkspaceRow) => ({
  id: r.id,
  name: r.name,
  display_name: r.display_name,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  archived_at: r.archived_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const listView = (r: ListRow) => ({
  id: r.id,
  project_id: r.project_id,
  name: r.name,
  display_name: r.display_name,
  position: Number(r.position),
  created_at: r.created_at,
  updated_at: r.updated_at,
});
export type ListView = ReturnType<typeof listView>;

export const projectView = (r: ProjectRow, lists: ListRow[]) => ({
  id: r.id,
  workspace_id: r.workspace_id,
  name: r.name,
  display_name: r.display_name,
  status: r.status,
  lists: lists.map(listView),
  archived_at: r.archived_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const labelView = (r: LabelRow) => ({ id: r.id, workspace_id: r.workspace_id, name: r.name, color: r.color, created_at: r.created_at, updated_at: r.updated_at });

export const cardView = (r: CardRow, labels: string[]) => ({
  id: r.id,
  workspace_id: r.workspace_id,
  project_id: r.project_id,
  list_id: r.list_id,
  title: r.title,
  body: r.body,
  priority: r.priority as Priority,
  position: Number(r.position),
  assignees: JSON.parse(r.assignees) as string[],
  labels,
  due_at: r.due_at,
  completed_at: r.completed_at,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  archived_at: r.archived_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
});
export type CardView = ReturnType<typeof cardView>;

export const commentView = (r: CommentRow) => ({ id: r.id, card_id: r.card_id, author_id: r.author_id, body: r.body, created_at: r.created_at });

export const activityView = (r: ActivityRow) => ({
  id: r.id,
  project_id: r.project_id,
  card_id: r.card_id,
  actor_id: r.actor_id,
  action: r.action,
  changes: JSON.parse(r.changes) as Record<string, { from: unknown; to: unknown }>,
  timestamp: r.timestamp,
});
