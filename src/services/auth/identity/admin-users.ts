/**
 * Admin user CRUD of an App: the discovery document's auth_admin_users_endpoint
 * (<issuer>/v1/admin/users). Callers: a platform principal allowed the auth.user.<verb>
 * action in the App's workspace, or an M2M token of the App whose permissions cover it
 * (AppAccess.admin). Another App's user, like an unknown id, is 404.
 *
 * Decisions the spec leaves open:
 * - Create takes the sign-up fields plus role and email_verified; the password is optional
 *   (the user can reset it later). The user.created event carries the role; no separate
 *   role.assigned is sent for a new user.
 * - PATCH replaces metadata as a whole (no merge). A new email is unverified unless the same
 *   request sets email_verified: true. role: a role name, or null to remove the role.
 * - A status other than active, and a new password, revoke every session of the user
 *   (refresh tokens stop working; access tokens run out, like logout). Sign-in then answers
 *   403 ACCOUNT_SUSPENDED / ACCOUNT_DEACTIVATED after the correct password, 401 for blocked.
 * - Events: user.updated with changed_fields (names only; "password" when it was set),
 *   user.email_verified when the primary email becomes verified, role.removed / role.assigned
 *   (tenant_id null: the app-wide role) when the role changes, user.deleted on delete.
 * - List: id (creation) order, cursor pages; q matches a substring of the username or of any
 *   of the user's contact values, regardless of case.
 */
import type { RequestMeta } from "../../../access/http";
import { tx, type Sql } from "../../../core/db";
import { badRequest, conflict, notFound, type ErrorDetail } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import type { AppContext } from "../../../context";
import type { LoadedApp } from "../apps/service";
import { recordAuthAudit } from "../audit/record";
import type { AdminCredentials, AppAccess } from "../apps/access";
import type { SessionService } from "./sessions";
import { isEmail } from "../apps/settings";
import * as adminStore from "./store/admin-users";
import { roleByName } from "./store/roles";
import * as store from "./store/users";
import { DISPLAY_NAME_MAX, USERNAME_RE, checkMetadata, checkPassword, publicUser, type EmitAuthEvent, type NewUser, type UserService } from "./users";

/** At most this many live sessions are listed (newest first): a user rarely has more. */
export const ADMIN_SESSIONS_MAX = 100;

export const USER_STATUSES: readonly store.UserStatus[] = ["active", "suspended", "deactivated", "blocked"];
const SEARCH_MAX = 200;

export interface AdminUserPatch {
  display_name?: string | null;
  username?: string;
  email?: string;
  email_verified?: boolean;
  metadata?: unknown;
  status?: string;
  password?: string;
  role?: string | null;
}

export class AdminUserService {
  constructor(
    private readonly ctx: AppContext,
    /** The parts of the Auth service this feature uses (AuthService passes itself). */
    private readonly auth: { access: AppAccess; sessions: SessionService; users: UserService },
    private readonly emit: EmitAuthEvent,
  ) {}

  private caller(app: LoadedApp, credentials: AdminCredentials, action: string) {
    return this.auth.access.admin(app, credentials, action);
  }

  private async load(db: Sql, app: LoadedApp, id: string) {
    const u = await store.userView(db, app.id, id);
    if (!u) throw notFound("User");
    return u;
  }

  async list(app: LoadedApp, credentials: AdminCredentials, q: { limit?: number; cursor?: string; q?: string }) {
    await this.caller(app, credentials, "auth.user.list");
    const limit = parseLimit(q.limit);
    const after = decodeCursor<{ id: unknown }>(q.cursor)?.id;
    const search = q.q?.trim() || null;
    if (search && search.length > SEARCH_MAX) throw badRequest("Invalid q", [{ field: "q", reason: `at most ${SEARCH_MAX} characters` }]);
    const rows = await store.listUsers(this.ctx.db, app.id, typeof after === "string" ? after : null, limit + 1, search);
    return buildPage(rows, limit, (r) => ({ id: r.id }), publicUser);
  }

  async create(app: LoadedApp, credentials: AdminCredentials, body: NewUser, meta: RequestMeta) {
    const c = await this.caller(app, credentials, "auth.user.create");
    const view = await this.auth.users.create(app, body, c.actor, meta, "admin", { passwordRequired: false });
    return publicUser(view);
  }

  async get(app: LoadedApp, credentials: AdminCredentials, id: string) {
    await this.caller(app, credentials, "auth.user.read");
    return publicUser(await this.load(this.ctx.db, app, id));
  }

  /** 400 with every bad field; returns the normalised email when one was given. */
  private async validatePatch(app: LoadedApp, b: AdminUserPatch) {
    const details: ErrorDetail[] = [];
    let email: string | undefined;
    if (b.email !== undefined) {
      email = typeof b.email === "string" ? b.email.trim().toLowerCase() : "";
      if (!isEmail(email)) details.push({ field: "email", reason: "must be a valid email address" });
    }
    if (b.username !== undefined && (typeof b.username !== "string" || !USERNAME_RE.test(b.username))) details.push({ field: "username", reason: "3-64 letters, digits, dot, underscore or hyphen" });
    if (b.display_name != null && (typeof b.display_name !== "string" || b.display_name.length > DISPLAY_NAME_MAX)) details.push({ field: "display_name", reason: `at most ${DISPLAY_NAME_MAX} characters` });
    if (b.metadata !== undefined) {
      const d = b.metadata === null ? { field: "metadata", reason: "must be a JSON object" } : checkMetadata(b.metadata);
      if (d) details.push(d);
    }
    if (b.status !== undefined && !USER_STATUSES.includes(b.status as store.UserStatus)) details.push({ field: "status", reason: `one of ${USER_STATUSES.join(", ")}` });
    if (b.password !== undefined) {
      const d = typeof b.password === "string" ? checkPassword(app, b.password) : { field: "password", reason: "must be a string" };
      if (d) details.push(d);
    }
    let roleId: string | null | undefined;
    if (b.role === null) roleId = null;
    else if (b.role !== undefined) {
      roleId = (await roleByName(this.ctx.db, app.id, b.role))?.id;
      if (!roleId) details.push({ field: "role", reason: "no such role in this App" });
    }
    if (details.length) throw badRequest("User validation failed", details);
    return { email, roleId };
  }

  async update(app: LoadedApp, credentials: AdminCredentials, id: string, b: AdminUserPatch, meta: RequestMeta) {
    const c = await this.caller(app, credentials, "auth.user.update");
    // The body is judged before the user is looked up: a bad field is 400 even for an unknown user.
    const { email, roleId } = await this.validatePatch(app, b);
    await this.load(this.ctx.db, app, id);
    // argon2 must not run while the write lock is held.
    const passwordHash = b.password !== undefined ? await this.ctx.passwords.hash(b.password) : undefined;
    return tx(this.ctx.db, async (db) => {
      const before = await this.load(db, app, id);
      const now = this.ctx.clock.iso();
      const changed: string[] = [];
      const fields: Parameters<typeof store.updateUserFields>[2] = {};

      if (b.username !== undefined && b.username !== before.username) {
        // Usernames are unique regardless of case: a case-only change of one's own name is fine.
        if (b.username.toLowerCase() !== before.username.toLowerCase() && (await store.usernameTaken(db, app.id, b.username))) throw conflict("This username is taken", "USERNAME_TAKEN");
        fields.username = b.username;
        changed.push("username");
      }
      if (b.display_name !== undefined && b.display_name !== before.display_name) {
        fields.display_name = b.display_name;
        changed.push("display_name");
      }
      if (b.metadata !== undefined && JSON.stringify(b.metadata) !== before.metadata) {
        fields.metadata = JSON.stringify(b.metadata);
        changed.push("metadata");
      }
      if (b.status !== undefined && b.status !== before.status) {
        fields.status = b.status as store.UserStatus;
        changed.push("status");
      }
      if (roleId !== undefined && roleId !== before.role_id) {
        fields.role_id = roleId;
        changed.push("role");
      }
      if (passwordHash !== undefined) {
        fields.password_hash = passwordHash;
        changed.push("password");
      }

      const emailChanged = email !== undefined && email !== before.email?.toLowerCase();
      if (emailChanged) {
        if (await store.contactByValue(db, app.id, "email", email!)) throw conflict("A user with this email already exists", "EMAIL_TAKEN");
        if (!(await store.setPrimaryEmail(db, id, email!))) {
          await store.insertContact(db, { id: uuid(), app_id: app.id, user_id: id, kind: "email", value: email!, is_primary: 1, verified_at: null, created_at: now });
        }
        changed.push("email");
      }
      // A new address starts unverified (setPrimaryEmail clears verified_at).
      const wasVerified = !!before.email_verified_at;
      let verified = emailChanged ? false : wasVerified;
      if (b.email_verified !== undefined && b.email_verified !== verified) {
        const address = emailChanged ? email! : before.email;
        if (!address) throw badRequest("User validation failed", [{ field: "email_verified", reason: "the user has no email address" }]);
        if (b.email_verified) await store.markContactVerified(db, (await store.contactByValue(db, app.id, "email", address))!.id, now);
        else await adminStore.unverifyPrimaryEmail(db, id);
        verified = b.email_verified;
      }
      if (verified !== wasVerified) changed.push("email_verified");

      if (!changed.length) return publicUser(before);
      if (!(await store.updateUserFields(db, id, fields, now))) await adminStore.touchUser(db, id, now);
      if ((fields.status && fields.status !== "active") || passwordHash !== undefined) await this.auth.sessions.revokeAll(db, id);

      const after = await this.load(db, app, id);
      const view = publicUser(after);
      await recordAuthAudit(db, this.ctx, app.id, {
        action: "user.update",
        actor: c.actor,
        target: { type: "user", id },
        meta,
        metadata: {
          changed_fields: changed,
          ...(fields.status ? { status: { from: before.status, to: fields.status } } : {}),
          ...(changed.includes("role") ? { role: { from: before.role_name, to: after.role_name } } : {}),
        },
      });
      await this.emit(db, app.id, "user.updated", { ...view, changed_fields: changed });
      if (verified && (!wasVerified || emailChanged)) await this.emit(db, app.id, "user.email_verified", view);
      if (changed.includes("role")) {
        if (before.role_name) await this.emit(db, app.id, "role.removed", { user_id: id, role: before.role_name, tenant_id: null, removed_at: now });
        if (after.role_name) await this.emit(db, app.id, "role.assigned", { user_id: id, role: after.role_name, tenant_id: null, assigned_at: now });
      }
      return view;
    });
  }

  /** The user's live sessions, newest first (at most ADMIN_SESSIONS_MAX). */
  async sessions(app: LoadedApp, credentials: AdminCredentials, id: string) {
    await this.caller(app, credentials, "auth.user.read");
    await this.load(this.ctx.db, app, id);
    const rows = await adminStore.liveSessionsOfUser(this.ctx.db, app.id, id, this.ctx.clock.nowMs(), ADMIN_SESSIONS_MAX);
    return {
      data: rows.map((r) => ({
        id: r.id,
        tenant_id: r.tenant_id,
        amr: JSON.parse(r.amr) as string[],
        mfa_at: r.mfa_at,
        created_at: r.created_at,
        expires_at: new Date(Number(r.expires_at)).toISOString(),
        ip: r.ip,
        user_agent: r.user_agent,
      })),
    };
  }

  /** Revokes one live session of the user (its refresh token stops working; access tokens fail the session check). 404 when it is not a live session of this user. */
  async revokeSession(app: LoadedApp, credentials: AdminCredentials, id: string, sessionId: string, meta: RequestMeta) {
    const c = await this.caller(app, credentials, "auth.user.update");
    await tx(this.ctx.db, async (t) => {
      await this.load(t, app, id);
      const now = this.ctx.clock.iso();
      if (!(await adminStore.revokeUserSession(t, app.id, id, sessionId, now, this.ctx.clock.nowMs()))) throw notFound("Session");
      await recordAuthAudit(t, this.ctx, app.id, { action: "user.session.revoke", actor: c.actor, target: { type: "user", id }, meta, metadata: { session_id: sessionId } });
    });
  }

  /** Admin MFA reset: removes every factor, recovery code and open MFA challenge of the user. Sessions stay. */
  async resetMfa(app: LoadedApp, credentials: AdminCredentials, id: string, meta: RequestMeta) {
    const c = await this.caller(app, credentials, "auth.user.update");
    await tx(this.ctx.db, async (t) => {
      await this.load(t, app, id);
      const factors = await adminStore.deleteUserMfa(t, app.id, id);
      await recordAuthAudit(t, this.ctx, app.id, { action: "mfa.reset", actor: c.actor, target: { type: "user", id }, meta, metadata: { factors_removed: factors } });
    });
  }

  async remove(app: LoadedApp, credentials: AdminCredentials, id: string, meta: RequestMeta) {
    const c = await this.caller(app, credentials, "auth.user.delete");
    await tx(this.ctx.db, async (t) => {
      const u = await this.load(t, app, id);
      const now = this.ctx.clock.iso();
      await store.deleteUser(t, app.id, id);
      await recordAuthAudit(t, this.ctx, app.id, { action: "user.delete", actor: c.actor, target: { type: "user", id }, meta, metadata: { username: u.username } });
      await this.emit(t, app.id, "user.deleted", { id, app_id: app.id, email: u.email, deleted_at: now });
    });
  }
}
