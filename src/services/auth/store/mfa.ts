/** SQL for MFA factors, sign-in challenges and recovery codes. */
import type { Db } from "../../../core/db";

export type FactorType = "totp" | "email";

export interface FactorRow {
  id: string;
  app_id: string;
  user_id: string;
  type: FactorType;
  name: string | null;
  /** TOTP: the seed; email (while pending): the confirmation secret. Encrypted with the secret box. */
  secret_enc: string | null;
  email: string | null;
  confirmed_at: string | null;
  disabled_at: string | null;
  last_step: number | null;
  created_at: string;
}

export interface ChallengeRow {
  id: string;
  app_id: string;
  user_id: string;
  tenant_id: string | null;
  created_at: string;
  expires_at: number;
  consumed_at: string | null;
  failures: number;
  locked_at: string | null;
  code_factor_id: string | null;
  code_hash: string | null;
  code_expires_at: number | null;
  sends: number;
  last_send_at: number | null;
  /** JSON amr of the first factor (federated sign-in); NULL for a password sign-in. */
  first_amr: string | null;
}

// --- factors -----------------------------------------------------------------------------

export function insertFactor(db: Db, f: FactorRow) {
  db.query(
    `INSERT INTO auth_mfa_factors (id, app_id, user_id, type, name, secret_enc, email, confirmed_at, disabled_at, last_step, created_at)
     VALUES ($id, $app_id, $user_id, $type, $name, $secret_enc, $email, $confirmed_at, $disabled_at, $last_step, $created_at)`,
  ).run(f as any);
}

/** A factor of one user of one App (whatever its state), or null. */
export const factorOf = (db: Db, appId: string, userId: string, id: string) =>
  db.query<FactorRow, [string, string, string]>("SELECT * FROM auth_mfa_factors WHERE app_id = ? AND user_id = ? AND id = ?").get(appId, userId, id);

/** Keyset page of a user's factors in creation (id) order. */
export const listFactors = (db: Db, appId: string, userId: string, after: string | null, limit: number) =>
  db
    .query<FactorRow, [string, string, string, number]>("SELECT * FROM auth_mfa_factors WHERE app_id = ? AND user_id = ? AND id > ? ORDER BY id LIMIT ?")
    .all(appId, userId, after ?? "", limit);

/** Enabled = confirmed and not disabled. */
export const enabledFactors = (db: Db, appId: string, userId: string) =>
  db
    .query<FactorRow, [string, string]>("SELECT * FROM auth_mfa_factors WHERE app_id = ? AND user_id = ? AND confirmed_at IS NOT NULL AND disabled_at IS NULL ORDER BY id")
    .all(appId, userId);

/** Confirms a pending factor (drops the email confirmation secret); 0 when it is no longer pending. */
export const confirmFactor = (db: Db, id: string, now: string, clearSecret: boolean) =>
  db
    .query(
      `UPDATE auth_mfa_factors SET confirmed_at = ?, secret_enc = CASE WHEN ? THEN NULL ELSE secret_enc END
       WHERE id = ? AND confirmed_at IS NULL AND disabled_at IS NULL`,
    )
    .run(now, clearSecret ? 1 : 0, id).changes;

export const disableFactor = (db: Db, id: string, now: string) =>
  db.query("UPDATE auth_mfa_factors SET disabled_at = ? WHERE id = ? AND disabled_at IS NULL").run(now, id).changes;

/** A pending factor that can no longer be confirmed; never used for a confirmed one. */
export const deletePendingFactor = (db: Db, id: string) =>
  db.query("DELETE FROM auth_mfa_factors WHERE id = ? AND confirmed_at IS NULL").run(id).changes;

/** Pending factors created before `before` (ISO): their confirmation window has passed. */
export const deleteStalePending = (db: Db, userId: string, before: string) =>
  db.query("DELETE FROM auth_mfa_factors WHERE user_id = ? AND confirmed_at IS NULL AND created_at < ?").run(userId, before).changes;

/**
 * Claims a TOTP time step for a factor: succeeds (1) only when the step is later than every
 * step accepted before, so one code (or an older one) never works twice.
 */
export const claimStep = (db: Db, id: string, step: number) =>
  db.query("UPDATE auth_mfa_factors SET last_step = ?1 WHERE id = ?2 AND (last_step IS NULL OR last_step < ?1)").run(step, id).changes;

// --- challenges --------------------------------------------------------------------------

export function insertChallenge(db: Db, c: Pick<ChallengeRow, "id" | "app_id" | "user_id" | "tenant_id" | "created_at" | "expires_at"> & { first_amr?: string | null }) {
  db.query(
    `INSERT INTO auth_mfa_challenges (id, app_id, user_id, tenant_id, created_at, expires_at, first_amr)
     VALUES ($id, $app_id, $user_id, $tenant_id, $created_at, $expires_at, $first_amr)`,
  ).run({ ...c, first_amr: c.first_amr ?? null } as any);
}

export const challengeById = (db: Db, appId: string, id: string) =>
  db.query<ChallengeRow, [string, string]>("SELECT * FROM auth_mfa_challenges WHERE app_id = ? AND id = ?").get(appId, id);

/** Expired challenges of a user, once they are of no further use (kept a while for support). */
export const purgeChallenges = (db: Db, userId: string, beforeMs: number) =>
  db.query("DELETE FROM auth_mfa_challenges WHERE user_id = ? AND expires_at < ?").run(userId, beforeMs).changes;

/**
 * Stores a new emailed code when the challenge is live and the send limits allow it (fewer
 * than `maxSends` sends, the last one at least `spacingMs` ago). 0 when refused; the
 * caller re-reads the row to say why. One statement, so two racing sends can't both pass.
 */
export const recordSend = (db: Db, id: string, factorId: string, codeHash: string, codeExpiresAt: number, now: number, maxSends: number, spacingMs: number) =>
  db
    .query(
      `UPDATE auth_mfa_challenges
       SET code_factor_id = ?2, code_hash = ?3, code_expires_at = ?4, sends = sends + 1, last_send_at = ?5
       WHERE id = ?1 AND consumed_at IS NULL AND locked_at IS NULL AND expires_at > ?5
         AND sends < ?6 AND (last_send_at IS NULL OR last_send_at <= ?5 - ?7)`,
    )
    .run(id, factorId, codeHash, codeExpiresAt, now, maxSends, spacingMs).changes;

/** Counts a wrong answer and locks at `maxFailures`; returns the new failure count, null when the challenge was no longer open. */
export const recordFailure = (db: Db, id: string, nowIso: string, maxFailures: number) =>
  db
    .query<{ failures: number }, [string, string, number]>(
      `UPDATE auth_mfa_challenges
       SET failures = failures + 1, locked_at = CASE WHEN failures + 1 >= ?3 THEN ?2 ELSE NULL END
       WHERE id = ?1 AND consumed_at IS NULL AND locked_at IS NULL
       RETURNING failures`,
    )
    .get(id, nowIso, maxFailures)?.failures ?? null;

/** Marks the challenge used; 0 when it was already consumed, locked or expired (lost a race). */
export const consumeChallenge = (db: Db, id: string, nowIso: string, nowMs: number) =>
  db
    .query("UPDATE auth_mfa_challenges SET consumed_at = ?, code_hash = NULL WHERE id = ? AND consumed_at IS NULL AND locked_at IS NULL AND expires_at > ?")
    .run(nowIso, id, nowMs).changes;

// --- recovery codes ----------------------------------------------------------------------

/** Replaces every recovery code of the user (used or not) with the given hashes. */
export function replaceRecoveryCodes(db: Db, userId: string, hashes: { id: string; hash: string }[], now: string) {
  db.query("DELETE FROM auth_recovery_codes WHERE user_id = ?").run(userId);
  const ins = db.query("INSERT INTO auth_recovery_codes (id, user_id, code_hash, used_at, created_at) VALUES (?, ?, ?, NULL, ?)");
  for (const h of hashes) ins.run(h.id, userId, h.hash, now);
}

/** Marks an unused code used; 1 when it was the user's and still unused. */
export const useRecoveryCode = (db: Db, userId: string, hash: string, now: string) =>
  db.query("UPDATE auth_recovery_codes SET used_at = ? WHERE user_id = ? AND code_hash = ? AND used_at IS NULL").run(now, userId, hash).changes;

export const unusedRecoveryCodes = (db: Db, userId: string) =>
  db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM auth_recovery_codes WHERE user_id = ? AND used_at IS NULL").get(userId)?.n ?? 0;
