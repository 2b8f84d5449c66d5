/**
 * Roles, permissions and authorization checks of an App.
 *
 * Catalogue and roles (admin routes, auth.role.* actions):
 * - A permission is `resource.action`: exactly two lowercase segments `[a-z][a-z0-9_-]*`
 *   joined by one dot, at most 128 characters. The catalogue holds concrete names only.
 * - A role lists registered permissions plus, optionally, wildcards: `resource.*` (every
 *   action of that resource, including ones registered later) and `*` (everything).
 *   Wildcards are not checked against the catalogue, since they stand for future entries too.
 *   At most 100 entries per role; duplicates are folded and the list is kept sorted.
 * - Role names: 1-64 letters, digits, `_ . : -`, starting with a letter or digit; unique
 *   per App regardless of case (409 ROLE_NAME_TAKEN).
 * - Deleting a permission that a role lists literally is refused (409 PERMISSION_IN_USE,
 *   the roles named in details): roles never change behind an admin's back.
 * - Deleting a role in use is allowed: its holders lose it (role_id SET NULL, app-wide and
 *   in tenants) and each loss emits role.removed. The App's default_role cannot be deleted
 *   or renamed (409 ROLE_IS_DEFAULT); change the App setting first.
 * - Role and membership changes reach tokens at the next refresh/sign-in; access tokens
 *   already issued keep their claims until they expire (tokens are stateless).
 *
 * Token checks (no caller credential beyond the token; no DB query on the hot path):
 * - /authorize and /verify trust the claims of a token that verifies offline (signature by
 *   one of the App's published keys, issuer, expiry): one cached verify, nothing else.
 * - /oauth/introspect (RFC 7662) is open too: App tokens are self-contained JWTs that anyone
 *   can verify against the public JWKS, so introspection discloses nothing a verifier could
 *   not learn offline; an Authorization header is ignored, so RFC clients that authenticate
 *   still work. Anything that does not verify as an access token of this App is {active:false}.
 *   Unlike the offline checks it also tells revocation: an end-user token whose session is
 *   revoked or over, or an M2M token whose client is deleted or rotated since, is
 *   {active:false}. That costs one primary-key read, which is what callers ask it for.
 */
import type { RequestMeta } from "../../../access/http";
import { tx } from "../../../core/db";
import { isUniqueViolation } from "../../../core/store/sql";
import { ApiError, badRequest, conflict, notFound, unauthorized, type ErrorDetail } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { andThen, type MaybePromise } from "../../../core/maybe-promise";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import type { AppContext } from "../../../context";
import type { LoadedApp } from "../apps/service";
import { recordAuthAudit } from "../audit/record";
import type { AdminCaller, AdminCredentials, AppAccess, M2mClaims } from "../apps/access";
import type { SessionService } from "./sessions";
import * as store from "./store/roles";
import type { EmitAuthEvent, UserService } from "./users";
import { roleView } from "./views";

export const PERMISSION_RE = /^[a-z][a-z0-9_-]*\.[a-z][a-z0-9_-]*$/;
const RESOURCE_WILDCARD_RE = /^[a-z][a-z0-9_-]*\.\*$/;
export const PERMISSION_MAX_LENGTH = 128;
export const ROLE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
export const ROLE_PERMISSIONS_MAX = 100;
export const DESCRIPTION_MAX = 500;
/** Longest token the check endpoints look at; a JWT of ours is far shorter. */
export const TOKEN_MAX_LENGTH = 16_384;

export const isPermissionName = (s: string) => s.length <= PERMISSION_MAX_LENGTH && PERMISSION_RE.test(s);
const isRoleEntry = (s: string) => s === "*" || (s.length <= PERMISSION_MAX_LENGTH && RESOURCE_WILDCARD_RE.test(s)) || isPermissionName(s);

/** Does a granted entry (`*`, `resource.*` or exact) cover a concrete permission? */
export function permissionCovers(granted: string, wanted: string): boolean {
  if (granted === "*" || granted === wanted) return true;
  // "res.*" covers "res.<anything>": compare the "res." prefix without allocating.
  const n = granted.length - 1;
  return n > 1 && granted.charCodeAt(n) === 42 && granted.charCodeAt(n - 1) === 46 && wanted.length > n && wanted.startsWith(granted.slice(0, n));
}

export const claimsAllow = (permissions: unknown, wanted: string) => Array.isArray(permissions) && permissions.some((p) => typeof p === "string" && permissionCovers(p, wanted));

const permissionView = (p: store.PermissionRow) => ({ name: p.name, description: p.description, created_at: p.created_at });

/** Verified claims of an access token (end-user or M2M) of the App. */
type TokenClaims = Record<string, unknown> & { type: "end_user" | "m2m"; sub: string };

const invalidToken = () => unauthorized("Token is invalid or expired", "INVALID_TOKEN");
const roleNameTaken = () => conflict("A role with this name already exists", "ROLE_NAME_TAKEN");
const INACTIVE = { active: false as const };

export class RbacService {
  constructor(
    private readonly ctx: AppContext,
    /** The parts of the Auth service this feature uses (AuthService passes itself). */
    private readonly auth: { access: AppAccess; users: UserService; sessions: SessionService },
    private readonly emit: EmitAuthEvent,
  ) {}

  private admin(app: LoadedApp, credentials: AdminCredentials, action: string): Promise<AdminCaller> {
    return this.auth.access.admin(app, credentials, action);
  }

  private page<R, T>(rows: R[], limit: number, name: (r: R) => string, map: (r: R) => T) {
    return buildPage(rows, limit, (r) => ({ n: name(r) }), map);
  }

  private after(cursor: string | undefined) {
    const n = decodeCursor<{ n?: unknown }>(cursor)?.n;
    return typeof n === "string" ? n : null;
  }

  // ------------------------------------------------------------ permission catalogue

  async listPermissions(app: LoadedApp, credentials: AdminCredentials, q: { limit?: number; cursor?: string }) {
    await this.admin(app, credentials, "auth.role.read");
    const limit = parseLimit(q.limit);
    return this.page(await store.listPermissions(this.ctx.db, app.id, this.after(q.cursor), limit + 1), limit, (r) => r.name, permissionView);
  }

  async createPermission(app: LoadedApp, credentials: AdminCredentials, b: { name: string; description?: string | null }, meta: RequestMeta) {
    const caller = await this.admin(app, credentials, "auth.role.create");
    const details: ErrorDetail[] = [];
    if (!isPermissionName(b.name)) details.push({ field: "name", reason: `resource.action: two lowercase segments [a-z][a-z0-9_-]* joined by a dot, at most ${PERMISSION_MAX_LENGTH} characters` });
    const description = this.description(b.description, details);
    if (details.length) throw badRequest("Invalid permission", details);
    const row: store.PermissionRow = { app_id: app.id, name: b.name, description, created_at: this.ctx.clock.iso() };
    const exists = () => conflict("This permission already exists", "PERMISSION_EXISTS");
    await tx(this.ctx.db, async (t) => {
      if (await store.permissionByName(t, app.id, b.name)) throw exists();
      await store.insertPermission(t, row).catch((e) => {
        throw isUniqueViolation(e) ? exists() : e;
      });
      await recordAuthAudit(t, this.ctx, app.id, { action: "permission.create", actor: caller.actor, target: { type: "permission", id: b.name }, meta });
    });
    return permissionView(row);
  }

  async deletePermission(app: LoadedApp, credentials: AdminCredentials, name: string, meta: RequestMeta) {
    const caller = await this.admin(app, credentials, "auth.role.delete");
    await tx(this.ctx.db, async (t) => {
      if (!(await store.permissionByName(t, app.id, name))) throw notFound("Permission");
      const roles = await store.rolesUsingPermission(t, app.id, name);
      if (roles.length) {
        const details = roles.map((r) => ({ field: "roles", reason: `used by role "${r}"` }));
        throw new ApiError(409, "PERMISSION_IN_USE", `Permission is used by ${roles.length} role(s); remove it from them first`, details);
      }
      await store.deletePermission(t, app.id, name);
      await recordAuthAudit(t, this.ctx, app.id, { action: "permission.delete", actor: caller.actor, target: { type: "permission", id: name }, meta });
    });
  }

  // ------------------------------------------------------------ roles

  private description(v: string | null | undefined, details: ErrorDetail[]) {
    const d = (v ?? "").trim();
    if (d.length > DESCRIPTION_MAX) details.push({ field: "description", reason: `at most ${DESCRIPTION_MAX} characters` });
    return d;
  }

  /** Validates a role's permission list against the syntax and the App's catalogue; returns it folded and sorted. */
  private async permissionList(app: LoadedApp, list: string[], details: ErrorDetail[]): Promise<string[]> {
    if (list.length > ROLE_PERMISSIONS_MAX) {
      details.push({ field: "permissions", reason: `at most ${ROLE_PERMISSIONS_MAX} entries` });
      return [];
    }
    const unique = [...new Set(list)].sort();
    const concrete: string[] = [];
    list.forEach((p, i) => {
      if (!isRoleEntry(p)) details.push({ field: `permissions[${i}]`, reason: "resource.action, resource.* or *" });
      else if (p !== "*" && !p.endsWith(".*")) concrete.push(p);
    });
    if (concrete.length) {
      const known = await store.registeredPermissions(this.ctx.db, app.id, concrete);
      list.forEach((p, i) => {
        if (concrete.includes(p) && !known.has(p)) details.push({ field: `permissions[${i}]`, reason: "not a registered permission of this App" });
      });
    }
    return unique;
  }

  private roleName(name: string, details: ErrorDetail[]) {
    if (!ROLE_NAME_RE.test(name)) details.push({ field: "name", reason: "1-64 letters, digits, underscore, dot, colon or hyphen, starting with a letter or digit" });
  }

  private isDefaultRole(app: LoadedApp, role: store.RoleRow) {
    return app.settings.default_role !== null && app.settings.default_role.toLowerCase() === role.name.toLowerCase();
  }

  private async role(app: LoadedApp, id: string) {
    const r = await store.roleById(this.ctx.db, app.id, id);
    if (!r) throw notFound("Role");
    return r;
  }

  async listRoles(app: LoadedApp, credentials: AdminCredentials, q: { limit?: number; cursor?: string }) {
    await this.admin(app, credentials, "auth.role.read");
    const limit = parseLimit(q.limit);
    return this.page(await store.listRoles(this.ctx.db, app.id, this.after(q.cursor), limit + 1), limit, (r) => r.name, roleView);
  }

  async getRole(app: LoadedApp, credentials: AdminCredentials, id: string) {
    await this.admin(app, credentials, "auth.role.read");
    return roleView(await this.role(app, id));
  }

  async createRole(app: LoadedApp, credentials: AdminCredentials, b: { name: string; description?: string | null; permissions?: string[] }, meta: RequestMeta) {
    const caller = await this.admin(app, credentials, "auth.role.create");
    const details: ErrorDetail[] = [];
    this.roleName(b.name, details);
    const description = this.description(b.description, details);
    const permissions = await this.permissionList(app, b.permissions ?? [], details);
    if (details.length) throw badRequest("Invalid role", details);
    const now = this.ctx.clock.iso();
    const row: store.RoleRow = { id: uuid(), app_id: app.id, name: b.name, description, permissions: JSON.stringify(permissions), created_at: now, updated_at: now };
    await tx(this.ctx.db, async (t) => {
      if (await store.roleNameTaken(t, app.id, b.name, null)) throw roleNameTaken();
      await store.insertRole(t, row).catch((e) => {
        throw isUniqueViolation(e) ? roleNameTaken() : e;
      });
      await recordAuthAudit(t, this.ctx, app.id, { action: "role.create", actor: caller.actor, target: { type: "role", id: row.id }, meta, metadata: { name: row.name, permissions } });
    });
    return roleView(row);
  }

  async updateRole(app: LoadedApp, credentials: AdminCredentials, id: string, b: { name?: string; description?: string | null; permissions?: string[] }, meta: RequestMeta) {
    const caller = await this.admin(app, credentials, "auth.role.update");
    // The body is judged before the role is looked up: a bad field is 400 even for an unknown role.
    const details: ErrorDetail[] = [];
    if (b.name !== undefined) this.roleName(b.name, details);
    const newDescription = b.description !== undefined ? this.description(b.description, details) : undefined;
    const newPermissions = b.permissions !== undefined ? await this.permissionList(app, b.permissions, details) : undefined;
    if (details.length) throw badRequest("Invalid role", details);
    const current = await this.role(app, id);
    const name = b.name ?? current.name;
    const description = newDescription ?? current.description;
    const permissions = newPermissions ?? (JSON.parse(current.permissions) as string[]);
    const renamed = name !== current.name;
    if (renamed && name.toLowerCase() !== current.name.toLowerCase() && this.isDefaultRole(app, current)) {
      throw conflict("This role is the App's default_role; change that setting before renaming it", "ROLE_IS_DEFAULT");
    }
    const next = { name, description, permissions: JSON.stringify(permissions), updated_at: this.ctx.clock.iso() };
    const changed = (["name", "description", "permissions"] as const).filter((k) => next[k] !== current[k]);
    if (!changed.length) return roleView(current);
    await tx(this.ctx.db, async (t) => {
      if (renamed && (await store.roleNameTaken(t, app.id, name, id))) throw roleNameTaken();
      await store.updateRole(t, id, next).catch((e) => {
        throw isUniqueViolation(e) ? roleNameTaken() : e;
      });
      await recordAuthAudit(t, this.ctx, app.id, { action: "role.update", actor: caller.actor, target: { type: "role", id }, meta, metadata: { fields: changed, name, permissions } });
    });
    return roleView({ ...current, ...next });
  }

  async deleteRole(app: LoadedApp, credentials: AdminCredentials, id: string, meta: RequestMeta) {
    const caller = await this.admin(app, credentials, "auth.role.delete");
    const role = await this.role(app, id);
    if (this.isDefaultRole(app, role)) throw conflict("This role is the App's default_role; change that setting before deleting it", "ROLE_IS_DEFAULT");
    const at = this.ctx.clock.iso();
    await tx(this.ctx.db, async (t) => {
      const holders = await store.roleHolders(t, id);
      await store.deleteRole(t, id); // ON DELETE SET NULL clears users and tenant memberships
      for (const userId of holders.users) await this.emit(t, app.id, "role.removed", { user_id: userId, role: role.name, tenant_id: null, removed_at: at });
      for (const m of holders.members) await this.emit(t, app.id, "role.removed", { user_id: m.user_id, role: role.name, tenant_id: m.tenant_id, removed_at: at });
      await recordAuthAudit(t, this.ctx, app.id, {
        action: "role.delete",
        actor: caller.actor,
        target: { type: "role", id },
        meta,
        metadata: { name: role.name, users_affected: holders.users.length, tenant_members_affected: holders.members.length },
      });
    });
  }

  // ------------------------------------------------------------ membership

  /** Sets (or clears, with null) a user's app-wide role. */
  async assignRole(app: LoadedApp, credentials: AdminCredentials, userId: string, roleName: string | null, meta: RequestMeta) {
    const caller = await this.admin(app, credentials, "auth.user.update");
    const user = await this.auth.users.get(app, userId);
    if (!user) throw notFound("User");
    const role = roleName === null ? null : await store.roleByName(this.ctx.db, app.id, roleName);
    if (roleName !== null && !role) throw badRequest("No such role in this App", [{ field: "role", reason: "must name a role of this App, or be null" }]);
    if ((role?.id ?? null) === user.role_id) return { user_id: user.id, role: role?.name ?? null };
    const at = this.ctx.clock.iso();
    await tx(this.ctx.db, async (t) => {
      await store.setUserRole(t, app.id, user.id, role?.id ?? null, at);
      if (user.role_name) await this.emit(t, app.id, "role.removed", { user_id: user.id, role: user.role_name, tenant_id: null, removed_at: at });
      if (role) await this.emit(t, app.id, "role.assigned", { user_id: user.id, role: role.name, tenant_id: null, assigned_at: at });
      await recordAuthAudit(t, this.ctx, app.id, {
        action: role ? "user.role.assign" : "user.role.remove",
        actor: caller.actor,
        target: { type: "user", id: user.id },
        meta,
        metadata: { role: role?.name ?? null, previous: user.role_name },
      });
    });
    return { user_id: user.id, role: role?.name ?? null };
  }

  // ------------------------------------------------------------ token checks (hot path)

  /** Claims of an access token of this App, or null. One cached offline verify; no DB. */
  claims(app: LoadedApp, token: string | null | undefined): MaybePromise<TokenClaims | null> {
    if (!token || token.length > TOKEN_MAX_LENGTH) return null;
    return andThen(this.auth.access.verify(app, token), (c) =>
      !c || (c.type !== "end_user" && c.type !== "m2m") || typeof c.sub !== "string" ? null : (c as TokenClaims),
    );
  }

  async authorize(app: LoadedApp, token: string | null, permission: string) {
    if (!isPermissionName(permission)) throw badRequest("Invalid permission", [{ field: "permission", reason: "a concrete resource.action name (no wildcards)" }]);
    const c = await this.claims(app, token);
    if (!c) throw invalidToken();
    return { allowed: claimsAllow(c.permissions, permission), role: typeof c.role === "string" ? c.role : null };
  }

  /** Synchronous for a token already verified (maybe-promise.ts). */
  verify(app: LoadedApp, token: string | null) {
    return andThen(this.claims(app, token), (c) => {
      if (!c) throw invalidToken();
      return { valid: true as const, claims: c };
    });
  }

  /** Whether a verified token is still backed by its session (end user) or its client (M2M): one primary-key read. */
  private stillStands(app: LoadedApp, c: TokenClaims): MaybePromise<boolean> {
    if (c.type === "end_user") return this.auth.sessions.isLive(app, c);
    if (typeof c.client_id !== "string") return false;
    return andThen(this.auth.access.currentClient(app, c as unknown as M2mClaims), (client) => client !== null);
  }

  /** RFC 7662 answer for any string; never throws for a bad token. */
  introspect(app: LoadedApp, token: string) {
    return andThen(this.claims(app, token), (c) => (c ? andThen(this.stillStands(app, c), (live) => (live ? this.introspection(c) : INACTIVE)) : INACTIVE));
  }

  private introspection(c: TokenClaims) {
    const permissions = Array.isArray(c.permissions) ? (c.permissions as string[]) : [];
    return {
      active: true as const,
      sub: c.sub,
      ...(typeof c.client_id === "string" ? { client_id: c.client_id } : {}),
      scope: permissions.join(" "),
      exp: c.exp as number,
      iat: c.iat as number,
      iss: c.iss as string,
      ...(c.aud !== undefined ? { aud: c.aud as string | string[] } : {}),
      jti: c.jti as string,
      token_type: "Bearer" as const,
      role: typeof c.role === "string" ? c.role : null,
      permissions,
      type: c.type,
      ...(typeof c.tid === "string" ? { tid: c.tid } : {}),
      ...(c.tid !== undefined ? { trole: typeof c.trole === "string" ? c.trole : null } : {}),
    };
  }
}
