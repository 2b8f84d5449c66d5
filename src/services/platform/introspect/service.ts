/**
 * Introspection for other services: who is calling, what role and policy they hold in a
 * workspace, which services are on, and what a workspace API key may do.
 */
import { policyCovers, type Policy } from "../../../access/policy";
import type { Principal } from "../../../access/principal";
import { unauthorized } from "../../../core/errors";
import { type MaybePromise } from "../../../core/maybe-promise";
import type { AppContext } from "../../../context";
import { platformGeneration, type Authz } from "../../../kernel/tenancy";
import { accountById } from "../identity";
import * as ws from "../workspaces";

/** Statements of a key's policy its minter's current policy still covers (a key never exceeds its minter). */
export function effectiveKeyPolicy(keyPolicy: Policy, minterPolicy: Policy): Policy {
  return keyPolicy.filter((s) => policyCovers(minterPolicy, [s]));
}

export class IntrospectService {
  private cache = new Map<string, { gen: number; at: number; view: Awaited<ReturnType<IntrospectService["loadAccountView"]>> }>();

  constructor(
    private readonly ctx: AppContext,
    private readonly authz: Authz,
    private readonly workspaces: ws.WorkspaceService,
  ) {}

  async current(p: Principal) {
    if (p.kind === "api_key") {
      const w = await ws.workspaceById(this.ctx.db, p.workspaceId);
      return {
        is_authenticated: true as const,
        principal: { type: "api_key" as const, id: p.keyId, workspace_id: p.workspaceId, created_by: p.createdBy },
        account: null,
        workspaces: w ? [{ id: w.id, slug: w.slug, display_name: w.display_name, role: "api_key", services: await ws.enabledServices(this.ctx.db, w.id), avatar_url: this.workspaces.avatarUrl(w) }] : [],
      };
    }
    return {
      is_authenticated: true as const,
      principal: p.kind === "session" ? { type: "user" as const, id: p.accountId, session_id: p.sessionId } : { type: "personal_token" as const, id: p.accountId, token_id: p.tokenId },
      ...(await this.accountView(p.accountId)),
    };
  }

  /**
   * Account and workspaces of an account. Cached per account and dropped as soon as any
   * platform mutation happens (platformGeneration), so the answer is never stale: a load the
   * generation moved under is answered but not kept (see read-cache.ts).
   */
  private accountView(accountId: string): MaybePromise<Awaited<ReturnType<IntrospectService["loadAccountView"]>>> {
    const gen = platformGeneration(this.ctx);
    const maxAge = this.ctx.caches.maxAgeMs;
    const hit = this.cache.get(accountId);
    if (hit && hit.gen === gen && (maxAge === Number.POSITIVE_INFINITY || this.ctx.clock.nowMs() - hit.at < maxAge)) return hit.view;
    return this.loadAccountView(accountId).then((view) => {
      if (platformGeneration(this.ctx) === gen) {
        if (this.cache.size >= 10_000) this.cache.clear();
        this.cache.set(accountId, { gen, at: this.ctx.clock.nowMs(), view });
      }
      return view;
    });
  }

  private async loadAccountView(accountId: string) {
    const a = (await accountById(this.ctx.db, accountId))!;
    const rows = await ws.workspacesOfAccount(this.ctx.db, accountId, null, 1000);
    // One static, index-prefix query per workspace beats a dynamic IN list for typical accounts.
    const services = await Promise.all(rows.map((r) => ws.enabledServices(this.ctx.db, r.id)));
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
      workspaces: rows.map((r, i) => ({
        id: r.id,
        slug: r.slug,
        display_name: r.display_name,
        role: r.member_role,
        services: services[i]!,
        avatar_url: this.workspaces.avatarUrl(r),
      })),
    };
  }

  /** Members get their role and policy; everyone else the same answer whether or not the workspace exists. */
  async workspace(p: Principal, workspaceId: string) {
    const nothing = { is_member: false, role: {}, policy: [] as Policy, services: [] as string[] };
    const eff = await this.authz.effectivePolicies(this.ctx.db, p, workspaceId);
    if (!eff) return nothing;
    const services = await ws.enabledServices(this.ctx.db, workspaceId);
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
