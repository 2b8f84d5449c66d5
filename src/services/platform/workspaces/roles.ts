/**
 * Workspace roles: the shared built-ins (owner, admin, member; read-only) and custom roles
 * with their own policy. Also the grant rules the member and invitation services share:
 * nobody hands out (or takes away) more authority than they hold themselves.
 */
import { policyCovers, validatePolicy, type Policy } from "../../../access/policy";
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { isUniqueViolation } from "../../../core/store/sql";
import { badRequest, conflict, forbidden, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import type { AppContext } from "../../../context";
import { audit, type RequestMeta, type Authz, type WorkspaceAccess } from "../../../kernel/tenancy";
import * as store from "./store/roles";
import * as members from "./store/members";
import { BUILTIN_ROLE_IDS } from "./store/workspaces";
import { roleView } from "./views";

export const ROLE_NAME_RE = /^[a-z0-9_-]{1,64}$/;
const DESCRIPTION_MAX = 500;

/** What authorizeWorkspace answers: the workspace, the caller's membership and policies. */
export type { WorkspaceAccess } from "../../../kernel/tenancy";

export const isOwner = (access: WorkspaceAccess) => access.membership?.role_id === BUILTIN_ROLE_IDS.owner;

/**
 * The caller's authority is the intersection of its policies (an API key: its own and its
 * minter's), so a policy is within it only when every one of them covers it.
 */
export const callerCovers = (access: WorkspaceAccess, policy: Policy) => access.policies.every((p) => policyCovers(p, policy));

export const parsePolicy = (s: string): Policy => JSON.parse(s) as Policy;

const nameTaken = () => conflict("A role with this name exists in the workspace", "ROLE_NAME_TAKEN");

/** A unique-name race lost at the write (PostgreSQL checks it at the statement, not at our read): the same 409. */
async function nameRace<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (e) {
    throw isUniqueViolation(e) ? nameTaken() : e;
  }
}

export class RoleService {
  constructor(
    private readonly ctx: AppContext,
    private readonly authz: Authz,
  ) {}

  /** A role the workspace may use, or 404 (another workspace's custom role included). */
  async resolve(db: Sql, workspaceId: string, roleId: string) {
    const r = await store.visibleRole(db, workspaceId, roleId);
    if (!r) throw notFound("Role");
    return r;
  }

  /**
   * May the caller give someone this role, or take it away from them? The owner role is
   * the owners' to hand out (an API key is never an owner), and any other role only when
   * the caller's own policy covers it: otherwise an admin could mint a role with
   * workspace.delete, or strip a member more powerful than themselves.
   */
  assertCanGrant(access: WorkspaceAccess, role: { id: string; policy: string }) {
    if (role.id === BUILTIN_ROLE_IDS.owner) {
      if (!isOwner(access)) throw forbidden("Only owners may grant or take away the owner role", "OWNER_REQUIRED");
      return;
    }
    if (!callerCovers(access, parsePolicy(role.policy))) {
      throw forbidden("This role grants more than you are allowed yourself", "ROLE_EXCEEDS_CALLER");
    }
  }

  async list(p: Principal, slug: string, q: { limit?: number; cursor?: string }) {
    const limit = parseLimit(q.limit, 50, 100);
    const after = decodeCursor<{ id: string }>(q.cursor)?.id ?? null;
    const { workspace } = await this.authz.authorizeWorkspace(this.ctx.db, p, { slug }, "role.list");
    return buildPage(await store.listRoles(this.ctx.db, workspace.id, after, limit + 1), limit, (r) => ({ id: r.id }), roleView);
  }

  async get(p: Principal, slug: string, roleId: string) {
    const { workspace } = await this.authz.authorizeWorkspace(this.ctx.db, p, { slug }, "role.read");
    return roleView(await this.resolve(this.ctx.db, workspace.id, roleId));
  }

  create(p: Principal, slug: string, b: { name: unknown; description?: unknown; policy: unknown }, meta: RequestMeta) {
    const name = validateName(b.name);
    const description = validateDescription(b.description) ?? "";
    const policy = validatePolicy(b.policy, this.ctx.actions);
    return nameRace(
      tx(this.ctx.db, async (t) => {
        const access = await this.authz.authorizeWorkspace(t, p, { slug }, "role.create");
        const ws = access.workspace;
        if (!callerCovers(access, policy)) throw forbidden("The policy grants more than you are allowed yourself", "ROLE_EXCEEDS_CALLER");
        if (await store.roleNameTaken(t, ws.id, name)) throw nameTaken();
        const now = this.ctx.clock.iso();
        const id = uuid();
        await store.insertRole(t, { id, workspace_id: ws.id, name, description, policy: JSON.stringify(policy), created_at: now, updated_at: now });
        await audit(t, this.ctx, { actor: p, action: "role.create", workspaceId: ws.id, target: { type: "role", id }, meta, metadata: { name, policy } });
        return roleView(await this.resolve(t, ws.id, id));
      }),
    );
  }

  update(p: Principal, slug: string, roleId: string, b: { name?: unknown; description?: unknown; policy?: unknown }, meta: RequestMeta) {
    const name = b.name === undefined ? undefined : validateName(b.name);
    const description = validateDescription(b.description);
    const policy = b.policy === undefined ? undefined : validatePolicy(b.policy, this.ctx.actions);
    return nameRace(
      tx(this.ctx.db, async (t) => {
        const access = await this.authz.authorizeWorkspace(t, p, { slug }, "role.update");
        const ws = access.workspace;
        const role = await this.editable(t, access, roleId);
        if (policy && !callerCovers(access, policy)) throw forbidden("The policy grants more than you are allowed yourself", "ROLE_EXCEEDS_CALLER");
        if (name !== undefined && name !== role.name && (await store.roleNameTaken(t, ws.id, name, role.id))) throw nameTaken();
        await store.updateRole(t, role.id, {
          name: name ?? role.name,
          description: description ?? role.description,
          policy: policy ? JSON.stringify(policy) : role.policy,
          updated_at: this.ctx.clock.iso(),
        });
        const changed = Object.fromEntries(Object.entries({ name, description, policy }).filter(([, v]) => v !== undefined));
        await audit(t, this.ctx, { actor: p, action: "role.update", workspaceId: ws.id, target: { type: "role", id: role.id }, meta, metadata: changed });
        return roleView(await this.resolve(t, ws.id, role.id));
      }),
    );
  }

  async remove(p: Principal, slug: string, roleId: string, meta: RequestMeta): Promise<void> {
    await tx(this.ctx.db, async (t) => {
      const access = await this.authz.authorizeWorkspace(t, p, { slug }, "role.delete");
      const ws = access.workspace;
      const role = await this.editable(t, access, roleId);
      const holders = await members.countMembersWithRole(t, ws.id, role.id);
      const invited = await store.countLiveInvitationsWithRole(t, role.id, this.ctx.clock.nowMs());
      if (holders || invited) {
        throw conflict(`The role is held by ${holders} member(s) and offered by ${invited} pending invitation(s); reassign or revoke them first`, "ROLE_IN_USE");
      }
      await store.deleteRole(t, role.id);
      await audit(t, this.ctx, { actor: p, action: "role.delete", workspaceId: ws.id, target: { type: "role", id: role.id }, meta, metadata: { name: role.name } });
    });
  }

  /** A custom role of this workspace the caller may change: built-ins are read-only, and a role above the caller is out of reach. */
  private async editable(t: Sql, access: WorkspaceAccess, roleId: string) {
    const role = await this.resolve(t, access.workspace.id, roleId);
    if (role.builtin) throw forbidden("Built-in roles are read-only", "BUILTIN_ROLE");
    if (!callerCovers(access, parsePolicy(role.policy))) throw forbidden("This role grants more than you are allowed yourself", "ROLE_EXCEEDS_CALLER");
    return role;
  }
}

function validateName(v: unknown): string {
  if (typeof v !== "string" || !ROLE_NAME_RE.test(v)) {
    throw badRequest("Invalid role name", [{ field: "name", reason: "1-64 of lowercase letters, digits, underscore and hyphen" }]);
  }
  return v;
}

function validateDescription(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (v === null) return "";
  if (typeof v !== "string" || v.length > DESCRIPTION_MAX) throw badRequest("Invalid description", [{ field: "description", reason: `at most ${DESCRIPTION_MAX} characters` }]);
  return v;
}
