/**
 * The card board's structure: board workspaces, projects, lists and labels (cards,
 * comments and activity: cards.ts, built on this class).
 *
 * Ownership: a board workspace belongs to the platform workspace of the calling API key;
 * a key sees only its own platform workspace's board workspaces (others: 404). Every
 * {workspace}, {project}, {list}, {label} accepts the name or the id (ids carry a prefix
 * with an underscore, names are slugs without one, so the two never collide).
 * Archive (DELETE) is soft for workspaces, projects and cards; an archived workspace or
 * project is read-only (writes below it: 409 ARCHIVED). Lists and labels are deleted.
 */
import type { Principal } from "../../../access/principal";
import { ApiError, conflict, forbidden, notFound } from "../../../core/errors";
import { prefixedId } from "../../../core/ids";
import { tx, type Sql } from "../../../core/db";
import { lockKey } from "../../../core/store/sql";
import { activeCardsInList, dropSearchRows, insertActivity } from "./cards-store";
import * as store from "./store";
import { Checks, LISTS_MAX, offsetPage, pagination } from "./validate";
import { labelView, listView, projectView, workspaceView } from "./views";
import type { TackContext } from "./events";

/** A caller resolved for one request: its platform workspace and its id for author/actor fields. */
export interface Caller {
  principal: Principal;
  owner: string;
  actorId: string;
}

export type Body = Record<string, unknown>;
export const has = (b: Body, k: string) => b[k] !== undefined;

// ------------------------------------------------------------------ input rules
//
// The pure checks of each write's body (no lookups): the service runs them before its
// lookups, and body-rules.ts runs them too when the route's schema already refused the body,
// so that one 400 names every bad field.

export function workspaceInput(v: Checks, b: Body) {
  const name = v.name("name", b.name);
  const display = has(b, "display_name") ? v.displayName("display_name", b.display_name) : name;
  const metadata = has(b, "metadata") ? v.metadata("metadata", b.metadata) : "{}";
  return { name, display, metadata };
}

/** The name and display_name of a PATCH, each only when sent (workspaces, projects, lists). */
function namesPatch(v: Checks, b: Body) {
  const patch: { name?: string; display_name?: string } = {};
  if (has(b, "name")) patch.name = v.name("name", b.name);
  if (has(b, "display_name")) patch.display_name = v.displayName("display_name", b.display_name);
  return patch;
}

export function workspacePatch(v: Checks, b: Body) {
  const patch: Partial<store.WorkspaceRow> = namesPatch(v, b);
  if (has(b, "metadata")) patch.metadata = v.metadata("metadata", b.metadata);
  return patch;
}

export function projectInput(v: Checks, b: Body) {
  const name = v.name("name", b.name);
  const display = has(b, "display_name") ? v.displayName("display_name", b.display_name) : name;
  const lists: { name: string; display_name: string }[] = [];
  if (has(b, "lists")) {
    if (!Array.isArray(b.lists)) v.fail("lists", "must be an array of {name, display_name}");
    else if (b.lists.length > LISTS_MAX) v.fail("lists", `at most ${LISTS_MAX} lists`);
    else {
      const seen = new Set<string>();
      b.lists.forEach((l: any, i: number) => {
        const ln = v.name(`lists[${i}].name`, l?.name);
        const ld = l?.display_name !== undefined ? v.displayName(`lists[${i}].display_name`, l.display_name) : ln;
        if (ln && seen.has(ln)) v.fail(`lists[${i}].name`, "repeats an earlier list's name");
        if (ln) seen.add(ln);
        if (ln && ld) lists.push({ name: ln, display_name: ld });
      });
    }
  }
  return { name, display, lists };
}

export function projectPatch(v: Checks, b: Body): Partial<store.ProjectRow> {
  return namesPatch(v, b);
}

export function listInput(v: Checks, b: Body) {
  const name = v.name("name", b.name);
  const display = has(b, "display_name") ? v.displayName("display_name", b.display_name) : name;
  const position = has(b, "position") ? v.position("position", b.position) : undefined;
  return { name, display, position };
}

export function listPatch(v: Checks, b: Body) {
  const patch: Partial<store.ListRow> = namesPatch(v, b);
  const position = has(b, "position") ? v.position("position", b.position) : undefined;
  return { patch, position };
}

export function labelInput(v: Checks, b: Body) {
  const name = v.name("name", b.name);
  const color = has(b, "color") ? v.color("color", b.color) : "#9ca3af";
  return { name, color };
}

export function labelPatch(v: Checks, b: Body) {
  const patch: Partial<store.LabelRow> = {};
  if (has(b, "name")) patch.name = v.name("name", b.name);
  if (has(b, "color")) patch.color = v.color("color", b.color);
  return patch;
}

export class Board {
  constructor(readonly m: TackContext) {}

  /** Runs one write operation in a transaction (the SQLite engine commits concurrent ones together). */
  write<T>(fn: (t: Sql) => Promise<T>): Promise<T> {
    return tx(this.m.ctx.db, fn);
  }

  // ------------------------------------------------------------------ access

  /**
   * The caller's platform workspace, after checking the action and that the card board is
   * on for it. Card-board routes take workspace API keys (the spec's "Bearer <API_KEY>").
   */
  async caller(principal: Principal, action: string): Promise<Caller> {
    if (principal.kind !== "api_key") throw forbidden("Card-board routes take a workspace API key (svc_live_...)", "API_KEY_REQUIRED");
    await this.m.guard(principal, principal.workspaceId, action);
    return { principal, owner: principal.workspaceId, actorId: principal.keyId };
  }

  async workspace(db: Sql, c: Caller, ref: string, write = false): Promise<store.WorkspaceRow> {
    const ws = await store.workspaceByRef(db, c.owner, ref);
    if (!ws) throw notFound("Workspace");
    if (write && ws.archived_at) throw conflict("The workspace is archived", "ARCHIVED");
    return ws;
  }

  async project(db: Sql, c: Caller, wsRef: string, ref: string, write = false) {
    const ws = await this.workspace(db, c, wsRef, write);
    const project = await store.projectByRef(db, ws.id, ref);
    if (!project) throw notFound("Project");
    if (write && project.archived_at) throw conflict("The project is archived", "ARCHIVED");
    // Writers of one project's positions take turns (PostgreSQL; SQLite has one writer anyway).
    if (write) await lockKey(db, `tack:project:${project.id}`);
    return { ws, project };
  }

  async activity(t: Sql, c: Caller, projectId: string, cardId: string | null, action: string, changes: Record<string, { from: unknown; to: unknown }> = {}) {
    await insertActivity(t, { id: prefixedId("act"), project_id: projectId, card_id: cardId, actor_id: c.actorId, action, changes: JSON.stringify(changes), timestamp: this.m.ctx.clock.iso() });
  }

  // ------------------------------------------------------------------ workspaces

  async createWorkspace(c: Caller, b: Body) {
    const v = new Checks();
    const { name, display, metadata } = workspaceInput(v, b);
    v.done();
    const at = this.m.ctx.clock.iso();
    const row: store.WorkspaceRow = { id: prefixedId("ws"), owner_workspace_id: c.owner, name: name!, display_name: display!, metadata: metadata!, archived_at: null, created_at: at, updated_at: at };
    await store.insertWorkspace(this.m.ctx.db, row);
    return workspaceView(row);
  }

  async listWorkspaces(c: Caller, q: { limit?: number; offset?: number; include_archived?: boolean }) {
    const { limit, offset } = offsetPage(q);
    const { total, rows } = await store.pageWorkspaces(this.m.ctx.db, c.owner, q.include_archived === true, limit, offset);
    return { data: rows.map(workspaceView), pagination: pagination(total, limit, offset, rows.length) };
  }

  async getWorkspace(c: Caller, ref: string) {
    return workspaceView(await this.workspace(this.m.ctx.db, c, ref));
  }

  async updateWorkspace(c: Caller, ref: string, b: Body) {
    const v = new Checks();
    const patch = workspacePatch(v, b);
    v.done();
    return this.write(async (t) => {
      const ws = await this.workspace(t, c, ref, true);
      await store.updateWorkspace(t, ws.id, patch, this.m.ctx.clock.iso());
      return workspaceView((await store.workspaceById(t, ws.id))!);
    });
  }

  async archiveWorkspace(c: Caller, ref: string) {
    return this.write(async (t) => {
      const ws = await this.workspace(t, c, ref);
      if (!ws.archived_at) await store.updateWorkspace(t, ws.id, { archived_at: this.m.ctx.clock.iso() }, this.m.ctx.clock.iso());
      return workspaceView((await store.workspaceById(t, ws.id))!);
    });
  }

  // ------------------------------------------------------------------ projects

  private async projectOut(db: Sql, p: store.ProjectRow) {
    return projectView(p, await store.listsOfProject(db, p.id));
  }

  async createProject(c: Caller, wsRef: string, b: Body) {
    const v = new Checks();
    const { name, display, lists } = projectInput(v, b);
    v.done();
    return this.write(async (t) => {
      const ws = await this.workspace(t, c, wsRef, true);
      const at = this.m.ctx.clock.iso();
      const row: store.ProjectRow = { id: prefixedId("proj"), workspace_id: ws.id, name: name!, display_name: display!, status: "active", archived_at: null, created_at: at, updated_at: at };
      await store.insertProject(t, row);
      for (const [i, l] of lists.entries()) {
        await store.insertList(t, { id: prefixedId("list"), project_id: row.id, name: l.name, display_name: l.display_name, position: i, created_at: at, updated_at: at });
      }
      const view = await this.projectOut(t, row);
      await this.activity(t, c, row.id, null, "project.created", { name: { from: null, to: row.name } });
      await this.m.emit(t, ws.id, "project.created", { ...view, actor_id: c.actorId });
      return view;
    });
  }

  async listProjects(c: Caller, wsRef: string, q: { limit?: number; offset?: number; include_archived?: boolean }) {
    const { limit, offset } = offsetPage(q);
    const ws = await this.workspace(this.m.ctx.db, c, wsRef);
    const { total, rows } = await store.pageProjects(this.m.ctx.db, ws.id, q.include_archived === true, limit, offset);
    const lists = await store.listsOfProjects(this.m.ctx.db, rows.map((r) => r.id));
    return { data: rows.map((r) => projectView(r, lists.get(r.id)!)), pagination: pagination(total, limit, offset, rows.length) };
  }

  async getProject(c: Caller, wsRef: string, ref: string) {
    const { project } = await this.project(this.m.ctx.db, c, wsRef, ref);
    return this.projectOut(this.m.ctx.db, project);
  }

  async updateProject(c: Caller, wsRef: string, ref: string, b: Body) {
    const v = new Checks();
    const patch = projectPatch(v, b);
    v.done();
    return this.write(async (t) => {
      const { project } = await this.project(t, c, wsRef, ref, true);
      const changes = diff(project, patch);
      await store.updateProject(t, project.id, patch, this.m.ctx.clock.iso());
      if (Object.keys(changes).length) await this.activity(t, c, project.id, null, "project.updated", changes);
      return this.projectOut(t, (await store.projectByRef(t, project.workspace_id, project.id))!);
    });
  }

  async archiveProject(c: Caller, wsRef: string, ref: string) {
    return this.write(async (t) => {
      const { ws, project } = await this.project(t, c, wsRef, ref);
      if (!project.archived_at) {
        const at = this.m.ctx.clock.iso();
        await store.updateProject(t, project.id, { status: "archived", archived_at: at }, at);
        await this.activity(t, c, project.id, null, "project.archived", { status: { from: "active", to: "archived" } });
      }
      const view = await this.projectOut(t, (await store.projectByRef(t, ws.id, project.id))!);
      if (!project.archived_at) await this.m.emit(t, ws.id, "project.archived", { ...view, actor_id: c.actorId });
      return view;
    });
  }

  // ------------------------------------------------------------------ lists

  async listLists(c: Caller, wsRef: string, projectRef: string) {
    const { project } = await this.project(this.m.ctx.db, c, wsRef, projectRef);
    const rows = await store.listsOfProject(this.m.ctx.db, project.id);
    return { data: rows.map(listView), pagination: pagination(rows.length, LISTS_MAX, 0, rows.length) };
  }

  async createList(c: Caller, wsRef: string, projectRef: string, b: Body) {
    const v = new Checks();
    const { name, display, position } = listInput(v, b);
    v.done();
    return this.write(async (t) => {
      const { ws, project } = await this.project(t, c, wsRef, projectRef, true);
      const n = await store.countLists(t, project.id);
      if (n >= LISTS_MAX) throw conflict(`A project holds at most ${LISTS_MAX} lists`, "LIMIT_REACHED");
      const pos = Math.min(position ?? n, n);
      if (pos < n) await store.shiftLists(t, project.id, pos, n, 1);
      const at = this.m.ctx.clock.iso();
      const row: store.ListRow = { id: prefixedId("list"), project_id: project.id, name: name!, display_name: display!, position: pos, created_at: at, updated_at: at };
      await store.insertList(t, row);
      await this.activity(t, c, project.id, null, "list.created", { name: { from: null, to: row.name }, position: { from: null, to: pos } });
      await this.m.emit(t, ws.id, "list.created", { ...listView(row), actor_id: c.actorId });
      return listView(row);
    });
  }

  async list(db: Sql, c: Caller, wsRef: string, projectRef: string, ref: string, write = false) {
    const { ws, project } = await this.project(db, c, wsRef, projectRef, write);
    const list = await store.listByRef(db, project.id, ref);
    if (!list) throw notFound("List");
    return { ws, project, list };
  }

  async getList(c: Caller, wsRef: string, projectRef: string, ref: string) {
    return listView((await this.list(this.m.ctx.db, c, wsRef, projectRef, ref)).list);
  }

  async updateList(c: Caller, wsRef: string, projectRef: string, ref: string, b: Body) {
    const v = new Checks();
    const { patch, position } = listPatch(v, b);
    v.done();
    return this.write(async (t) => {
      const { ws, project, list } = await this.list(t, c, wsRef, projectRef, ref, true);
      if (position !== undefined) {
        const to = Math.min(position, (await store.countLists(t, project.id)) - 1);
        const from = Number(list.position);
        if (to < from) await store.shiftLists(t, project.id, to, from - 1, 1);
        if (to > from) await store.shiftLists(t, project.id, from + 1, to, -1);
        patch.position = to;
      }
      const changes = diff(list, patch);
      await store.updateList(t, list.id, patch, this.m.ctx.clock.iso());
      const view = listView((await store.listByRef(t, project.id, list.id))!);
      if (Object.keys(changes).length) {
        await this.activity(t, c, project.id, null, "list.updated", changes);
        await this.m.emit(t, ws.id, "list.updated", { ...view, changes, actor_id: c.actorId });
      }
      return view;
    });
  }

  async deleteList(c: Caller, wsRef: string, projectRef: string, ref: string) {
    await this.write(async (t) => {
      const { ws, project, list } = await this.list(t, c, wsRef, projectRef, ref, true);
      const n = await activeCardsInList(t, list.id);
      if (n > 0) throw new ApiError(409, "LIST_NOT_EMPTY", `The list holds ${n} card(s): move or archive them first`);
      // Archived cards of the list go with it (foreign key; their search rows here).
      await dropSearchRows(t, { listId: list.id });
      await store.deleteList(t, list.id);
      await store.shiftLists(t, project.id, Number(list.position) + 1, Number.MAX_SAFE_INTEGER, -1);
      await this.activity(t, c, project.id, null, "list.deleted", { name: { from: list.name, to: null } });
      await this.m.emit(t, ws.id, "list.deleted", { id: list.id, project_id: project.id, name: list.name, deleted_at: this.m.ctx.clock.iso(), actor_id: c.actorId });
    });
  }

  // ------------------------------------------------------------------ labels

  async createLabel(c: Caller, wsRef: string, b: Body) {
    const v = new Checks();
    const { name, color } = labelInput(v, b);
    v.done();
    return this.write(async (t) => {
      const ws = await this.workspace(t, c, wsRef, true);
      const at = this.m.ctx.clock.iso();
      const row: store.LabelRow = { id: prefixedId("lbl"), workspace_id: ws.id, name: name!, color: color!, created_at: at, updated_at: at };
      await store.insertLabel(t, row);
      return labelView(row);
    });
  }

  async listLabels(c: Caller, wsRef: string, q: { limit?: number; offset?: number }) {
    const { limit, offset } = offsetPage(q);
    const ws = await this.workspace(this.m.ctx.db, c, wsRef);
    const { total, rows } = await store.pageLabels(this.m.ctx.db, ws.id, limit, offset);
    return { data: rows.map(labelView), pagination: pagination(total, limit, offset, rows.length) };
  }

  private async label(db: Sql, c: Caller, wsRef: string, ref: string, write = false) {
    const ws = await this.workspace(db, c, wsRef, write);
    const label = await store.labelByRef(db, ws.id, ref);
    if (!label) throw notFound("Label");
    return label;
  }

  async getLabel(c: Caller, wsRef: string, ref: string) {
    return labelView(await this.label(this.m.ctx.db, c, wsRef, ref));
  }

  async updateLabel(c: Caller, wsRef: string, ref: string, b: Body) {
    const v = new Checks();
    const patch = labelPatch(v, b);
    v.done();
    return this.write(async (t) => {
      const label = await this.label(t, c, wsRef, ref, true);
      await store.updateLabel(t, label.id, patch, this.m.ctx.clock.iso());
      return labelView((await store.labelByRef(t, label.workspace_id, label.id))!);
    });
  }

  /** Deleted for real; cards lose it (foreign key). */
  async deleteLabel(c: Caller, wsRef: string, ref: string) {
    await this.write(async (t) => {
      const label = await this.label(t, c, wsRef, ref, true);
      await store.deleteLabel(t, label.id);
    });
  }
}

/** {field: {from, to}} for each patched field whose value changes. */
export function diff(before: object, patch: object): Record<string, { from: unknown; to: unknown }> {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  const b = before as Record<string, unknown>;
  for (const [k, to] of Object.entries(patch)) {
    if (to === undefined) continue;
    const from = b[k];
    if (JSON.stringify(from) !== JSON.stringify(to)) out[k] = { from, to };
  }
  return out;
}
