/**
 * Tenancy, the kernel room every product's workspace routes go through: who is calling
 * (principal resolution), what they may do in which workspace (policies, the per-workspace
 * service switches) and the workspace-delete cascade every module joins. createApp builds it
 * once, before any module; the platform module (services/platform) manages workspaces,
 * members, roles and keys over HTTP on top of it.
 */
import type { RequestMeta } from "../../access/http";
import type { Principal } from "../../access/principal";
import type { Sql } from "../../core/db";
import type { AppContext } from "../../context";
import { Authz } from "./authz";
import { workspaceById, type WorkspaceRow } from "./store";

/** Runs inside the transaction that deletes a workspace, with its handle t. */
export type WorkspaceDeleteHook = (t: Sql, workspaceId: string, actor: Principal, meta: RequestMeta) => Promise<void> | void;

/** A workspace's display name, for other services (the mail brand's default name); null when there is none. */
export async function workspaceDisplayName(db: Sql, workspaceId: string): Promise<string | null> {
  return (await workspaceById(db, workspaceId))?.display_name ?? null;
}

export class Tenancy {
  readonly authz: Authz;
  private readonly deleteHooks: WorkspaceDeleteHook[] = [];

  constructor(readonly ctx: AppContext) {
    this.authz = new Authz(ctx);
  }

  /**
   * The guard of a product's workspace routes: the workspace once `p` may do `action` in it
   * (404 for an unknown workspace, another workspace's key or a non-member; 403 without the
   * action) and `service` is switched on for it (403 SERVICE_NOT_ENABLED). The id as given.
   */
  async guard(p: Principal, workspaceId: string, action: string, service: string): Promise<WorkspaceRow> {
    const { workspace } = await this.authz.authorizeService(this.ctx.db, p, { id: workspaceId }, action, service);
    return workspace;
  }

  /** Joins the cascade of a workspace delete (hooks run in the order they joined). */
  onWorkspaceDelete(hook: WorkspaceDeleteHook) {
    this.deleteHooks.push(hook);
  }

  /** Called by the workspace delete, inside its transaction, before the row goes. */
  async workspaceDeleting(t: Sql, workspaceId: string, actor: Principal, meta: RequestMeta) {
    for (const hook of this.deleteHooks) await hook(t, workspaceId, actor, meta);
  }
}
