/**
 * Workspace members: list, change role, remove or leave.
 *
 * Rules: a workspace always keeps at least one owner (409 LAST_OWNER); only owners move
 * the owner role; nobody grants, or takes away, a role beyond their own policy (see
 * RoleService.assertCanGrant). A member may always leave without member.delete.
 */
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { conflict, notFound } from "../../../core/errors";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import type { AppContext } from "../../../context";
import { audit, type RequestMeta, type Authz } from "../../../kernel/tenancy";
import type { RoleService, WorkspaceAccess } from "./roles";
import * as store from "./store/members";
import { memberView } from "./views";
import { BUILTIN_ROLE_IDS } from "./store/workspaces";

export class MemberService {
  constructor(
    private readonly ctx: AppContext,
    private readonly authz: Authz,
    private readonly roles: RoleService,
  ) {}

  async list(p: Principal, slug: string, q: { limit?: number; cursor?: string }) {
    const limit = parseLimit(q.limit, 20, 100);
    const after = decodeCursor<{ id: string }>(q.cursor)?.id ?? null;
    const { workspace } = await this.authz.authorizeWorkspace(this.ctx.db, p, { slug }, "member.list");
    return buildPage(await store.listMembers(this.ctx.db, workspace.id, after, limit + 1), limit, (r) => ({ id: r.id }), memberView);
  }

  updateRole(p: Principal, slug: string, memberId: string, b: { role_id: string }, meta: RequestMeta) {
    return tx(this.ctx.db, async (t) => {
      const access = await this.authz.authorizeWorkspace(t, p, { slug }, "member.update");
      const ws = access.workspace;
      const target = await this.member(t, ws.id, memberId);
      const next = await this.roles.resolve(t, ws.id, b.role_id);
      if (next.id === target.role_id) return memberView(target);
      // Changing a role takes the old one away and grants the new one: both must be within reach.
      this.roles.assertCanGrant(access, { id: target.role_id, policy: target.role_policy });
      this.roles.assertCanGrant(access, next);
      if (target.role_id === BUILTIN_ROLE_IDS.owner) await this.assertNotLastOwner(t, ws.id);
      await store.setMemberRole(t, target.id, next.id, this.ctx.clock.iso());
      await audit(t, this.ctx, {
        actor: p,
        action: "member.update",
        workspaceId: ws.id,
        target: { type: "member", id: target.id },
        meta,
        metadata: { account_id: target.account_id, from_role_id: target.role_id, to_role_id: next.id },
      });
      return memberView(await this.member(t, ws.id, target.id));
    });
  }

  async remove(p: Principal, slug: string, memberId: string, meta: RequestMeta): Promise<void> {
    await tx(this.ctx.db, async (t) => {
      const { access, leaving } = await this.authorizeRemoval(t, p, slug, memberId);
      const ws = access.workspace;
      const target = await this.member(t, ws.id, memberId);
      if (!leaving) this.roles.assertCanGrant(access, { id: target.role_id, policy: target.role_policy });
      if (target.role_id === BUILTIN_ROLE_IDS.owner) await this.assertNotLastOwner(t, ws.id);
      // The member's API keys lose their authority with the membership: a key's policy is
      // intersected with its minter's current role on every use.
      await store.deleteMember(t, target.id);
      await audit(t, this.ctx, {
        actor: p,
        action: leaving ? "member.leave" : "member.delete",
        workspaceId: ws.id,
        target: { type: "member", id: target.id },
        meta,
        metadata: { account_id: target.account_id, role_id: target.role_id },
      });
    });
  }

  /**
   * member.delete, except that removing one's own membership (leaving) needs no action:
   * a member whose role lacks it must still be able to go.
   */
  private async authorizeRemoval(t: Sql, p: Principal, slug: string, memberId: string): Promise<{ access: WorkspaceAccess; leaving: boolean }> {
    const access = await this.authz.workspaceAccess(t, p, { slug });
    const leaving = access.membership?.id === memberId;
    if (!leaving) this.authz.assertAllowed(access, "member.delete");
    return { access, leaving };
  }

  private async member(t: Sql, workspaceId: string, memberId: string) {
    const m = await store.memberById(t, workspaceId, memberId);
    if (!m) throw notFound("Member");
    return m;
  }

  /** Runs inside the caller's transaction, holding the workspace's row, so two owners leaving at once cannot both pass. */
  private async assertNotLastOwner(t: Sql, workspaceId: string) {
    await store.lockWorkspace(t, workspaceId);
    if ((await store.countMembersWithRole(t, workspaceId, BUILTIN_ROLE_IDS.owner)) <= 1) {
      throw conflict("A workspace needs at least one owner: make someone else owner first", "LAST_OWNER");
    }
  }
}
