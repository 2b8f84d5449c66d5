/**
 * Credential resolution and workspace authorization. Every workspace route goes through
 * authorizeWorkspace: unknown workspace, another workspace's key, or a non-member all
 * answer the same 404; a member or key whose policy lacks the action gets 403.
 */
import { isAllowedByAll, type Policy } from "../../access/policy";
import type { Principal, PrincipalResolver } from "../../access/principal";
import { ApiError, forbidden, notFound, unauthorized } from "../../core/errors";
import { MINUTE } from "../../core/clock";
import { hashToken } from "../../core/secrets";
import type { AppContext } from "../../context";
import { PlatformReadCache } from "./read-cache";
import type { SessionTokens } from "./tokens";
import * as accounts from "./store/accounts";
import * as keys from "./store/keys";
import * as ws from "./store/workspaces";

export const API_KEY_PREFIX = "svc_live_";
export const PAT_PREFIX = "pat_";

export interface WorkspaceAccess {
  workspace: ws.WorkspaceRow;
  membership: ws.MembershipRow | null;
  policies: Policy[];
}

const parsePolicy = (s: string | null): Policy => (s ? (JSON.parse(s) as Policy) : []);

type ApiKeyPrincipal = Extract<Principal, { kind: "api_key" }>;

export class Authz implements PrincipalResolver {
  /** Resolved API keys by token hash: the row (revocation, expiry, last use) and its principal, policies parsed once. */
  private readonly apiKeys: PlatformReadCache<{ row: keys.ApiKeyAuthRow; principal: ApiKeyPrincipal }>;
  private readonly workspaces: PlatformReadCache<ws.WorkspaceRow>;

  constructor(
    private readonly ctx: AppContext,
    private readonly tokens: SessionTokens,
  ) {
    this.apiKeys = new PlatformReadCache(ctx);
    this.workspaces = new PlatformReadCache(ctx);
  }

  async resolve(bearer: string | null, cookie: string | null): Promise<Principal | null> {
    const token = bearer ?? cookie;
    if (!token) return null;
    if (token.startsWith(API_KEY_PREFIX)) return this.resolveApiKey(token);
    if (token.startsWith(PAT_PREFIX)) return this.resolvePersonalToken(token);
    const claims = await this.tokens.verifyAccess(token);
    if (!claims) return null;
    const s = accounts.sessionForAuth(this.ctx.db, claims.sid);
    if (!s || s.revoked_at || s.expires_at <= this.ctx.clock.nowMs() || s.account_id !== claims.sub) return null;
    this.assertActive(s.status);
    return { kind: "session", accountId: s.account_id, sessionId: s.session_id, isOperator: !!s.is_operator };
  }

  /** A suspended or deactivated account's credentials stop working with a clear 403; blocked ones look invalid. */
  private assertActive(status: string) {
    if (status === "active") return;
    if (status === "suspended") throw new ApiError(403, "ACCOUNT_SUSPENDED", "This account is suspended");
    if (status === "deactivated") throw new ApiError(403, "ACCOUNT_DEACTIVATED", "This account is deactivated");
    throw unauthorized("Missing or invalid access token");
  }

  private resolveApiKey(token: string): Principal | null {
    const hit = this.apiKeys.get(hashToken(token), (hash) => {
      const row = keys.apiKeyForAuth(this.ctx.db, hash);
      if (!row) return null;
      // The key's authority is its own policy intersected with what its minter may do today.
      const minterPolicy = row.minter_status === "active" ? parsePolicy(row.minter_policy) : [];
      return { row, principal: { kind: "api_key", keyId: row.id, workspaceId: row.workspace_id, policy: parsePolicy(row.policy), createdBy: row.created_by, minterPolicy } };
    });
    const now = this.ctx.clock.nowMs();
    if (!hit) return null;
    const { row, principal } = hit;
    if (row.revoked_at || (row.expires_at !== null && row.expires_at <= now)) return null;
    // last_used_at is advisory: write it at most once a minute (the row we hold says when it was last written).
    if (!row.last_used_at || Date.parse(row.last_used_at) < now - MINUTE) {
      row.last_used_at = this.ctx.clock.iso();
      keys.touchApiKey(this.ctx.db, row.id, row.last_used_at, new Date(now - MINUTE).toISOString());
    }
    return principal;
  }

  private resolvePersonalToken(token: string): Principal | null {
    const row = keys.personalTokenForAuth(this.ctx.db, hashToken(token));
    if (!row || row.revoked_at || (row.expires_at !== null && row.expires_at <= this.ctx.clock.nowMs())) return null;
    this.assertActive(row.status);
    const now = this.ctx.clock.nowMs();
    if (!row.last_used_at || Date.parse(row.last_used_at) < now - MINUTE) {
      keys.touchPersonalToken(this.ctx.db, row.id, this.ctx.clock.iso(), new Date(now - MINUTE).toISOString());
    }
    return { kind: "personal_token", accountId: row.account_id, tokenId: row.id, isOperator: !!row.is_operator };
  }

  /**
   * The policy in force for a principal in a workspace, or null when it has no access at
   * all there (not a member, another workspace's key).
   */
  effectivePolicies(p: Principal, workspaceId: string): { policies: Policy[]; membership: ws.MembershipRow | null } | null {
    if (p.kind === "api_key") {
      if (p.workspaceId !== workspaceId) return null;
      return { policies: [p.policy, p.minterPolicy], membership: null };
    }
    const m = ws.membership(this.ctx.db, workspaceId, p.accountId);
    if (!m) return null;
    return { policies: [parsePolicy(m.role_policy)], membership: m };
  }

  /**
   * Loads the workspace by slug (or id) with the caller's policies. Unknown workspace,
   * non-member and another workspace's key all get the same 404.
   */
  workspaceAccess(p: Principal, ref: { slug?: string; id?: string }): WorkspaceAccess {
    const workspace = ref.id
      ? this.workspaces.get(`id:${ref.id}`, () => ws.workspaceById(this.ctx.db, ref.id!))
      : this.workspaces.get(`slug:${ref.slug}`, () => ws.workspaceBySlug(this.ctx.db, ref.slug!));
    if (!workspace) throw notFound("Workspace");
    const eff = this.effectivePolicies(p, workspace.id);
    if (!eff) throw notFound("Workspace");
    return { workspace, membership: eff.membership, policies: eff.policies };
  }

  /** 403 unless every policy in force allows `action` on the workspace. */
  assertAllowed(access: WorkspaceAccess, action: string) {
    if (!isAllowedByAll(access.policies, action, `workspace/${access.workspace.id}`)) throw forbidden(`Not allowed: ${action}`);
  }

  /** workspaceAccess + assertAllowed: the guard of every workspace route. */
  authorizeWorkspace(p: Principal, ref: { slug?: string; id?: string }, action: string): WorkspaceAccess {
    const access = this.workspaceAccess(p, ref);
    this.assertAllowed(access, action);
    return access;
  }

  /** Services other than the platform answer 403 when the workspace has not enabled them. */
  requireService(workspaceId: string, service: string) {
    if (service === "platform") return;
    if (!ws.isServiceEnabled(this.ctx.db, workspaceId, service)) {
      throw forbidden(`The ${service} service is not enabled for this workspace`, "SERVICE_NOT_ENABLED");
    }
  }
}
