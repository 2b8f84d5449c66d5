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
import type { RequestMeta } from "../../../access/http";
import type { Sql } from "../../../core/db";
import { ApiError } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { deriveKey, hashToken, randomToken } from "../../../core/secrets";
import type { AppContext } from "../../../context";
import { openSession, rotateRefresh, type TokenResponse } from "../../../kernel/identity";
import { andThen, type MaybePromise } from "../../../core/maybe-promise";
import type { LoadedApp } from "../apps/service";
import { AUTH_USERS_TOPIC, authUsersChanged } from "../audit/record";
import type { SigningKeys } from "../apps/keys";
import { membershipClaims } from "./store/tenants";
import * as store from "./store/users";

export type ConsumerTokens = TokenResponse;

export interface SessionStart {
  tenantId?: string | null;
  amr?: string[];
  /** ISO time of the second factor, when MFA was done. */
  mfaAt?: string | null;
}

const invalidRefresh = () => new ApiError(400, "INVALID_TOKEN", "Refresh token is invalid or expired");

const parseList = (s: string | null): string[] => (s ? (JSON.parse(s) as string[]) : []);

const LIVE_CACHE_MAX = 20_000;
const DEAD_CACHE_MAX = 50_000;

/** A session known live (and its user, once a route read it), as of `at`. */
interface LiveEntry {
  appId: string;
  userId: string;
  expiresAt: number;
  user: store.UserView | null;
  at: number;
}

/**
 * Session checks of the hot paths (/me, introspection, MFA and identity routes) read through
 * two caches, so a token already checked is answered without a promise (maybe-promise.ts):
 * - live sessions (with their user): emptied whenever AUTH_USERS_TOPIC moves, i.e. on every
 *   audited change of users, memberships, roles or factors and on every revocation (audit/record.ts);
 *   past its expires_at an entry is not served. A load the topic moved under is not kept.
 * - ended sessions: a revoked or expired session never comes back, so "not live" is kept
 *   without invalidation (bounded; forgetting one only costs a read).
 */
export class SessionService {
  private readonly refreshKey: Uint8Array;
  private live = new Map<string, LiveEntry>();
  private liveGen = -1;
  private dead = new Set<string>();

  constructor(
    private readonly ctx: AppContext,
    private readonly keys: SigningKeys,
  ) {
    this.refreshKey = deriveKey(ctx.masterKey, "auth-refresh-token");
  }

  /** Role, permissions and tenant claims of a user for a session. */
  async claimsFor(app: LoadedApp, user: store.UserView, session: store.SessionRow) {
    const permissions = new Set(parseList(user.role_permissions));
    const claims: Record<string, unknown> = { role: user.role_name, type: "end_user", sid: session.id, amr: JSON.parse(session.amr) };
    if (session.tenant_id) {
      const m = await membershipClaims(this.ctx.db, session.tenant_id, user.id);
      claims.tid = session.tenant_id;
      claims.trole = m?.role_name ?? null;
      for (const p of parseList(m?.role_permissions ?? null)) permissions.add(p);
    }
    if (session.mfa_at) claims.mfa_at = Math.floor(Date.parse(session.mfa_at) / 1000);
    claims.permissions = [...permissions].sort();
    return claims;
  }

  private async accessToken(app: LoadedApp, user: store.UserView, session: store.SessionRow, ttlSec: number) {
    return this.keys.sign(app.id, { sub: user.id, ...(await this.claimsFor(app, user, session)) }, { issuer: app.issuer, audience: app.settings.audience, ttlSec });
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

  /** Starts a session for a user whose sign-in is complete; returns the consumer token response. `within` runs in the session's transaction (audit, event). */
  async start(app: LoadedApp, user: store.UserView, opts: SessionStart, meta: RequestMeta | null, within?: (t: Sql) => Promise<void>): Promise<ConsumerTokens> {
    const now = this.ctx.clock.nowMs();
    const session: store.SessionRow = {
      id: uuid(),
      app_id: app.id,
      user_id: user.id,
      tenant_id: opts.tenantId ?? null,
      amr: JSON.stringify(opts.amr ?? ["pwd"]),
      mfa_at: opts.mfaAt ?? null,
      created_at: new Date(now).toISOString(),
      expires_at: now + app.settings.refresh_token_ttl * 1000,
      revoked_at: null,
      ip: meta?.ip ?? null,
      user_agent: meta?.userAgent?.slice(0, 512) ?? null,
    };
    const ttl = this.accessTtl(app, session);
    const [access, refresh] = await Promise.all([this.accessToken(app, user, session, ttl), this.refreshToken(app, session)]);
    return openSession(this.ctx.db, store, session, { access, refresh, expiresIn: ttl }, within);
  }

  /** The live session behind a refresh token of this App, or 400. */
  private async liveSession(app: LoadedApp, refreshToken: string) {
    const row = await store.refreshToken(this.ctx.db, hashToken(refreshToken));
    if (!row) throw invalidRefresh();
    const session = await store.sessionById(this.ctx.db, app.id, row.session_id);
    if (!session) throw invalidRefresh();
    return { row, session };
  }

  async refresh(app: LoadedApp, refreshToken: string): Promise<ConsumerTokens> {
    const { row, session } = await this.liveSession(app, refreshToken);
    const now = this.ctx.clock.iso();
    if (row.rotated_at) {
      // A rotated token came back: someone holds a copy. Kill the whole session.
      await this.revoke(session.id, now);
      throw invalidRefresh();
    }
    if (session.revoked_at || session.expires_at <= this.ctx.clock.nowMs()) throw invalidRefresh();
    const user = await store.userView(this.ctx.db, app.id, session.user_id);
    if (!user || user.status !== "active") throw invalidRefresh();
    const ttl = this.accessTtl(app, session);
    const [access, next] = await Promise.all([this.accessToken(app, user, session, ttl), this.refreshToken(app, session)]);
    // A token rotated meanwhile (a racing copy) revokes the session as above (kernel/identity/refresh-rotation.ts).
    const ok = await rotateRefresh(this.ctx.db, store, { presented: refreshToken, next, sessionId: session.id, now }, (t) => authUsersChanged(t, this.ctx));
    if (!ok) {
      this.markDead(session.id);
      throw invalidRefresh();
    }
    return { access_token: access, refresh_token: next, token_type: "Bearer", expires_in: ttl };
  }

  async logout(app: LoadedApp, refreshToken: string) {
    const { session } = await this.liveSession(app, refreshToken);
    await this.revoke(session.id, this.ctx.clock.iso());
    return session;
  }

  /** Revokes one session (autocommit) and tells every node's caches. */
  private async revoke(sessionId: string, now: string) {
    await store.revokeSession(this.ctx.db, sessionId, now);
    this.markDead(sessionId);
    await authUsersChanged(this.ctx.db, this.ctx);
  }

  /** Records a completed step-up on the session; the next refresh carries amr / mfa_at. */
  async markStepUp(sessionId: string, amr: string[], at: string): Promise<void> {
    await store.setSessionMfa(this.ctx.db, sessionId, amr, at);
  }

  /** Revokes every live session of the user; `t`: the caller's transaction handle (or ctx.db). Resolves to how many. */
  async revokeAll(t: Sql, userId: string): Promise<number> {
    const n = await store.revokeUserSessions(t, userId, this.ctx.clock.iso());
    await authUsersChanged(t, this.ctx);
    return n;
  }

  // --- session checks (hot path) -----------------------------------------------------------

  private markDead(sessionId: string) {
    this.live.delete(sessionId);
    if (this.dead.size >= DEAD_CACHE_MAX) this.dead.clear();
    this.dead.add(sessionId);
  }

  /** The topic's current generation, emptying the live cache when it moved. */
  private liveGeneration() {
    const gen = this.ctx.caches.generation(AUTH_USERS_TOPIC);
    if (gen !== this.liveGen) {
      this.live.clear();
      this.liveGen = gen;
    }
    return gen;
  }

  /**
   * What the caches know of the token's session: "dead", a live entry (with or without its
   * user), or undefined (ask the database). Also answers "dead" for a cached session past its
   * expiry.
   */
  private cached(app: LoadedApp, sid: string, sub: string): LiveEntry | "dead" | undefined {
    if (this.dead.has(sid)) return "dead";
    this.liveGeneration();
    const e = this.live.get(sid);
    if (!e || e.appId !== app.id || e.userId !== sub) return undefined;
    const maxAge = this.ctx.caches.maxAgeMs;
    if (maxAge !== Number.POSITIVE_INFINITY && this.ctx.clock.nowMs() - e.at >= maxAge) {
      this.live.delete(sid);
      return undefined;
    }
    if (e.expiresAt <= this.ctx.clock.nowMs()) {
      this.markDead(sid);
      return "dead";
    }
    return e;
  }

  /** Keeps a session found live, unless the topic moved while it was read (the row may be stale). */
  private keep(gen: number, sid: string, e: Omit<LiveEntry, "at">) {
    if (this.ctx.caches.generation(AUTH_USERS_TOPIC) !== gen || this.dead.has(sid)) return;
    if (this.live.size >= LIVE_CACHE_MAX) this.live.clear();
    const maxAge = this.ctx.caches.maxAgeMs;
    this.live.set(sid, { ...e, at: maxAge === Number.POSITIVE_INFINITY ? 0 : this.ctx.clock.nowMs() });
  }

  /** The user of an access token while its session is live; null otherwise. Cached: see the class comment. */
  liveUser(app: LoadedApp, claims: { sub: string; sid?: unknown }): MaybePromise<store.UserView | null> {
    const sid = claims.sid;
    if (typeof sid !== "string") return null;
    const hit = this.cached(app, sid, claims.sub);
    if (hit === "dead") return null;
    if (hit?.user) return hit.user;
    const gen = this.liveGeneration();
    return store.userViewOfLiveSession(this.ctx.db, app.id, claims.sub, sid, this.ctx.clock.nowMs()).then((found) => {
      if (!found) {
        this.markDead(sid);
        return null;
      }
      this.keep(gen, sid, { appId: app.id, userId: claims.sub, expiresAt: found.expiresAt, user: found.user });
      return found.user;
    });
  }

  /** Whether the session an access token names is live (one primary-key read on a miss). Cached: see the class comment. */
  isLive(app: LoadedApp, claims: { sub: string; sid?: unknown }): MaybePromise<boolean> {
    const sid = claims.sid;
    if (typeof sid !== "string") return false;
    const hit = this.cached(app, sid, claims.sub);
    if (hit === "dead") return false;
    if (hit) return true;
    const gen = this.liveGeneration();
    return andThen(store.sessionLiveUntil(this.ctx.db, app.id, sid, claims.sub, this.ctx.clock.nowMs()), (expiresAt) => {
      if (expiresAt === null) {
        this.markDead(sid);
        return false;
      }
      this.keep(gen, sid, { appId: app.id, userId: claims.sub, expiresAt, user: null });
      return true;
    });
  }

  session(app: LoadedApp, id: string): Promise<store.SessionRow | null> {
    return store.sessionById(this.ctx.db, app.id, id);
  }
}
