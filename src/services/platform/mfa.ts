/**
 * MFA of console (platform) accounts: TOTP factors, recovery codes and the second step of
 * sign-in. The same contract as an App's end users (services/auth/mfa.ts, spec 1 "MFA"),
 * with the pure TOTP and recovery-code helpers shared through core/totp.ts.
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
import { createHmac } from "node:crypto";
import { DAY, HOUR, MINUTE } from "../../core/clock";
import { tx, type Sql } from "../../core/db";
import { ApiError, badRequest, conflict, invalidField, notFound, tooMany } from "../../core/errors";
import { isUuid, uuid } from "../../core/ids";
import { deriveKey } from "../../core/secrets";
import { ADDRESS_LIMITS, AddressLimit, retryAfterSec } from "../../core/signin-guard";
import { matchTotpStep, newRecoveryCodes, newTotpSeed, normaliseRecoveryCode, TOTP_CODE_RE, totpKeyUri, totpSecretText } from "../../core/totp";
import type { AppContext } from "../../context";
import type { AccountService, TokenResponse } from "./accounts";
import { audit, type RequestMeta } from "./audit";
import * as accounts from "./store/accounts";
import * as store from "./store/mfa";

export const PLATFORM_MFA = {
  challengeTtlMs: 10 * MINUTE,
  maxFailures: 5,
  pendingTtlMs: 10 * MINUTE,
  confirmFailures: 5,
  enrolmentsPerHour: 10,
  recoveryCodes: 10,
  accountFailures: 10,
  accountStreakMs: DAY,
  accountLockMs: 15 * MINUTE,
};

export interface FactorView {
  id: string;
  type: "totp";
  name: string | null;
  status: "pending" | "active" | "disabled";
  created_at: string;
  confirmed_at: string | null;
  disabled_at: string | null;
}

export interface MfaChallenge {
  mfa_required: true;
  mfa_token: string;
  factors: { id: string; type: "totp"; name: string | null }[];
  expires_at: string;
}

const factorView = (f: store.FactorRow): FactorView => ({
  id: f.id,
  type: f.type,
  name: f.name,
  status: f.disabled_at ? "disabled" : f.confirmed_at ? "active" : "pending",
  created_at: f.created_at,
  confirmed_at: f.confirmed_at,
  disabled_at: f.disabled_at,
});

const invalidToken = () => new ApiError(400, "INVALID_TOKEN", "The MFA token is invalid, used or expired: sign in again");
const challengeLocked = () => new ApiError(429, "MFA_LOCKED", "Too many wrong codes for this sign-in: sign in again");
const wrongCode = () => new ApiError(401, "INVALID_CODE", "Wrong code");
const accountLocked = (ms: number) => tooMany("Too many wrong codes for this account: MFA sign-in is locked for 15 minutes", retryAfterSec(ms), "MFA_LOCKED");

export class PlatformMfa {
  private readonly recoveryKey: Uint8Array;
  private readonly addresses: AddressLimit;

  constructor(
    private readonly ctx: AppContext,
    private readonly accounts: AccountService,
  ) {
    this.recoveryKey = deriveKey(ctx.masterKey, "platform-mfa-recovery-code");
    this.addresses = new AddressLimit(ctx.ratelimit, "platform-mfa", ADDRESS_LIMITS.mfa);
  }

  // --- helpers ----------------------------------------------------------------------------

  private act = (accountId: string) => ({ actor_type: "account", actor_id: accountId });

  private seed(f: store.FactorRow) {
    return Buffer.from(this.ctx.secretBox.decrypt(f.secret_enc), "base64");
  }

  private totpStep(f: store.FactorRow, code: string) {
    return matchTotpStep(this.seed(f), code, this.ctx.clock.nowMs(), f.last_step);
  }

  private recoveryHash(code: string) {
    return createHmac("sha256", this.recoveryKey).update(code).digest("hex");
  }

  /** Fresh recovery codes; every prior one stops working. Inside a transaction (`t`). */
  private async newRecoveryCodes(t: Sql, accountId: string) {
    const codes = newRecoveryCodes(PLATFORM_MFA.recoveryCodes);
    await store.replaceRecoveryCodes(t, accountId, codes.map((c) => ({ id: uuid(), hash: this.recoveryHash(c) })), this.ctx.clock.iso());
    return codes;
  }

  /**
   * Checks a second-factor answer of the account: a 6-digit code of an enabled factor (its
   * step is claimed, so it never works twice) or an unused recovery code (used up). On `t`.
   */
  private async prove(t: Sql, accountId: string, raw: string): Promise<{ method: "totp" | "recovery_code"; factorId: string | null } | null> {
    const code = raw.trim();
    if (TOTP_CODE_RE.test(code)) {
      for (const f of await store.enabledFactors(t, accountId)) {
        const step = await this.totpStep(f, code);
        if (step !== null && (await store.claimStep(t, f.id, step))) return { method: "totp", factorId: f.id };
      }
      return null;
    }
    const rc = normaliseRecoveryCode(code);
    if (!rc) return null;
    return (await store.useRecoveryCode(t, accountId, this.recoveryHash(rc), this.ctx.clock.iso())) ? { method: "recovery_code", factorId: null } : null;
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
    const hit = await this.ctx.ratelimit.hit(`platform:mfa-enrol:${accountId}`, PLATFORM_MFA.enrolmentsPerHour, HOUR);
    if (!hit.allowed) throw tooMany("Too many MFA enrolments: try again later", retryAfterSec(hit.retryAfterMs), "TOO_MANY_ENROLMENTS");
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
      await audit(t, this.ctx, { actor: this.act(accountId), action: "account.mfa.enrol", target: { type: "mfa_factor", id: row.id }, meta, metadata: { type: "totp" } });
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
    if (!f || f.disabled_at) throw notFound("MFA factor");
    if (f.confirmed_at) throw conflict("This factor is already confirmed", "FACTOR_ALREADY_CONFIRMED");
    if (Date.parse(f.created_at) + PLATFORM_MFA.pendingTtlMs <= this.ctx.clock.nowMs()) throw badRequest("The enrolment has expired: enrol the factor again", undefined, "ENROLMENT_EXPIRED");
    const step = await this.totpStep(f, code);
    const failKey = `platform:mfa-confirm:${f.id}`;
    if (step === null) {
      const n = await this.ctx.ratelimit.recordFailure(failKey, PLATFORM_MFA.pendingTtlMs);
      await audit(this.ctx.db, this.ctx, { actor: this.act(accountId), action: "account.mfa.confirm_failed", target: { type: "mfa_factor", id: f.id }, meta, metadata: { failures: n } });
      if (n >= PLATFORM_MFA.confirmFailures) {
        await store.deletePendingFactor(this.ctx.db, f.id);
        await this.ctx.ratelimit.clearFailures(failKey);
        throw tooMany("Too many wrong codes: enrol the factor again");
      }
      throw new ApiError(400, "INVALID_CODE", "Wrong code");
    }
    const at = this.ctx.clock.iso();
    const codes = await tx(this.ctx.db, async (t) => {
      const first = (await store.enabledFactors(t, accountId)).length === 0;
      if (!(await store.confirmFactor(t, f.id, at))) throw conflict("This factor is no longer pending", "FACTOR_ALREADY_CONFIRMED");
      await store.claimStep(t, f.id, step);
      await audit(t, this.ctx, { actor: this.act(accountId), action: "account.mfa.confirm", target: { type: "mfa_factor", id: f.id }, meta, metadata: { type: "totp", recovery_codes: first } });
      return first ? this.newRecoveryCodes(t, accountId) : null;
    });
    await this.ctx.ratelimit.clearFailures(failKey);
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
      await audit(t, this.ctx, { actor: this.act(accountId), action: "account.mfa.disable", target: { type: "mfa_factor", id: f.id }, meta, metadata: { type: f.type, proof: method } });
      if (!(await store.enabledFactors(t, accountId)).length) await store.replaceRecoveryCodes(t, accountId, [], this.ctx.clock.iso());
      return "ok";
    });
    if (outcome === "missing") throw invalidField("code", "is required: a current authenticator code or a recovery code");
    if (outcome === "wrong") {
      await audit(this.ctx.db, this.ctx, { actor: this.act(accountId), action: "account.mfa.disable_failed", target: { type: "mfa_factor", id: f.id }, meta });
      throw new ApiError(400, "INVALID_CODE", "Wrong code");
    }
  }

  async regenerate(accountId: string, meta: RequestMeta) {
    if (!(await store.enabledFactors(this.ctx.db, accountId)).length) throw badRequest("Enable an MFA factor first", undefined, "MFA_NOT_ENROLLED");
    const codes = await tx(this.ctx.db, async (t) => {
      await audit(t, this.ctx, { actor: this.act(accountId), action: "account.mfa.recovery_codes.regenerate", meta, metadata: { count: PLATFORM_MFA.recoveryCodes } });
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
      await audit(t, this.ctx, { actor: this.act(operatorId), action: "account.mfa.reset", target: { type: "account", id: accountId }, meta, metadata: { factors_disabled: n } });
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
      await audit(t, this.ctx, { actor: this.act(accountId), action: "account.signin.mfa_required", target: { type: "mfa_challenge", id: row.id }, meta, metadata: { first_factor: firstFactor } });
    });
    return {
      mfa_required: true,
      mfa_token: row.id,
      factors: factors.map((f) => ({ id: f.id, type: f.type, name: f.name })),
      expires_at: new Date(row.expires_at).toISOString(),
    };
  }

  private accountKeys(accountId: string) {
    return { fail: `platform:mfa-fail:${accountId}`, lock: `platform:mfa-lock:${accountId}` };
  }

  /** The open challenge behind a token and its account: 400 unknown/used/expired, 429 locked. */
  private async open(token: string) {
    const ch = isUuid(token) ? await store.challengeById(this.ctx.db, token) : null;
    if (!ch || ch.consumed_at || ch.expires_at <= this.ctx.clock.nowMs()) throw invalidToken();
    if (ch.locked_at) throw challengeLocked();
    const until = await this.ctx.ratelimit.lockedUntil(this.accountKeys(ch.account_id).lock);
    if (until) throw accountLocked(until - this.ctx.clock.nowMs());
    const account = await accounts.accountById(this.ctx.db, ch.account_id);
    if (!account || account.status === "blocked") throw invalidToken();
    if (account.status === "suspended") throw new ApiError(403, "ACCOUNT_SUSPENDED", "This account is suspended");
    if (account.status === "deactivated") throw new ApiError(403, "ACCOUNT_DEACTIVATED", "This account is deactivated");
    return ch;
  }

  /** Counts a wrong answer (challenge, account, client address) and throws 401 or 429. */
  private async failure(ch: store.ChallengeRow, action: string, meta: RequestMeta): Promise<never> {
    await this.addresses.failed(meta.ip);
    const n = await store.recordFailure(this.ctx.db, ch.id, this.ctx.clock.iso(), PLATFORM_MFA.maxFailures);
    if (n === null) {
      if ((await store.challengeById(this.ctx.db, ch.id))?.locked_at) throw challengeLocked();
      throw invalidToken();
    }
    await audit(this.ctx.db, this.ctx, { actor: this.act(ch.account_id), action, target: { type: "mfa_challenge", id: ch.id }, meta, metadata: { failures: n } });
    const keys = this.accountKeys(ch.account_id);
    const streak = await this.ctx.ratelimit.recordFailure(keys.fail, PLATFORM_MFA.accountStreakMs);
    if (streak >= PLATFORM_MFA.accountFailures) {
      const until = await this.ctx.ratelimit.lock(keys.lock, this.ctx.clock.nowMs() + PLATFORM_MFA.accountLockMs);
      await this.ctx.ratelimit.clearFailures(keys.fail);
      await audit(this.ctx.db, this.ctx, { actor: this.act(ch.account_id), action: "account.mfa.lock", meta, metadata: { until: new Date(until).toISOString() } });
      throw accountLocked(until - this.ctx.clock.nowMs());
    }
    if (n >= PLATFORM_MFA.maxFailures) {
      await audit(this.ctx.db, this.ctx, { actor: this.act(ch.account_id), action: "account.mfa.challenge_locked", target: { type: "mfa_challenge", id: ch.id }, meta });
      throw challengeLocked();
    }
    throw wrongCode();
  }

  /** The second step of sign-in: a 6-digit code (`verify`) or a recovery code (`recover`). */
  async complete(kind: "verify" | "recover", b: { mfa_token: string; code?: string; recovery_code?: string }, meta: RequestMeta): Promise<TokenResponse> {
    await this.addresses.admit(meta.ip, "Too many wrong codes from this address; try again later");
    const ch = await this.open(b.mfa_token);
    const raw = (kind === "verify" ? b.code : b.recovery_code) ?? "";
    if (kind === "verify" && !TOTP_CODE_RE.test(raw.trim())) throw invalidField("code", "must be 6 digits");
    if (kind === "recover" && !normaliseRecoveryCode(raw)) throw invalidField("recovery_code", "must be 16 hex characters (hyphens optional)");
    const at = this.ctx.clock.iso();
    const proof = await tx(this.ctx.db, async (t) => {
      const p = await this.prove(t, ch.account_id, raw);
      if (!p) return null;
      if (!(await store.consumeChallenge(t, ch.id, at, this.ctx.clock.nowMs()))) throw invalidToken();
      const method = `${ch.first_factor.split(":")[0]}+${p.method}`;
      const provider = ch.first_factor.startsWith("oauth:") ? ch.first_factor.slice(6) : undefined;
      await audit(t, this.ctx, { actor: this.act(ch.account_id), action: "account.signin", target: { type: "mfa_challenge", id: ch.id }, meta, metadata: { method, ...(provider ? { provider } : {}), ...(p.factorId ? { factor_id: p.factorId } : {}) } });
      if (p.method === "recovery_code") {
        await audit(t, this.ctx, { actor: this.act(ch.account_id), action: "account.mfa.recovery_code.use", meta, metadata: { remaining: await store.unusedRecoveryCodes(t, ch.account_id) } });
      }
      return p;
    });
    if (!proof) return this.failure(ch, kind === "verify" ? "account.mfa.verify_failed" : "account.mfa.recover_failed", meta);
    await this.ctx.ratelimit.clearFailures(this.accountKeys(ch.account_id).fail);
    return this.accounts.startSession(ch.account_id, ch.session_duration, meta);
  }
}
