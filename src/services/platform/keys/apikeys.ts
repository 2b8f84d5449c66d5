/**
 * Workspace API keys: minted by a signed-in console user, bound to one workspace, carrying
 * a policy that may never exceed the minter's. The plaintext key is returned once at
 * creation; only its SHA-256 is stored.
 *
 * The ceiling is enforced twice: at mint time (the key's policy must be covered by the
 * minter's current role policy, else 403 POLICY_EXCEEDS_MINTER) and at every use (Authz
 * intersects the key's policy with the minter's role policy of that moment), so demoting
 * or removing the minter shrinks or voids their keys without touching them.
 */
import { policyCovers, validatePolicy, type Policy } from "../../../access/policy";
import type { Principal } from "../../../access/principal";
import { tx } from "../../../core/db";
import { badRequest, forbidden, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import type { AppContext } from "../../../context";
import { audit, type RequestMeta, API_KEY_PREFIX, type Authz } from "../../../kernel/tenancy";
import { isoOrNull, mintSecret, parseIsoInstant, validateName } from "../identity/credentials";
import * as store from "./store";
import { apiKeyView } from "./views";

type Session = Extract<Principal, { kind: "session" }>;

export class ApiKeyService {
  constructor(
    private readonly ctx: AppContext,
    private readonly authz: Authz,
  ) {}

  /** Returns the key's view and, separately, the plaintext key (the caller decides where it may appear). */
  create(p: Session, slug: string, b: { name: unknown; policy: unknown; expires_at?: unknown }, meta: RequestMeta) {
    return tx(this.ctx.db, async (t) => {
      // Authorize before looking at the body, so a non-member learns nothing from validation errors.
      const { workspace, policies } = await this.authz.authorizeWorkspace(t, p, { slug }, "apikey.create");
      const name = validateName(b.name);
      const policy = validatePolicy(b.policy, this.ctx.actions);
      if (policy.length === 0) throw badRequest("Invalid policy", [{ field: "policy", reason: "at least one statement" }]);
      let expiresAt: number | null = null;
      if (b.expires_at !== undefined && b.expires_at !== null) {
        expiresAt = parseIsoInstant(b.expires_at, "expires_at");
        if (expiresAt <= this.ctx.clock.nowMs()) throw badRequest("Invalid expires_at", [{ field: "expires_at", reason: "must be in the future" }]);
      }
      if (!policies.every((minter) => policyCovers(minter, policy))) {
        throw forbidden("The key's policy grants more than your role in this workspace allows", "POLICY_EXCEEDS_MINTER");
      }
      const minted = mintSecret(API_KEY_PREFIX);
      const id = uuid();
      await store.insertApiKey(t, {
        id,
        workspace_id: workspace.id,
        name,
        prefix: minted.prefix,
        last_four: minted.last_four,
        key_hash: minted.hash,
        policy: JSON.stringify(policy),
        created_by: p.accountId,
        created_at: this.ctx.clock.iso(),
        expires_at: expiresAt,
      });
      await audit(t, this.ctx, {
        actor: p,
        action: "apikey.create",
        workspaceId: workspace.id,
        target: { type: "api_key", id },
        meta,
        metadata: { name, prefix: minted.prefix, policy, expires_at: isoOrNull(expiresAt) },
      });
      return { view: apiKeyView((await store.apiKeyById(t, workspace.id, id))!), key: minted.secret };
    });
  }

  async list(p: Principal, slug: string, q: { limit?: number; cursor?: string }) {
    const limit = parseLimit(q.limit, 20, 100);
    const after = decodeCursor<{ id: string }>(q.cursor)?.id ?? null;
    const { workspace } = await this.authz.authorizeWorkspace(this.ctx.db, p, { slug }, "apikey.list");
    const rows = await store.listApiKeys(this.ctx.db, workspace.id, typeof after === "string" ? after : null, limit + 1);
    return buildPage(rows, limit, (r) => ({ id: r.id }), (r) => apiKeyView(r));
  }

  async get(p: Principal, slug: string, keyId: string) {
    const { workspace } = await this.authz.authorizeWorkspace(this.ctx.db, p, { slug }, "apikey.read");
    // Scoped by workspace: another workspace's key id is indistinguishable from an unknown one.
    const row = await store.apiKeyById(this.ctx.db, workspace.id, keyId);
    if (!row) throw notFound("API key");
    return apiKeyView(row);
  }

  /** Revocation is final and idempotent: revoking an already revoked key is a quiet success. */
  async revoke(p: Session, slug: string, keyId: string, meta: RequestMeta): Promise<void> {
    await tx(this.ctx.db, async (t) => {
      const { workspace } = await this.authz.authorizeWorkspace(t, p, { slug }, "apikey.delete");
      const row = await store.apiKeyById(t, workspace.id, keyId);
      if (!row) throw notFound("API key");
      if ((await store.revokeApiKey(t, workspace.id, keyId, this.ctx.clock.iso())) === 0) return;
      await audit(t, this.ctx, {
        actor: p,
        action: "apikey.delete",
        workspaceId: workspace.id,
        target: { type: "api_key", id: keyId },
        meta,
        metadata: { name: row.name, prefix: row.prefix },
      });
    });
  }
}
