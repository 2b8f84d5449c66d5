/**
 * Introspection for other services: who is calling, what role and policy they hold in a
 * workspace, which services are on, and what a workspace API key may do.
 */
import { policyCovers, type Policy } from "../../access/policy";
import type { Principal } from "../../access/principal";
import { isUuid } from "../../core/ids";
import { unauthorized } from "../../core/errors";
import type { AppContext } from "../../context";
import { platformGeneration } from "./audit";
import type { Authz } from "./authz";
import * as accounts from "./store/accounts";
import * as ws from "./store/workspaces";
import type { WorkspaceService } from "./workspaces";

/** Statements of a key's policy its minter's current policy still covers (a key never exceeds its minter). */
export function effectiveKeyPolicy(keyPolicy: Policy, minterPolicy: Policy): Policy {
  return keyPolicy.filter((s) => policyCovers(minterPolicy, [s]));
}

export class IntrospectService {
  private cache = new Map<string, { gen: number; view: ReturnType<IntrospectService["loadAccountView"]> }>();

  constructor(
    private readonly ctx: AppContext,
    private readonly authz: Authz,
    private readonly workspaces: WorkspaceService,
  ) {}

  current(p: Principal) {
    if (p.kind === "api_key") {
      const w = ws.workspaceById(this.ctx.db, p.workspaceId);
      return {
        is_authenticated: true,
        principal: { type: "api_key", id: p.keyId, workspace_id: p.workspaceId, created_by: p.createdBy },
        account: null,
        workspaces: w ? [{ id: w.id, slug: w.slug, display_name: w.display_name, role: "api_key", services: ws.enabledServices(this.ctx.db, w.id), avatar_url: this.workspaces.avatarUrl(w) }] : [],
      };
    }
    return {
      is_authenticated: true,
      principal: { type: p.kind === "session" ? "user" : "personal_token", id: p.accountId, ...(p.kind === "session" ? { session_id: p.sessionId } : { token_id: p.tokenId }) },
      ...this.accountView(p.accountId),
    };
  }

  /**
   * Account and workspaces of an account. Cached per account and dropped as soon as any
   * platform mutation happens (platformGeneration), so the answer is never stale.
   */
  private accountView(accountId: string) {
    const gen = platformGeneration(this.ctx);
    const hit = this.cache.get(accountId);
    if (hit && hit.gen === gen) return hit.view;
    if (this.cache.size >= 10_000) this.cache.clear();
    const view = this.loadAccountView(accountId);
    this.cache.set(accountId, { gen, view });
    return view;
  }

  private loadAccountView(accountId: string) {
    const a = accounts.accountById(this.ctx.db, accountId)!;
    const rows = ws.workspacesOfAccount(this.ctx.db, accountId, null, 1000);
    return {
      account: {
        id: a.id,
        email: a.email,
        username: a.username,
        display_name: a.display_name,
        status: a.status,
        is_operator: !!a.is_operator,
        created_at: a.created_at,
      },
      workspaces: rows.map((r) => ({
        id: r.id,
        slug: r.slug,
        display_name: r.display_name,
        role: r.member_role,
        // One static, index-prefix query per workspace beats a dynamic IN list for typical accounts.
        services: ws.enabledServices(this.ctx.db, r.id),
        avatar_url: this.workspaces.avatarUrl(r),
      })),
    };
  }

  /** Members get their role and policy; everyone else the same answer whether or not the workspace exists. */
  workspace(p: Principal, workspaceId: string) {
    const nothing = { is_member: false, role: {}, policy: [] as Policy, services: [] as string[] };
    if (!isUuid(workspaceId)) return nothing;
    const eff = this.authz.effectivePolicies(p, workspaceId);
    if (!eff) return nothing;
    const services = ws.enabledServices(this.ctx.db, workspaceId);
    if (p.kind === "api_key") {
      return { is_member: true, role: { id: null, name: "api_key" }, policy: effectiveKeyPolicy(p.policy, p.minterPolicy), services };
    }
    const m = eff.membership!;
    return { id: m.id, is_member: true, role: { id: m.role_id, name: m.role_name }, policy: eff.policies[0], services };
  }

  apiKey(p: Principal | null) {
    if (!p || p.kind !== "api_key") throw unauthorized("A valid workspace API key is required", "INVALID_API_KEY");
    return {
      is_valid: true,
      workspace_id: p.workspaceId,
      policy: effectiveKeyPolicy(p.policy, p.minterPolicy),
      created_by: p.createdBy,
      api_key_id: p.keyId,
    };
  }
}
