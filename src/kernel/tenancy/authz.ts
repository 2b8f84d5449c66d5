/**
 * Credential resolution and workspace authorization. Every workspace route goes through
 * authorizeWorkspace: unknown workspace, another workspace's key, or a non-member all
 * answer the same 404; a member or key whose policy lacks the action gets 403.
 *
 * The methods other services call take the handle they run on first: the database, or the
 * caller's open transaction (a check inside a transaction must read through it). For an API
 * key whose workspace is cached they answer without a promise (core/maybe-promise.ts).
 */
import { isAllowedByAll, type Policy } from "../../access/policy";
import type { Principal, PrincipalResolver } from "../../access/principal";
import { ApiError, forbidden, notFound, unauthorized } from "../../core/errors";
import { MINUTE } from "../../core/clock";
import type { Sql } from "../../core/db";
import { andThen, type MaybePromise } from "../../core/maybe-promise";
import { hashToken } from "../../core/secrets";
import type { AppContext } from "../../context";
import { PlatformReadCache } from "./read-cache";
import * as store from "./store";

export const API_KEY_PREFIX = "svc_live_";
export const PAT_PREFIX = "pat_";

/**
 * Turns a console session token into its principal, or null: console accounts and their
 * sessions are the platform's (services/platform), which hands its resolver to the kernel
 * when it is created (Authz.acceptSessions).
 */
export type SessionResolver = (token: string) => Promise<Principal | null>;

export interface WorkspaceAccess {
  workspace: store.WorkspaceRow;
  membership: store.MembershipRow | null;
  policies: Policy[];
}

/** A suspended or deactivated account's credentials stop working with a clear 403; blocked ones look invalid. */
export function assertAccountActive(status: string) {
  if (status === "active") return;
  if (status === "suspended") throw new ApiError(403, "ACCOUNT_SUSPENDED", "This account is suspended");
  if (status === "deactivated") throw new ApiError(403, "ACCOUNT_DEACTIVATED", "This account is deactivated");
  throw unauthorized("Missing or invalid access token");
}

const parsePolicy = (s: string | null): Policy => (s ? (JSON.parse(s) as Policy) : []);

type ApiKeyPrincipal = Extract<Principal, { kind: "api_key" }>;

export class Authz implements PrincipalResolver {
  /** Resolved API keys by token hash: the row (revocation, expiry, last use) and its principal, policies parsed once. */
  private readonly apiKeys: PlatformReadCache<{ row: store.ApiKeyAuthRow; principal: ApiKeyPrincipal; lastUsedMs: number }>;
  private readonly workspaces: PlatformReadCache<store.WorkspaceRow>;
  /** Enabled services by workspace id (switching one is audited, which empties the cache). */
  private readonly services: PlatformReadCache<{ enabled: ReadonlySet<string> }>;

  private sessions: SessionResolver | null = null;

  constructor(private readonly ctx: AppContext) {
    this.apiKeys = new PlatformReadCache(ctx);
    this.workspaces = new PlatformReadCache(ctx);
    this.services = new PlatformReadCache(ctx);
  }

  /** Without a promise for a cached API key (the hot path of every workspace API call). */
  resolve(bearer: string | null, cookie: string | null): MaybePromise<Principal | null> {
    const token = bearer ?? cookie;
    if (!token) return null;
    if (token.startsWith(API_KEY_PREFIX)) return this.resolveApiKey(token);
    if (token.startsWith(PAT_PREFIX)) return this.resolvePersonalToken(token);
    return this.resolveSession(token);
  }

  /** The console's session resolver (the platform module's, once, when it is created). */
  acceptSessions(resolver: SessionResolver) {
    if (this.sessions) throw new Error("console sessions are already resolved by another module");
    this.sessions = resolver;
  }

  private async resolveSession(token: string): Promise<Principal | null> {
    return this.sessions ? this.sessions(token) : null;
  }

  private loadApiKey = async (db: Sql, hash: string) => {
    const row = await store.apiKeyForAuth(db, hash);
    if (!row) return null;
    // The key's authority is its own policy intersected with what its minter may do today.
    const minterPolicy = row.minter_status === "active" ? parsePolicy(row.minter_policy) : [];
    const principal: ApiKeyPrincipal = { kind: "api_key", keyId: row.id, workspaceId: row.workspace_id, policy: parsePolicy(row.policy), createdBy: row.created_by, minterPolicy };
    // last_used_at as a number once, not parsed from its ISO string on every request.
    return { row, principal, lastUsedMs: row.last_used_at ? Date.parse(row.last_used_at) : Number.NEGATIVE_INFINITY };
  };

  /** A cached key answers without touching the database, except for the last_used_at write once a minute. */
  private resolveApiKey(token: string): MaybePromise<Principal | null> {
    return andThen(this.apiKeys.get(this.ctx.db, hashToken(token), this.loadApiKey), (hit): MaybePromise<Principal | null> => {
      const now = this.ctx.clock.nowMs();
      if (!hit) return null;
      const { row, principal } = hit;
      if (row.revoked_at || (row.expires_at !== null && row.expires_at <= now)) return null;
      // last_used_at is advisory: write it at most once a minute (the entry we hold says when it was last written).
      if (hit.lastUsedMs < now - MINUTE) {
        hit.lastUsedMs = now;
        row.last_used_at = this.ctx.clock.iso();
        return store.touchApiKey(this.ctx.db, row.id, row.last_used_at, new Date(now - MINUTE).toISOString()).then(() => principal);
      }
      return principal;
    });
  }

  private async resolvePersonalToken(token: string): Promise<Principal | null> {
    const row = await store.personalTokenForAuth(this.ctx.db, hashToken(token));
    if (!row || row.revoked_at || (row.expires_at !== null && row.expires_at <= this.ctx.clock.nowMs())) return null;
    assertAccountActive(row.status);
    const now = this.ctx.clock.nowMs();
    if (!row.last_used_at || Date.parse(row.last_used_at) < now - MINUTE) {
      await store.touchPersonalToken(this.ctx.db, row.id, this.ctx.clock.iso(), new Date(now - MINUTE).toISOString());
    }
    return { kind: "personal_token", accountId: row.account_id, tokenId: row.id, isOperator: !!row.is_operator };
  }

  /**
   * The policy in force for a principal in a workspace, or null when it has no access at
   * all there (not a member, another workspace's key). An API key needs no read.
   */
  effectivePolicies(db: Sql, p: Principal, workspaceId: string): MaybePromise<{ policies: Policy[]; membership: store.MembershipRow | null } | null> {
    if (p.kind === "api_key") {
      if (p.workspaceId !== workspaceId) return null;
      return { policies: [p.policy, p.minterPolicy], membership: null };
    }
    return store.membership(db, workspaceId, p.accountId).then((m) => (m ? { policies: [parsePolicy(m.role_policy)], membership: m } : null));
  }

  /**
   * Loads the workspace by slug (or id) with the caller's policies. Unknown workspace,
   * non-member and another workspace's key all get the same 404.
   */
  workspaceAccess(db: Sql, p: Principal, ref: { slug?: string; id?: string }): MaybePromise<WorkspaceAccess> {
    const workspace = ref.id ? this.workspaces.get(db, `id:${ref.id}`, (d) => store.workspaceById(d, ref.id!)) : this.workspaces.get(db, `slug:${ref.slug}`, (d) => store.workspaceBySlug(d, ref.slug!));
    return andThen(workspace, (w) => {
      if (!w) throw notFound("Workspace");
      return andThen(this.effectivePolicies(db, p, w.id), (eff) => {
        if (!eff) throw notFound("Workspace");
        return { workspace: w, membership: eff.membership, policies: eff.policies };
      });
    });
  }

  /** 403 unless every policy in force allows `action` on the workspace. */
  assertAllowed(access: WorkspaceAccess, action: string) {
    if (!isAllowedByAll(access.policies, action, `workspace/${access.workspace.id}`)) throw forbidden(`Not allowed: ${action}`);
  }

  /** workspaceAccess + assertAllowed: the guard of every workspace route. */
  authorizeWorkspace(db: Sql, p: Principal, ref: { slug?: string; id?: string }, action: string): MaybePromise<WorkspaceAccess> {
    return andThen(this.workspaceAccess(db, p, ref), (access) => {
      this.assertAllowed(access, action);
      return access;
    });
  }

  /**
   * authorizeWorkspace, then 403 SERVICE_NOT_ENABLED unless `service` is switched on for the
   * workspace: the guard of every product's workspace routes.
   */
  async authorizeService(db: Sql, p: Principal, ref: { slug?: string; id?: string }, action: string, service: string): Promise<WorkspaceAccess> {
    const access = await this.authorizeWorkspace(db, p, ref, action);
    await this.requireService(db, access.workspace.id, service);
    return access;
  }

  /** Services other than the platform answer 403 when the workspace has not enabled them. */
  async requireService(db: Sql, workspaceId: string, service: string): Promise<void> {
    if (service === "platform") return;
    const services = await this.services.get(db, workspaceId, async (d, id) => ({ enabled: new Set(await store.enabledServices(d, id)) }));
    if (!services!.enabled.has(service)) {
      throw forbidden(`The ${service} service is not enabled for this workspace`, "SERVICE_NOT_ENABLED");
    }
  }
}
