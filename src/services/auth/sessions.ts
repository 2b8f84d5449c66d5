/**
 * End-user sessions and their tokens.
 *
 * - Access token: RS256 JWT signed with the App's key. Claims: sub (user id), role (app-wide
 *   role name or null), permissions[] (the role's, plus the tenant role's when a tenant was
 *   selected), type=end_user, iss, aud (when the App sets an audience), exp, iat, jti, sid
 *   (session id), amr (how the session was authenticated, e.g. ["pwd"], ["pwd","totp"]),
 *   mfa_at (NumericDate of the last second factor, after MFA), tid/trole (tenant id and the
 *   user's role in it, when a tenant was selected at sign-in).
 * - Refresh token: an HS256 JWT (key derived from the master key) naming the session; only
 *   its hash is stored, and the row is the authority. Every refresh rotates it; a rotated
 *   token that comes back revokes the whole session (someone holds a copy).
 * - Logout destroys the session; the access token stays valid until it expires (spec) for
 *   offline verifiers and the stateless checks (/verify, /authorize). Routes that read the
 *   user anyway (/me, MFA, identities) and introspection also read the session, and refuse
 *   a token whose session is revoked (logout, refresh-token reuse, password reset or change,
 *   status change) or over: liveUser / isLive.
 */
import { SignJWT } from "jose";
import type { RequestMeta } from "../../access/http";
import { tx } from "../../core/db";
import { ApiError } from "../../core/errors";
import { uuid } from "../../core/ids";
import { deriveKey, hashToken, randomToken } from "../../core/secrets";
import type { AppContext } from "../../context";
import type { LoadedApp } from "./apps";
import type { SigningKeys } from "./keys";
import { membershipClaims } from "./store/tenants";
import * as store from "./store/users";

export interface ConsumerTokens {
  access_token: string;
  refresh_token: string;
  token_type: "Bearer";
  expires_in: number;
}

export interface SessionStart {
  tenantId?: string | null;
  amr?: string[];
  /** ISO time of the second factor, when MFA was done. */
  mfaAt?: string | null;
}

const invalidRefresh = () => new ApiError(400, "INVALID_TOKEN", "Refresh token is invalid or expired");

const parseList = (s: string | null): string[] => (s ? (JSON.parse(s) as string[]) : []);

export class SessionService {
  private readonly refreshKey: Uint8Array;

  constructor(
    private readonly ctx: AppContext,
    private readonly keys: SigningKeys,
  ) {
    this.refreshKey = deriveKey(ctx.masterKey, "auth-refresh-token");
  }

  /** Role, permissions and tenant claims of a user for a session. */
  claimsFor(app: LoadedApp, user: store.UserView, session: store.SessionRow) {
    const permissions = new Set(parseList(user.role_permissions));
    const claims: Record<string, unknown> = { role: user.role_name, type: "end_user", sid: session.id, amr: JSON.parse(session.amr) };
    if (session.tenant_id) {
      const m = membershipClaims(this.ctx.db, session.tenant_id, user.id);
      claims.tid = session.tenant_id;
      claims.trole = m?.role_name ?? null;
      for (const p of parseList(m?.role_permissions ?? null)) permissions.add(p);
    }
    if (session.mfa_at) claims.mfa_at = Math.floor(Date.parse(session.mfa_at) / 1000);
    claims.permissions = [...permissions].sort();
    return claims;
  }

  private accessToken(app: LoadedApp, user: store.UserView, session: store.SessionRow, ttlSec: number) {
    return this.keys.sign(app.id, { sub: user.id, ...this.claimsFor(app, user, session) }, { issuer: app.issuer, audience: app.settings.audience, ttlSec });
  }

  private refreshToken(app: LoadedApp, session: store.SessionRow) {
    const iat = Math.floor(this.ctx.clock.nowMs() / 1000);
    return new SignJWT({ typ: "refresh", sid: session.id, app: app.id, jti: randomToken(24) })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuedAt(iat)
      .setExpirationTime(Math.floor(session.expires_at / 1000))
      .sign(this.refreshKey);
  }

  private accessTtl(app: LoadedApp, session: store.SessionRow) {
    return Math.max(1, Math.min(app.settings.access_token_ttl, Math.floor((session.expires_at - this.ctx.clock.nowMs()) / 1000)));
  }

  /** Starts a session for a user whose sign-in is complete; returns the consumer token response. */
  async start(app: LoadedApp, user: store.UserView, opts: SessionStart, meta: RequestMeta | null): Promise<ConsumerTokens> {
    const session: store.SessionRow = {
      id: uuid(),
      app_id: app.id,
      user_id: user.id,
      tenant_id: opts.tenantId ?? null,
      amr: JSON.stringify(opts.amr ?? ["pwd"]),
      mfa_at: opts.mfaAt ?? null,
      created_at: this.ctx.clock.iso(),
      expires_at: this.ctx.clock.nowMs() + app.settings.refresh_token_ttl * 1000,
      revoked_at: null,
      ip: meta?.ip ?? null,
      user_agent: meta?.userAgent?.slice(0, 512) ?? null,
    };
    const ttl = this.accessTtl(app, session);
    const [access, refresh] = await Promise.all([this.accessToken(app, user, session, ttl), this.refreshToken(app, session)]);
    tx(this.ctx.db, () => {
      store.insertSession(this.ctx.db, session);
      store.insertRefreshToken(this.ctx.db, hashToken(refresh), session.id, session.created_at);
    });
    return { access_token: access, refresh_token: refresh, token_type: "Bearer", expires_in: ttl };
  }

  /** The live session behind a refresh token of this App, or 400. */
  private liveSession(app: LoadedApp, refreshToken: string) {
    const row = store.refreshToken(this.ctx.db, hashToken(refreshToken));
    if (!row) throw invalidRefresh();
    const session = store.sessionById(this.ctx.db, app.id, row.session_id);
    if (!session) throw invalidRefresh();
    return { row, session };
  }

  async refresh(app: LoadedApp, refreshToken: string): Promise<ConsumerTokens> {
    const { row, session } = this.liveSession(app, refreshToken);
    const now = this.ctx.clock.iso();
    if (row.rotated_at) {
      // A rotated token came back: someone holds a copy. Kill the whole session.
      store.revokeSession(this.ctx.db, session.id, now);
      throw invalidRefresh();
    }
    if (session.revoked_at || session.expires_at <= this.ctx.clock.nowMs()) throw invalidRefresh();
    const user = store.userView(this.ctx.db, app.id, session.user_id);
    if (!user || user.status !== "active") throw invalidRefresh();
    const ttl = this.accessTtl(app, session);
    const [access, next] = await Promise.all([this.accessToken(app, user, session, ttl), this.refreshToken(app, session)]);
    const ok = tx(this.ctx.db, () => {
      if (!store.rotateRefreshToken(this.ctx.db, hashToken(refreshToken), now)) {
        store.revokeSession(this.ctx.db, session.id, now);
        return false;
      }
      store.insertRefreshToken(this.ctx.db, hashToken(next), session.id, now);
      return true;
    });
    if (!ok) throw invalidRefresh();
    return { access_token: access, refresh_token: next, token_type: "Bearer", expires_in: ttl };
  }

  logout(app: LoadedApp, refreshToken: string) {
    const { session } = this.liveSession(app, refreshToken);
    store.revokeSession(this.ctx.db, session.id, this.ctx.clock.iso());
    return session;
  }

  /** Records a completed step-up on the session; the next refresh carries amr / mfa_at. */
  markStepUp(sessionId: string, amr: string[], at: string) {
    store.setSessionMfa(this.ctx.db, sessionId, amr, at);
  }

  revokeAll(userId: string) {
    return store.revokeUserSessions(this.ctx.db, userId, this.ctx.clock.iso());
  }

  /** The user of an access token while its session is live; null otherwise (one query). */
  liveUser(app: LoadedApp, claims: { sub: string; sid?: unknown }): store.UserView | null {
    if (typeof claims.sid !== "string") return null;
    return store.userViewOfLiveSession(this.ctx.db, app.id, claims.sub, claims.sid, this.ctx.clock.nowMs());
  }

  /** Whether the session an access token names is live (one primary-key read). */
  isLive(app: LoadedApp, claims: { sub: string; sid?: unknown }): boolean {
    return typeof claims.sid === "string" && store.sessionLive(this.ctx.db, app.id, claims.sid, claims.sub, this.ctx.clock.nowMs());
  }

  session(app: LoadedApp, id: string) {
    return store.sessionById(this.ctx.db, app.id, id);
  }
}
