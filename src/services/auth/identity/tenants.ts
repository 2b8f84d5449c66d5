/**
 * Tenants (organizations) inside an App and their members. Administrative callers only:
 * a workspace API key (or console session / personal token) allowed the auth.tenant.*
 * action in the App's workspace, or an M2M token of the App with that permission.
 *
 * Decisions the spec leaves open:
 * - Status: active | suspended | archived, any transition allowed (an archived tenant can be
 *   reactivated). Only active tenants can be signed in to; leaving active revokes the
 *   sessions signed in to the tenant. Archived tenants take no new members (409).
 * - Slug: 1-63 of [a-z0-9-]; an explicit slug is lower-cased first, so "Acme" is stored as
 *   "acme". Unique per App regardless of case: an explicit duplicate is 409 SLUG_TAKEN, a
 *   derived one gets "-" + 6 random hex appended.
 * - PATCH replaces metadata as a whole; unchanged values are not reported as changed, and a
 *   PATCH that changes nothing emits no event.
 * - Members: accountId (alias account_id) of a user of this App, or email to add / create
 *   one inline (no password: they get in through an invite or a password reset). An email
 *   that already belongs to a user adds that user; display_name / username are then ignored.
 *   role is a role name of the App; without it the member has no tenant role (trole null).
 * - Removing a member (or deleting the tenant) revokes the sessions signed in to that
 *   tenant, so a refresh cannot mint tid/trole for a membership that is gone. Sessions
 *   without a tenant, and the accounts themselves, are untouched.
 * - Beyond the spec rows: PATCH /tenants/{id}/members/{account_id} {role} changes the
 *   member's role (auth.tenant.members.add; emits role.assigned / role.removed with
 *   tenant_id) and DELETE /tenants/{id}/members/{account_id} removes the member
 *   (auth.tenant.members.remove).
 */
import type { RequestMeta } from "../../../access/http";
import { tx, type Sql } from "../../../core/db";
import { isUniqueViolation } from "../../../core/store/sql";
import { badRequest, conflict, notFound, type ErrorDetail } from "../../../core/errors";
import { displayId, randomHex, uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import type { AppContext } from "../../../context";
import type { LoadedApp } from "../apps/service";
import { recordAuthAudit, type AuthActor } from "../audit/record";
import type { AdminCredentials, AppAccess } from "../apps/access";
import { isEmail } from "../apps/settings";
import { roleByName } from "./store/roles";
import * as store from "./store/tenants";
import { contactByValue, userView } from "./store/users";
import { checkMetadata, type EmitAuthEvent, type UserService } from "./users";
import { memberView, tenantView, type MemberView, type TenantView } from "./views";

export const TENANT_STATUSES = ["active", "suspended", "archived"] as const;
export const TENANT_SLUG_RE = /^[a-z0-9-]{1,63}$/;
export const TENANT_NAME_MAX = 200;
const SUFFIX_HEX = 6;
const SLUG_ATTEMPTS = 8;

/** "Café Society, Inc." -> "cafe-society-inc"; empty results fall back to "tenant". */
export function slugFromName(name: string): string {
  const s = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    // Leave room for the collision suffix, and never end on a hyphen after cutting.
    .slice(0, 63 - 1 - SUFFIX_HEX)
    .replace(/-+$/, "");
  return s || "tenant";
}

export interface NewTenant {
  display_name: string;
  slug?: string | null;
  metadata?: unknown;
}

export interface TenantPatch {
  display_name?: string;
  slug?: string;
  status?: string;
  metadata?: unknown;
}

export interface NewMember {
  accountId?: string | null;
  account_id?: string | null;
  email?: string | null;
  display_name?: string | null;
  username?: string | null;
  role?: string | null;
}

const isStatus = (s: unknown): s is store.TenantStatus => typeof s === "string" && (TENANT_STATUSES as readonly string[]).includes(s);

function checkName(v: unknown, details: ErrorDetail[]) {
  if (typeof v !== "string" || !v.trim() || v.trim().length > TENANT_NAME_MAX) details.push({ field: "display_name", reason: `1-${TENANT_NAME_MAX} characters` });
}

function checkSlug(v: string, details: ErrorDetail[]) {
  if (!TENANT_SLUG_RE.test(v)) details.push({ field: "slug", reason: "1-63 lowercase letters, digits or hyphens" });
}

function pushMetadata(v: unknown, details: ErrorDetail[]) {
  const d = checkMetadata(v);
  if (d) details.push(d);
}

const tenantSlugTaken = () => conflict("A tenant with this slug already exists in this App", "SLUG_TAKEN");

export class TenantService {
  constructor(
    private readonly ctx: AppContext,
    /** The parts of the Auth service this feature uses (AuthService passes itself). */
    private readonly auth: { access: AppAccess; users: UserService },
    private readonly emit: EmitAuthEvent,
  ) {}

  private get db() {
    return this.ctx.db;
  }

  /** The App's tenant by UUID or tnt_ display id; another App's tenant is 404 like an unknown one. */
  private async tenant(app: LoadedApp, ref: string) {
    const t = await store.tenantByRef(this.db, app.id, ref);
    if (!t) throw notFound("Tenant");
    return t;
  }

  private async caller(app: LoadedApp, credentials: AdminCredentials, action: string): Promise<AuthActor> {
    return (await this.auth.access.admin(app, credentials, action)).actor;
  }

  private audit(t: Sql, app: LoadedApp, action: string, actor: AuthActor, target: { type: string; id: string }, meta: RequestMeta, metadata?: Record<string, unknown>) {
    return recordAuthAudit(t, this.ctx, app.id, { action, actor, target, meta, metadata });
  }

  /** A free slug: the base itself, else base + "-" + random hex (inside the caller's transaction t). */
  private async freeSlug(t: Sql, app: LoadedApp, base: string) {
    if (!(await store.tenantSlugTaken(t, app.id, base, null))) return base;
    for (let i = 0; i < SLUG_ATTEMPTS; i++) {
      const candidate = `${base}-${randomHex(SUFFIX_HEX / 2)}`;
      if (!(await store.tenantSlugTaken(t, app.id, candidate, null))) return candidate;
    }
    // 8 misses in a 16M space means something is wrong; refuse rather than loop.
    throw conflict("Could not find a free slug; pass one explicitly", "SLUG_TAKEN");
  }

  private async freeDisplayId(t: Sql) {
    for (;;) {
      const id = displayId("tnt");
      if (!(await store.displayIdTaken(t, id))) return id;
    }
  }

  // --- tenants ----------------------------------------------------------------------------

  async create(app: LoadedApp, credentials: AdminCredentials, b: NewTenant, meta: RequestMeta): Promise<TenantView> {
    const actor = await this.caller(app, credentials, "auth.tenant.create");
    const details: ErrorDetail[] = [];
    checkName(b.display_name, details);
    const explicit = b.slug != null ? b.slug.toLowerCase() : null;
    if (explicit !== null) checkSlug(explicit, details);
    pushMetadata(b.metadata, details);
    if (details.length) throw badRequest("Invalid tenant", details);
    const displayName = b.display_name.trim();
    return tx(this.db, async (t) => {
      let slug: string;
      if (explicit !== null) {
        if (await store.tenantSlugTaken(t, app.id, explicit, null)) throw tenantSlugTaken();
        slug = explicit;
      } else slug = await this.freeSlug(t, app, slugFromName(displayName));
      const now = this.ctx.clock.iso();
      const row: store.TenantRow = {
        id: uuid(),
        app_id: app.id,
        display_id: await this.freeDisplayId(t),
        slug,
        display_name: displayName,
        status: "active",
        metadata: JSON.stringify(b.metadata ?? {}),
        created_at: now,
        updated_at: now,
      };
      await store.insertTenant(t, row).catch((e) => {
        // Taken by a concurrent create since the check (PostgreSQL, READ COMMITTED).
        throw isUniqueViolation(e) ? tenantSlugTaken() : e;
      });
      const view = tenantView(row);
      await this.audit(t, app, "tenant.create", actor, { type: "tenant", id: row.id }, meta, { slug });
      await this.emit(t, app.id, "tenant.created", view);
      return view;
    });
  }

  async list(app: LoadedApp, credentials: AdminCredentials, q: { limit?: string | number; cursor?: string; status?: string }) {
    await this.caller(app, credentials, "auth.tenant.read");
    const limit = parseLimit(q.limit);
    if (q.status !== undefined && !isStatus(q.status)) throw badRequest("Invalid status filter", [{ field: "status", reason: `one of ${TENANT_STATUSES.join(", ")}` }]);
    const after = decodeCursor<{ c: unknown; i: unknown }>(q.cursor);
    if (after && (typeof after.c !== "string" || typeof after.i !== "string")) throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");
    const rows = await store.listTenants(this.db, app.id, after as { c: string; i: string } | null, q.status ?? null, limit + 1);
    return buildPage(rows, limit, (r) => ({ c: r.created_at, i: r.id }), tenantView);
  }

  async get(app: LoadedApp, credentials: AdminCredentials, ref: string) {
    await this.caller(app, credentials, "auth.tenant.read");
    return tenantView(await this.tenant(app, ref));
  }

  async update(app: LoadedApp, credentials: AdminCredentials, ref: string, b: TenantPatch, meta: RequestMeta): Promise<TenantView> {
    const actor = await this.caller(app, credentials, "auth.tenant.update");
    // The body is judged before the tenant is looked up (credential, then input, then existence).
    const details: ErrorDetail[] = [];
    if (b.display_name !== undefined) checkName(b.display_name, details);
    const slug = b.slug !== undefined ? b.slug.toLowerCase() : undefined;
    if (slug !== undefined) checkSlug(slug, details);
    if (b.status !== undefined && !isStatus(b.status)) details.push({ field: "status", reason: `one of ${TENANT_STATUSES.join(", ")}` });
    if (b.metadata !== undefined) {
      if (b.metadata === null) details.push({ field: "metadata", reason: "must be a JSON object" });
      else pushMetadata(b.metadata, details);
    }
    if (details.length) throw badRequest("Invalid tenant", details);
    const current = await this.tenant(app, ref);

    const next: Partial<Pick<store.TenantRow, "slug" | "display_name" | "status" | "metadata">> = {};
    if (b.display_name !== undefined && b.display_name.trim() !== current.display_name) next.display_name = b.display_name.trim();
    if (slug !== undefined && slug !== current.slug) next.slug = slug;
    if (b.status !== undefined && b.status !== current.status) next.status = b.status as store.TenantStatus;
    if (b.metadata !== undefined) {
      const m = JSON.stringify(b.metadata);
      if (m !== current.metadata) next.metadata = m;
    }
    const changed = Object.keys(next);
    if (!changed.length) return tenantView(current);

    return tx(this.db, async (t) => {
      if (next.slug !== undefined && (await store.tenantSlugTaken(t, app.id, next.slug, current.id))) throw tenantSlugTaken();
      const now = this.ctx.clock.iso();
      await store.updateTenant(t, current.id, next, now).catch((e) => {
        throw isUniqueViolation(e) ? tenantSlugTaken() : e;
      });
      // Leaving active ends what was signed in to the tenant (sign-in refuses it from now on).
      if (next.status && next.status !== "active") await store.revokeTenantSessions(t, current.id, null, now);
      const view = tenantView((await store.tenantByRef(t, app.id, current.id))!);
      await this.audit(t, app, "tenant.update", actor, { type: "tenant", id: current.id }, meta, { changed_fields: changed, ...(next.status ? { status: { from: current.status, to: next.status } } : {}) });
      await this.emit(t, app.id, "tenant.updated", { ...view, changed_fields: changed });
      return view;
    });
  }

  async remove(app: LoadedApp, credentials: AdminCredentials, ref: string, meta: RequestMeta) {
    const actor = await this.caller(app, credentials, "auth.tenant.delete");
    const tenant = await this.tenant(app, ref);
    await tx(this.db, async (t) => {
      const now = this.ctx.clock.iso();
      await store.revokeTenantSessions(t, tenant.id, null, now);
      await store.deleteTenant(t, tenant.id);
      await this.audit(t, app, "tenant.delete", actor, { type: "tenant", id: tenant.id }, meta, { slug: tenant.slug, display_id: tenant.display_id });
      await this.emit(t, app.id, "tenant.deleted", { id: tenant.id, display_id: tenant.display_id, app_id: app.id, slug: tenant.slug, deleted_at: now });
    });
  }

  // --- members ----------------------------------------------------------------------------

  async members(app: LoadedApp, credentials: AdminCredentials, ref: string, q: { limit?: string | number; cursor?: string }) {
    await this.caller(app, credentials, "auth.tenant.read");
    const t = await this.tenant(app, ref);
    const limit = parseLimit(q.limit);
    const after = decodeCursor<{ j: unknown; i: unknown }>(q.cursor);
    if (after && (typeof after.j !== "string" || typeof after.i !== "string")) throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");
    const rows = await store.listMembers(this.db, t.id, after as { j: string; i: string } | null, limit + 1);
    return buildPage(rows, limit, (r) => ({ j: r.joined_at, i: r.id }), memberView);
  }

  /** A role name of the App (null clears it); 400 for an unknown role. */
  private async role(app: LoadedApp, name: string | null | undefined) {
    if (name == null) return null;
    const r = await roleByName(this.db, app.id, name);
    if (!r) throw badRequest("Unknown role", [{ field: "role", reason: "no such role in this App" }]);
    return r;
  }

  async addMember(app: LoadedApp, credentials: AdminCredentials, ref: string, b: NewMember, meta: RequestMeta): Promise<MemberView> {
    const actor = await this.caller(app, credentials, "auth.tenant.members.add");
    // The body is judged before the tenant is looked up (credential, then input, then existence).
    const accountId = b.accountId ?? b.account_id ?? null;
    if ((accountId === null) === (b.email == null)) {
      throw badRequest("Give exactly one of accountId or email", [{ field: accountId === null ? "accountId" : "email", reason: "exactly one of accountId or email is required" }]);
    }
    if (b.email != null && !isEmail(b.email.trim().toLowerCase())) throw badRequest("Invalid member", [{ field: "email", reason: "must be a valid email address" }]);
    const role = await this.role(app, b.role);
    const tenant = await this.tenant(app, ref);
    if (tenant.status === "archived") throw conflict("This tenant is archived", "TENANT_ARCHIVED");

    return tx(this.db, async (t) => {
      let userId: string;
      let created = false;
      if (accountId !== null) {
        if (!(await userView(t, app.id, accountId))) throw notFound("Account");
        userId = accountId;
      } else {
        const email = b.email!.trim().toLowerCase();
        const existing = await contactByValue(t, app.id, "email", email);
        if (existing) userId = existing.user_id;
        else {
          // Created in this transaction, so a refused membership leaves no stray account.
          // No password: the user gets in through an invite or a password reset.
          userId = (await this.auth.users.insert(t, app, { email, username: b.username ?? null, display_name: b.display_name ?? null }, null, actor, meta, "tenant_invite")).id;
          created = true;
        }
      }
      const already = () => conflict("The account is already a member of this tenant", "ALREADY_MEMBER");
      if (await store.memberOf(t, tenant.id, userId)) throw already();
      const id = uuid();
      await store.insertMember(t, { id, tenant_id: tenant.id, user_id: userId, role_id: role?.id ?? null, invited_by: actor.id, joined_at: this.ctx.clock.iso() }).catch((e) => {
        throw isUniqueViolation(e) ? already() : e;
      });
      const view = memberView((await store.memberOf(t, tenant.id, userId))!);
      await this.audit(t, app, "tenant.member.add", actor, { type: "user", id: userId }, meta, { tenant_id: tenant.id, role: view.role_name, account_created: created });
      await this.emit(t, app.id, "tenant.member.added", { ...view, user_id: userId, roles: view.role_name ? [view.role_name] : [], added_at: view.joined_at });
      return view;
    });
  }

  private async member(t: store.TenantRow, accountId: string) {
    const m = await store.memberOf(this.db, t.id, accountId);
    if (!m) throw notFound("Member");
    return m;
  }

  async updateMember(app: LoadedApp, credentials: AdminCredentials, ref: string, accountId: string, b: { role: string | null }, meta: RequestMeta): Promise<MemberView> {
    const actor = await this.caller(app, credentials, "auth.tenant.members.add");
    const role = await this.role(app, b.role);
    const tenant = await this.tenant(app, ref);
    const m = await this.member(tenant, accountId);
    if ((role?.id ?? null) === m.role_id) return memberView(m);
    return tx(this.db, async (t) => {
      await store.setMemberRole(t, m.id, role?.id ?? null);
      const view = memberView((await store.memberOf(t, tenant.id, accountId))!);
      const now = this.ctx.clock.iso();
      await this.audit(t, app, "tenant.member.update", actor, { type: "user", id: accountId }, meta, { tenant_id: tenant.id, role: { from: m.role_name, to: view.role_name } });
      if (m.role_name) await this.emit(t, app.id, "role.removed", { user_id: accountId, role: m.role_name, tenant_id: tenant.id, removed_at: now });
      if (view.role_name) await this.emit(t, app.id, "role.assigned", { user_id: accountId, role: view.role_name, tenant_id: tenant.id, assigned_at: now });
      return view;
    });
  }

  async removeMember(app: LoadedApp, credentials: AdminCredentials, ref: string, accountId: string, meta: RequestMeta) {
    const actor = await this.caller(app, credentials, "auth.tenant.members.remove");
    const tenant = await this.tenant(app, ref);
    const m = await this.member(tenant, accountId);
    await tx(this.db, async (t) => {
      const now = this.ctx.clock.iso();
      await store.deleteMember(t, m.id);
      await store.revokeTenantSessions(t, tenant.id, accountId, now);
      await this.audit(t, app, "tenant.member.remove", actor, { type: "user", id: accountId }, meta, { tenant_id: tenant.id });
      await this.emit(t, app.id, "tenant.member.removed", { id: m.id, tenant_id: tenant.id, account_id: accountId, user_id: accountId, removed_at: now });
    });
  }
}
