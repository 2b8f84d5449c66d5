/**
 * Limits on what a stranger can make the server do at someone else's cost (issue 29): create
 * accounts (each one an argon2 hash) and send mail. Shared by the console and every Auth App;
 * the numbers are settings (config.strangerLimits, docs/operations.md "Configuration"), per sliding hour.
 *
 * Sign-ups, counted before the password is hashed:
 * - per client address (SIGNUPS_PER_ADDRESS_PER_HOUR), all Apps together: one address flooding
 *   several Apps costs the same CPU as flooding one; console sign-ups are counted apart;
 * - per App from every address (SIGNUPS_PER_APP_PER_HOUR; the console counts as one App).
 * The address is checked first: an address over its limit takes nothing from the App's budget.
 *
 * Mail (reset codes, verification codes, MFA codes and enrolments, invites):
 * - per client address and App (MAIL_PER_ADDRESS_PER_HOUR): 429 RATE_LIMITED with Retry-After,
 *   which says nothing about the recipient;
 * - per recipient, kind of mail and App (MAIL_PER_RECIPIENT_PER_HOUR): each kind apart, so a
 *   flood of reset requests does not also silence a user's sign-in codes. Where the answer must
 *   not depend on the recipient (a reset, a sign-up's verification mail, an MFA enrolment to an
 *   address not proven yet) the mail is dropped silently and logged at info with the address
 *   masked; where the route already tells the caller about the recipient (admin sends and
 *   invites, the sign-in code of a user who proved the password) the answer is 429 RATE_LIMITED.
 *
 * Counts are the limiter's sliding hour (core/ratelimit.ts hit), taken before the caller's
 * transaction (the limiter writes on its own connection): an attempt that fails afterwards still
 * counts. Every attempt is counted, also for unknown recipients, so no count is an account
 * oracle. A limit of 0 is off.
 */
import { HOUR } from "../../core/clock";
import { tooMany } from "../../core/errors";
import { addressKey, retryAfterSec } from "../../core/signin-guard";
import type { AppContext } from "../../context";

/** Kinds of mail counted apart per recipient. */
export type MailKind = "reset" | "verification" | "mfa" | "invite";

/** "a***@example.com": enough for an operator to match a complaint, not a list of addresses. */
export function maskAddress(email: string): string {
  const at = email.lastIndexOf("@");
  return `${email.slice(0, Math.min(1, Math.max(0, at)))}***${at >= 0 ? email.slice(at) : ""}`;
}

export class StrangerLimits {
  /**
   * `scope`: "console", or an App's "auth:<app_id>". Sign-ups of Apps share the address key
   * "auth" (all Apps together).
   */
  constructor(
    private readonly ctx: AppContext,
    private readonly scope: string,
  ) {}

  private get limits() {
    return this.ctx.config.strangerLimits;
  }

  private async take(key: string, limit: number, message: string): Promise<void> {
    if (limit === 0) return;
    const hit = await this.ctx.ratelimit.hit(key, limit, HOUR);
    if (!hit.allowed) throw tooMany(message, retryAfterSec(hit.retryAfterMs), "RATE_LIMITED");
  }

  /**
   * Before hashing a public sign-up's password: 429 RATE_LIMITED with Retry-After (the wait
   * until both limits have room) over either limit. Both are judged before either is counted,
   * so an App at its limit takes nothing from the address's allowance. (A limit above the
   * limiter's exact ceiling is a window counter that waitMs cannot read: its hit alone judges.)
   */
  async admitSignup(ip: string | null): Promise<void> {
    const { signupsPerAddress, signupsPerApp } = this.limits;
    const address = { key: `${this.scope === "console" ? "console" : "auth"}:signup:addr:${addressKey(ip)}`, limit: signupsPerAddress, message: `Too many sign-ups from this address: at most ${signupsPerAddress} an hour` };
    const app = { key: `${this.scope}:signup`, limit: signupsPerApp, message: `Too many sign-ups right now: at most ${signupsPerApp} an hour; try again later` };
    const limits = [address, app].filter((l) => l.limit > 0);
    const waits = await Promise.all(limits.map((l) => this.ctx.ratelimit.waitMs(l.key, l.limit, HOUR)));
    const longest = Math.max(0, ...waits);
    if (longest > 0) throw tooMany(limits[waits.indexOf(longest)].message, retryAfterSec(longest), "RATE_LIMITED");
    for (const l of limits) await this.take(l.key, l.limit, l.message);
  }

  /** A request that mails someone: 429 RATE_LIMITED with Retry-After past the address's limit. */
  admitMailFrom(ip: string | null): Promise<void> {
    return this.take(`${this.scope}:mail:addr:${addressKey(ip)}`, this.limits.mailPerAddress, `Too many mails requested from this address: at most ${this.limits.mailPerAddress} an hour`);
  }

  /** Counts a mail of `kind` to `to`; false (logged, recipient masked) when the recipient has had enough this hour. */
  async mayMail(kind: MailKind, to: string): Promise<boolean> {
    const limit = this.limits.mailPerRecipient;
    if (limit === 0 || (await this.ctx.ratelimit.hit(this.recipientKey(kind, to), limit, HOUR)).allowed) return true;
    this.ctx.log.info("mail not sent: recipient limit", { scope: this.scope, kind, to: maskAddress(to), limit });
    return false;
  }

  /** Counts a mail of `kind` to `to`, or 429 RATE_LIMITED with Retry-After: for routes whose answer already names the recipient. */
  admitMailTo(kind: MailKind, to: string): Promise<void> {
    return this.take(this.recipientKey(kind, to), this.limits.mailPerRecipient, `Too many mails to this address: at most ${this.limits.mailPerRecipient} an hour`);
  }

  private recipientKey(kind: MailKind, to: string) {
    return `${this.scope}:mail-to:${kind}:${to.trim().toLowerCase()}`;
  }
}
