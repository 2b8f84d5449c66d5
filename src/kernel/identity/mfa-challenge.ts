/**
 * The second step of a sign-in, one rule for every realm (console accounts, App users): the
 * challenge's lock-out and the owner's lock-out across challenges. Each realm keeps its own
 * tables and audit vocabulary and hands them in as an MfaRealm; which answer is right (TOTP,
 * emailed code, recovery code) stays with the realm.
 *
 * - Unknown, used or expired token: 400 INVALID_TOKEN. Wrong answer: 401 INVALID_CODE. The
 *   `maxFailures`th wrong answer locks the challenge: that answer and every later one is 429
 *   MFA_LOCKED; the owner signs in again.
 * - Across challenges: `ownerFailures` wrong answers of one owner without a success in between
 *   (each within `ownerStreakMs` of the previous) lock the owner's MFA sign-in for
 *   `ownerLockMs` (429 MFA_LOCKED with Retry-After, a right answer included), so signing in
 *   again does not buy endless guesses. A success ends the streak.
 * - Per client address: wrong answers count toward ADDRESS_LIMITS.mfa over any challenges;
 *   past it the realm's verify answers 429 TOO_MANY_ATTEMPTS before the token is looked at.
 *
 * The owner's streak and lock are rate-limiter rows, read and written through its store on
 * the transaction that counts or accepts an answer, after the realm serialised the owner's
 * transactions (lockOwner): guesses sent in parallel cannot slip past a lock that one of
 * them set.
 */
import { tx, type Sql } from "../../core/db";
import { ApiError, tooMany } from "../../core/errors";
import { isUuid } from "../../core/ids";
import { ADDRESS_LIMITS, AddressLimit, retryAfterSec } from "../../core/signin-guard";
import * as rateStore from "../../core/store/ratelimit";
import type { RequestMeta } from "../../access/http";
import type { AppContext } from "../../context";
import { refuseInactive } from "./password-signin";

export const invalidMfaToken = () => new ApiError(400, "INVALID_TOKEN", "The MFA token is invalid, used or expired: sign in again");
export const challengeLocked = () => new ApiError(429, "MFA_LOCKED", "Too many wrong codes for this sign-in: sign in again");
export const wrongCode = (status: 400 | 401) => new ApiError(status, "INVALID_CODE", "Wrong code");
const ownerLocked = (retryAfterMs: number) => tooMany("Too many wrong codes for this account: MFA sign-in is locked for 15 minutes", retryAfterSec(retryAfterMs), "MFA_LOCKED");

/** The columns every realm's challenge row has. */
export interface ChallengeState {
  id: string;
  expires_at: number;
  consumed_at: string | null;
  locked_at: string | null;
}

/** What a wrong answer did, for the realm's audit entries. */
export interface MfaFailure {
  /** The realm's action for the wrong answer (verify, recover ...). */
  action: string;
  /** The challenge's wrong answers so far. */
  failures: number;
  /** This answer locked the challenge. */
  challengeLocked: boolean;
  /** This answer locked the owner: the streak's length and the lock's end. */
  ownerLock: { failures: number; until: number } | null;
}

export interface MfaLockoutRules {
  maxFailures: number;
  ownerFailures: number;
  ownerStreakMs: number;
  ownerLockMs: number;
}

/** A realm's tables and vocabulary as the challenge rule needs them. */
export interface MfaRealm<C extends ChallengeState, O extends { status: string }> {
  /** The namespace of the owner's streak and lock keys: "platform", "auth:<app id>". */
  keys: string;
  /** The namespace of the client address's wrong answers. */
  addressKeys: string;
  rules: MfaLockoutRules;
  challengeById(db: Sql, id: string): Promise<C | null>;
  ownerId(ch: C): string;
  owner(db: Sql, ownerId: string): Promise<O | null>;
  /** Serialises the transactions that count or accept one owner's answers (a row lock on PostgreSQL). */
  lockOwner(t: Sql, ownerId: string): Promise<void>;
  /** Counts a wrong answer and locks the challenge at `maxFailures`; null when it was no longer open. */
  recordFailure(t: Sql, challengeId: string, nowIso: string, maxFailures: number): Promise<number | null>;
  /** The realm's audit entries of a counted wrong answer, on the transaction that counted it. */
  auditFailure(t: Sql, ch: C, failure: MfaFailure, meta: RequestMeta): Promise<void>;
}

export class MfaChallenges<C extends ChallengeState, O extends { status: string }> {
  private readonly addresses: AddressLimit;

  constructor(
    private readonly ctx: AppContext,
    private readonly realm: MfaRealm<C, O>,
  ) {
    this.addresses = new AddressLimit(ctx.ratelimit, realm.addressKeys, ADDRESS_LIMITS.mfa);
  }

  private ownerKeys(ownerId: string) {
    return { fail: `${this.realm.keys}:mfa-fail:${ownerId}`, lock: `${this.realm.keys}:mfa-lock:${ownerId}` };
  }

  /** 429 TOO_MANY_ATTEMPTS (Retry-After) once the caller's address has used its wrong answers. */
  admitAddress(meta: RequestMeta): Promise<void> {
    return this.addresses.admit(meta.ip, "Too many wrong codes from this address; try again later");
  }

  /** 429 MFA_LOCKED (Retry-After) while the owner's wrong answers across challenges hold the lock. On `t`. */
  private async assertOwnerUnlocked(t: Sql, ownerId: string): Promise<void> {
    const until = await rateStore.lockedUntil(t, this.ownerKeys(ownerId).lock, this.ctx.clock.nowMs());
    if (until) throw ownerLocked(until - this.ctx.clock.nowMs());
  }

  /** The open challenge behind a token, with its owner: 400 unknown/used/expired, 429 locked, 403 suspended/deactivated. */
  async open(token: string): Promise<{ ch: C; owner: O }> {
    const ch = isUuid(token) ? await this.realm.challengeById(this.ctx.db, token) : null;
    if (!ch || ch.consumed_at || ch.expires_at <= this.ctx.clock.nowMs()) throw invalidMfaToken();
    if (ch.locked_at) throw challengeLocked();
    const ownerId = this.realm.ownerId(ch);
    await this.assertOwnerUnlocked(this.ctx.db, ownerId);
    const owner = await this.realm.owner(this.ctx.db, ownerId);
    if (!owner || owner.status === "blocked") throw invalidMfaToken();
    refuseInactive(owner.status);
    return { ch, owner };
  }

  /**
   * Counts a wrong answer against the client address, the challenge and the owner (across
   * challenges) and throws: 401 INVALID_CODE, or 429 MFA_LOCKED when this one locked the
   * challenge or the owner.
   */
  async failure(ch: C, action: string, meta: RequestMeta): Promise<never> {
    await this.addresses.failed(meta.ip);
    const { rules } = this.realm;
    const ownerId = this.realm.ownerId(ch);
    const keys = this.ownerKeys(ownerId);
    const counted = await tx(this.ctx.db, async (t) => {
      // Already locked by a guess sent in parallel: answer the lock, count nothing more.
      await this.realm.lockOwner(t, ownerId);
      await this.assertOwnerUnlocked(t, ownerId);
      const failures = await this.realm.recordFailure(t, ch.id, this.ctx.clock.iso(), rules.maxFailures);
      if (failures === null) return null;
      const now = this.ctx.clock.nowMs();
      const streak = await rateStore.recordFailure(t, keys.fail, now, now + rules.ownerStreakMs);
      let ownerLock: MfaFailure["ownerLock"] = null;
      if (streak >= rules.ownerFailures) {
        ownerLock = { failures: streak, until: await rateStore.lock(t, keys.lock, now + rules.ownerLockMs) };
        await rateStore.clearFailures(t, keys.fail);
      }
      const failure = { action, failures, challengeLocked: failures >= rules.maxFailures, ownerLock };
      await this.realm.auditFailure(t, ch, failure, meta);
      return failure;
    });
    if (counted === null) {
      // Someone else finished or locked it meanwhile.
      if ((await this.realm.challengeById(this.ctx.db, ch.id))?.locked_at) throw challengeLocked();
      throw invalidMfaToken();
    }
    if (counted.ownerLock) throw ownerLocked(counted.ownerLock.until - this.ctx.clock.nowMs());
    if (counted.challengeLocked) throw challengeLocked();
    throw wrongCode(401);
  }

  /** Inside the transaction that accepts a right answer: the lock may have landed meanwhile; a success ends the streak. */
  async accept(t: Sql, ownerId: string): Promise<void> {
    await this.realm.lockOwner(t, ownerId);
    await this.assertOwnerUnlocked(t, ownerId);
    await rateStore.clearFailures(t, this.ownerKeys(ownerId).fail);
  }
}
