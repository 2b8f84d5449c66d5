/**
 * Federated sign-in through OpenID providers, the rules both realms (console accounts, App
 * users) follow; which owner an identity signs in as, and what the callback answers, stay
 * with each realm:
 * - start: return_to allowed by the realm's origins, at most 30 starts a minute per key, then
 *   state, nonce and PKCE verifier minted (the realm stores the record in its table);
 * - callback: the state is spent first, whatever follows (unknown, expired or used: 400
 *   INVALID_OAUTH_STATE; minted for another provider: 400 OAUTH_PROVIDER_MISMATCH); the code
 *   is exchanged (PKCE) or a posted id_token taken as is, and the ID token verified against
 *   this state's nonce;
 * - a resolved owner: blocked answers 401 INVALID_CREDENTIALS, suspended / deactivated 403,
 *   as password sign-in does;
 * - every refusal of an attempt is audited first, through the realm's failed-sign-in entry;
 * - an identity is unlinked only while another way to sign in remains.
 */
import { ApiError, badRequest, conflict, notFound } from "../../core/errors";
import { hashState, invalidState, limitStarts, providerMismatch, type CallbackInput, type IdTokenIdentity, type OidcClient, type ProviderConfig } from "../../core/oidc";
import { checkReturnTo, type OriginPattern } from "../../core/return-to";
import type { AppContext } from "../../context";
import { invalidCredentials, refuseInactive } from "./password-signin";

/** What a realm keeps of a started sign-in (its table adds its own columns). */
export interface OAuthStateRecord {
  provider: string;
  return_to: string;
  code_verifier_enc: string;
  nonce_hash: string;
}

/** The provider URL to send the browser to, after the start's checks; `store` keeps the state record. */
export async function beginFederatedSignin(
  ctx: AppContext,
  oidc: OidcClient,
  p: ProviderConfig,
  s: { redirectUri: string; returnTo: unknown; allow: OriginPattern[]; limitKey: string; store: (record: Awaited<ReturnType<OidcClient["beginWebFlow"]>>["record"]) => Promise<unknown> },
): Promise<string> {
  const target = checkReturnTo(s.returnTo, s.allow);
  await limitStarts(ctx.ratelimit, s.limitKey);
  const flow = await oidc.beginWebFlow(p, s.redirectUri, target.href, ctx.secretBox.encrypt);
  await s.store(flow.record);
  return flow.url;
}

/**
 * One sign-in attempt at one provider. `failed` is the realm's audit entry of a refused
 * attempt (`ownerId` null until an owner is known); `reasonOf` names an error in the realm's
 * audit vocabulary (its code, lower-cased, unless the realm says otherwise).
 */
export class FederatedSignin {
  constructor(
    private readonly ctx: AppContext,
    private readonly oidc: OidcClient,
    readonly provider: ProviderConfig,
    readonly failed: (reason: string, ownerId?: string | null) => Promise<unknown>,
    private readonly reasonOf: (e: ApiError) => string = (e) => e.code.toLowerCase(),
  ) {}

  /** Runs a step; an ApiError it throws is audited as a failed sign-in first. */
  async audited<T>(fn: () => T | Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ApiError) await this.failed(this.reasonOf(e));
      throw e;
    }
  }

  /** The state record minted at start for this provider, spent by `consume` (given the state's hash). */
  async spendState<R extends OAuthStateRecord>(b: CallbackInput, consume: (stateHash: string) => Promise<R | null>): Promise<R> {
    if (typeof b.state !== "string" || !b.state) throw badRequest("state is required", [{ field: "state", reason: "is required" }]);
    const state = b.state;
    return this.audited(async () => {
      const row = await consume(hashState(state));
      if (!row) throw invalidState();
      if (row.provider !== this.provider.id) throw providerMismatch();
      return row;
    });
  }

  /** The verified identity of a callback: its code exchanged (PKCE) or its id_token, checked against the state's nonce. */
  async verify(row: OAuthStateRecord, b: CallbackInput, redirectUri: string, nonceUsed: (nonceHash: string) => Promise<boolean>): Promise<IdTokenIdentity> {
    if (!b.code && !b.id_token) throw badRequest("code or id_token is required", [{ field: "code", reason: "code or id_token is required" }]);
    return this.audited(() =>
      this.oidc.completeWebFlow(this.provider, {
        redirectUri,
        codeVerifier: this.ctx.secretBox.decrypt(row.code_verifier_enc),
        nonceHash: row.nonce_hash,
        code: b.code,
        idToken: b.id_token,
        nonceUsed,
      }),
    );
  }
}

/**
 * A resolved owner may sign in: blocked looks like a wrong credential (audited through the
 * realm's `failed`), suspended / deactivated answer 403.
 */
export async function admitFederated(owner: { id: string; status: string }, failed: (reason: string, ownerId: string) => Promise<unknown>): Promise<void> {
  if (owner.status === "blocked") {
    await failed("blocked", owner.id);
    throw invalidCredentials();
  }
  refuseInactive(owner.status);
}

/**
 * The identity of `mine` to unlink: 404 when it is not the owner's, 409 LAST_SIGN_IN_METHOD
 * when it is the owner's last way to sign in (no password, no other identity).
 */
export async function removableIdentity<I extends { id: string }>(mine: I[], identityId: string, hasPassword: () => Promise<boolean>): Promise<I> {
  const target = mine.find((i) => i.id === identityId);
  if (!target) throw notFound("Identity");
  if (mine.length + ((await hasPassword()) ? 1 : 0) <= 1) {
    throw conflict("This is the account's last way to sign in: set a password or link another provider first", "LAST_SIGN_IN_METHOD");
  }
  return target;
}
