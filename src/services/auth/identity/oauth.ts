/**
 * Federated sign-in of an App's end users through the providers in its settings
 * (oauth_providers: idp_1..idp_3; see core/oidc.ts for what each id behaves like).
 *
 * Web flow
 * - GET  /{app}/v1/auth/oauth/{provider}/authorize?return_to=...  The provider must be
 *   configured for the App (400 UNKNOWN_OAUTH_PROVIDER); return_to's origin must be in the
 *   App's allowed_redirect_origins (same matching as the console: core/return-to.ts, so
 *   `https://*.example.com` entries work; an empty list refuses everything). Mints state,
 *   nonce and PKCE verifier (10 minutes, single use; hashes and ciphertext at rest) and
 *   answers 302 to the provider. 30 authorizes a minute per App and client address (429
 *   RATE_LIMITED).
 * - GET|POST /{app}/v1/auth/oauth/{provider}/callback  The redirect_uri to register with the
 *   provider is <issuer>/v1/auth/oauth/<provider>/callback (idp_1 form-posts to it). State
 *   problems are 400 (INVALID_OAUTH_STATE, OAUTH_PROVIDER_MISMATCH), token problems 401
 *   (INVALID_ID_TOKEN, OAUTH_CODE_REJECTED, NONCE_REPLAYED), as JSON: the browser is not
 *   sent back with an unverified result. A provider `error` (e.g. the user cancelled) is
 *   sent back: 303 to return_to with error=<code>. Success: the user is resolved (see
 *   identities.ts) and the answer is 303 to return_to with auth_code=<code> appended.
 * - POST /{app}/v1/auth/oauth/exchange {code}  The code is single use and lives 60 seconds
 *   (400 INVALID_AUTH_CODE otherwise). Answers the consumer token response with
 *   amr ["oauth", <provider>], or, when MFA applies, the MFA challenge (mfa_required,
 *   mfa_token, factors) exactly as password sign-in does: the client then calls
 *   /auth/mfa/verify, whose tokens carry amr ["oauth", <provider>, <factor>]. Nothing is
 *   minted before the exchange, so no tokens sit in the database waiting for it.
 *
 * Native flow (POST /{app}/v1/auth/oauth/idp_1 {id_token, nonce, user?})
 *   The app generated a raw nonce, sent SHA-256(nonce) as lowercase hex to the provider
 *   (Apple's convention) and posts the raw nonce here. The raw nonce must have 32 bytes of
 *   entropy (core/oidc.ts checkNativeNonce: 64+ hex or 43+ other URL-safe characters);
 *   the token must verify (aud: the idp_1 client id or one of native_client_ids) and its
 *   nonce claim must equal the hash; the nonce is then consumed (kept until the token
 *   expires), so a second use is 401 NONCE_REPLAYED. `user` is idp_1's first-sign-in
 *   {name, email}: display name only. Other providers: 400 UNSUPPORTED_OAUTH_FLOW.
 *
 * MFA: a user with an enabled factor gets the challenge after a federated sign-in too,
 * unless the App says otherwise (mfa_policy "disabled", or mfa_for_federated false).
 * Account status: blocked 401 INVALID_CREDENTIALS, suspended / deactivated 403, as sign-in.
 */
import type { RequestMeta } from "../../../access/http";
import { DAY, SECOND } from "../../../core/clock";
import { ApiError } from "../../../core/errors";
import {
  CLOCK_SKEW_SEC,
  OidcClient,
  PROVIDER_TRAITS,
  checkNativeNonce,
  displayNameFromUserJson,
  hashNonce,
  idTokenRejected,
  isProviderId,
  nonceReplayed,
  randomOAuthValue,
  unknownProvider,
  type CallbackInput,
  type IdTokenIdentity,
  type ProviderConfig,
  type ProviderId,
} from "../../../core/oidc";
import { parseOriginPatterns } from "../../../core/return-to";
import { hashToken, safeEqual } from "../../../core/secrets";
import type { AppContext } from "../../../context";
import { admitFederated, beginFederatedSignin, FederatedSignin } from "../../../kernel/identity";
import type { LoadedApp } from "../apps/service";
import { recordAuthAudit } from "../audit/record";
import type { IdentityService } from "./identities";
import type { MfaService } from "./mfa";
import type { UserService } from "./users";
import type { ConsumerTokens } from "./sessions";
import type { MfaChallengeResponse, SigninService } from "./signin";
import * as store from "./store/oauth";
import type { UserView } from "./store/users";

export const EXCHANGE_CODE_TTL_MS = 60 * SECOND;


const invalidCode = () => new ApiError(400, "INVALID_AUTH_CODE", "The auth_code is unknown, used or expired (it is valid once, for 60 seconds)");

export class AuthOAuth {
  readonly oidc: OidcClient;

  constructor(
    private readonly ctx: AppContext,
    /** The parts of the Auth service this feature uses (AuthService passes itself). */
    private readonly auth: { identities: IdentityService; mfa: MfaService; signin: SigninService; users: UserService },
  ) {
    this.oidc = new OidcClient(ctx.outbound, ctx.clock);
  }

  provider(app: LoadedApp, id: string, opts: { native?: boolean } = {}): ProviderConfig {
    const c = isProviderId(id) ? app.settings.oauth_providers[id] : undefined;
    if (!c) throw unknownProvider(id);
    return {
      id: id as ProviderId,
      issuer: c.issuer,
      clientId: c.client_id,
      clientSecret: () => this.ctx.secretBox.decrypt(c.client_secret_enc),
      extraAudiences: opts.native ? c.native_client_ids : [],
    };
  }

  redirectUri(app: LoadedApp, id: ProviderId) {
    return `${app.issuer}/v1/auth/oauth/${id}/callback`;
  }

  private failure(app: LoadedApp, provider: string, reason: string, meta: RequestMeta, userId: string | null = null) {
    return recordAuthAudit(this.ctx.db, this.ctx, app.id, { action: "user.signin", outcome: "failure", actor: { type: userId ? "user" : "anonymous", id: userId }, meta, metadata: { method: "oauth", provider, reason } });
  }

  /** A sign-in attempt at provider p: its refusals are audited as failed sign-ins of the App. */
  private attempt(app: LoadedApp, p: ProviderConfig, meta: RequestMeta) {
    return new FederatedSignin(this.ctx, this.oidc, p, (reason, userId = null) => this.failure(app, p.id, reason, meta, userId));
  }

  // --- web flow ---------------------------------------------------------------------------

  async authorize(app: LoadedApp, id: string, returnTo: unknown, meta: RequestMeta): Promise<string> {
    const p = this.provider(app, id);
    return beginFederatedSignin(this.ctx, this.oidc, p, {
      redirectUri: this.redirectUri(app, p.id),
      returnTo,
      allow: parseOriginPatterns(app.settings.allowed_redirect_origins),
      limitKey: `auth:${app.id}:oauth-start:${meta.ip ?? "unknown"}`,
      store: (record) => store.insertState(this.ctx.db, { ...record, app_id: app.id }),
    });
  }

  /** The URL to send the browser to (303): return_to with auth_code, or with the provider's error. */
  async callback(app: LoadedApp, id: string, b: CallbackInput, meta: RequestMeta): Promise<string> {
    const p = this.provider(app, id);
    const attempt = this.attempt(app, p, meta);
    const row = await attempt.spendState(b, (stateHash) => store.consumeState(this.ctx.db, app.id, stateHash, this.ctx.clock.iso(), this.ctx.clock.nowMs()));
    const back = new URL(row.return_to);
    if (b.error) {
      const error = /^[\x20-\x7e]{1,64}$/.test(b.error) ? b.error : "provider_error";
      await this.failure(app, p.id, `provider_error:${error}`, meta);
      back.searchParams.append("error", error);
      return back.href;
    }
    const who = await attempt.verify(row, b, this.redirectUri(app, p.id), (h) => store.nonceUsed(this.ctx.db, app.id, h));
    const user = await attempt.audited(() => this.auth.identities.resolve(app, p.id, who, p.id === "idp_1" ? displayNameFromUserJson(b.user) : null, meta));
    const code = randomOAuthValue();
    const now = this.ctx.clock.nowMs();
    await store.insertCode(this.ctx.db, {
      code_hash: hashToken(code),
      app_id: app.id,
      user_id: user.id,
      provider: p.id,
      created_at: new Date(now).toISOString(),
      expires_at: now + EXCHANGE_CODE_TTL_MS,
    });
    back.searchParams.append("auth_code", code);
    return back.href;
  }

  async exchange(app: LoadedApp, code: string, meta: RequestMeta): Promise<ConsumerTokens | MfaChallengeResponse> {
    const row = code ? await store.consumeCode(this.ctx.db, app.id, hashToken(code), this.ctx.clock.iso(), this.ctx.clock.nowMs()) : null;
    if (!row) {
      await this.failure(app, "unknown", "invalid_auth_code", meta);
      throw invalidCode();
    }
    const user = await this.auth.users.get(app, row.user_id);
    if (!user) throw invalidCode();
    return this.finish(app, user, row.provider as ProviderId, meta);
  }

  // --- native flow ------------------------------------------------------------------------

  async native(app: LoadedApp, id: string, b: { id_token: string; nonce: string; user?: unknown }, meta: RequestMeta): Promise<ConsumerTokens | MfaChallengeResponse> {
    const p = this.provider(app, id, { native: true });
    if (!PROVIDER_TRAITS[p.id].native) throw new ApiError(400, "UNSUPPORTED_OAUTH_FLOW", `The native flow is offered for idp_1 only, not ${p.id}`);
    const nonce = checkNativeNonce(b.nonce);
    const attempt = this.attempt(app, p, meta);
    const who: IdTokenIdentity = await attempt.audited(async () => {
      const v = await this.oidc.verifyIdToken(p, b.id_token);
      if (!v.nonce || !safeEqual(v.nonce, hashNonce(nonce))) throw idTokenRejected("the nonce claim is not the SHA-256 (hex) of the nonce sent");
      // Consumed until the token expires (plus skew): after that the token itself is refused.
      const fresh = await store.consumeNonce(this.ctx.db, app.id, hashNonce(v.nonce!), this.ctx.clock.iso(), v.expiresAtMs + CLOCK_SKEW_SEC * SECOND);
      if (!fresh) throw nonceReplayed();
      return v;
    });
    const user = await attempt.audited(() => this.auth.identities.resolve(app, p.id, who, displayNameFromUserJson(b.user), meta));
    return this.finish(app, user, p.id, meta);
  }

  // --- shared end of both flows -----------------------------------------------------------

  private async finish(app: LoadedApp, user: UserView, provider: ProviderId, meta: RequestMeta): Promise<ConsumerTokens | MfaChallengeResponse> {
    await admitFederated(user, (reason, userId) => this.failure(app, provider, reason, meta, userId));
    const amr = ["oauth", provider];
    if (app.settings.mfa_policy !== "disabled" && app.settings.mfa_for_federated) {
      const challenge = await this.auth.mfa.challengeFor(app, user, null, meta, amr);
      if (challenge) {
        await recordAuthAudit(this.ctx.db, this.ctx, app.id, { action: "user.signin.mfa_required", actor: { type: "user", id: user.id }, meta, metadata: { method: "oauth", provider } });
        return challenge;
      }
    }
    return this.auth.signin.complete(app, user, { tenantId: null, amr }, meta, "oauth");
  }

  purge(): Promise<number> {
    // States kept a day past expiry so a recently used nonce is still recognised as replayed.
    return store.purge(this.ctx.db, this.ctx.clock.nowMs() - DAY, this.ctx.clock.nowMs());
  }
}
