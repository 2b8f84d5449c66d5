/**
 * What the card board's routes and events answer: rows turned into the spec's records. Each
 * record's type is its TypeBox schema's (schemas.ts), so the documented shape and the served
 * one are one declaration.
 */
import type { Static } from "@sinclair/typebox";
import type { ActivityRow, CardRow, CommentRow } from "./cards-store";
import type { Activity, Card, Comment, Label, List, Project, Workspace } from "./schemas";
import type { Priority } from "./validate";
import type { LabelRow, ListRow, ProjectRow, WorkspaceRow } from "./store";

export type WorkspaceView = Static<typeof Workspace>;
export type ListView = Static<typeof List>;
export type ProjectView = Static<typeof Project>;
export type LabelView = Static<typeof Label>;
export type CardView = Static<typeof Card>;
export type CommentView = Static<typeof Comment>;
export type ActivityView = Static<typeof Activity>;

export const workspaceView = (r: WorkspaceRow): WorkspaceView => ({
  id: r.id,
  name: r.name,
  display_name: r.display_name,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  archived_at: r.archived_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const listView = (r: ListRow): ListView => ({
  id: r.id,
  project_id: r.project_id,
  name: r.name,
  display_name: r.display_name,
  position: Number(r.position),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const projectView = (r: ProjectRow, lists: ListRow[]): ProjectView => ({
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

export const labelView = (r: LabelRow): LabelView => ({ id: r.id, workspace_id: r.workspace_id, name: r.name, color: r.color, created_at: r.created_at, updated_at: r.updated_at });

export const cardView = (r: CardRow, labels: string[]): CardView => ({
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

export const commentView = (r: CommentRow): CommentView => ({ id: r.id, card_id: r.card_id, author_id: r.author_id, body: r.body, created_at: r.created_at });

export const activityView = (r: ActivityRow): ActivityView => ({
  id: r.id,
  project_id: r.project_id,
  card_id: r.card_id,
  actor_id: r.actor_id,
  action: r.action,
  changes: JSON.parse(r.changes) as Record<string, { from: unknown; to: unknown }>,
  timestamp: r.timestamp,
});
