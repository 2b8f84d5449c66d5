/**
 * Invitations: a workspace invites an email address with a role; the person signs in (or
 * signs up) with that address and accepts with the token mailed to them.
 *
 * The token exists only in the mail (stored as a SHA-256 hash), lives 7 days, is single
 * use, and a new invitation to the same address revokes the previous one. Accepting
 * answers one 404 for every way a token can be unusable, so the endpoint tells nobody
 * which tokens or addresses exist.
 *
 * The mail is limited (kernel/identity/stranger-limits.ts): with open sign-up anyone can make a workspace and
 * invite strangers. Past the client address's mail requests an hour, or the invitations one
 * address may get an hour from all workspaces, 429 RATE_LIMITED with Retry-After and nothing
 * is created (the answer already tells whether the address is a member, so it may say so).
 * The caller's permission is judged first: a 403 takes nothing from the limits.
 */
import type { Principal } from "../../../access/principal";
import { DAY } from "../../../core/clock";
import { tx } from "../../../core/db";
import { isUniqueViolation } from "../../../core/store/sql";
import { ApiError, conflict, invalidField, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import { randomToken } from "../../../core/secrets";
import type { AppContext } from "../../../context";
import { audit, type RequestMeta, type Authz } from "../../../kernel/tenancy";
import { invitationHash, issueInvitation, StrangerLimits } from "../../../kernel/identity";
import { accountById } from "./store/accounts";
import * as store from "./store/invitations";
import { invitationView } from "./views";
import { BUILTIN_ROLE_IDS, insertMember, isMemberByEmail, memberOfAccount, workspaceById, type RoleService } from "../workspaces";

export const INVITATION_TTL_MS = 7 * DAY;
// The sign-up rule for addresses (accounts.ts), so every invitable address can also sign up.
const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;

const alreadyMember = () => conflict("You are already a member of this workspace", "ALREADY_MEMBER");
const invitationNotFound = () => new ApiError(404, "INVITATION_NOT_FOUND", "This invitation does not exist, has expired or was meant for another account");

export class InvitationService {
  private readonly strangers: StrangerLimits;

  constructor(
    private readonly ctx: AppContext,
    private readonly authz: Authz,
    private readonly roles: RoleService,
  ) {
    this.strangers = new StrangerLimits(ctx, "console");
  }

  async create(p: Principal, slug: string, b: { email: string; role_id?: string }, meta: RequestMeta) {
    const email = b.email.trim().toLowerCase();
    if (!EMAIL_RE.test(email) || email.length > 254) throw invalidField("email", "must be a valid email address");
    await this.authz.authorizeWorkspace(this.ctx.db, p, { slug }, "member.create");
    await this.strangers.admitMailFrom(meta.ip);
    await this.strangers.admitMailTo("invite", email);
    try {
      return await this.invite(p, slug, email, b.role_id, meta);
    } catch (e) {
      // Two invitations to one address at the same moment (PostgreSQL): the second replaces the first, as in sequence.
      if (isUniqueViolation(e)) return this.invite(p, slug, email, b.role_id, meta);
      throw e;
    }
  }

  private invite(p: Principal, slug: string, email: string, roleId: string | undefined, meta: RequestMeta) {
    return tx(this.ctx.db, async (t) => {
      const access = await this.authz.authorizeWorkspace(t, p, { slug }, "member.create");
      const ws = access.workspace;
      const role = await this.roles.resolve(t, ws.id, roleId ?? BUILTIN_ROLE_IDS.member);
      this.roles.assertCanGrant(access, role);
      if (await isMemberByEmail(t, ws.id, email)) throw conflict("This address already belongs to a member of the workspace", "ALREADY_MEMBER");

      const { token, token_hash, created_at, expires_at: expiresAt } = issueInvitation(this.ctx.clock, randomToken(32), INVITATION_TTL_MS);
      const replaced = await store.revokeOpenInvitationFor(t, ws.id, email, created_at);
      const id = uuid();
      // A key invites on behalf of the person who minted it; the audit entry names the key.
      const invitedBy = p.kind === "api_key" ? p.createdBy : p.accountId;
      await store.insertInvitation(t, { id, workspace_id: ws.id, email, role_id: role.id, token_hash, invited_by: invitedBy, created_at, expires_at: expiresAt });

      const inviter = await accountById(t, invitedBy);
      const who = inviter ? (inviter.display_name ?? inviter.username) : "A workspace administrator";
      // Enqueued in this transaction: the mail exists exactly when the invitation does.
      await this.ctx.mailer.enqueue(t, {
        to: email,
        subject: `${who} invited you to ${ws.display_name} on Bunker`,
        text: [
          `${who} invited you to join the workspace "${ws.display_name}" on Bunker as ${role.name}.`,
          "",
          "Sign in or create an account with this email address, then open:",
          `${this.ctx.config.publicUrl}/admin/#invite=${token}`,
          "",
          `The invitation expires on ${new Date(expiresAt).toISOString()}. If you did not expect it, ignore this mail.`,
        ].join("\n"),
      });
      await audit(t, this.ctx, {
        actor: p,
        action: "member.invite",
        workspaceId: ws.id,
        target: { type: "invitation", id },
        meta,
        metadata: { email, role_id: role.id, ...(replaced ? { replaced_invitation_id: replaced } : {}) },
      });
      return invitationView((await store.liveInvitationById(t, ws.id, id, this.ctx.clock.nowMs()))!);
    });
  }

  /** Pending invitations only: accepted, revoked and expired ones are history (see the audit log). */
  async list(p: Principal, slug: string, q: { limit?: number; cursor?: string }) {
    const limit = parseLimit(q.limit, 20, 100);
    const after = decodeCursor<{ id: string }>(q.cursor)?.id ?? null;
    const { workspace } = await this.authz.authorizeWorkspace(this.ctx.db, p, { slug }, "member.list");
    const rows = await store.listLiveInvitations(this.ctx.db, workspace.id, this.ctx.clock.nowMs(), after, limit + 1);
    return buildPage(rows, limit, (r) => ({ id: r.id }), invitationView);
  }

  async revoke(p: Principal, slug: string, invitationId: string, meta: RequestMeta): Promise<void> {
    await tx(this.ctx.db, async (t) => {
      const { workspace: ws } = await this.authz.authorizeWorkspace(t, p, { slug }, "member.delete");
      const inv = await store.liveInvitationById(t, ws.id, invitationId, this.ctx.clock.nowMs());
      if (!inv) throw notFound("Invitation");
      await store.revokeInvitation(t, inv.id, this.ctx.clock.iso());
      await audit(t, this.ctx, { actor: p, action: "member.invite.revoke", workspaceId: ws.id, target: { type: "invitation", id: inv.id }, meta, metadata: { email: inv.email } });
    });
  }

  async accept(p: Extract<Principal, { accountId: string }>, token: string, meta: RequestMeta) {
    try {
      return await tx(this.ctx.db, async (t) => {
        const inv = await store.liveInvitationByTokenHash(t, invitationHash(token), this.ctx.clock.nowMs());
        const account = await accountById(t, p.accountId);
        // A token forwarded to someone else must not work for them: same answer as a bad token.
        if (!inv || !account || account.email.toLowerCase() !== inv.email.toLowerCase()) throw invitationNotFound();
        if (await memberOfAccount(t, inv.workspace_id, account.id)) throw alreadyMember();
        const now = this.ctx.clock.iso();
        if (!(await store.markInvitationAccepted(t, inv.id, now))) throw invitationNotFound();
        const memberId = uuid();
        await insertMember(t, { id: memberId, workspace_id: inv.workspace_id, account_id: account.id, role_id: inv.role_id, created_at: now });
        await audit(t, this.ctx, {
          actor: p,
          action: "member.join",
          workspaceId: inv.workspace_id,
          target: { type: "member", id: memberId },
          meta,
          metadata: { invitation_id: inv.id, role_id: inv.role_id, invited_by: inv.invited_by },
        });
        const ws = (await workspaceById(t, inv.workspace_id))!;
        return { workspace_id: ws.id, workspace_slug: ws.slug, member_id: memberId, role: inv.role_name };
      });
    } catch (e) {
      // Another invitation to the same workspace was accepted at the same moment (PostgreSQL).
      if (isUniqueViolation(e)) throw alreadyMember();
      throw e;
    }
  }
}
