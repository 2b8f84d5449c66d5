/**
 * MFA of an App's end users: factors (TOTP, email), the sign-in challenge, recovery codes
 * and step-up.
 *
 * The rules shared with console accounts (the challenge's and the user's lock-outs, pending
 * factors, recovery codes) are the identity core's (kernel/identity), with an App's users as
 * the realm; the pure TOTP and recovery-code helpers are in core/totp.ts.
 *
 * Factors
 * - TOTP: RFC 6238 with SHA-1, 6 digits, 30 s steps (what every authenticator app assumes);
 *   a code of the previous, current or next step is accepted, and only for a step later
 *   than the last one accepted for that factor (`last_step`), so a code never works twice.
 *   The seed (20 random bytes) is encrypted at rest with the secret box.
 * - Email: the address defaults to the user's primary email. Enrolment mails a 6-digit
 *   confirmation code, HOTP(counter 0) of a random per-factor secret kept encrypted until
 *   the factor is confirmed, so no code is stored.
 * - A factor is pending until confirmed; a pending factor can be confirmed for 10 minutes
 *   (then it is dead and is cleaned up at the next enrolment); 5 wrong confirmation codes
 *   delete it (429, enrol again). At most 10 enrolments per user per hour (each mints a
 *   secret or sends a mail). Disable is soft (disabled_at, row kept) and idempotent. An email
 *   enrolment counts against the client address's mail requests (429 RATE_LIMITED); its
 *   confirmation mail against the address's verification mails, dropped silently past them (the
 *   address is not proven to be the user's, so the answer must not tell).
 * - Confirming the user's first enabled factor generates 10 recovery codes, returned once
 *   in that response. Disabling the last enabled factor also deletes the recovery codes.
 *
 * Sign-in challenge (mfa_token = challenge id)
 * - Issued by sign-in when the user has an enabled factor; lives 10 minutes; single use.
 * - Unknown, expired or used token: 400 INVALID_TOKEN (the spec's "invalid token" is 400).
 *   Wrong code: 401 INVALID_CODE. The 5th wrong code or recovery code locks the challenge:
 *   that answer and every later one is 429 MFA_LOCKED; the user signs in again.
 * - Wrong codes are also counted per user across challenges, so signing in again does not
 *   buy fresh guesses: the 5th wrong code or recovery code (the spec's per-challenge number)
 *   without a successful verify in between, within a day of the previous wrong one, locks
 *   MFA sign-in for that user for 15 minutes (the sign-in lock's duration): that answer and
 *   every verify, recover or send-code of any of the user's challenges until then is 429
 *   MFA_LOCKED with Retry-After, a right code included. Sign-in still issues challenges
 *   (it has its own per-identifier lock). The lock is re-checked when a right code is about
 *   to be accepted, so guesses sent in parallel cannot slip past it. A success ends the streak.
 * - Emailed codes: 6 digits, valid 10 minutes (never past the challenge), at most 3 sends
 *   per challenge, 30 s apart (429 MFA_SEND_LIMIT / MFA_SEND_TOO_SOON with Retry-After);
 *   each send supersedes the previous code. Only the HMAC of a code is stored. A send also
 *   counts against the client address's mail requests and the factor address's sign-in code
 *   mails an hour (kernel/identity/stranger-limits.ts): 429 RATE_LIMITED with Retry-After past either
 *   (the caller proved the password: the answer may name the address's state).
 * - Verify tries the live emailed code, then each enabled TOTP factor; amr becomes
 *   ["pwd", "email" | "totp"]. Recover takes a recovery code; amr ["pwd", "recovery_code"].
 *   After a federated first factor the amr starts with ["oauth", <provider>] instead of
 *   ["pwd"] (the challenge records it), e.g. ["oauth", "idp_2", "totp"].
 *
 * Wrong codes and recovery codes are also counted per client address across challenges
 * (ADDRESS_LIMITS.mfa, per App): past it verify and recover answer 429 TOO_MANY_ATTEMPTS with
 * Retry-After from that address, before the challenge is looked at.
 *
 * Recovery codes: 16 lowercase hex characters (64 bits) as issued; hyphens anywhere and any
 * case are accepted. Stored as HMACs; each works once; regenerating deletes all prior ones.
 *
 * Step-up (bearer): a TOTP code or a recovery code (emailed codes are not offered: the spec
 * names only these two). 400 MFA_NOT_ENROLLED without an enabled factor, NO_TOTP_FACTOR for a
 * 6-digit code without a TOTP factor (neither counts as a wrong code). Success adds the method
 * to the session's amr and sets mfa_at, which the next refresh carries. Wrong codes (400
 * INVALID_CODE) form a streak per session that ends on success or after a day without
 * failures; the 5th locks step-up on that session for 15 minutes (429 STEP_UP_LOCKED with
 * Retry-After, also for that 5th answer).
 *
 * Wrong codes on bearer routes answer 400, not 401: clients treat 401 as "refresh the token".
 */
import { createHmac, randomInt } from "node:crypto";
import { generateHOTP } from "oslo/otp";
import type { RequestMeta } from "../../../access/http";
import { DAY, MINUTE, SECOND } from "../../../core/clock";
import { tx, type Sql } from "../../../core/db";
import { badRequest, conflict, invalidField, notFound, tooMany, unauthorized } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import { deriveKey, safeEqual } from "../../../core/secrets";
import { newTotpSeed, normaliseRecoveryCode, TOTP_CODE_RE, totpKeyUri, totpSecretText } from "../../../core/totp";
import type { AppContext } from "../../../context";
import { invalidMfaToken, MFA_RULES, MfaChallenges, MfaFactors, StrangerLimits, wrongCode, type MfaRealm } from "../../../kernel/identity";
import type { LoadedApp } from "../apps/service";
import { recordAuthAudit, type AuthAuditEntry } from "../audit/record";
import type { AppAccess } from "../apps/access";
import type { SessionService } from "./sessions";
import { isEmail } from "../apps/settings";
import type { MfaChallengeResponse, MfaGate, SigninService } from "./signin";
import * as store from "./store/mfa";
import { userView, type UserView } from "./store/users";
import { factorView } from "./views";

/** The identity core's numbers, a user's MFA sign-in locking after 5 wrong answers across challenges, plus emailed codes and step-up. */
export const MFA_LIMITS = {
  ...MFA_RULES,
  ownerFailures: 5,
  maxSends: 3,
  sendSpacingMs: 30 * SECOND,
  emailCodeTtlMs: 10 * MINUTE,
  stepUpFailures: 5,
  stepUpLockMs: 15 * MINUTE,
  stepUpStreakMs: DAY,
};

const CODE_RE = TOTP_CODE_RE;

/** "alice@example.com" -> "a***e@example.com"; short local parts keep only their first character. */
export function maskEmail(email: string) {
  const at = email.lastIndexOf("@");
  const local = email.slice(0, at);
  const masked = local.length > 2 ? `${local[0]}***${local[local.length - 1]}` : `${local[0] ?? ""}***`;
  return `${masked}${email.slice(at)}`;
}

export { normaliseRecoveryCode } from "../../../core/totp";

/** The first factor of a challenged sign-in: password unless the challenge recorded another (federated). */
function firstFactor(ch: store.ChallengeRow): { amr: string[]; method: string } {
  const amr = ch.first_amr ? (JSON.parse(ch.first_amr) as string[]) : ["pwd"];
  return { amr, method: amr[0] === "oauth" ? "oauth" : "password" };
}

const sixDigits = () => randomInt(0, 1_000_000).toString().padStart(6, "0");
/** An App's users as the identity core's MFA realm. */
function userRealm(ctx: AppContext, app: LoadedApp): MfaRealm<store.ChallengeRow, UserView> {
  return {
    keys: `auth:${app.id}`,
    addressKeys: `auth:${app.id}:mfa`,
    rules: MFA_LIMITS,
    challengeById: (db, id) => store.challengeById(db, app.id, id),
    ownerId: (ch) => ch.user_id,
    owner: (db, id) => userView(db, app.id, id),
    lockOwner: store.lockUserForMfa,
    recordFailure: store.recordFailure,
    async auditFailure(t, ch, f, meta) {
      const failed = (action: string, e: Partial<AuthAuditEntry>) => recordAuthAudit(t, ctx, app.id, { action, actor: { type: "user", id: ch.user_id }, meta, outcome: "failure", ...e });
      const challenge = { type: "mfa_challenge", id: ch.id };
      await failed(f.action, { target: challenge, metadata: { failures: f.failures } });
      if (f.challengeLocked) await failed("mfa.challenge.lock", { target: challenge });
      if (f.ownerLock) await failed("mfa.user.lock", { metadata: { failures: f.ownerLock.failures, until: new Date(f.ownerLock.until).toISOString() } });
    },
  };
}

export class MfaService implements MfaGate {
  private readonly codeKey: Uint8Array;
  private readonly factors: MfaFactors;

  constructor(
    private readonly ctx: AppContext,
    /** The parts of the Auth service this feature uses (AuthService passes itself). */
    private readonly auth: { access: AppAccess; sessions: SessionService; signin: SigninService },
  ) {
    this.codeKey = deriveKey(ctx.masterKey, "auth-mfa-email-code");
    this.factors = new MfaFactors(ctx, "auth-mfa-recovery-code");
  }

  // --- helpers ----------------------------------------------------------------------------

  /** `t`: the transaction the entry belongs to, or ctx.db. */
  private audit(t: Sql, app: LoadedApp, user: UserView, action: string, e: Partial<AuthAuditEntry> = {}): Promise<void> {
    return recordAuthAudit(t, this.ctx, app.id, { action, actor: { type: "user", id: user.id }, ...e });
  }

  private async me(app: LoadedApp, authorization: string | null) {
    const claims = await this.auth.access.endUser(app, authorization);
    const user = await this.auth.sessions.liveUser(app, claims);
    if (!user) throw unauthorized("Missing or invalid access token");
    return { claims, user };
  }

  /** The identity core's challenge rule for the App's users. */
  private challenges(app: LoadedApp) {
    return new MfaChallenges(this.ctx, userRealm(this.ctx, app));
  }

  private emailCodeHash(challengeId: string, code: string) {
    return createHmac("sha256", this.codeKey).update(`${challengeId}:${code}`).digest("hex");
  }

  /** Fresh recovery codes for the user; every prior code stops working. Call inside a transaction (`t`). */
  private newRecoveryCodes(t: Sql, userId: string) {
    return this.factors.newRecoveryCodes(t, (t, hashes, now) => store.replaceRecoveryCodes(t, userId, hashes, now));
  }

  private mailFrom(app: LoadedApp) {
    return app.settings.mail_from ?? undefined;
  }

  // --- factors ----------------------------------------------------------------------------

  async enrol(app: LoadedApp, authorization: string | null, b: { type: store.FactorType; name?: string | null; email?: string | null }, meta: RequestMeta) {
    const { user } = await this.me(app, authorization);
    let email: string | null = null;
    if (b.type === "email") {
      email = (b.email ?? user.email ?? "").trim().toLowerCase();
      if (!email) throw invalidField("email", "is required: the user has no primary email");
      if (!isEmail(email)) throw invalidField("email", "must be an email address");
    }
    await this.factors.admitEnrolment(`auth:${app.id}`, user.id);
    const now = this.ctx.clock.iso();
    const secret = newTotpSeed();
    const row: store.FactorRow = {
      id: uuid(),
      app_id: app.id,
      user_id: user.id,
      type: b.type,
      name: b.name?.trim() || (b.type === "totp" ? "Authenticator app" : "Email"),
      secret_enc: this.ctx.secretBox.encrypt(secret.toString("base64")),
      email,
      confirmed_at: null,
      disabled_at: null,
      last_step: null,
      created_at: now,
    };
    const code = b.type === "email" ? await generateHOTP(secret, 0) : null;
    const limits = new StrangerLimits(this.ctx, `auth:${app.id}`);
    if (code) await limits.admitMailFrom(meta.ip);
    const mail = code !== null && (await limits.mayMail("verification", email!));
    await tx(this.ctx.db, async (t) => {
      await store.deleteStalePending(t, user.id, new Date(this.ctx.clock.nowMs() - MFA_LIMITS.pendingTtlMs).toISOString());
      await store.insertFactor(t, row);
      if (mail) {
        await this.ctx.mailer.enqueue(t, {
          to: row.email!,
          from: this.mailFrom(app),
          subject: `${app.displayName}: confirm your sign-in email`,
          text: `Your code to confirm this address for ${app.displayName} sign-in codes is ${code}.\nIt expires in 10 minutes. If you did not ask for it, ignore this mail.\n`,
        });
      }
      await this.audit(t, app, user, "mfa.factor.enrol", { meta, target: { type: "mfa_factor", id: row.id }, metadata: { type: row.type } });
    });
    const view = factorView(row);
    if (b.type === "email") return view;
    const uri = totpKeyUri(app.displayName, user.email ?? user.username, secret);
    return { ...view, secret: totpSecretText(secret), otpauth_uri: uri };
  }

  async confirm(app: LoadedApp, authorization: string | null, factorId: string, code: string, meta: RequestMeta) {
    const { user } = await this.me(app, authorization);
    // The input is judged before the factor is looked up: a malformed code is 400 even for an unknown factor.
    if (!CODE_RE.test(code)) throw invalidField("code", "must be 6 digits");
    const f = await store.factorOf(this.ctx.db, app.id, user.id, factorId);
    this.factors.assertConfirmable(f);

    const step = f.type === "totp" ? await this.factors.totpStep(f, code) : null;
    const ok = f.type === "totp" ? step !== null : safeEqual(await generateHOTP(this.factors.seed(f), 0), code);
    if (!ok) {
      return this.factors.confirmFailure(
        `auth:${app.id}`,
        f.id,
        (n) => this.audit(this.ctx.db, app, user, "mfa.factor.confirm", { meta, outcome: "failure", target: { type: "mfa_factor", id: f.id }, metadata: { failures: n } }),
        () => store.deletePendingFactor(this.ctx.db, f.id),
      );
    }

    const confirmedAt = this.ctx.clock.iso();
    const recovery = await tx(this.ctx.db, async (t) => {
      const first = (await store.enabledFactors(t, app.id, user.id)).length === 0;
      if (!(await store.confirmFactor(t, f.id, confirmedAt, f.type === "email"))) throw conflict("This factor is no longer pending", "FACTOR_ALREADY_CONFIRMED");
      if (step !== null) await store.claimStep(t, f.id, step);
      await this.audit(t, app, user, "mfa.factor.confirm", { meta, target: { type: "mfa_factor", id: f.id }, metadata: { type: f.type } });
      if (!first) return null;
      await this.audit(t, app, user, "mfa.recovery_codes.generate", { meta, metadata: { count: MFA_LIMITS.recoveryCodes } });
      return this.newRecoveryCodes(t, user.id);
    });
    await this.factors.confirmed(`auth:${app.id}`, f.id);
    const view = factorView({ ...f, confirmed_at: confirmedAt });
    return recovery ? { ...view, recovery_codes: recovery } : view;
  }

  async list(app: LoadedApp, authorization: string | null, q: { limit?: number; cursor?: string }) {
    const { user } = await this.me(app, authorization);
    const limit = parseLimit(q.limit);
    const after = decodeCursor<{ id?: unknown }>(q.cursor);
    if (after && typeof after.id !== "string") throw badRequest("Malformed cursor", [{ field: "cursor", reason: "not a cursor issued by this API" }], "INVALID_CURSOR");
    const rows = await store.listFactors(this.ctx.db, app.id, user.id, (after?.id as string) ?? null, limit + 1);
    return buildPage(rows, limit, (r) => ({ id: r.id }), factorView);
  }

  async disable(app: LoadedApp, authorization: string | null, factorId: string, meta: RequestMeta) {
    const { user } = await this.me(app, authorization);
    const f = await store.factorOf(this.ctx.db, app.id, user.id, factorId);
    if (!f) throw notFound("MFA factor");
    await tx(this.ctx.db, async (t) => {
      if (!(await store.disableFactor(t, f.id, this.ctx.clock.iso()))) return;
      await this.audit(t, app, user, "mfa.factor.disable", { meta, target: { type: "mfa_factor", id: f.id }, metadata: { type: f.type } });
      // Without a factor there is no MFA to recover; leftover codes would only be a liability.
      if (!(await store.enabledFactors(t, app.id, user.id)).length) await store.replaceRecoveryCodes(t, user.id, [], this.ctx.clock.iso());
    });
  }

  async regenerateRecoveryCodes(app: LoadedApp, authorization: string | null, meta: RequestMeta) {
    const { user } = await this.me(app, authorization);
    if (!(await store.enabledFactors(this.ctx.db, app.id, user.id)).length) throw badRequest("Enable an MFA factor first", undefined, "MFA_NOT_ENROLLED");
    const codes = await tx(this.ctx.db, async (t) => {
      await this.audit(t, app, user, "mfa.recovery_codes.regenerate", { meta, metadata: { count: MFA_LIMITS.recoveryCodes } });
      return this.newRecoveryCodes(t, user.id);
    });
    return { recovery_codes: codes };
  }

  // --- sign-in challenge ------------------------------------------------------------------

  /**
   * A challenge when the user has an enabled factor, else null. `firstAmr` is how the first
   * factor was done (default ["pwd"]; federated sign-in passes ["oauth", <provider>]); the
   * tokens after verify / recover carry it followed by the second factor.
   */
  async challengeFor(app: LoadedApp, user: UserView, tenantId: string | null, _meta: RequestMeta, firstAmr?: string[]): Promise<MfaChallengeResponse | null> {
    const factors = await store.enabledFactors(this.ctx.db, app.id, user.id);
    if (!factors.length) return null;
    const now = this.ctx.clock.nowMs();
    const row = { id: uuid(), app_id: app.id, user_id: user.id, tenant_id: tenantId, created_at: this.ctx.clock.iso(), expires_at: now + MFA_LIMITS.challengeTtlMs, first_amr: firstAmr ? JSON.stringify(firstAmr) : null };
    await tx(this.ctx.db, async (t) => {
      // Old challenges are useless after expiry; a day's grace keeps them for support questions.
      await store.purgeChallenges(t, user.id, now - DAY);
      await store.insertChallenge(t, row);
    });
    return {
      mfa_required: true,
      mfa_token: row.id,
      factors: factors.map((f) => ({ id: f.id, type: f.type, name: f.name, ...(f.email ? { email_masked: maskEmail(f.email) } : {}) })),
      expires_at: new Date(row.expires_at).toISOString(),
    };
  }

  async sendCode(app: LoadedApp, b: { mfa_token: string; factor_id: string }, meta: RequestMeta) {
    const { ch, owner: user } = await this.challenges(app).open(b.mfa_token);
    const factor = (await store.enabledFactors(this.ctx.db, app.id, user.id)).find((f) => f.id === b.factor_id && f.type === "email");
    if (!factor) throw invalidField("factor_id", "must be an email factor of this sign-in");
    const now = this.ctx.clock.nowMs();
    const tooSoon = () => {
      const wait = Math.max(1, Math.ceil(((ch.last_send_at ?? now) + MFA_LIMITS.sendSpacingMs - now) / 1000));
      return tooMany(`Wait ${wait} s before asking for another code`, wait, "MFA_SEND_TOO_SOON");
    };
    const limit = () => tooMany(`At most ${MFA_LIMITS.maxSends} codes per sign-in: sign in again`, undefined, "MFA_SEND_LIMIT");
    if (ch.sends >= MFA_LIMITS.maxSends) throw limit();
    if (ch.last_send_at !== null && now - ch.last_send_at < MFA_LIMITS.sendSpacingMs) throw tooSoon();

    const code = sixDigits();
    const codeExpiresAt = Math.min(now + MFA_LIMITS.emailCodeTtlMs, ch.expires_at);
    const limits = new StrangerLimits(this.ctx, `auth:${app.id}`);
    await limits.admitMailFrom(meta.ip);
    await limits.admitMailTo("mfa", factor.email!);
    await tx(this.ctx.db, async (t) => {
      if (!(await store.recordSend(t, ch.id, factor.id, this.emailCodeHash(ch.id, code), codeExpiresAt, now, MFA_LIMITS.maxSends, MFA_LIMITS.sendSpacingMs))) {
        throw tooMany("Another code was just sent: wait and try again", Math.ceil(MFA_LIMITS.sendSpacingMs / 1000), "MFA_SEND_TOO_SOON");
      }
      await this.ctx.mailer.enqueue(t, {
        to: factor.email!,
        from: this.mailFrom(app),
        subject: `${app.displayName}: your sign-in code`,
        text: `Your ${app.displayName} sign-in code is ${code}.\nIt expires in 10 minutes. If you did not try to sign in, change your password: someone else knows it.\n`,
      });
      await this.audit(t, app, user, "mfa.code.send", { meta, target: { type: "mfa_factor", id: factor.id }, metadata: { challenge_id: ch.id, send: ch.sends + 1 } });
    });
    return { email_masked: maskEmail(factor.email!), code_expires_at: new Date(codeExpiresAt).toISOString() };
  }

  async verify(app: LoadedApp, b: { mfa_token: string; code: string }, meta: RequestMeta) {
    const challenges = this.challenges(app);
    await challenges.admitAddress(meta);
    const { ch, owner: user } = await challenges.open(b.mfa_token);
    const code = b.code.trim();
    if (!CODE_RE.test(code)) throw invalidField("code", "must be 6 digits");
    const factors = await store.enabledFactors(this.ctx.db, app.id, user.id);
    const now = this.ctx.clock.nowMs();

    let match: { type: store.FactorType; factor: store.FactorRow; step: number | null } | null = null;
    const emailFactor = factors.find((f) => f.id === ch.code_factor_id && f.type === "email");
    if (emailFactor && ch.code_hash && (ch.code_expires_at ?? 0) > now && safeEqual(this.emailCodeHash(ch.id, code), ch.code_hash)) {
      match = { type: "email", factor: emailFactor, step: null };
    }
    for (const f of factors) {
      if (match) break;
      if (f.type !== "totp") continue;
      const step = await this.factors.totpStep(f, code);
      if (step !== null) match = { type: "totp", factor: f, step };
    }
    if (!match) return challenges.failure(ch, "mfa.verify", meta);

    const m = match;
    const at = this.ctx.clock.iso();
    const outcome = await tx(this.ctx.db, async (t) => {
      // The step claim and the consumption stand or fall together.
      if (m.step !== null && !(await store.claimStep(t, m.factor.id, m.step))) return "replay";
      await challenges.accept(t, user.id);
      if (!(await store.consumeChallenge(t, ch.id, at, this.ctx.clock.nowMs()))) throw invalidMfaToken();
      await this.audit(t, app, user, "mfa.verify", { meta, target: { type: "mfa_factor", id: m.factor.id }, metadata: { type: m.type, challenge_id: ch.id } });
      return "ok";
    });
    if (outcome === "replay") return challenges.failure(ch, "mfa.verify", meta);
    const first = firstFactor(ch);
    return this.auth.signin.complete(app, user, { tenantId: ch.tenant_id, amr: [...first.amr, m.type], mfaAt: at }, meta, `${first.method}+mfa`);
  }

  async recover(app: LoadedApp, b: { mfa_token: string; recovery_code: string }, meta: RequestMeta) {
    const challenges = this.challenges(app);
    await challenges.admitAddress(meta);
    const { ch, owner: user } = await challenges.open(b.mfa_token);
    const rc = normaliseRecoveryCode(b.recovery_code);
    if (!rc) throw invalidField("recovery_code", "must be 16 hex characters (hyphens optional)");
    const at = this.ctx.clock.iso();
    const ok = await tx(this.ctx.db, async (t) => {
      if (!(await store.useRecoveryCode(t, user.id, this.factors.recoveryHash(rc), at))) return false;
      await challenges.accept(t, user.id);
      if (!(await store.consumeChallenge(t, ch.id, at, this.ctx.clock.nowMs()))) throw invalidMfaToken();
      await this.audit(t, app, user, "mfa.recover", { meta, target: { type: "mfa_challenge", id: ch.id } });
      await this.audit(t, app, user, "mfa.recovery_code.use", { meta, metadata: { context: "signin", remaining: await store.unusedRecoveryCodes(t, user.id) } });
      return true;
    });
    if (!ok) return challenges.failure(ch, "mfa.recover", meta);
    const first = firstFactor(ch);
    return this.auth.signin.complete(app, user, { tenantId: ch.tenant_id, amr: [...first.amr, "recovery_code"], mfaAt: at }, meta, `${first.method}+recovery_code`);
  }

  // --- step-up ----------------------------------------------------------------------------

  async stepUp(app: LoadedApp, authorization: string | null, b: { code: string }, meta: RequestMeta) {
    const { claims, user } = await this.me(app, authorization);
    const session = typeof claims.sid === "string" ? await this.auth.sessions.session(app, claims.sid) : null;
    const now = this.ctx.clock.nowMs();
    if (!session || session.user_id !== user.id || session.revoked_at || session.expires_at <= now) throw unauthorized("The session of this token has ended");

    const lockKey = `auth:${app.id}:stepup-lock:${session.id}`;
    const failKey = `auth:${app.id}:stepup-fail:${session.id}`;
    const lockedUntil = await this.ctx.ratelimit.lockedUntil(lockKey);
    const locked = (until: number) => tooMany("Too many wrong codes: step-up is locked on this session for 15 minutes", Math.max(1, Math.ceil((until - now) / 1000)), "STEP_UP_LOCKED");
    if (lockedUntil) throw locked(lockedUntil);

    const factors = await store.enabledFactors(this.ctx.db, app.id, user.id);
    if (!factors.length) throw badRequest("The user has no enabled MFA factor", undefined, "MFA_NOT_ENROLLED");
    const code = b.code.trim();
    const at = this.ctx.clock.iso();
    let method: "totp" | "recovery_code" | null = null;
    if (CODE_RE.test(code)) {
      const totp = factors.filter((f) => f.type === "totp");
      if (!totp.length) throw badRequest("The user has no authenticator factor: use a recovery code", undefined, "NO_TOTP_FACTOR");
      for (const f of totp) {
        const step = await this.factors.totpStep(f, code);
        if (step !== null && (await store.claimStep(this.ctx.db, f.id, step))) {
          method = "totp";
          break;
        }
      }
    } else {
      const rc = normaliseRecoveryCode(code);
      if (!rc) throw invalidField("code", "must be a 6-digit authenticator code or a 16-hex recovery code");
      if (await store.useRecoveryCode(this.ctx.db, user.id, this.factors.recoveryHash(rc), at)) {
        method = "recovery_code";
        const remaining = await store.unusedRecoveryCodes(this.ctx.db, user.id);
        await this.audit(this.ctx.db, app, user, "mfa.recovery_code.use", { meta, metadata: { context: "step_up", session_id: session.id, remaining } });
      }
    }

    if (!method) {
      const n = await this.ctx.ratelimit.recordFailure(failKey, MFA_LIMITS.stepUpStreakMs);
      await this.audit(this.ctx.db, app, user, "mfa.step_up", { meta, outcome: "failure", metadata: { session_id: session.id, failures: n } });
      if (n >= MFA_LIMITS.stepUpFailures) {
        const until = await this.ctx.ratelimit.lock(lockKey, now + MFA_LIMITS.stepUpLockMs);
        await this.ctx.ratelimit.clearFailures(failKey);
        await this.audit(this.ctx.db, app, user, "mfa.step_up.lock", { meta, outcome: "failure", metadata: { session_id: session.id, until: new Date(until).toISOString() } });
        throw locked(until);
      }
      throw wrongCode(400);
    }

    await this.ctx.ratelimit.clearFailures(failKey);
    const prior = JSON.parse(session.amr) as string[];
    // Keep how the session started; the step-up method joins it (once).
    const amr = [...new Set([...prior, method])];
    await this.auth.sessions.markStepUp(session.id, amr, at);
    await this.audit(this.ctx.db, app, user, "mfa.step_up", { meta, metadata: { session_id: session.id, method } });
    return { amr, mfa_at: at };
  }
}
