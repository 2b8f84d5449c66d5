/**
 * Contact verification codes and end-user password reset: 6-digit codes sent to an email
 * address (or handed to the caller for a phone number), stored as an HMAC bound to the
 * App, purpose and target.
 *
 * Rules (decisions where the spec is silent):
 * - One live code per (App, purpose, target): minting supersedes older codes, including the
 *   one mailed at sign-up. Codes live 15 minutes and are single use.
 * - Wrong codes are counted per (App, purpose, target): the 5th wrong code burns the live
 *   code and answers 429 TOO_MANY_ATTEMPTS; every later attempt, even with the right code,
 *   answers 429 until a new code is minted. Wrong codes 1-4 answer 400 INVALID_CODE, as
 *   does a target without a live code (so the public routes reveal nothing about accounts).
 * - Wrong codes are also counted per client address across targets (ADDRESS_LIMITS.codes,
 *   per App): past it every code check from that address answers 429 TOO_MANY_ATTEMPTS with
 *   Retry-After, before any lookup, so guessing spread over many targets is throttled too.
 * - request-verification (workspace API key, console session or M2M token with
 *   auth.verification.create): exactly one of email or phone. The code is returned to the
 *   caller, who delivers it; SMS is not built, so phone codes are always delivered by the
 *   caller. An email must be an address of a user of the App. A phone number (E.164) is
 *   either an existing phone contact or, with user_id, a number to add: it becomes a
 *   verified phone of that user when its code is verified (POST /auth/verify-phone).
 * - send-verification-email: the same, but the code is mailed and not returned. Past the
 *   client address's mail requests or the recipient's verification mails an hour (the answer
 *   already says whether the address is a user's): 429 RATE_LIMITED, nothing minted.
 * - Sign-up mails a code when the App's send_verification_email setting is on and mail is
 *   set up: an outbound relay (SMTP_RELAY_URL) or the App's own mail_from sender; past the
 *   recipient's verification mails an hour, silently none.
 * - Password reset (public): request-reset always answers 204 and does the lookup and the
 *   mail after responding; only the primary email of a user that is not blocked gets a
 *   code, at most MAIL_PER_RECIPIENT_PER_HOUR reset mails per address (further requests are
 *   dropped silently, counted for unknown addresses too). Past the client address's mail
 *   requests an hour: 429 RATE_LIMITED with Retry-After, which says nothing about the address.
 *   Limits: kernel/identity/stranger-limits.ts.
 *   The reset takes email + code (codes are per target), revokes every session, and marks
 *   the primary email verified: the code proved the user reads that mailbox.
 */
import { createHmac, randomInt } from "node:crypto";
import type { RequestMeta } from "../../../access/http";
import { DAY, MINUTE } from "../../../core/clock";
import { DeferredWork } from "../../../core/deferred";
import { tx, type Sql } from "../../../core/db";
import { ApiError, badRequest, invalidField, notFound, tooMany, type ErrorDetail } from "../../../core/errors";
import { ADDRESS_LIMITS, AddressLimit } from "../../../core/signin-guard";
import * as rateStore from "../../../core/store/ratelimit";
import { uuid } from "../../../core/ids";
import { deriveKey, safeEqual } from "../../../core/secrets";
import type { AppContext } from "../../../context";
import { StrangerLimits } from "../../../kernel/identity";
import type { AdminCaller } from "../apps/access";
import type { LoadedApp } from "../apps/service";
import { recordAuthAudit, type AuthActor } from "../audit/record";
import type { SessionService } from "./sessions";
import { isEmail } from "../apps/settings";
import type { SignupHook } from "./signin";
import * as codes from "./store/codes";
import * as users from "./store/users";
import type { UserView } from "./store/users";
import { checkPassword, publicUser, type EmitAuthEvent } from "./users";

export const CODE_TTL_MS = 15 * MINUTE;
export const MAX_WRONG_CODES = 5;
const E164 = /^\+[1-9]\d{6,14}$/;
const CODE_RE = /^\d{6}$/;

export type Channel = "email" | "phone";

export interface IssuedCode {
  id: string;
  channel: Channel;
  user_id: string | null;
  target_masked: string;
  expires_at: string;
}

export const maskEmail = (e: string) => {
  const at = e.lastIndexOf("@");
  return `${e.slice(0, Math.min(1, at))}***${e.slice(at)}`;
};
export const maskPhone = (p: string) => `${p.slice(0, 1)}${"*".repeat(Math.max(0, p.length - 5))}${p.slice(-4)}`;

const normEmail = (v: unknown, field = "email") => {
  const e = typeof v === "string" ? v.trim().toLowerCase() : "";
  if (!isEmail(e)) throw invalidField(field, "must be a valid email address");
  return e;
};
const normPhone = (v: unknown) => {
  const p = typeof v === "string" ? v.replace(/[\s().-]/g, "") : "";
  if (!E164.test(p)) throw invalidField("phone", "must be an E.164 number such as +14155550123");
  return p;
};
const normCode = (v: unknown) => {
  if (typeof v !== "string" || !CODE_RE.test(v.trim())) throw invalidField("code", "must be the 6-digit code");
  return v.trim();
};
const invalidCode = () => new ApiError(400, "INVALID_CODE", "The code is wrong, expired or already used");

export class VerificationService implements SignupHook {
  private readonly key: Uint8Array;
  /** Deferred reset mails still running: awaited by idle() in tests and at shutdown. */
  private readonly deferred: DeferredWork;

  constructor(
    private readonly ctx: AppContext,
    /** The parts of the Auth service this feature uses (AuthService passes itself). */
    private readonly auth: { sessions: SessionService },
    private readonly emit: EmitAuthEvent,
  ) {
    this.key = deriveKey(ctx.masterKey, "auth-contact-codes");
    this.deferred = new DeferredWork(ctx.log);
    ctx.scheduler.register({
      name: "auth.codes.purge",
      schedule: "0 41 * * * *",
      run: async () => {
        await codes.purgeCodes(ctx.db, ctx.clock.nowMs() - DAY);
      },
    });
  }

  idle() {
    return this.deferred.idle();
  }

  /** "Mail set up" for the sign-up code: an outbound relay, or a sender of the App's own. */
  mailSetUp(app: LoadedApp) {
    return !!this.ctx.config.smtpRelayUrl || !!app.settings.mail_from;
  }

  // --- codes ------------------------------------------------------------------------

  private hash(appId: string, purpose: codes.CodePurpose, target: string, code: string) {
    return createHmac("sha256", this.key).update(`${appId}\n${purpose}\n${target}\n${code}`).digest("hex");
  }

  private failKey = (appId: string, purpose: codes.CodePurpose, target: string) => `auth:${appId}:code-fail:${purpose}:${target}`;

  private addressLimit = (appId: string) => new AddressLimit(this.ctx.ratelimit, `auth:${appId}:codes`, ADDRESS_LIMITS.codes);

  private strangers = (app: LoadedApp) => new StrangerLimits(this.ctx, `auth:${app.id}`);

  /** Mints a fresh code for a target, superseding its older ones. Call inside the transaction that delivers it (`t`). */
  private async mint(t: Sql, app: LoadedApp, purpose: codes.CodePurpose, target: string, userId: string | null) {
    const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
    const now = this.ctx.clock.nowMs();
    const row: codes.CodeRow = {
      id: uuid(),
      app_id: app.id,
      user_id: userId,
      purpose,
      target,
      code_hash: this.hash(app.id, purpose, target, code),
      created_at: new Date(now).toISOString(),
      expires_at: now + CODE_TTL_MS,
      consumed_at: null,
      superseded_at: null,
    };
    await codes.supersedeCodes(t, app.id, purpose, target, row.created_at);
    await codes.insertCode(t, row);
    // A new code gets a fresh allowance of wrong guesses, in the same transaction (the
    // rate limiter itself writes on ctx.db, which a transaction may not use).
    await rateStore.clearFailures(t, this.failKey(app.id, purpose, target));
    return { row, code };
  }

  /**
   * The live code of a target when `code` matches it; otherwise 400, or 429 once the target
   * has had MAX_WRONG_CODES wrong codes (the 5th burns the live code). Every attempt is
   * counted before the code is compared (a right one is forgiven by clearFailures once it
   * is used), so guesses sent in parallel cannot all be compared before any is counted:
   * at most MAX_WRONG_CODES attempts per code are ever compared.
   */
  private async check(app: LoadedApp, purpose: codes.CodePurpose, target: string, code: string, meta: RequestMeta, action: string): Promise<codes.CodeRow> {
    const key = this.failKey(app.id, purpose, target);
    const address = this.addressLimit(app.id);
    await address.admit(meta.ip, "Too many wrong codes from this address; try again later");
    const locked = () => tooMany("Too many wrong codes: this code is no longer valid, request a new one");
    if ((await this.ctx.ratelimit.failures(key)) >= MAX_WRONG_CODES) throw locked();
    const n = await this.ctx.ratelimit.recordFailure(key, CODE_TTL_MS);
    if (n > MAX_WRONG_CODES) throw locked(); // sent in parallel with the guess that burnt the code
    const row = await codes.liveCode(this.ctx.db, app.id, purpose, target, this.ctx.clock.nowMs());
    if (row && safeEqual(row.code_hash, this.hash(app.id, purpose, target, code))) return row;
    await address.failed(meta.ip);
    const burnt = n >= MAX_WRONG_CODES;
    if (burnt && row) await codes.burnCode(this.ctx.db, row.id, this.ctx.clock.iso());
    await recordAuthAudit(this.ctx.db, this.ctx, app.id, {
      action,
      outcome: "failure",
      actor: { type: row?.user_id ? "user" : "anonymous", id: row?.user_id ?? null },
      meta,
      metadata: { reason: burnt ? "too_many_wrong_codes" : "invalid_code", wrong_codes: n },
    });
    throw burnt ? locked() : invalidCode();
  }

  private clearFailures(appId: string, purpose: codes.CodePurpose, target: string): Promise<void> {
    return this.ctx.ratelimit.clearFailures(this.failKey(appId, purpose, target));
  }

  private issued(row: codes.CodeRow, channel: Channel): IssuedCode {
    return {
      id: row.id,
      channel,
      user_id: row.user_id,
      target_masked: channel === "email" ? maskEmail(row.target) : maskPhone(row.target),
      expires_at: new Date(row.expires_at).toISOString(),
    };
  }

  private async mailCode(t: Sql, app: LoadedApp, to: string, code: string, what: "verification" | "password reset"): Promise<void> {
    await this.ctx.mailer.enqueue(t, {
      to,
      from: app.settings.mail_from ?? undefined,
      subject: `Your ${app.displayName} ${what} code`,
      text: `Your ${what} code is ${code}.\n\nIt expires in 15 minutes. If you did not ask for it, ignore this mail.`,
    });
  }

  // --- verification requests (server-side callers) ----------------------------------------

  /** The email contact to verify: by address, or the user's primary address; 404 when it is not in the App. */
  private async emailContact(app: LoadedApp, email: string | null, userId: string | null) {
    if (email === null) {
      const user = userId ? await users.userView(this.ctx.db, app.id, userId) : null;
      if (!user) throw notFound("User");
      if (!user.email) throw badRequest("This user has no email address", [{ field: "user_id", reason: "user has no email" }]);
      email = user.email;
    }
    const contact = await users.contactByValue(this.ctx.db, app.id, "email", email);
    if (!contact || (userId !== null && contact.user_id !== userId)) throw new ApiError(404, "NOT_FOUND", userId ? "The user has no such email address" : "No user of this App has this email address");
    return contact;
  }

  private async target(app: LoadedApp, b: { email?: string | null; phone?: string | null; user_id?: string | null }, allowPhone: boolean) {
    const hasEmail = b.email != null && b.email !== "";
    const hasPhone = allowPhone && b.phone != null && b.phone !== "";
    const userId = b.user_id != null && b.user_id !== "" ? b.user_id : null;
    if (allowPhone && hasEmail === hasPhone) {
      const reason = hasEmail ? "give exactly one of email or phone, not both" : "one of email or phone is required";
      throw badRequest("Exactly one of email or phone is required", [{ field: "email", reason }, { field: "phone", reason }]);
    }
    if (!allowPhone && !hasEmail && !userId) throw badRequest("email or user_id is required", [{ field: "email", reason: "email or user_id is required" }]);
    if (hasPhone) {
      const phone = normPhone(b.phone);
      const contact = await users.contactByValue(this.ctx.db, app.id, "phone", phone);
      if (contact && userId !== null && contact.user_id !== userId) throw new ApiError(409, "PHONE_TAKEN", "This phone number belongs to another user");
      if (!contact && userId === null) throw badRequest("user_id is required for a phone number no user has yet", [{ field: "user_id", reason: "required for a new phone number" }]);
      if (!contact && !(await users.userView(this.ctx.db, app.id, userId!))) throw notFound("User");
      return { channel: "phone" as const, purpose: "verify_phone" as const, target: phone, userId: contact?.user_id ?? userId };
    }
    const contact = await this.emailContact(app, hasEmail ? normEmail(b.email) : null, userId);
    return { channel: "email" as const, purpose: "verify_email" as const, target: contact.value.toLowerCase(), userId: contact.user_id };
  }

  /** Mints a code and hands it to the (server-side) caller, which delivers it. */
  async requestVerification(app: LoadedApp, caller: AdminCaller, b: { email?: string | null; phone?: string | null; user_id?: string | null }, meta: RequestMeta) {
    const to = await this.target(app, b, true);
    return tx(this.ctx.db, async (t) => {
      const { row, code } = await this.mint(t, app, to.purpose, to.target, to.userId);
      await this.auditIssue(t, app, caller.actor, "verification.request", row, to.channel, meta);
      return { ...this.issued(row, to.channel), code };
    });
  }

  /** Mints a code and mails it; the code itself is not returned. */
  async sendVerificationEmail(app: LoadedApp, caller: AdminCaller, b: { email?: string | null; user_id?: string | null }, meta: RequestMeta) {
    const to = await this.target(app, b, false);
    const limits = this.strangers(app);
    await limits.admitMailFrom(meta.ip);
    await limits.admitMailTo("verification", to.target);
    return tx(this.ctx.db, async (t) => {
      const { row, code } = await this.mint(t, app, to.purpose, to.target, to.userId);
      await this.mailCode(t, app, to.target, code, "verification");
      await this.auditIssue(t, app, caller.actor, "verification.send", row, to.channel, meta);
      const { id, target_masked, expires_at, user_id } = this.issued(row, to.channel);
      return { id, user_id, target_masked, expires_at };
    });
  }

  private auditIssue(t: Sql, app: LoadedApp, actor: AuthActor, action: string, row: codes.CodeRow, channel: Channel, meta: RequestMeta | null): Promise<void> {
    return recordAuthAudit(t, this.ctx, app.id, { action, actor, target: row.user_id ? { type: "user", id: row.user_id } : null, meta, metadata: { channel, code_id: row.id } });
  }

  /** Sign-up hook: mails a verification code when the App asks for it and mail is set up. */
  async afterSignup(app: LoadedApp, user: UserView): Promise<void> {
    if (!app.settings.send_verification_email || !this.mailSetUp(app) || !user.email || user.email_verified_at) return;
    try {
      if (!(await this.strangers(app).mayMail("verification", user.email))) return;
      await tx(this.ctx.db, async (t) => {
        const { row, code } = await this.mint(t, app, "verify_email", user.email!.toLowerCase(), user.id);
        await this.mailCode(t, app, user.email!, code, "verification");
        await this.auditIssue(t, app, { type: "system", id: null }, "verification.send", row, "email", null);
      });
    } catch (err) {
      // The account exists already: a mail problem must not turn the sign-up into an error.
      this.ctx.log.error("sign-up verification mail failed", { app_id: app.id, err: String(err) });
    }
  }

  // --- verification (public) ----------------------------------------------------------------

  async verifyEmail(app: LoadedApp, b: { email: string; code: string }, meta: RequestMeta) {
    const email = normEmail(b.email);
    const code = normCode(b.code);
    const row = await this.check(app, "verify_email", email, code, meta, "contact.verify");
    await tx(this.ctx.db, async (t) => {
      const contact = await users.contactByValue(t, app.id, "email", email);
      // The address moved to another user (or went away) since the code was minted.
      if (!contact || (row.user_id && contact.user_id !== row.user_id) || !(await codes.consumeCode(t, row.id, this.ctx.clock.iso()))) throw invalidCode();
      await this.markVerified(t, app, contact, meta, "email");
    });
    await this.clearFailures(app.id, "verify_email", email);
    return { verified: true as const };
  }

  async verifyPhone(app: LoadedApp, b: { phone: string; code: string }, meta: RequestMeta) {
    const phone = normPhone(b.phone);
    const code = normCode(b.code);
    const row = await this.check(app, "verify_phone", phone, code, meta, "contact.verify");
    await tx(this.ctx.db, async (t) => {
      const contact = await users.contactByValue(t, app.id, "phone", phone);
      if ((contact && row.user_id && contact.user_id !== row.user_id) || (!contact && !row.user_id)) throw invalidCode();
      if (!(await codes.consumeCode(t, row.id, this.ctx.clock.iso()))) throw invalidCode();
      if (contact) return this.markVerified(t, app, contact, meta, "phone");
      const now = this.ctx.clock.iso();
      const hasPhone = (await users.contactsOf(t, row.user_id!)).some((c) => c.kind === "phone");
      await users.insertContact(t, { id: uuid(), app_id: app.id, user_id: row.user_id!, kind: "phone", value: phone, is_primary: hasPhone ? 0 : 1, verified_at: now, created_at: now });
      await recordAuthAudit(t, this.ctx, app.id, { action: "contact.verify", actor: { type: "user", id: row.user_id }, target: { type: "user", id: row.user_id! }, meta, metadata: { channel: "phone", added: true } });
    });
    await this.clearFailures(app.id, "verify_phone", phone);
    return { verified: true as const };
  }

  /** Marks a contact verified (inside the caller's transaction); a newly verified email emits user.email_verified. */
  private async markVerified(t: Sql, app: LoadedApp, contact: users.ContactRow, meta: RequestMeta | null, channel: Channel): Promise<void> {
    if (contact.verified_at) return;
    await users.markContactVerified(t, contact.id, this.ctx.clock.iso());
    await recordAuthAudit(t, this.ctx, app.id, { action: "contact.verify", actor: { type: "user", id: contact.user_id }, target: { type: "user", id: contact.user_id }, meta, metadata: { channel, primary: !!contact.is_primary } });
    if (channel !== "email") return;
    const view = (await users.userView(t, app.id, contact.user_id))!;
    await this.emit(t, app.id, "user.email_verified", { ...publicUser(view), verified_email: contact.value });
  }

  // --- password reset (public) ---------------------------------------------------------

  /**
   * Always answers the same way: the lookup, the code and the mail happen after the
   * response, so neither status, body nor timing depends on whether the address is known,
   * and a mail outage cannot turn into an error.
   */
  async requestPasswordReset(app: LoadedApp, rawEmail: string, meta: RequestMeta) {
    const email = normEmail(rawEmail);
    await this.strangers(app).admitMailFrom(meta.ip);
    const m = { ip: meta.ip, userAgent: meta.userAgent }; // read now: the request is gone later
    this.deferred.run("auth password reset mail", () => this.issueResetCode(app, email, m), { app_id: app.id });
  }

  private async issueResetCode(app: LoadedApp, email: string, meta: RequestMeta): Promise<void> {
    // Counted for every address, known or not, so the limit is no oracle either.
    if (!(await this.strangers(app).mayMail("reset", email))) return;
    const contact = await users.contactByValue(this.ctx.db, app.id, "email", email);
    if (!contact || !contact.is_primary) return;
    const user = await users.userView(this.ctx.db, app.id, contact.user_id);
    if (!user || user.status === "blocked") return;
    await tx(this.ctx.db, async (t) => {
      const { row, code } = await this.mint(t, app, "password_reset", email, user.id);
      await this.mailCode(t, app, contact.value, code, "password reset");
      await recordAuthAudit(t, this.ctx, app.id, { action: "user.password.reset_request", actor: { type: "user", id: user.id }, target: { type: "user", id: user.id }, meta, metadata: { code_id: row.id } });
    });
  }

  async resetPassword(app: LoadedApp, b: { email: string; code: string; new_password: string }, meta: RequestMeta) {
    const email = normEmail(b.email);
    const code = normCode(b.code);
    const bad: ErrorDetail | null = typeof b.new_password === "string" ? checkPassword(app, b.new_password, "new_password") : { field: "new_password", reason: "is required" };
    if (bad) throw badRequest("Invalid new password", [bad]);
    const row = await this.check(app, "password_reset", email, code, meta, "user.password.reset");
    const user = row.user_id ? await users.userView(this.ctx.db, app.id, row.user_id) : null;
    if (!user || user.email?.toLowerCase() !== email) throw invalidCode();
    // argon2 runs outside the write lock; the code is consumed atomically afterwards.
    const hash = await this.ctx.passwords.hash(b.new_password);
    await tx(this.ctx.db, async (t) => {
      if (!(await codes.consumeCode(t, row.id, this.ctx.clock.iso()))) throw invalidCode();
      await users.updateUserFields(t, user.id, { password_hash: hash }, this.ctx.clock.iso());
      const revoked = await this.auth.sessions.revokeAll(t, user.id);
      await recordAuthAudit(t, this.ctx, app.id, { action: "user.password.reset", actor: { type: "user", id: user.id }, target: { type: "user", id: user.id }, meta, metadata: { sessions_revoked: revoked } });
      const contact = await users.contactByValue(t, app.id, "email", email);
      if (contact) await this.markVerified(t, app, contact, meta, "email");
    });
    await this.clearFailures(app.id, "password_reset", email);
  }
}
