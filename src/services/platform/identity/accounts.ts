/**
 * Console accounts: sign-up, sign-in (with the spec's lock-out rules), sessions with
 * rotating refresh tokens, logout, password reset and the operator's status changes.
 */
import { createHmac, randomInt } from "node:crypto";
import { ApiError, badRequest, invalidField, notFound } from "../../../core/errors";
import { MINUTE } from "../../../core/clock";
import { ADDRESS_LIMITS, AddressLimit, SigninGuard } from "../../../core/signin-guard";
import { DeferredWork } from "../../../core/deferred";
import { tx, type Sql } from "../../../core/db";
import { isUniqueViolation } from "../../../core/store/sql";
import { uuid } from "../../../core/ids";
import { deriveKey, hashToken, randomToken } from "../../../core/secrets";
import type { AppContext } from "../../../context";
import { audit, type RequestMeta } from "../../../kernel/tenancy";
import { CONSOLE_PASSWORDS, openSession, passwordProblem, provePassword, rotateRefresh, StrangerLimits, type PasswordRealm, type TokenResponse } from "../../../kernel/identity";
import * as store from "./store/accounts";
import { hasLiveInvitationFor } from "./store/invitations";
import { markEmailVerified } from "./store/oauth";
import { SessionTokens } from "./tokens";

export const SESSION_SHORT = 24 * 3600;
export const SESSION_LONG = 90 * 24 * 3600;
export const SESSION_DEFAULT = 30 * 24 * 3600;
const RESET_TTL_MS = 15 * MINUTE;

const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;
const USERNAME_RE = /^[A-Za-z0-9._-]{1,64}$/;

export type { TokenResponse };

/** short = 24 h, long = 90 d, integer seconds 3600..7776000, default 30 days. */
export function parseSessionDuration(v: unknown): number {
  if (v === undefined || v === null) return SESSION_DEFAULT;
  if (v === "short") return SESSION_SHORT;
  if (v === "long") return SESSION_LONG;
  const n = typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n === "number" && Number.isInteger(n) && n >= 3600 && n <= SESSION_LONG) return n;
  throw invalidField("session_duration", "must be \"short\", \"long\" or an integer from 3600 to 7776000 seconds");
}

/** The answer of a proven first factor when the account has MFA (mfa.ts). */
export interface MfaChallengeResponse {
  mfa_required: true;
  mfa_token: string;
  factors: { id: string; type: "totp"; name: string | null }[];
  expires_at: string;
}

/** What sign-in needs of the MFA feature (PlatformMfa, wired by the Platform service). */
export interface MfaGate {
  challengeFor(accountId: string, firstFactor: string, sessionDuration: number, meta: RequestMeta): Promise<MfaChallengeResponse | null>;
}

export class AccountService {
  readonly tokens: SessionTokens;
  /** Console accounts as the identity core's password realm. */
  private readonly passwordRealm: PasswordRealm<store.AccountRow>;
  private readonly resetGuesses: AddressLimit;
  /** Sign-ups and reset mails per client address and recipient (kernel/identity/stranger-limits.ts). */
  private readonly strangers: StrangerLimits;
  private readonly resetKey: Uint8Array;
  /** Deferred work (reset mails) still running: awaited by idle() in tests and shutdown. */
  private readonly deferred: DeferredWork;
  /** Set once by the Platform service: a proven first factor meets the account's MFA here. */
  mfa: MfaGate | null = null;

  constructor(private readonly ctx: AppContext) {
    this.tokens = new SessionTokens(deriveKey(ctx.masterKey, "platform-session-jwt"), `${ctx.config.publicUrl}/platform`, ctx.clock);
    this.resetKey = deriveKey(ctx.masterKey, "platform-password-reset");
    this.deferred = new DeferredWork(ctx.log);
    this.passwordRealm = {
      guard: new SigninGuard(ctx.ratelimit, () => ctx.clock.nowMs(), "signin"),
      byIdentifier: store.accountByIdentifier,
      auditFailure: async (account, meta) => {
        if (account) await audit(this.ctx.db, this.ctx, { actor: { actor_type: "account", actor_id: account.id }, action: "account.signin_failed", meta });
      },
    };
    this.resetGuesses = new AddressLimit(ctx.ratelimit, "reset", ADDRESS_LIMITS.consoleReset);
    this.strangers = new StrangerLimits(ctx, "console");
  }

  idle() {
    return this.deferred.idle();
  }

  // --- sign-up ------------------------------------------------------------------------

  validateSignup(b: { email: string; username: string; password: string; display_name?: string | null }) {
    const details: { field: string; reason: string }[] = [];
    const email = b.email.trim();
    if (!EMAIL_RE.test(email) || email.length > 254) details.push({ field: "email", reason: "must be a valid email address" });
    if (!USERNAME_RE.test(b.username)) details.push({ field: "username", reason: "1-64 letters, digits, dot, underscore or hyphen" });
    const password = passwordProblem(b.password, CONSOLE_PASSWORDS);
    if (password) details.push(password);
    if (b.display_name != null && b.display_name.length > 200) details.push({ field: "display_name", reason: "at most 200 characters" });
    if (details.length) throw badRequest("Sign-up validation failed", details);
    return { email: email.toLowerCase(), username: b.username };
  }

  /** Creates an account; returns its id. Duplicate email/username: 400 (the spec's sign-up status set). */
  async createAccount(b: { email: string; username: string; password: string | null; display_name?: string | null; isOperator?: boolean; onlyWithoutOperator?: boolean }) {
    const hash = b.password === null ? null : await this.ctx.passwords.hash(b.password);
    const now = this.ctx.clock.iso();
    const id = uuid();
    const assertFree = async (db: Sql) => {
      const taken = await store.emailOrUsernameTaken(db, b.email, b.username);
      if (taken.email) throw new ApiError(400, "EMAIL_TAKEN", "An account with this email already exists", [{ field: "email", reason: "already registered" }]);
      if (taken.username) throw new ApiError(400, "USERNAME_TAKEN", "This username is taken", [{ field: "username", reason: "already taken" }]);
    };
    try {
      return await tx(this.ctx.db, async (t) => {
        // Setup (while no operator exists): decided inside the write transaction so two racing setups cannot both win.
        if (b.onlyWithoutOperator) {
          await store.lockSetup(t);
          if ((await store.countOperators(t)) > 0) throw new ApiError(400, "INVALID_SETUP_TOKEN", "Setup is already complete");
        }
        await assertFree(t);
        await store.insertAccount(t, {
          id,
          email: b.email,
          username: b.username,
          display_name: b.display_name ?? null,
          password_hash: hash,
          status: "active",
          is_operator: b.isOperator ? 1 : 0,
          created_at: now,
          updated_at: now,
        });
        await audit(t, this.ctx, { actor: { actor_type: "account", actor_id: id }, action: "account.create", target: { type: "account", id } });
        return id;
      });
    } catch (e) {
      // A concurrent sign-up took the address or name between the check and the insert (PostgreSQL): the same 400.
      if (isUniqueViolation(e)) await assertFree(this.ctx.db);
      throw e;
    }
  }

  async signup(b: { email: string; username: string; password: string; display_name?: string | null; session_duration?: unknown }, meta: RequestMeta) {
    const duration = parseSessionDuration(b.session_duration);
    const v = this.validateSignup(b);
    await this.assertSignupAllowed(this.ctx.db, v.email);
    // Before argon2: the hash is the cost a sign-up flood runs up.
    await this.strangers.admitSignup(meta.ip);
    const id = await this.createAccount({ ...b, ...v });
    return this.startSession(id, duration, meta);
  }

  /**
   * CONSOLE_SIGNUP decides who may create a console account on their own (sign-up, or a
   * first federated sign-in): anyone, an address some workspace has invited, or nobody.
   * The operator never goes through here: setup has its own one-time token.
   */
  async assertSignupAllowed(db: Sql, email: string): Promise<void> {
    const mode = this.ctx.config.consoleSignup;
    if (mode === "open") return;
    if (mode === "invite_only" && (await hasLiveInvitationFor(db, email.toLowerCase(), this.ctx.clock.nowMs()))) return;
    throw new ApiError(403, "SIGNUP_DISABLED", mode === "closed" ? "Console sign-up is closed on this instance" : "Console sign-up on this instance needs a workspace invitation for this address");
  }

  // --- sessions -----------------------------------------------------------------------

  async startSession(accountId: string, durationSec: number, meta: RequestMeta): Promise<TokenResponse> {
    const nowMs = this.ctx.clock.nowMs();
    const sessionId = uuid();
    const sessionExpSec = Math.floor(nowMs / 1000) + durationSec;
    const accessTtl = Math.min(this.ctx.config.accessTokenTtl, durationSec);
    const [access, refresh] = await Promise.all([
      this.tokens.access(accountId, sessionId, Math.floor(nowMs / 1000) + accessTtl),
      this.tokens.refresh(accountId, sessionId, sessionExpSec),
    ]);
    const session = {
      id: sessionId,
      account_id: accountId,
      created_at: this.ctx.clock.iso(),
      expires_at: sessionExpSec * 1000,
      ip: meta.ip,
      user_agent: meta.userAgent?.slice(0, 512) ?? null,
    };
    return openSession(this.ctx.db, store, session, { access, refresh, expiresIn: accessTtl });
  }

  async refresh(refreshToken: string): Promise<TokenResponse> {
    const invalid = () => new ApiError(400, "INVALID_TOKEN", "Refresh token is invalid or expired");
    const claims = await this.tokens.verifyRefresh(refreshToken);
    if (!claims) throw invalid();
    const h = hashToken(refreshToken);
    const nowMs = this.ctx.clock.nowMs();
    const row = await store.refreshToken(this.ctx.db, h);
    if (!row || row.revoked_at || row.expires_at <= nowMs) throw invalid();
    const account = await store.accountById(this.ctx.db, row.account_id);
    if (!account || account.status !== "active") throw invalid();
    const accessTtl = Math.min(this.ctx.config.accessTokenTtl, Math.floor((row.expires_at - nowMs) / 1000));
    const [access, next] = await Promise.all([
      this.tokens.access(row.account_id, row.session_id, Math.floor(nowMs / 1000) + accessTtl),
      this.tokens.refresh(row.account_id, row.session_id, Math.floor(row.expires_at / 1000)),
    ]);
    // A rotated token that came back revokes the whole session (kernel/identity/refresh-rotation.ts).
    if (!(await rotateRefresh(this.ctx.db, store, { presented: refreshToken, next, sessionId: row.session_id, now: this.ctx.clock.iso() }))) throw invalid();
    return { access_token: access, refresh_token: next, token_type: "Bearer", expires_in: accessTtl };
  }

  async logout(refreshToken: string) {
    const claims = await this.tokens.verifyRefresh(refreshToken);
    const row = claims ? await store.refreshToken(this.ctx.db, hashToken(refreshToken)) : null;
    if (!row) throw new ApiError(400, "INVALID_TOKEN", "Refresh token is invalid");
    await store.revokeSession(this.ctx.db, row.session_id, this.ctx.clock.iso());
  }

  async logoutSession(sessionId: string): Promise<void> {
    await store.revokeSession(this.ctx.db, sessionId, this.ctx.clock.iso());
  }

  // --- sign-in ------------------------------------------------------------------------

  /** The identity core's password sign-in (kernel/identity/password-signin.ts), then MFA or a session. */
  async signin(b: { identifier: string; password: string; session_duration?: unknown }, meta: RequestMeta): Promise<TokenResponse | MfaChallengeResponse> {
    const duration = parseSessionDuration(b.session_duration);
    const account = await provePassword(this.ctx, this.passwordRealm, b, meta);
    // With an enabled factor the password only earns a challenge (audited there); no session yet.
    const challenge = await this.mfa?.challengeFor(account.id, "password", duration, meta);
    if (challenge) return challenge;
    await audit(this.ctx.db, this.ctx, { actor: { actor_type: "account", actor_id: account.id }, action: "account.signin", meta });
    return this.startSession(account.id, duration, meta);
  }

  // --- password reset -------------------------------------------------------------------

  private codeHash(code: string) {
    return createHmac("sha256", this.resetKey).update(code).digest("hex");
  }

  /**
   * Always answers the same way. The lookup, code generation and mail enqueue run after the
   * response is on its way, so neither body nor timing depends on whether the email exists,
   * and a mail outage cannot turn into an error. Requests are limited per client address
   * (429 with Retry-After: it says nothing about the recipient) and mails per recipient
   * (silently, counted for unknown addresses too).
   */
  async requestReset(email: string, meta: RequestMeta) {
    if (typeof email !== "string" || !EMAIL_RE.test(email.trim())) throw invalidField("email", "must be a valid email address");
    await this.strangers.admitMailFrom(meta.ip);
    const normalised = email.trim().toLowerCase();
    this.deferred.run("password reset mail", () => this.issueResetCode(normalised));
  }

  private async issueResetCode(email: string): Promise<void> {
    if (!(await this.strangers.mayMail("reset", email))) return;
    const account = await store.accountByEmail(this.ctx.db, email);
    if (!account || account.status === "blocked") return;
    let code = "";
    let hash = "";
    // Codes are unique among all issued codes, so a code identifies exactly one reset.
    do {
      code = String(randomInt(0, 1_000_000)).padStart(6, "0");
      hash = this.codeHash(code);
    } while (await store.resetCodeInUse(this.ctx.db, hash));
    await tx(this.ctx.db, async (t) => {
      const now = this.ctx.clock.nowMs();
      await store.insertPasswordReset(t, {
        id: uuid(),
        account_id: account.id,
        code_hash: hash,
        created_at: new Date(now).toISOString(),
        expires_at: now + RESET_TTL_MS,
      });
      await this.ctx.mailer.enqueue(t, {
        to: account.email,
        subject: "Your Bunker password reset code",
        text: `Your password reset code is ${code}.\n\nIt expires in 15 minutes. If you did not ask for it, ignore this mail.`,
      });
    });
  }

  /**
   * The code alone identifies the reset, so guessing is limited per client address:
   * 5 wrong codes per 15 minutes (ADDRESS_LIMITS.consoleReset), then 429 with Retry-After.
   * Codes expire after 15 minutes and are single use.
   */
  async resetPassword(b: { token: string; new_password: string }, meta: RequestMeta) {
    if (!/^\d{6}$/.test(b.token)) throw invalidField("token", "must be the 6-digit code from the email");
    const password = passwordProblem(b.new_password, CONSOLE_PASSWORDS, "new_password");
    if (password) throw invalidField(password.field, password.reason);
    await this.resetGuesses.admit(meta.ip, "Too many wrong reset codes; try again later");
    const row = await store.liveResetByCode(this.ctx.db, this.codeHash(b.token), this.ctx.clock.nowMs());
    if (!row) {
      await this.resetGuesses.failed(meta.ip);
      throw new ApiError(400, "INVALID_TOKEN", "Reset code is invalid or expired");
    }
    const hash = await this.ctx.passwords.hash(b.new_password);
    const done = await tx(this.ctx.db, async (t) => {
      if (!(await store.consumeReset(t, row.id, this.ctx.clock.iso()))) return false;
      await store.setPassword(t, row.account_id, hash, this.ctx.clock.iso());
      // The code reached the address: it is proven (federated sign-in may now link by it).
      await markEmailVerified(t, row.account_id, this.ctx.clock.iso());
      await store.revokeAllSessions(t, row.account_id, this.ctx.clock.iso());
      await audit(t, this.ctx, { actor: { actor_type: "account", actor_id: row.account_id }, action: "account.password_reset", meta });
      return true;
    });
    if (!done) throw new ApiError(400, "INVALID_TOKEN", "Reset code is invalid or expired");
  }

  // --- operator -----------------------------------------------------------------------

  /** Operator status changes. Anything but active revokes every session at once. */
  setStatus(operatorId: string, accountId: string, status: store.AccountRow["status"], meta: RequestMeta) {
    return tx(this.ctx.db, async (t) => {
      const acc = await store.accountById(t, accountId);
      if (!acc) throw notFound("Account");
      if (acc.id === operatorId && status !== "active") throw badRequest("Operators cannot change their own status", [{ field: "account_id", reason: "is you" }]);
      await store.setAccountStatus(t, accountId, status, this.ctx.clock.iso());
      if (status !== "active") await store.revokeAllSessions(t, accountId, this.ctx.clock.iso());
      await audit(t, this.ctx, { actor: { actor_type: "account", actor_id: operatorId }, action: `account.${status === "active" ? "reactivate" : status === "blocked" ? "block" : status === "suspended" ? "suspend" : "deactivate"}`, target: { type: "account", id: accountId }, meta });
      return { ...(await store.accountById(t, accountId))! };
    });
  }
}
