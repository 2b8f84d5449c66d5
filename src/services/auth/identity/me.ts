/**
 * The signed-in end user's own profile (/me; the discovery document's userinfo_endpoint).
 *
 * - Caller: a bearer access token of this App (type end_user). A token whose user is gone
 *   or no longer active, or whose session is revoked or over, answers 401, like refresh
 *   does: the account (or that session) cannot act any more.
 * - GET: the public user plus the tenants the user belongs to (with the role there) and
 *   whether an MFA factor is enabled.
 * - PATCH: display_name, username (unique in the App regardless of case; 409
 *   USERNAME_TAKEN) and metadata (replaced as a whole). Emits user.updated with the fields
 *   that actually changed; a no-op patch emits nothing.
 * - POST /me/password: current_password + new_password (App policy). Revokes every other
 *   session of the user (a changed password should end sessions a thief may hold); the
 *   caller's own session stays. Wrong current passwords: the 5th within 15 minutes answers
 *   429 and further attempts stay 429 until 15 minutes after the last wrong one.
 */
import type { RequestMeta } from "../../../access/http";
import { MINUTE } from "../../../core/clock";
import { tx } from "../../../core/db";
import { andThen } from "../../../core/maybe-promise";
import { ApiError, badRequest, conflict, tooMany, unauthorized, type ErrorDetail } from "../../../core/errors";
import type { AppContext } from "../../../context";
import type { LoadedApp } from "../apps/service";
import { AUTH_USERS_TOPIC, recordAuthAudit } from "../audit/record";
import type { AppAccess } from "../apps/access";
import type { SessionService } from "./sessions";
import * as meStore from "./store/me";
import * as users from "./store/users";
import { DISPLAY_NAME_MAX, USERNAME_RE, checkMetadata, checkPassword, publicUser, type EmitAuthEvent } from "./users";

export const PASSWORD_CHANGE_MAX_WRONG = 5;
const PASSWORD_CHANGE_WINDOW_MS = 15 * MINUTE;

export interface ProfilePatch {
  display_name?: string | null;
  username?: string;
  metadata?: unknown;
}

const PROFILE_CACHE_MAX = 20_000;

/** What /me adds to the user: read through a cache emptied whenever AUTH_USERS_TOPIC moves (audit/record.ts). */
interface ProfileExtras {
  tenants: meStore.MyTenantRow[];
  mfa_enabled: boolean;
  at: number;
}

export class MeService {
  private profiles = new Map<string, ProfileExtras>();
  private profilesGen = -1;

  constructor(
    private readonly ctx: AppContext,
    /** The parts of the Auth service this feature uses (AuthService passes itself). */
    private readonly auth: { access: AppAccess; sessions: SessionService },
    private readonly emit: EmitAuthEvent,
  ) {}

  /** The caller's claims and live user row (in a live session), or 401. */
  private caller(app: LoadedApp, authorization: string | null | undefined) {
    return andThen(this.auth.access.endUser(app, authorization), (claims) =>
      andThen(this.auth.sessions.liveUser(app, claims), (user) => {
        if (!user || user.status !== "active") throw unauthorized("Missing or invalid access token");
        return { claims, user };
      }),
    );
  }

  /** The profile: at once when the user's tenants and MFA state are cached, else after reading them. */
  private profile(app: LoadedApp, user: users.UserView) {
    const gen = this.ctx.caches.generation(AUTH_USERS_TOPIC);
    if (gen !== this.profilesGen) {
      this.profiles.clear();
      this.profilesGen = gen;
    }
    const key = `${app.id}:${user.id}`;
    const maxAge = this.ctx.caches.maxAgeMs;
    const hit = this.profiles.get(key);
    const view = (x: Omit<ProfileExtras, "at">) => ({ ...publicUser(user), tenants: x.tenants, mfa_enabled: x.mfa_enabled });
    if (hit && (maxAge === Number.POSITIVE_INFINITY || this.ctx.clock.nowMs() - hit.at < maxAge)) return view(hit);
    return Promise.all([meStore.tenantsOfUser(this.ctx.db, app.id, user.id), meStore.enabledFactorCount(this.ctx.db, user.id)]).then(([tenants, factors]) => {
      const x = { tenants, mfa_enabled: factors > 0 };
      // Not kept when the topic moved while reading: the rows may predate the change.
      if (this.ctx.caches.generation(AUTH_USERS_TOPIC) === gen) {
        if (this.profiles.size >= PROFILE_CACHE_MAX) this.profiles.clear();
        this.profiles.set(key, { ...x, at: maxAge === Number.POSITIVE_INFINITY ? 0 : this.ctx.clock.nowMs() });
      }
      return view(x);
    });
  }

  /** Synchronous for a token already verified whose session, user and profile are cached (the usual case): see maybe-promise.ts. */
  get(app: LoadedApp, authorization: string | null | undefined) {
    return andThen(this.caller(app, authorization), ({ user }) => this.profile(app, user));
  }

  async update(app: LoadedApp, authorization: string | null | undefined, b: ProfilePatch, meta: RequestMeta) {
    const { user } = await this.caller(app, authorization);
    const details: ErrorDetail[] = [];
    if (b.username !== undefined && (typeof b.username !== "string" || !USERNAME_RE.test(b.username))) details.push({ field: "username", reason: "3-64 letters, digits, dot, underscore or hyphen" });
    if (b.display_name != null && (typeof b.display_name !== "string" || b.display_name.length > DISPLAY_NAME_MAX)) details.push({ field: "display_name", reason: `at most ${DISPLAY_NAME_MAX} characters` });
    const m = b.metadata === null ? { field: "metadata", reason: "must be a JSON object" } : checkMetadata(b.metadata);
    if (m) details.push(m);
    if (details.length) throw badRequest("Invalid profile", details);

    const fields: Parameters<typeof users.updateUserFields>[2] = {};
    if (b.username !== undefined && b.username !== user.username) fields.username = b.username;
    if (b.display_name !== undefined && (b.display_name ?? null) !== user.display_name) fields.display_name = b.display_name ?? null;
    if (b.metadata !== undefined && JSON.stringify(b.metadata) !== user.metadata) fields.metadata = JSON.stringify(b.metadata);
    const changed = Object.keys(fields);
    if (!changed.length) return this.profile(app, user);

    const next = await tx(this.ctx.db, async (t) => {
      // Only another user's name conflicts: changing the case of one's own name is fine.
      if (fields.username && fields.username.toLowerCase() !== user.username.toLowerCase() && (await users.usernameTaken(t, app.id, fields.username))) {
        throw conflict("This username is taken", "USERNAME_TAKEN");
      }
      await users.updateUserFields(t, user.id, fields, this.ctx.clock.iso());
      const view = (await users.userView(t, app.id, user.id))!;
      await recordAuthAudit(t, this.ctx, app.id, { action: "user.update", actor: { type: "user", id: user.id }, target: { type: "user", id: user.id }, meta, metadata: { fields: changed, via: "me" } });
      await this.emit(t, app.id, "user.updated", { ...publicUser(view), changed_fields: changed });
      return view;
    });
    return this.profile(app, next);
  }

  async changePassword(app: LoadedApp, authorization: string | null | undefined, b: { current_password: string; new_password: string }, meta: RequestMeta) {
    const { claims, user } = await this.caller(app, authorization);
    const bad = checkPassword(app, b.new_password, "new_password");
    if (bad) throw badRequest("Invalid new password", [bad]);
    if (!user.password_hash) throw new ApiError(400, "NO_PASSWORD", "This account has no password yet; set one with a password reset");
    const key = `auth:${app.id}:me-password-fail:${user.id}`;
    const locked = () => tooMany("Too many wrong passwords; try again in 15 minutes");
    if ((await this.ctx.ratelimit.failures(key)) >= PASSWORD_CHANGE_MAX_WRONG) throw locked();
    // Counted before the (slow) check, so parallel guesses cannot get past the limit.
    const n = await this.ctx.ratelimit.recordFailure(key, PASSWORD_CHANGE_WINDOW_MS);
    if (!(await this.ctx.passwords.verify(b.current_password, user.password_hash))) {
      await recordAuthAudit(this.ctx.db, this.ctx, app.id, { action: "user.password.change", outcome: "failure", actor: { type: "user", id: user.id }, target: { type: "user", id: user.id }, meta, metadata: { reason: "wrong_password" } });
      if (n >= PASSWORD_CHANGE_MAX_WRONG) throw locked();
      throw new ApiError(400, "INVALID_PASSWORD", "The current password is wrong", [{ field: "current_password", reason: "does not match" }]);
    }
    await this.ctx.ratelimit.clearFailures(key);
    const hash = await this.ctx.passwords.hash(b.new_password);
    await tx(this.ctx.db, async (t) => {
      await users.updateUserFields(t, user.id, { password_hash: hash }, this.ctx.clock.iso());
      const revoked = await meStore.revokeOtherSessions(t, user.id, claims.sid, this.ctx.clock.iso());
      await recordAuthAudit(t, this.ctx, app.id, { action: "user.password.change", actor: { type: "user", id: user.id }, target: { type: "user", id: user.id }, meta, metadata: { other_sessions_revoked: revoked } });
    });
  }
}
