/**
 * MFA of console (platform) accounts: TOTP factors, recovery codes and the second step of
 * sign-in. The same contract as an App's end users (services/auth/mfa.ts, spec 1 "MFA"): the
 * rules both share (the challenge's and the account's lock-outs, pending factors, recovery
 * codes) are the identity core's (kernel/identity), with console accounts as the realm.
 *
 * Factors (TOTP only: console accounts have no email factor)
 * - Enrol answers the base32 secret and the otpauth:// URI once; the factor is pending until
 *   confirmed with a code, for 10 minutes (then it is dead and is cleaned up at the next
 *   enrolment). 5 wrong confirmation codes delete it (429 TOO_MANY_ATTEMPTS: enrol again). At
 *   most 10 enrolments per account per hour.
 * - Confirming the account's first enabled factor generates 10 recovery codes, returned once.
 * - Disable is soft (disabled_at, row kept) and needs proof of the second factor: a current
 *   code of an enabled factor or an unused recovery code (the password would not do: a
 *   federated-only account has none, and a stolen session with the password must not strip
 *   MFA). A pending factor, or any factor while the account has no enabled one, needs no code.
 *   Disabling the last enabled factor deletes the recovery codes.
 *
 * Sign-in challenge (mfa_token = challenge id)
 * - Issued instead of tokens when a correct first factor (password, or an identity provider's
 *   callback) meets an account with an enabled factor; lives 10 minutes; single use.
 * - Unknown, used or expired token: 400 INVALID_TOKEN. Wrong code: 401 INVALID_CODE. The 5th
 *   wrong code or recovery code locks the challenge: that answer and every later one is 429
 *   MFA_LOCKED; the user signs in again.
 * - Across challenges: 10 wrong answers for one account without a success in between (within a
 *   day) lock its MFA sign-in for 15 minutes (429 MFA_LOCKED with Retry-After, a right code
 *   included), so signing in again does not buy endless guesses.
 * - Per client address: wrong codes count toward ADDRESS_LIMITS.mfa (30 per 15 minutes over
 *   any challenges); past it verify and recover answer 429 TOO_MANY_ATTEMPTS with Retry-After
 *   before the token is looked at.
 * - Verify / recover finish like a password sign-in: the same token body and cookie, the
 *   session lasting the session_duration asked for at sign-in.
 *
 * Recovery codes: 16 hex characters, hyphens and case ignored when entered; stored as HMACs;
 * each works once; regenerating replaces them all.
 *
 * Operator reset: disables every factor, deletes the recovery codes and ends open challenges
 * of another account (audited account.mfa.reset); the next sign-in needs the password only.
 * Not one's own (400): that is a disable with a code, so a stolen operator session alone
 * cannot strip the operator's MFA; a locked-out operator asks another operator.
 */
import { DAY } from "../../../core/clock";
import { tx, type Sql } from "../../../core/db";
import { badRequest, conflict, invalidField, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { newTotpSeed, normaliseRecoveryCode, TOTP_CODE_RE, totpKeyUri, totpSecretText } from "../../../core/totp";
import type { AppContext } from "../../../context";
import { invalidMfaToken, MFA_RULES, MfaChallenges, MfaFactors, wrongCode, type MfaRealm } from "../../../kernel/identity";
import type { AccountService, TokenResponse } from "./accounts";
import { audit, type RequestMeta } from "../../../kernel/tenancy";
import * as accounts from "./store/accounts";
import * as store from "./store/mfa";
import { factorView } from "./views";

/** The identity core's numbers; an account's MFA sign-in locks after 10 wrong answers across challenges. */
export const PLATFORM_MFA = { ...MFA_RULES, ownerFailures: 10 };

export interface MfaChallenge {
  mfa_required: true;
  mfa_token: string;
  factors: { id: string; type: "totp"; name: string | null }[];
  expires_at: string;
}

const act = (accountId: string) => ({ actor_type: "account", actor_id: accountId });

/** Console accounts as the identity core's MFA realm. */
function accountRealm(ctx: AppContext): MfaRealm<store.ChallengeRow, accounts.AccountRow> {
  return {
    keys: "platform",
    addressKeys: "platform-mfa",
    rules: PLATFORM_MFA,
    challengeById: store.challengeById,
    ownerId: (ch) => ch.account_id,
    owner: accounts.accountById,
    lockOwner: store.lockAccountForMfa,
    recordFailure: store.recordFailure,
    async auditFailure(t, ch, f, meta) {
      const challenge = { type: "mfa_challenge", id: ch.id };
      await audit(t, ctx, { actor: act(ch.account_id), action: f.action, target: challenge, meta, metadata: { failures: f.failures } });
      if (f.ownerLock) await audit(t, ctx, { actor: act(ch.account_id), action: "account.mfa.lock", meta, metadata: { until: new Date(f.ownerLock.until).toISOString() } });
      else if (f.challengeLocked) await audit(t, ctx, { actor: act(ch.account_id), action: "account.mfa.challenge_locked", target: challenge, meta });
    },
  };
}

export class PlatformMfa {
  private readonly factors: MfaFactors;
  private readonly challenges: MfaChallenges<store.ChallengeRow, accounts.AccountRow>;

  constructor(
    private readonly ctx: AppContext,
    private readonly accounts: AccountService,
  ) {
    this.factors = new MfaFactors(ctx, "platform-mfa-recovery-code");
    this.challenges = new MfaChallenges(ctx, accountRealm(ctx));
  }

  // --- helpers ----------------------------------------------------------------------------

  /** Fresh recovery codes; every prior one stops working. Inside a transaction (`t`). */
  private newRecoveryCodes(t: Sql, accountId: string) {
    return this.factors.newRecoveryCodes(t, (t, hashes, now) => store.replaceRecoveryCodes(t, accountId, hashes, now));
  }

  /**
   * Checks a second-factor answer of the account: a 6-digit code of an enabled factor (its
   * step is claimed, so it never works twice) or an unused recovery code (used up). On `t`.
   */
  private async prove(t: Sql, accountId: string, raw: string): Promise<{ method: "totp" | "recovery_code"; factorId: string | null } | null> {
    const code = raw.trim();
    if (TOTP_CODE_RE.test(code)) {
      for (const f of await store.enabledFactors(t, accountId)) {
        const step = await this.factors.totpStep(f, code);
        if (step !== null && (await store.claimStep(t, f.id, step))) return { method: "totp", factorId: f.id };
      }
      return null;
    }
    const rc = normaliseRecoveryCode(code);
    if (!rc) return null;
    return (await store.useRecoveryCode(t, accountId, this.factors.recoveryHash(rc), this.ctx.clock.iso())) ? { method: "recovery_code", factorId: null } : null;
  }

  // --- the signed-in account's factors ------------------------------------------------------

  async list(accountId: string) {
    const factors = await store.factorsOf(this.ctx.db, accountId);
    return {
      enabled: factors.some((f) => f.confirmed_at && !f.disabled_at),
      recovery_codes_left: await store.unusedRecoveryCodes(this.ctx.db, accountId),
      data: factors.map(factorView),
    };
  }

  async enrol(accountId: string, b: { name?: string | null }, meta: RequestMeta) {
    const account = await accounts.accountById(this.ctx.db, accountId);
    if (!account) throw notFound("Account");
    const name = b.name?.trim() || "Authenticator app";
    if (name.length > 100) throw invalidField("name", "at most 100 characters");
    await this.factors.admitEnrolment("platform", accountId);
    const seed = newTotpSeed();
    const row: store.FactorRow = {
      id: uuid(),
      account_id: accountId,
      type: "totp",
      name,
      secret_enc: this.ctx.secretBox.encrypt(seed.toString("base64")),
      confirmed_at: null,
      disabled_at: null,
      last_step: null,
      created_at: this.ctx.clock.iso(),
    };
    await tx(this.ctx.db, async (t) => {
      await store.deleteStalePending(t, accountId, new Date(this.ctx.clock.nowMs() - PLATFORM_MFA.pendingTtlMs).toISOString());
      await store.insertFactor(t, row);
      await audit(t, this.ctx, { actor: act(accountId), action: "account.mfa.enrol", target: { type: "mfa_factor", id: row.id }, meta, metadata: { type: "totp" } });
    });
    // The host name only: a port's ":" would split the Key URI label ("issuer:account") in some apps.
    const issuer = `Bunker (${new URL(this.ctx.config.publicUrl).hostname})`;
    return { ...factorView(row), factor_id: row.id, secret: totpSecretText(seed), otpauth_uri: totpKeyUri(issuer, account.email, seed) };
  }

  async confirm(accountId: string, factorId: string, rawCode: string, meta: RequestMeta) {
    // The input is judged before the factor is looked up: a malformed code is 400 even for an unknown factor.
    const code = rawCode.trim();
    if (!TOTP_CODE_RE.test(code)) throw invalidField("code", "must be 6 digits");
    const f = await store.factorOf(this.ctx.db, accountId, factorId);
    this.factors.assertConfirmable(f);
    const step = await this.factors.totpStep(f, code);
    if (step === null) {
      return this.factors.confirmFailure(
        "platform",
        f.id,
        (n) => audit(this.ctx.db, this.ctx, { actor: act(accountId), action: "account.mfa.confirm_failed", target: { type: "mfa_factor", id: f.id }, meta, metadata: { failures: n } }),
        () => store.deletePendingFactor(this.ctx.db, f.id),
      );
    }
    const at = this.ctx.clock.iso();
    const codes = await tx(this.ctx.db, async (t) => {
      const first = (await store.enabledFactors(t, accountId)).length === 0;
      if (!(await store.confirmFactor(t, f.id, at))) throw conflict("This factor is no longer pending", "FACTOR_ALREADY_CONFIRMED");
      await store.claimStep(t, f.id, step);
      await audit(t, this.ctx, { actor: act(accountId), action: "account.mfa.confirm", target: { type: "mfa_factor", id: f.id }, meta, metadata: { type: "totp", recovery_codes: first } });
      return first ? this.newRecoveryCodes(t, accountId) : null;
    });
    await this.factors.confirmed("platform", f.id);
    return { ...factorView({ ...f, confirmed_at: at }), ...(codes ? { recovery_codes: codes } : {}) };
  }

  async disable(accountId: string, factorId: string, b: { code?: string | null }, meta: RequestMeta): Promise<void> {
    const f = await store.factorOf(this.ctx.db, accountId, factorId);
    if (!f) throw notFound("MFA factor");
    const outcome = await tx(this.ctx.db, async (t) => {
      const enabled = await store.enabledFactors(t, accountId);
      const needsProof = !!f.confirmed_at && !f.disabled_at && enabled.length > 0;
      let method: string | null = null;
      if (needsProof) {
        if (!b.code?.trim()) return "missing";
        const proof = await this.prove(t, accountId, b.code);
        if (!proof) return "wrong";
        method = proof.method;
      }
      if (!(await store.disableFactor(t, f.id, this.ctx.clock.iso()))) return "ok";
      await audit(t, this.ctx, { actor: act(accountId), action: "account.mfa.disable", target: { type: "mfa_factor", id: f.id }, meta, metadata: { type: f.type, proof: method } });
      if (!(await store.enabledFactors(t, accountId)).length) await store.replaceRecoveryCodes(t, accountId, [], this.ctx.clock.iso());
      return "ok";
    });
    if (outcome === "missing") throw invalidField("code", "is required: a current authenticator code or a recovery code");
    if (outcome === "wrong") {
      await audit(this.ctx.db, this.ctx, { actor: act(accountId), action: "account.mfa.disable_failed", target: { type: "mfa_factor", id: f.id }, meta });
      throw wrongCode(400);
    }
  }

  async regenerate(accountId: string, meta: RequestMeta) {
    if (!(await store.enabledFactors(this.ctx.db, accountId)).length) throw badRequest("Enable an MFA factor first", undefined, "MFA_NOT_ENROLLED");
    const codes = await tx(this.ctx.db, async (t) => {
      await audit(t, this.ctx, { actor: act(accountId), action: "account.mfa.recovery_codes.regenerate", meta, metadata: { count: PLATFORM_MFA.recoveryCodes } });
      return this.newRecoveryCodes(t, accountId);
    });
    return { recovery_codes: codes };
  }

  /** Operator reset of another account's MFA. */
  async reset(operatorId: string, accountId: string, meta: RequestMeta): Promise<{ factors_disabled: number }> {
    if (!(await accounts.accountById(this.ctx.db, accountId))) throw notFound("Account");
    // Your own factors go through DELETE /me/mfa/{id} with a code: a stolen operator session alone must not strip them.
    if (accountId === operatorId) throw badRequest("Operators cannot reset their own MFA: disable the factor with a code or a recovery code", [{ field: "account_id", reason: "is you" }]);
    return tx(this.ctx.db, async (t) => {
      const now = this.ctx.clock.iso();
      const n = await store.disableAllFactors(t, accountId, now);
      await store.replaceRecoveryCodes(t, accountId, [], now);
      await store.closeChallenges(t, accountId, now);
      await audit(t, this.ctx, { actor: act(operatorId), action: "account.mfa.reset", target: { type: "account", id: accountId }, meta, metadata: { factors_disabled: n } });
      return { factors_disabled: n };
    });
  }

  // --- sign-in challenge --------------------------------------------------------------------

  /** A challenge when the account has an enabled factor, else null. `firstFactor`: password | oauth:<provider>. */
  async challengeFor(accountId: string, firstFactor: string, sessionDuration: number, meta: RequestMeta): Promise<MfaChallenge | null> {
    const factors = await store.enabledFactors(this.ctx.db, accountId);
    if (!factors.length) return null;
    const now = this.ctx.clock.nowMs();
    const row = { id: uuid(), account_id: accountId, first_factor: firstFactor, session_duration: sessionDuration, created_at: this.ctx.clock.iso(), expires_at: now + PLATFORM_MFA.challengeTtlMs };
    await tx(this.ctx.db, async (t) => {
      await store.purgeChallenges(t, accountId, now - DAY);
      await store.insertChallenge(t, row);
      await audit(t, this.ctx, { actor: act(accountId), action: "account.signin.mfa_required", target: { type: "mfa_challenge", id: row.id }, meta, metadata: { first_factor: firstFactor } });
    });
    return {
      mfa_required: true,
      mfa_token: row.id,
      factors: factors.map((f) => ({ id: f.id, type: f.type, name: f.name })),
      expires_at: new Date(row.expires_at).toISOString(),
    };
  }

  /** The second step of sign-in: a 6-digit code (`verify`) or a recovery code (`recover`). */
  async complete(kind: "verify" | "recover", b: { mfa_token: string; code?: string; recovery_code?: string }, meta: RequestMeta): Promise<TokenResponse> {
    await this.challenges.admitAddress(meta);
    const { ch } = await this.challenges.open(b.mfa_token);
    const raw = (kind === "verify" ? b.code : b.recovery_code) ?? "";
    if (kind === "verify" && !TOTP_CODE_RE.test(raw.trim())) throw invalidField("code", "must be 6 digits");
    if (kind === "recover" && !normaliseRecoveryCode(raw)) throw invalidField("recovery_code", "must be 16 hex characters (hyphens optional)");
    const at = this.ctx.clock.iso();
    const proof = await tx(this.ctx.db, async (t) => {
      const p = await this.prove(t, ch.account_id, raw);
      if (!p) return null;
      await this.challenges.accept(t, ch.account_id);
      if (!(await store.consumeChallenge(t, ch.id, at, this.ctx.clock.nowMs()))) throw invalidMfaToken();
      const method = `${ch.first_factor.split(":")[0]}+${p.method}`;
      const provider = ch.first_factor.startsWith("oauth:") ? ch.first_factor.slice(6) : undefined;
      await audit(t, this.ctx, { actor: act(ch.account_id), action: "account.signin", target: { type: "mfa_challenge", id: ch.id }, meta, metadata: { method, ...(provider ? { provider } : {}), ...(p.factorId ? { factor_id: p.factorId } : {}) } });
      if (p.method === "recovery_code") {
        await audit(t, this.ctx, { actor: act(ch.account_id), action: "account.mfa.recovery_code.use", meta, metadata: { remaining: await store.unusedRecoveryCodes(t, ch.account_id) } });
      }
      return p;
    });
    if (!proof) return this.challenges.failure(ch, kind === "verify" ? "account.mfa.verify_failed" : "account.mfa.recover_failed", meta);
    return this.accounts.startSession(ch.account_id, ch.session_duration, meta);
  }
}
