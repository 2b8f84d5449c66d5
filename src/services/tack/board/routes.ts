/**
 * Routes of the card board's structure under {tack_base_url} = /tack/api:
 *
 *   /v1/workspaces                                         GET list, POST create
 *   /v1/workspaces/{workspace}                             GET, PATCH, DELETE (archive)
 *   /v1/workspaces/{workspace}/projects                    GET list, POST create (lists[] in one transaction)
 *   /v1/workspaces/{workspace}/projects/{project}          GET, PATCH, DELETE (archive)
 *   /v1/workspaces/{workspace}/projects/{project}/lists    GET, POST
 *   /v1/workspaces/{workspace}/projects/{project}/lists/{list}  GET, PATCH, DELETE (409 LIST_NOT_EMPTY)
 *   /v1/workspaces/{workspace}/labels                      GET, POST
 *   /v1/workspaces/{workspace}/labels/{label}              GET, PATCH, DELETE
 *
 * Cards, comments and activity: card-routes.ts. Templates: paths.ts.
 */
import { Elysia } from "elysia";
import { callerKey, idempotent, type RouteIO } from "../../../access/idempotent";
import { requirePrincipal, type Principal } from "../../../access/principal";
import { secured } from "../../../access/openapi";
import { noContent } from "../../../core/openapi";
import type { ServiceDeps } from "../../../kernel/module";
import { boardCaller } from "./guard";
import { BOARD_PREFIX, LABEL, LIST, PROJECT, WS } from "./paths";
import * as S from "./schemas";
import type { Board, Caller } from "./service";

/** Card-board routes take workspace API keys (Authorization: Bearer svc_live_...). */
export const API_KEY_CALLER = [{ apiKey: [] as string[] }];
export const RATE_NOTE =
  "Rate limits per API key: 200 writes, 600 reads, 30 batch operations per minute; X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset on every response, 429 RATE_LIMITED with Retry-After.";

export const readErrors = { 400: S.ErrorBody, 401: S.ErrorBody, 403: S.ErrorBody, 404: S.ErrorBody, 429: S.ErrorBody };
export const writeErrors = { ...readErrors, 409: S.ErrorBody };

/** Runs fn for the caller once its key is allowed `action` (403 otherwise; 404 for what it cannot see). */
export const as = <T>(board: Board, principal: Principal | null, action: string, fn: (c: Caller) => Promise<T>) =>
  board.caller(requirePrincipal(principal), action).then(fn);

export const IDEMPOTENCY_NOTE = "Accepts Idempotency-Key (24 h; a replay answers the original response with Idempotent-Replay: true).";

/**
 * A create (or batch) with Idempotency-Key: authorized first (a key without the action never
 * replays), then run once per caller and key; answers `status`.
 */
export const idempotentAs = <T>(board: Board, c: RouteIO & { principal: Principal | null }, action: string, status: number, fn: (k: Caller) => Promise<T>) =>
  as(board, c.principal, action, (k) => idempotent(board.m.ctx.idempotency, c, callerKey(k.principal), async () => ({ status, body: await fn(k) })) as Promise<T>);

export function boardRoutes(board: Board, deps: ServiceDeps) {
  const tags = ["Card board: workspaces, projects, lists, labels"];
  const d = (summary: string, description = "") => ({ tags, summary, description: `${description} ${RATE_NOTE}`.trim() });
  const [ws, proj, list, label] = [WS, PROJECT, LIST, LABEL];

  return new Elysia({ prefix: BOARD_PREFIX })
    .use(boardCaller(deps))
    .guard(secured(API_KEY_CALLER))
    // ---------------------------------------------------------------- workspaces
    .get("", (c) => as(board, c.principal, "tack.workspace.read", (k) => board.listWorkspaces(k, c.query)), {
      query: S.ArchivedQuery,
      response: { 200: S.PageOf(S.Workspace), ...readErrors },
      detail: d("List board workspaces (action tack.workspace.read)", "The calling key's platform workspace's board workspaces, oldest first; archived ones with include_archived=true."),
    })
    .post("", (c) => idempotentAs(board, c, "tack.workspace.write", 201, (k) => board.createWorkspace(k, c.body)), {
      body: S.WorkspaceCreate,
      response: { 201: S.Workspace, ...writeErrors },
      detail: d("Create a board workspace (action tack.workspace.write); 201", `Owned by the calling key's platform workspace. 409 NAME_TAKEN when the name is in use. ${IDEMPOTENCY_NOTE}`),
    })
    .get(ws, (c) => as(board, c.principal, "tack.workspace.read", (k) => board.getWorkspace(k, c.params.workspace_id)), {
      params: S.WorkspaceParams,
      response: { 200: S.Workspace, ...readErrors },
      detail: d("Read a board workspace by name or id (action tack.workspace.read)", "Archived ones still answer."),
    })
    .patch(ws, (c) => as(board, c.principal, "tack.workspace.write", (k) => board.updateWorkspace(k, c.params.workspace_id, c.body)), {
      params: S.WorkspaceParams,
      body: S.WorkspacePatch,
      response: { 200: S.Workspace, ...writeErrors },
      detail: d("Update name, display_name or metadata (action tack.workspace.write)", "409 ARCHIVED for an archived workspace."),
    })
    .delete(ws, (c) => as(board, c.principal, "tack.workspace.write", (k) => board.archiveWorkspace(k, c.params.workspace_id)), {
      params: S.WorkspaceParams,
      response: { 200: S.Workspace, ...writeErrors },
      detail: d("Archive a board workspace (action tack.workspace.write)", "Soft: archived_at is set, the workspace leaves lists and becomes read-only; GET still answers. Idempotent."),
    })
    // ---------------------------------------------------------------- projects
    .get(`${ws}/projects`, (c) => as(board, c.principal, "tack.project.read", (k) => board.listProjects(k, c.params.workspace_id, c.query)), {
      params: S.WorkspaceParams,
      query: S.ArchivedQuery,
      response: { 200: S.PageOf(S.Project), ...readErrors },
      detail: d("List projects (action tack.project.read)", "Oldest first, each with its lists; archived ones with include_archived=true."),
    })
    .post(`${ws}/projects`, (c) => idempotentAs(board, c, "tack.project.write", 201, (k) => board.createProject(k, c.params.workspace_id, c.body)), {
      params: S.WorkspaceParams,
      body: S.ProjectCreate,
      response: { 201: S.Project, ...writeErrors },
      detail: d("Create a project, optionally with its lists (action tack.project.write); 201", `Project and lists in one transaction; status active. Emits project.created. ${IDEMPOTENCY_NOTE}`),
    })
    .get(proj, (c) => as(board, c.principal, "tack.project.read", (k) => board.getProject(k, c.params.workspace_id, c.params.project)), {
      params: S.ProjectParams,
      response: { 200: S.Project, ...readErrors },
      detail: d("Read a project by name or id (action tack.project.read)"),
    })
    .patch(proj, (c) => as(board, c.principal, "tack.project.write", (k) => board.updateProject(k, c.params.workspace_id, c.params.project, c.body)), {
      params: S.ProjectParams,
      body: S.ProjectPatch,
      response: { 200: S.Project, ...writeErrors },
      detail: d("Update name or display_name (action tack.project.write)"),
    })
    .delete(proj, (c) => as(board, c.principal, "tack.project.write", (k) => board.archiveProject(k, c.params.workspace_id, c.params.project)), {
      params: S.ProjectParams,
      response: { 200: S.Project, ...writeErrors },
      detail: d("Archive a project (action tack.project.write)", "Soft: status archived, archived_at set, read-only from then on. Emits project.archived."),
    })
    // ---------------------------------------------------------------- lists
    .get(`${proj}/lists`, (c) => as(board, c.principal, "tack.project.read", (k) => board.listLists(k, c.params.workspace_id, c.params.project)), {
      params: S.ProjectParams,
      response: { 200: S.PageOf(S.List), ...readErrors },
      detail: d("List a project's lists in position order (action tack.project.read)", "All of them (at most 50), in one page."),
    })
    .post(`${proj}/lists`, (c) => idempotentAs(board, c, "tack.project.write", 201, (k) => board.createList(k, c.params.workspace_id, c.params.project, c.body)), {
      params: S.ProjectParams,
      body: S.ListCreate,
      response: { 201: S.List, ...writeErrors },
      detail: d("Create a list (action tack.project.write); 201", `At position (default: the end); the lists after it shift. Emits list.created. ${IDEMPOTENCY_NOTE}`),
    })
    .get(list, (c) => as(board, c.principal, "tack.project.read", (k) => board.getList(k, c.params.workspace_id, c.params.project, c.params.list)), {
      params: S.ListParams,
      response: { 200: S.List, ...readErrors },
      detail: d("Read a list by name or id (action tack.project.read)"),
    })
    .patch(list, (c) => as(board, c.principal, "tack.project.write", (k) => board.updateList(k, c.params.workspace_id, c.params.project, c.params.list, c.body)), {
      params: S.ListParams,
      body: S.ListPatch,
      response: { 200: S.List, ...writeErrors },
      detail: d("Rename or reposition a list (action tack.project.write)", "position is a target index (clamped); the others shift. Emits list.updated."),
    })
    .delete(list, async (c) => {
      await as(board, c.principal, "tack.project.write", (k) => board.deleteList(k, c.params.workspace_id, c.params.project, c.params.list));
      c.set.status = 204;
    }, {
      params: S.ListParams,
      response: writeErrors,
      detail: { ...d("Delete a list (action tack.project.write); 204", "409 LIST_NOT_EMPTY while it holds active cards (move or archive them first); its archived cards go with it. Emits list.deleted."), responses: noContent() },
    })
    // ---------------------------------------------------------------- labels
    .get(`${ws}/labels`, (c) => as(board, c.principal, "tack.label.read", (k) => board.listLabels(k, c.params.workspace_id, c.query)), {
      params: S.WorkspaceParams,
      query: S.PageQuery,
      response: { 200: S.PageOf(S.Label), ...readErrors },
      detail: d("List labels by name (action tack.label.read)"),
    })
    .post(`${ws}/labels`, (c) => idempotentAs(board, c, "tack.label.write", 201, (k) => board.createLabel(k, c.params.workspace_id, c.body)), {
      params: S.WorkspaceParams,
      body: S.LabelCreate,
      response: { 201: S.Label, ...writeErrors },
      detail: d("Create a label (action tack.label.write); 201", `Names are unique in the workspace (409 NAME_TAKEN). ${IDEMPOTENCY_NOTE}`),
    })
    .get(label, (c) => as(board, c.principal, "tack.label.read", (k) => board.getLabel(k, c.params.workspace_id, c.params.label)), {
      params: S.LabelParams,
      response: { 200: S.Label, ...readErrors },
      detail: d("Read a label by name or id (action tack.label.read)"),
    })
    .patch(label, (c) => as(board, c.principal, "tack.label.write", (k) => board.updateLabel(k, c.params.workspace_id, c.params.label, c.body)), {
      params: S.LabelParams,
      body: S.LabelPatch,
      response: { 200: S.Label, ...writeErrors },
      detail: d("Rename or recolor a label (action tack.label.write)", "Cards show the new name."),
    })
    .delete(label, async (c) => {
      await as(board, c.principal, "tack.label.write", (k) => board.deleteLabel(k, c.params.workspace_id, c.params.label));
      c.set.status = 204;
    }, {
      params: S.LabelParams,
      response: writeErrors,
      detail: { ...d("Delete a label (action tack.label.write); 204", "Deleted for real; cards lose it."), responses: noContent() },
    });
}
