/**
 * Invites and accept-invite.
 *
 * - A code is "inv_" + 32 base62 characters (~190 bits); only its SHA-256 is stored (it is
 *   high-entropy, so no HMAC or stretching is needed) and it is shown once, at creation.
 *   code_hint ("inv_...wxyz") lets admins tell invites apart.
 * - email: only that address can accept; the account's primary email is then verified at
 *   once (the invite reached that mailbox, or the admin vouches for it). Such an invite is
 *   single-use (max_uses must be 1: an address can hold only one account). Without email,
 *   the accepter gives an `email`, which stays unverified until verified with a code.
 * - role: the user's App role (the App's default role when absent). tenant_id (UUID or tnt_
 *   id): the user also becomes a member of that tenant, with the invite's role (none when
 *   the invite names no role). A tenant deleted later only drops the membership part.
 * - Status (one precedence everywhere): revoked, then exhausted (uses = max_uses), then
 *   expired, else active. Accepting a non-active invite answers 410 INVITE_REVOKED /
 *   INVITE_EXHAUSTED / INVITE_EXPIRED; an unknown code (or another App's) 404 INVITE_NOT_FOUND.
 * - A use is taken by a single conditional UPDATE inside the transaction that creates the
 *   user, so concurrent accepts of the last use cannot both win, and a failed creation
 *   (409 duplicate email / username) gives the use back by rolling back.
 * - Revoke (DELETE) is idempotent and keeps the first revoked_at.
 * - send_email on a request (not a system caller such as the waitlist): past the client
 *   address's mail requests or the recipient's invite mails an hour, 429 RATE_LIMITED and
 *   nothing is created (kernel/identity/stranger-limits.ts; judged after the body).
 */
import type { RequestMeta } from "../../../access/http";
import { SECOND } from "../../../core/clock";
import { tx, type Sql } from "../../../core/db";
import { ApiError, badRequest, conflict, invalidField, notFound, type ErrorDetail } from "../../../core/errors";
import { randomBase62, uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import type { AppContext } from "../../../context";
import { invitationHash, issueInvitation, StrangerLimits } from "../../../kernel/identity";
import type { LoadedApp } from "../apps/service";
import { recordAuthAudit, type AuthActor } from "../audit/record";
import type { SigninService } from "./signin";
import { isEmail, normaliseOrigin } from "../apps/settings";
import * as store from "./store/invites";
import { roleById, roleByName } from "./store/roles";
import { tenantByRef } from "./store/tenants";
import { emailOrUsernameTaken, contactByValue } from "./store/users";
import type { EmitAuthEvent, UserService } from "./users";

export const INVITE_TTL = { min: 60, max: 30 * 24 * 3600, default: 7 * 24 * 3600 };
export const INVITE_MAX_USES = 1000;
export const INVITE_CODE_RE = /^inv_[A-Za-z0-9]{32}$/;
export const INVITE_STATUSES = ["active", "revoked", "expired", "exhausted"] as const;

export interface CreateInvite {
  email?: string | null;
  role?: string | null;
  tenant_id?: string | null;
  max_uses?: number;
  expires_in?: number;
  send_email?: boolean;
  /** Link in the mail: the code is appended as ?invite_code=...; its origin must be an allowed redirect origin of the App. */
  accept_url?: string | null;
}

export interface AcceptInvite {
  code: string;
  password: string;
  username?: string | null;
  display_name?: string | null;
  email?: string | null;
}

export function inviteStatus(i: store.InviteRow, nowMs: number): store.InviteStatus {
  if (i.revoked_at) return "revoked";
  if (i.uses >= i.max_uses) return "exhausted";
  if (i.expires_at !== null && i.expires_at <= nowMs) return "expired";
  return "active";
}

const gone: Record<Exclude<store.InviteStatus, "active">, () => ApiError> = {
  revoked: () => new ApiError(410, "INVITE_REVOKED", "This invite has been revoked"),
  expired: () => new ApiError(410, "INVITE_EXPIRED", "This invite has expired"),
  exhausted: () => new ApiError(410, "INVITE_EXHAUSTED", "This invite has been used up"),
};

export class InviteService {
  constructor(
    private readonly ctx: AppContext,
    /** The parts of the Auth service this feature uses (AuthService passes itself). */
    private readonly auth: { signin: SigninService; users: UserService },
    private readonly emit: EmitAuthEvent,
  ) {}

  view(i: store.InviteView) {
    return {
      id: i.id,
      code_hint: i.code_hint,
      email: i.email,
      role: i.role_name,
      tenant_id: i.tenant_id,
      max_uses: i.max_uses,
      uses: i.uses,
      status: inviteStatus(i, this.ctx.clock.nowMs()),
      expires_at: i.expires_at === null ? null : new Date(i.expires_at).toISOString(),
      revoked_at: i.revoked_at,
      created_at: i.created_at,
    };
  }

  /** Creates an invite (admin routes, and other services such as the waitlist). The code is in this answer only. */
  async create(app: LoadedApp, actor: AuthActor, b: CreateInvite, meta: RequestMeta | null) {
    const details: ErrorDetail[] = [];
    const email = b.email != null && b.email !== "" ? b.email.trim().toLowerCase() : null;
    if (email !== null && !isEmail(email)) details.push({ field: "email", reason: "must be a valid email address" });
    const maxUses = b.max_uses ?? 1;
    if (!Number.isInteger(maxUses) || maxUses < 1 || maxUses > INVITE_MAX_USES) details.push({ field: "max_uses", reason: `integer 1-${INVITE_MAX_USES}` });
    else if (email !== null && maxUses !== 1) details.push({ field: "max_uses", reason: "an invite for one email address can be used once" });
    const ttl = b.expires_in ?? INVITE_TTL.default;
    if (!Number.isInteger(ttl) || ttl < INVITE_TTL.min || ttl > INVITE_TTL.max) details.push({ field: "expires_in", reason: `integer seconds ${INVITE_TTL.min}-${INVITE_TTL.max}` });
    const role = b.role != null && b.role !== "" ? await roleByName(this.ctx.db, app.id, b.role) : null;
    if (b.role != null && b.role !== "" && !role) details.push({ field: "role", reason: "no such role in this App" });
    const tenant = b.tenant_id != null && b.tenant_id !== "" ? await tenantByRef(this.ctx.db, app.id, b.tenant_id) : null;
    if (b.tenant_id != null && b.tenant_id !== "" && !tenant) details.push({ field: "tenant_id", reason: "no such tenant in this App" });
    if (b.send_email && email === null) details.push({ field: "send_email", reason: "needs email" });
    let acceptUrl: URL | null = null;
    if (b.accept_url != null && b.accept_url !== "") {
      acceptUrl = URL.canParse(b.accept_url) ? new URL(b.accept_url) : null;
      const origin = acceptUrl ? normaliseOrigin(acceptUrl.origin) : null;
      if (!origin || !app.settings.allowed_redirect_origins.includes(origin)) details.push({ field: "accept_url", reason: "must be an absolute URL on one of the App's allowed_redirect_origins" });
    }
    if (details.length) throw badRequest("Invalid invite", details);

    const secret = issueInvitation(this.ctx.clock, `inv_${randomBase62(32)}`, ttl * SECOND);
    const code = secret.token;
    const row: store.InviteRow = {
      id: uuid(),
      app_id: app.id,
      code_hash: secret.token_hash,
      code_hint: `inv_...${code.slice(-4)}`,
      email,
      role_id: role?.id ?? null,
      tenant_id: tenant?.id ?? null,
      max_uses: maxUses,
      uses: 0,
      expires_at: secret.expires_at,
      revoked_at: null,
      created_by: actor.id, // same convention as tenant members' invited_by
      created_at: secret.created_at,
    };
    if (b.send_email && meta) {
      const limits = new StrangerLimits(this.ctx, `auth:${app.id}`);
      await limits.admitMailFrom(meta.ip);
      await limits.admitMailTo("invite", email!);
    }
    return tx(this.ctx.db, async (t) => {
      if (email !== null && (await contactByValue(t, app.id, "email", email))) throw conflict("A user with this email already exists", "EMAIL_TAKEN");
      await store.insertInvite(t, row);
      if (b.send_email) await this.mailInvite(t, app, email!, code, acceptUrl, row.expires_at!);
      await recordAuthAudit(t, this.ctx, app.id, { action: "invite.create", actor, target: { type: "invite", id: row.id }, meta, metadata: { email, role: role?.name ?? null, tenant_id: row.tenant_id, max_uses: maxUses, mailed: !!b.send_email } });
      return { ...this.view((await store.inviteById(t, app.id, row.id))!), code };
    });
  }

  /** Queues the invite mail in the creating transaction t (sent only if it commits). */
  private async mailInvite(t: Sql, app: LoadedApp, to: string, code: string, acceptUrl: URL | null, expiresAt: number) {
    let link = "";
    if (acceptUrl) {
      acceptUrl.searchParams.set("invite_code", code);
      link = `Accept it here: ${acceptUrl.toString()}\n\n`;
    }
    await this.ctx.mailer.enqueue(t, {
      to,
      from: app.settings.mail_from ?? undefined,
      subject: `You're invited to ${app.displayName}`,
      text: `You have been invited to join ${app.displayName}.\n\n${link}Your invite code is ${code}\n\nIt expires on ${new Date(expiresAt).toISOString()}.`,
    });
  }

  async list(app: LoadedApp, q: { limit?: number; cursor?: string; status?: string }) {
    const limit = parseLimit(q.limit);
    const status = q.status ? (q.status as store.InviteStatus) : null;
    if (status !== null && !INVITE_STATUSES.includes(status)) throw invalidField("status", `one of ${INVITE_STATUSES.join(", ")}`);
    const c = decodeCursor<{ c: unknown; i: unknown }>(q.cursor);
    if (c && (typeof c.c !== "string" || typeof c.i !== "string")) throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");
    const rows = await store.listInvites(this.ctx.db, app.id, { status, after: c as { c: string; i: string } | null, limit: limit + 1, nowMs: this.ctx.clock.nowMs() });
    return buildPage(rows, limit, (r) => ({ c: r.created_at, i: r.id }), (r) => this.view(r));
  }

  async revoke(app: LoadedApp, actor: AuthActor, id: string, meta: RequestMeta) {
    await tx(this.ctx.db, async (t) => {
      if (!(await store.revokeInvite(t, app.id, id, this.ctx.clock.iso()))) throw notFound("Invite");
      await recordAuthAudit(t, this.ctx, app.id, { action: "invite.revoke", actor, target: { type: "invite", id }, meta });
    });
  }

  /** Creates the account the invite allows and signs it in. */
  async accept(app: LoadedApp, b: AcceptInvite, meta: RequestMeta) {
    if (typeof b.code !== "string" || !INVITE_CODE_RE.test(b.code.trim())) throw invalidField("code", "must be an invite code (inv_...)");
    const invite = await store.inviteByHash(this.ctx.db, app.id, invitationHash(b.code.trim()));
    if (!invite) throw new ApiError(404, "INVITE_NOT_FOUND", "Unknown invite code");
    // Audited on the database itself: the refusal must stay recorded when a transaction rolls back.
    const refuse = async (status: Exclude<store.InviteStatus, "active">) => {
      await recordAuthAudit(this.ctx.db, this.ctx, app.id, { action: "invite.accept", outcome: "failure", actor: { type: "anonymous", id: null }, target: { type: "invite", id: invite.id }, meta, metadata: { reason: status } });
      return gone[status]();
    };
    const status = inviteStatus(invite, this.ctx.clock.nowMs());
    if (status !== "active") throw await refuse(status);

    const given = b.email != null && b.email !== "" ? b.email.trim().toLowerCase() : null;
    if (invite.email !== null && given !== null && given !== invite.email) throw invalidField("email", "must be the address the invite was sent to (or left out)");
    const email = invite.email ?? given;
    if (email === null) throw invalidField("email", "is required: this invite is not bound to an address");
    const role = invite.role_id ? await roleById(this.ctx.db, app.id, invite.role_id) : null;
    const newUser = { email, username: b.username ?? null, password: b.password, display_name: b.display_name ?? null, role: role?.name ?? null, email_verified: invite.email !== null };
    await this.auth.users.validate(this.ctx.db, app, newUser, { passwordRequired: true });
    // Cheap duplicate check before argon2; the authoritative one runs in the transaction.
    const dup = await emailOrUsernameTaken(this.ctx.db, app.id, email, b.username ?? "");
    if (dup.email) throw conflict("A user with this email already exists", "EMAIL_TAKEN");
    if (b.username != null && dup.username) throw conflict("This username is taken", "USERNAME_TAKEN");

    const hash = await this.ctx.passwords.hash(b.password);
    // A use taken by someone else since the check: the reason, read and audited after the rollback.
    let lost: Exclude<store.InviteStatus, "active"> | null = null;
    const user = await tx(this.ctx.db, async (t) => {
      if (!(await store.takeInviteUse(t, invite.id, this.ctx.clock.nowMs()))) {
        const now = await store.inviteById(t, app.id, invite.id);
        lost = now ? (inviteStatus(now, this.ctx.clock.nowMs()) as Exclude<store.InviteStatus, "active">) : "revoked";
        return null;
      }
      const actor: AuthActor = { type: "anonymous", id: null };
      const u = await this.auth.users.insert(t, app, newUser, hash, actor, meta, "invite");
      if (invite.tenant_id) await this.joinTenant(t, app, invite, u.id, role?.name ?? null, meta);
      await recordAuthAudit(t, this.ctx, app.id, { action: "invite.accept", actor: { type: "user", id: u.id }, target: { type: "invite", id: invite.id }, meta, metadata: { user_id: u.id, tenant_id: invite.tenant_id } });
      return u;
    });
    if (!user) throw await refuse(lost ?? "revoked");
    return this.auth.signin.complete(app, user, { tenantId: null, amr: ["pwd"] }, meta, "invite");
  }

  /** Same row, audit and event as the tenant module's member add, so consumers see one shape. */
  private async joinTenant(t: Sql, app: LoadedApp, invite: store.InviteRow, userId: string, roleName: string | null, meta: RequestMeta) {
    const member = { id: uuid(), tenant_id: invite.tenant_id!, user_id: userId, role_id: invite.role_id, invited_by: invite.created_by, joined_at: this.ctx.clock.iso() };
    await store.insertTenantMember(t, member);
    await recordAuthAudit(t, this.ctx, app.id, { action: "tenant.member.add", actor: { type: "user", id: userId }, target: { type: "user", id: userId }, meta, metadata: { tenant_id: member.tenant_id, role: roleName, via: "invite", invite_id: invite.id } });
    const { user_id, ...rest } = member;
    await this.emit(t, app.id, "tenant.member.added", { ...rest, account_id: user_id, role_name: roleName, user_id, roles: roleName ? [roleName] : [], added_at: member.joined_at });
  }
}
