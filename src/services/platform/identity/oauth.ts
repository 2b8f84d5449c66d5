/**
 * Federated sign-in of console accounts through OpenID providers idp_1..idp_3 (configured
 * from the environment: IDP_<n>_ISSUER, IDP_<n>_CLIENT_ID, IDP_<n>_CLIENT_SECRET).
 *
 * Web flow
 * - start: provider must be configured (else 400 UNKNOWN_OAUTH_PROVIDER); return_to must be
 *   allowed by OAUTH_RETURN_TO_ORIGINS (core/return-to.ts; an empty list allows nothing).
 *   Mints state, nonce and PKCE verifier (state and nonce stored hashed, verifier
 *   encrypted), valid 10 minutes, and answers 302 to the provider. At most 30 starts per
 *   minute per client address (429 RATE_LIMITED): each start writes a row.
 * - callback (GET query or POST form/JSON; the redirect_uri registered with the provider is
 *   <PUBLIC_URL>/platform/v1/auth/oauth/<provider>/callback): the state is consumed first,
 *   whatever follows (unknown, expired or used: 400 INVALID_OAUTH_STATE; minted for another
 *   provider: 400 OAUTH_PROVIDER_MISMATCH). A provider `error` is 400 OAUTH_PROVIDER_ERROR.
 *   The code is exchanged (PKCE), or a posted id_token is taken as is; either way the ID
 *   token is verified (signature, iss, aud, exp, nonce = this state's): 401
 *   INVALID_ID_TOKEN / OAUTH_CODE_REJECTED, 401 NONCE_REPLAYED for the nonce of a finished
 *   sign-in. Then 200 {tokens, return_to} and the auth_token cookie, as sign-in sets it.
 *   An account with an enabled MFA factor gets the MFA challenge instead (200 {mfa_required,
 *   mfa_token, factors, expires_at, return_to}, no cookie): the provider is trusted for the
 *   first factor only, the code is finished at /auth/mfa/verify or /recover (mfa.ts).
 * - A browser landing on the callback (routes/oauth.ts: Sec-Fetch-Mode navigate, or Accept
 *   preferring text/html to JSON) gets 303 to return_to instead of the JSON (cookie set), or
 *   with MFA required 303 to return_to whose fragment is replaced by #mfa_token=<token>.
 *
 * Which account (401 IDENTITY_NOT_RESOLVABLE when none can be chosen safely)
 * 1. An identity (issuer + subject) already linked: its account.
 * 2. Otherwise the provider must give an email it marks verified (email_verified true).
 *    Console accounts are keyed by a unique email, so an unverified address can neither
 *    create an account (it could squat someone's address) nor link one.
 * 3. No account has that email: a new account is created (no password; username from the
 *    address; display name from the token's name, or idp_1's `user` JSON), with the
 *    address recorded as verified.
 * 4. An account has it: the identity is linked only when that account's email was proven
 *    here too (a completed password reset, or a federated sign-up). Otherwise linking would
 *    hand the address owner an account someone else may have pre-registered with a
 *    password they know (account pre-hijacking): 401, and the message says to reset the
 *    password once (which proves the address and replaces the password) and try again.
 * Blocked accounts: 401 INVALID_CREDENTIALS; suspended / deactivated: 403 as sign-in does.
 *
 * Identities are listed and unlinked through /platform/v1/me/identities; the last way to
 * sign in (password or identity) cannot be removed (409 LAST_SIGN_IN_METHOD).
 */
import type { RequestMeta } from "../../../access/http";
import { DAY } from "../../../core/clock";
import { tx, type Sql } from "../../../core/db";
import { ApiError } from "../../../core/errors";
import { randomHex, uuid } from "../../../core/ids";
import {
  OidcClient,
  displayNameFromUserJson,
  isProviderId,
  providerError,
  unknownProvider,
  type CallbackInput,
  identityView,
  type IdTokenIdentity,
  type ProviderConfig,
  type ProviderId,
} from "../../../core/oidc";
import { parseOriginPatterns, type OriginPattern } from "../../../core/return-to";
import type { AppContext } from "../../../context";
import { admitFederated, beginFederatedSignin, FederatedSignin, removableIdentity } from "../../../kernel/identity";
import { SESSION_DEFAULT, type AccountService, type MfaChallengeResponse, type TokenResponse } from "./accounts";
import { audit } from "../../../kernel/tenancy";
import * as accounts from "./store/accounts";
import * as store from "./store/oauth";

const USERNAME_MAX = 64;


const notResolvable = (why: string) => new ApiError(401, "IDENTITY_NOT_RESOLVABLE", why);
// The console's audit names the state's refusals so (an App's audit uses the error codes).
const STATE_REASONS: Record<string, string> = { INVALID_OAUTH_STATE: "invalid_state", OAUTH_PROVIDER_MISMATCH: "provider_mismatch" };


export class PlatformOAuth {
  readonly oidc: OidcClient;
  private readonly allow: OriginPattern[];

  constructor(
    private readonly ctx: AppContext,
    private readonly accounts: AccountService,
  ) {
    this.oidc = new OidcClient(ctx.outbound, ctx.clock);
    this.allow = parseOriginPatterns(ctx.config.oauthReturnToOrigins);
  }

  provider(id: string): ProviderConfig {
    const c = isProviderId(id) ? this.ctx.config.oidcProviders[id] : undefined;
    if (!c) throw unknownProvider(id);
    return { id: id as ProviderId, issuer: c.issuer, clientId: c.clientId, clientSecret: () => c.clientSecret };
  }

  /** The configured console providers for the sign-in page: id, a display name (the issuer's host), the start path. */
  configured() {
    const out: { id: string; display_name: string; start_path: string }[] = [];
    for (const [id, c] of Object.entries(this.ctx.config.oidcProviders)) {
      if (!c) continue;
      out.push({ id, display_name: new URL(c.issuer).host, start_path: `/platform/v1/auth/oauth/${id}/start` });
    }
    return out.sort((a, b) => a.id.localeCompare(b.id));
  }

  redirectUri(id: ProviderId) {
    return `${this.ctx.config.publicUrl}/platform/v1/auth/oauth/${id}/callback`;
  }

  /** The provider URL to redirect the browser to. */
  async start(id: string, returnTo: unknown, meta: RequestMeta): Promise<string> {
    const p = this.provider(id);
    return beginFederatedSignin(this.ctx, this.oidc, p, {
      redirectUri: this.redirectUri(p.id),
      returnTo,
      allow: this.allow,
      limitKey: `platform:oauth-start:${meta.ip ?? "unknown"}`,
      store: (record) => store.insertState(this.ctx.db, record),
    });
  }

  /**
   * Finishes the web sign-in: the tokens, or (account with an enabled MFA factor) the MFA
   * challenge to finish at /auth/mfa/verify or /recover; with the return_to given at start.
   */
  async callback(id: string, b: CallbackInput, meta: RequestMeta): Promise<{ tokens: TokenResponse; return_to: string } | (MfaChallengeResponse & { return_to: string })> {
    const p = this.provider(id);
    const fail = (reason: string, accountId: string | null = null) =>
      audit(this.ctx.db, this.ctx, { actor: { actor_type: accountId ? "account" : "anonymous", actor_id: accountId }, action: "account.signin_failed", meta, metadata: { method: "oauth", provider: p.id, reason } });
    const attempt = new FederatedSignin(this.ctx, this.oidc, p, fail, (e) => STATE_REASONS[e.code] ?? e.code.toLowerCase());
    const row = await attempt.spendState(b, (stateHash) => store.consumeState(this.ctx.db, stateHash, this.ctx.clock.iso(), this.ctx.clock.nowMs()));
    if (b.error) {
      await fail(`provider_error:${String(b.error).slice(0, 64)}`);
      throw providerError(String(b.error));
    }
    const who = await attempt.verify(row, b, this.redirectUri(p.id), (h) => store.nonceUsed(this.ctx.db, h));
    const accountId = await attempt.audited(() => this.resolveAccount(p.id, who, p.id === "idp_1" ? displayNameFromUserJson(b.user) : null, meta));
    const account = (await accounts.accountById(this.ctx.db, accountId))!;
    await admitFederated(account, fail);
    // The provider is the first factor only: an account with MFA still needs its code.
    const challenge = await this.accounts.mfa?.challengeFor(account.id, `oauth:${p.id}`, SESSION_DEFAULT, meta);
    if (challenge) return { ...challenge, return_to: row.return_to };
    await audit(this.ctx.db, this.ctx, { actor: { actor_type: "account", actor_id: account.id }, action: "account.signin", meta, metadata: { method: "oauth", provider: p.id } });
    const tokens = await this.accounts.startSession(account.id, SESSION_DEFAULT, meta);
    return { tokens, return_to: row.return_to };
  }

  /** The account of a verified identity, linking or creating per the rules above. */
  private resolveAccount(provider: ProviderId, who: IdTokenIdentity, userJsonName: string | null, meta: RequestMeta): Promise<string> {
    return tx(this.ctx.db, async (db) => {
      const now = this.ctx.clock.iso();
      const known = await store.identityBySubject(db, who.issuer, who.subject);
      if (known) {
        await store.touchIdentity(db, known.id, now);
        return known.account_id;
      }
      if (!who.email || !who.emailVerified) throw notResolvable("The provider did not share an email address it has verified, which a new console sign-in needs");
      const link = async (accountId: string) => {
        const id = uuid();
        await store.insertIdentity(db, { id, account_id: accountId, provider, issuer: who.issuer, subject: who.subject, email: who.email, created_at: now, last_used_at: now });
        await audit(db, this.ctx, { actor: { actor_type: "account", actor_id: accountId }, action: "account.identity.link", target: { type: "identity", id }, meta, metadata: { provider, issuer: who.issuer } });
      };
      const existing = await store.accountEmailProof(db, who.email);
      if (existing) {
        if (!existing.email_verified_at) {
          throw notResolvable("An account with this email exists but its address was never confirmed here. Sign in with its password, or reset the password once (that confirms the address), then sign in with the provider again to link it");
        }
        await link(existing.id);
        return existing.id;
      }
      await this.accounts.assertSignupAllowed(db, who.email);
      const accountId = uuid();
      await accounts.insertAccount(db, {
        id: accountId,
        email: who.email,
        username: await this.freeUsername(db, who.email),
        display_name: who.name ?? userJsonName,
        password_hash: null,
        status: "active",
        is_operator: 0,
        created_at: now,
        updated_at: now,
      });
      await store.markEmailVerified(db, accountId, now);
      await audit(db, this.ctx, { actor: { actor_type: "account", actor_id: accountId }, action: "account.create", target: { type: "account", id: accountId }, meta, metadata: { method: "oauth", provider } });
      await link(accountId);
      return accountId;
    });
  }

  /** The email's local part as username, suffixed until unused. */
  private async freeUsername(db: Sql, email: string): Promise<string> {
    const base = email.split("@")[0].replace(/[^A-Za-z0-9._-]/g, "").slice(0, USERNAME_MAX - 7) || "user";
    for (let name = base; ; name = `${base}-${randomHex(3)}`) {
      if (!(await accounts.emailOrUsernameTaken(db, "", name)).username) return name;
    }
  }

  // --- /me/identities ---------------------------------------------------------------------

  async list(accountId: string) {
    return (await store.identitiesOf(this.ctx.db, accountId)).map(identityView);
  }

  async unlink(accountId: string, identityId: string, meta: RequestMeta): Promise<void> {
    await tx(this.ctx.db, async (t) => {
      const target = await removableIdentity(await store.identitiesOf(t, accountId), identityId, () => store.hasPassword(t, accountId));
      await store.deleteIdentity(t, accountId, identityId);
      await audit(t, this.ctx, { actor: { actor_type: "account", actor_id: accountId }, action: "account.identity.unlink", target: { type: "identity", id: identityId }, meta, metadata: { provider: target.provider, issuer: target.issuer } });
    });
  }

  purge() {
    // Kept a day past expiry: long enough to recognise a replayed nonce of a recent sign-in.
    return store.purgeStates(this.ctx.db, this.ctx.clock.nowMs() - DAY);
  }
}
