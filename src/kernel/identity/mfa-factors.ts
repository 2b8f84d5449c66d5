/**
 * MFA factors and recovery codes, the rules every realm (console accounts, App users) shares;
 * the pure TOTP and recovery-code helpers are in core/totp.ts.
 *
 * - A factor is pending until confirmed, for `pendingTtlMs` (then it is dead and is cleaned
 *   up at the next enrolment); `confirmFailures` wrong confirmation codes delete it (429: enrol
 *   again). At most `enrolmentsPerHour` enrolments per owner.
 * - TOTP seeds are encrypted at rest with the secret box; a code is accepted for a step later
 *   than the factor's `last_step` only.
 * - Recovery codes are stored as HMACs under a key derived from the master key (one label per
 *   realm); regenerating replaces them all.
 */
import { createHmac } from "node:crypto";
import { DAY, HOUR, MINUTE } from "../../core/clock";
import type { Sql } from "../../core/db";
import { badRequest, conflict, notFound, tooMany } from "../../core/errors";
import { uuid } from "../../core/ids";
import { deriveKey } from "../../core/secrets";
import { retryAfterSec } from "../../core/signin-guard";
import { matchTotpStep, newRecoveryCodes } from "../../core/totp";
import type { AppContext } from "../../context";
import { wrongCode } from "./mfa-challenge";

/** The numbers both realms share; each realm adds its own (sends, step-up, its owner lock). */
export const MFA_RULES = {
  challengeTtlMs: 10 * MINUTE,
  maxFailures: 5,
  pendingTtlMs: 10 * MINUTE,
  confirmFailures: 5,
  enrolmentsPerHour: 10,
  recoveryCodes: 10,
  ownerStreakMs: DAY,
  ownerLockMs: 15 * MINUTE,
};

export type FactorStatus = "pending" | "active" | "disabled";

export const factorStatus = (f: { confirmed_at: string | null; disabled_at: string | null }): FactorStatus =>
  f.disabled_at ? "disabled" : f.confirmed_at ? "active" : "pending";

interface FactorSecret {
  secret_enc: string | null;
  last_step: number | null;
}

/**
 * A realm's factor rules. `recoveryKeyLabel` derives its recovery-code key; `keys` namespaces
 * its rate-limit keys ("platform", "auth:<app id>").
 */
export class MfaFactors {
  private readonly recoveryKey: Uint8Array;

  constructor(
    private readonly ctx: AppContext,
    recoveryKeyLabel: string,
  ) {
    this.recoveryKey = deriveKey(ctx.masterKey, recoveryKeyLabel);
  }

  seed(f: FactorSecret): Buffer {
    return Buffer.from(this.ctx.secretBox.decrypt(f.secret_enc!), "base64");
  }

  /** The accepted TOTP step for `code` (previous, current or next step, later than last_step), or null. */
  totpStep(f: FactorSecret, code: string): Promise<number | null> {
    return matchTotpStep(this.seed(f), code, this.ctx.clock.nowMs(), f.last_step);
  }

  recoveryHash(code: string): string {
    return createHmac("sha256", this.recoveryKey).update(code).digest("hex");
  }

  /** Fresh recovery codes through the realm's `replace`; every prior one stops working. Inside a transaction (`t`). */
  async newRecoveryCodes(t: Sql, replace: (t: Sql, hashes: { id: string; hash: string }[], now: string) => Promise<unknown>): Promise<string[]> {
    const codes = newRecoveryCodes(MFA_RULES.recoveryCodes);
    await replace(t, codes.map((c) => ({ id: uuid(), hash: this.recoveryHash(c) })), this.ctx.clock.iso());
    return codes;
  }

  /** 429 TOO_MANY_ENROLMENTS past the owner's enrolments an hour; otherwise counts this one. */
  async admitEnrolment(keys: string, ownerId: string): Promise<void> {
    const hit = await this.ctx.ratelimit.hit(`${keys}:mfa-enrol:${ownerId}`, MFA_RULES.enrolmentsPerHour, HOUR);
    if (!hit.allowed) throw tooMany("Too many MFA enrolments: try again later", retryAfterSec(hit.retryAfterMs), "TOO_MANY_ENROLMENTS");
  }

  /** 404 for a missing or disabled factor, 409 for a confirmed one, 400 once its confirmation window passed. */
  assertConfirmable(f: { confirmed_at: string | null; disabled_at: string | null; created_at: string } | null): asserts f {
    if (!f || f.disabled_at) throw notFound("MFA factor");
    if (f.confirmed_at) throw conflict("This factor is already confirmed", "FACTOR_ALREADY_CONFIRMED");
    if (Date.parse(f.created_at) + MFA_RULES.pendingTtlMs <= this.ctx.clock.nowMs()) throw badRequest("The enrolment has expired: enrol the factor again", undefined, "ENROLMENT_EXPIRED");
  }

  private confirmKey(keys: string, factorId: string) {
    return `${keys}:mfa-confirm:${factorId}`;
  }

  /**
   * A wrong confirmation code of a pending factor: `audit` records it with the count; the
   * last one allowed deletes the factor (429, enrol again), the others answer 400 INVALID_CODE.
   */
  async confirmFailure(keys: string, factorId: string, audit: (failures: number) => Promise<void>, deletePending: () => Promise<unknown>): Promise<never> {
    const key = this.confirmKey(keys, factorId);
    const n = await this.ctx.ratelimit.recordFailure(key, MFA_RULES.pendingTtlMs);
    await audit(n);
    if (n >= MFA_RULES.confirmFailures) {
      await deletePending();
      await this.ctx.ratelimit.clearFailures(key);
      throw tooMany("Too many wrong codes: enrol the factor again");
    }
    throw wrongCode(400);
  }

  /** A confirmed factor's wrong codes are forgotten. */
  confirmed(keys: string, factorId: string): Promise<void> {
    return this.ctx.ratelimit.clearFailures(this.confirmKey(keys, factorId));
  }
}
