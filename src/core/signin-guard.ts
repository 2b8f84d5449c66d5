/**
 * The sign-in throttle both the platform and Auth Apps follow (spec: sign-in rules 1-3):
 * a burst limit of 5 attempts per minute and a 15-minute lock after 4 failures, both keyed
 * purely by the submitted identifier, so they behave the same for unknown identifiers.
 * A lock also lands on the account itself, so its other identifier (email vs username)
 * cannot be used to go on guessing; that lock only shows after the password is proven,
 * as the same 401 every other failure gets.
 *
 * `ns` namespaces the counters (platform: "signin", an App: "auth:<app_id>:signin").
 */
import { MINUTE, SECOND } from "./clock";
import { tooMany } from "./errors";
import type { RateLimiter } from "./ratelimit";

export const SIGNIN_BURST = { limit: 5, windowMs: MINUTE };
export const SIGNIN_LOCK = { failures: 4, lockMs: 15 * MINUTE };

export class SigninGuard {
  constructor(
    private readonly rl: RateLimiter,
    private readonly nowMs: () => number,
    private readonly ns: string,
  ) {}

  /** Counts the attempt; 429 TOO_MANY_ATTEMPTS on a burst or while the identifier is locked. */
  admit(identifier: string) {
    const burst = this.rl.hit(`${this.ns}:burst:${identifier}`, SIGNIN_BURST.limit, SIGNIN_BURST.windowMs);
    if (!burst.allowed) throw tooMany("Too many sign-in attempts; try again later", Math.ceil(burst.retryAfterMs / SECOND));
    const lockedUntil = this.rl.lockedUntil(`${this.ns}:lock:${identifier}`);
    if (lockedUntil) throw tooMany("Too many failed sign-in attempts; try again later", Math.ceil((lockedUntil - this.nowMs()) / SECOND));
  }

  /** A wrong password: the 4th failure locks the identifier (and the account, when there is one). */
  failed(identifier: string, accountId: string | null) {
    const failures = this.rl.recordFailure(`${this.ns}:fail:${identifier}`, SIGNIN_LOCK.lockMs);
    if (failures < SIGNIN_LOCK.failures) return;
    const until = this.nowMs() + SIGNIN_LOCK.lockMs;
    this.rl.lock(`${this.ns}:lock:${identifier}`, until);
    if (accountId) this.rl.lock(`${this.ns}:account:${accountId}`, until);
    this.rl.clearFailures(`${this.ns}:fail:${identifier}`);
  }

  /** After the password is proven: whether the account is locked through another identifier. */
  accountLocked(accountId: string) {
    return this.rl.lockedUntil(`${this.ns}:account:${accountId}`) !== null;
  }

  succeeded(identifier: string) {
    this.rl.clearFailures(`${this.ns}:fail:${identifier}`);
  }
}
