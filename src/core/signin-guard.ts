/**
 * Throttles against credential guessing, all numbers in one place.
 *
 * Per identifier (spec: sign-in rules 1-3), for the platform and every Auth App: a burst
 * limit of 5 attempts per minute and a 15-minute lock after 4 failures, both keyed purely
 * by the submitted identifier, so they behave the same for unknown identifiers. A lock also
 * lands on the account itself, so its other identifier (email vs username) cannot be used
 * to go on guessing; that lock only shows after the password is proven, as the same 401
 * every other failure gets.
 *
 * Per client address (ADDRESS_LIMITS), across identifiers: password spraying tries one
 * password on many accounts and never trips a per-identifier counter, so failures are also
 * counted per address, as Auth0's suspicious-IP throttling does. Only failures count (a
 * busy office signing in correctly is never throttled) and a success does not reset the
 * count (an attacker could interleave its own account). The window slides: the answer is
 * 429 TOO_MANY_ATTEMPTS until the oldest counted failure is `windowMs` old. The check runs
 * before any lookup, so it answers identically for registered and unknown identifiers.
 *
 * Every 429 carries Retry-After: the seconds until the request would be let through by
 * every limit that applies (the longest of them), measured on the injected clock.
 *
 * `ns` namespaces the counters (platform: "signin", an App: "auth:<app_id>:signin").
 */
import { MINUTE, SECOND } from "./clock";
import { tooMany } from "./errors";
import type { RateLimiter } from "./ratelimit";

export const SIGNIN_BURST = { limit: 5, windowMs: MINUTE };
export const SIGNIN_LOCK = { failures: 4, lockMs: 15 * MINUTE };

export interface AddressLimitSpec {
  failures: number;
  windowMs: number;
}

/**
 * Failures allowed per client address, across identifiers, in a sliding window. Sign-in,
 * MFA and code limits are counted separately, and each Auth App on its own (its users are
 * another customer's). 30 in 15 minutes is far above what people sharing an address mistype,
 * and caps a sprayer at 2,880 guesses a day per address instead of unlimited.
 */
export const ADDRESS_LIMITS = {
  /** Wrong passwords at console sign-in; at an App's sign-in. */
  signin: { failures: 30, windowMs: 15 * MINUTE },
  /** Wrong MFA codes and recovery codes at an App's MFA verify / recover, over all challenges. */
  mfa: { failures: 30, windowMs: 15 * MINUTE },
  /** Wrong email / phone verification codes and password-reset codes of an App, over all targets. */
  codes: { failures: 30, windowMs: 15 * MINUTE },
  /** Wrong console password-reset codes: the code alone names the reset, so far fewer guesses. */
  consoleReset: { failures: 5, windowMs: 15 * MINUTE },
} as const satisfies Record<string, AddressLimitSpec>;

/** Retry-After seconds for a wait in ms: rounded up, so a client that obeys it is let through. */
export const retryAfterSec = (ms: number) => Math.max(1, Math.ceil(ms / SECOND));

/**
 * The key of a client address. IPv4-mapped IPv6 counts as the IPv4 address; other IPv6
 * addresses count by their /64, because one host usually holds a whole /64 and could
 * otherwise rotate through 2^64 addresses. No address (a request handled in-process,
 * without a socket) is "unknown": such requests share one budget.
 */
export function addressKey(ip: string | null | undefined): string {
  if (!ip) return "unknown";
  const a = ip.trim().toLowerCase().replace(/%.*$/, "");
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(a);
  if (mapped) return mapped[1];
  if (!a.includes(":")) return a;
  const groups = ipv6Groups(a);
  return groups ? `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(":")}::/64` : a;
}

/** The 8 hexadecimal groups of an IPv6 address ("::" expanded, an embedded IPv4 tail as 2 groups), or null. */
function ipv6Groups(a: string): string[] | null {
  const halves = a.split("::");
  if (halves.length > 2) return null;
  const part = (s: string) => {
    if (!s) return [];
    const out = s.split(":");
    const last = out[out.length - 1];
    if (last.includes(".")) out.splice(-1, 1, "0", "0"); // the /64 never reaches the IPv4 tail
    return out;
  };
  const head = part(halves[0]);
  const tail = halves.length === 2 ? part(halves[1]) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array(Math.max(0, fill)).fill("0"), ...tail];
  return groups.length === 8 && groups.every((g) => /^[0-9a-f]{1,4}$/.test(g)) ? groups : null;
}

/** Failures from one client address across identifiers (ADDRESS_LIMITS), under a namespace. */
export class AddressLimit {
  constructor(
    private readonly rl: RateLimiter,
    private readonly ns: string,
    private readonly spec: AddressLimitSpec,
  ) {}

  private key(ip: string | null) {
    return `${this.ns}:addr:${addressKey(ip)}`;
  }

  /** How long until the address may try again; 0 when it may now. */
  waitMs(ip: string | null): Promise<number> {
    return this.rl.waitMs(this.key(ip), this.spec.failures, this.spec.windowMs);
  }

  /** 429 TOO_MANY_ATTEMPTS (Retry-After) while the address has no failures left. */
  async admit(ip: string | null, message: string): Promise<void> {
    const wait = await this.waitMs(ip);
    if (wait > 0) throw tooMany(message, retryAfterSec(wait));
  }

  async failed(ip: string | null): Promise<void> {
    await this.rl.hit(this.key(ip), this.spec.failures, this.spec.windowMs);
  }
}

export class SigninGuard {
  private readonly address: AddressLimit;

  constructor(
    private readonly rl: RateLimiter,
    private readonly nowMs: () => number,
    private readonly ns: string,
  ) {
    this.address = new AddressLimit(rl, ns, ADDRESS_LIMITS.signin);
  }

  /**
   * Lets an attempt through (counting it against the burst) or answers 429 TOO_MANY_ATTEMPTS:
   * while the identifier is locked, while the client address has used its failures, or on a
   * burst. A refused attempt is not counted, so waiting Retry-After always gets through.
   */
  async admit(identifier: string, ip: string | null): Promise<void> {
    const lockedUntil = await this.rl.lockedUntil(`${this.ns}:lock:${identifier}`);
    const blockedMs = Math.max(lockedUntil === null ? 0 : lockedUntil - this.nowMs(), await this.address.waitMs(ip));
    if (blockedMs > 0) {
      // The burst must have room too once the wait is over.
      const burstMs = await this.rl.waitMs(`${this.ns}:burst:${identifier}`, SIGNIN_BURST.limit, SIGNIN_BURST.windowMs);
      throw tooMany("Too many failed sign-in attempts; try again later", retryAfterSec(Math.max(blockedMs, burstMs)));
    }
    const burst = await this.rl.hit(`${this.ns}:burst:${identifier}`, SIGNIN_BURST.limit, SIGNIN_BURST.windowMs);
    if (!burst.allowed) throw tooMany("Too many sign-in attempts; try again later", retryAfterSec(burst.retryAfterMs));
  }

  /** A wrong password: counts against the address; the 4th failure locks the identifier (and the account, when there is one). */
  async failed(identifier: string, accountId: string | null, ip: string | null): Promise<void> {
    await this.address.failed(ip);
    const failures = await this.rl.recordFailure(`${this.ns}:fail:${identifier}`, SIGNIN_LOCK.lockMs);
    if (failures < SIGNIN_LOCK.failures) return;
    const until = this.nowMs() + SIGNIN_LOCK.lockMs;
    await this.rl.lock(`${this.ns}:lock:${identifier}`, until);
    if (accountId) await this.rl.lock(`${this.ns}:account:${accountId}`, until);
    await this.rl.clearFailures(`${this.ns}:fail:${identifier}`);
  }

  /** After the password is proven: whether the account is locked through another identifier. */
  async accountLocked(accountId: string): Promise<boolean> {
    return (await this.rl.lockedUntil(`${this.ns}:account:${accountId}`)) !== null;
  }

  succeeded(identifier: string): Promise<void> {
    return this.rl.clearFailures(`${this.ns}:fail:${identifier}`);
  }
}
