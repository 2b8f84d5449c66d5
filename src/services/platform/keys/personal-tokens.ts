/**
 * Personal access tokens: a console user's bearer token for scripts and CI. It acts as
 * that user (same workspace memberships and role policies, checked live on every call),
 * so it needs no policy of its own. Like GitHub's classic tokens it can do what the user
 * can, including creating and deleting workspaces (requireHuman accepts it), with two
 * exceptions that keep a leaked token from entrenching itself: it cannot mint or revoke
 * API keys or personal tokens (those need a console session, requireSession).
 *
 * Tokens always expire (default 30 days, at most 365), so a forgotten token dies on its
 * own. The plaintext is returned once; only its SHA-256 is stored. Token events are
 * account-level, so their audit entries carry no workspace.
 */
import type { Principal } from "../../../access/principal";
import { DAY } from "../../../core/clock";
import { tx } from "../../../core/db";
import { badRequest, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import type { AppContext } from "../../../context";
import { audit, type RequestMeta, PAT_PREFIX } from "../../../kernel/tenancy";
import { isoOrNull, mintSecret, validateName } from "../identity/credentials";
import * as store from "./store";
import { personalTokenView } from "./views";

type Session = Extract<Principal, { kind: "session" }>;
type Human = Extract<Principal, { accountId: string }>;

export const PAT_DEFAULT_DAYS = 30;
export const PAT_MAX_DAYS = 365;

export class PersonalTokenService {
  constructor(private readonly ctx: AppContext) {}

  create(p: Session, b: { name: unknown; expires_in_days?: unknown }, meta: RequestMeta) {
    const name = validateName(b.name);
    const days = b.expires_in_days ?? PAT_DEFAULT_DAYS;
    if (typeof days !== "number" || !Number.isInteger(days) || days < 1 || days > PAT_MAX_DAYS) {
      throw badRequest("Invalid expires_in_days", [{ field: "expires_in_days", reason: `integer 1-${PAT_MAX_DAYS}` }]);
    }
    const minted = mintSecret(PAT_PREFIX);
    const id = uuid();
    // One reading of the clock: expires_at is exactly days after created_at, also on a real clock.
    const now = this.ctx.clock.nowMs();
    const expiresAt = now + days * DAY;
    return tx(this.ctx.db, async (t) => {
      await store.insertPersonalToken(t, {
        id,
        account_id: p.accountId,
        name,
        prefix: minted.prefix,
        last_four: minted.last_four,
        token_hash: minted.hash,
        created_at: new Date(now).toISOString(),
        expires_at: expiresAt,
      });
      await audit(t, this.ctx, {
        actor: p,
        action: "personal_token.create",
        target: { type: "personal_token", id },
        meta,
        metadata: { name, prefix: minted.prefix, expires_at: isoOrNull(expiresAt) },
      });
      const { revoked_at: _, ...view } = personalTokenView((await store.personalTokenById(t, p.accountId, id))!);
      return { view, token: minted.secret };
    });
  }

  async list(p: Human, q: { limit?: number; cursor?: string }) {
    const limit = parseLimit(q.limit, 20, 100);
    const after = decodeCursor<{ id: string }>(q.cursor)?.id ?? null;
    const rows = await store.listPersonalTokens(this.ctx.db, p.accountId, typeof after === "string" ? after : null, limit + 1);
    return buildPage(rows, limit, (r) => ({ id: r.id }), (r) => personalTokenView(r));
  }

  /** Only the owner's tokens are visible: someone else's token id is a 404. Revoking twice is a quiet success. */
  async revoke(p: Session, tokenId: string, meta: RequestMeta): Promise<void> {
    await tx(this.ctx.db, async (t) => {
      const row = await store.personalTokenById(t, p.accountId, tokenId);
      if (!row) throw notFound("Personal access token");
      if ((await store.revokePersonalToken(t, p.accountId, tokenId, this.ctx.clock.iso())) === 0) return;
      await audit(t, this.ctx, {
        actor: p,
        action: "personal_token.delete",
        target: { type: "personal_token", id: tokenId },
        meta,
        metadata: { name: row.name, prefix: row.prefix },
      });
    });
  }
}
