/**
 * Provider identities (issuer + subject) of an App's end users: which user a verified ID
 * token signs in as, and the user's own list / unlink at /me/identities.
 *
 * Which user
 * 1. The identity is already linked: its user.
 * 2. The provider marks the email verified (email_verified true) AND it is the verified
 *    primary email of a user here: the identity is linked to that user. Both sides must
 *    vouch: a provider's word alone would hand over an account someone pre-registered with
 *    that address and a password they know (pre-hijacking), and our unverified address
 *    alone proves nothing.
 * 3. Anything else creates a new user; never a takeover. The new user gets the provider's
 *    email when no user of the App has that address (verified here only when the provider
 *    says so); when the address is taken, or absent, the user has no email at all
 *    (addresses are unique per App) and the identity row keeps what the provider said.
 *    Display name: the token's name claim, else idp_1's `user` JSON (untrusted, display only).
 *    Creating users follows the App's sign-up policy: signup_enabled false answers 403
 *    SIGNUP_DISABLED, signup_requires_pak 403 PLATFORM_API_KEY_REQUIRED (users of such an
 *    App are created by its backend; they can still sign in with a provider once linked).
 *
 * /me/identities: list, and unlink one; the last way to sign in (the password, or another
 * identity) cannot be removed: 409 LAST_SIGN_IN_METHOD.
 */
import type { RequestMeta } from "../../../access/http";
import { tx } from "../../../core/db";
import { forbidden, unauthorized } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { identityView, type IdTokenIdentity, type ProviderId } from "../../../core/oidc";
import type { AppContext } from "../../../context";
import { removableIdentity } from "../../../kernel/identity";
import type { LoadedApp } from "../apps/service";
import { recordAuthAudit } from "../audit/record";
import type { AppAccess } from "../apps/access";
import type { SessionService } from "./sessions";
import type { UserService } from "./users";
import * as store from "./store/oauth";
import * as users from "./store/users";


export class IdentityService {
  constructor(
    private readonly ctx: AppContext,
    /** The parts of the Auth service this feature uses (AuthService passes itself). */
    private readonly auth: { access: AppAccess; users: UserService; sessions: SessionService },
  ) {}

  /** The user of a verified identity: linked, linked now by a doubly verified email, or created. */
  resolve(app: LoadedApp, provider: ProviderId, who: IdTokenIdentity, displayNameHint: string | null, meta: RequestMeta): Promise<users.UserView> {
    return tx(this.ctx.db, async (db) => {
      const now = this.ctx.clock.iso();
      const known = await store.identityBySubject(db, app.id, who.issuer, who.subject);
      if (known) {
        await store.touchIdentity(db, known.id, now);
        const u = await users.userView(db, app.id, known.user_id);
        if (u) return u;
      }
      const link = async (userId: string, how: "email" | "new_user") => {
        const id = uuid();
        await store.insertIdentity(db, { id, app_id: app.id, user_id: userId, provider, issuer: who.issuer, subject: who.subject, email: who.email, created_at: now, last_used_at: now });
        await recordAuthAudit(db, this.ctx, app.id, { action: "user.identity.link", actor: { type: "user", id: userId }, target: { type: "identity", id }, meta, metadata: { provider, issuer: who.issuer, via: how } });
      };
      const contact = who.email ? await users.contactByValue(db, app.id, "email", who.email) : null;
      if (contact && who.emailVerified && contact.kind === "email" && contact.is_primary && contact.verified_at) {
        await link(contact.user_id, "email");
        return (await users.userView(db, app.id, contact.user_id))!;
      }
      if (!app.settings.signup_enabled) throw forbidden("Sign-up is disabled for this App", "SIGNUP_DISABLED");
      if (app.settings.signup_requires_pak) throw forbidden("This App only accepts sign-ups made with a workspace API key", "PLATFORM_API_KEY_REQUIRED");
      const email = who.email && !contact ? who.email : null;
      const user = await this.auth.users.insert(
        db,
        app,
        { email, email_verified: email !== null && who.emailVerified, display_name: who.name ?? displayNameHint, username: null },
        null,
        { type: "anonymous", id: null },
        meta,
        "oauth",
        { emailOptional: true, usernameBase: who.email?.split("@")[0] },
      );
      await link(user.id, "new_user");
      return user;
    });
  }

  // --- /me/identities ---------------------------------------------------------------------

  private async caller(app: LoadedApp, authorization: string | null | undefined) {
    const claims = await this.auth.access.endUser(app, authorization);
    const user = await this.auth.sessions.liveUser(app, claims);
    if (!user || user.status !== "active") throw unauthorized("Missing or invalid access token");
    return user;
  }

  async list(app: LoadedApp, authorization: string | null | undefined) {
    const user = await this.caller(app, authorization);
    const data = (await store.identitiesOf(this.ctx.db, app.id, user.id)).map(identityView);
    return { data, pagination: { next_cursor: null, has_more: false } };
  }

  async unlink(app: LoadedApp, authorization: string | null | undefined, identityId: string, meta: RequestMeta) {
    const user = await this.caller(app, authorization);
    await tx(this.ctx.db, async (t) => {
      const target = await removableIdentity(await store.identitiesOf(t, app.id, user.id), identityId, async () => !!(await users.userView(t, app.id, user.id))!.password_hash);
      await store.deleteIdentity(t, app.id, user.id, identityId);
      await recordAuthAudit(t, this.ctx, app.id, { action: "user.identity.unlink", actor: { type: "user", id: user.id }, target: { type: "identity", id: identityId }, meta, metadata: { provider: target.provider, issuer: target.issuer } });
    });
  }
}
