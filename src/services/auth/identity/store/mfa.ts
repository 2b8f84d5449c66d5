/** SQL for MFA factors, sign-in challenges and recovery codes. */
import type { Sql } from "../../../../core/db";
import * as codes from "../../../../core/store/recovery-codes";

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

export async function insertFactor(db: Sql, f: FactorRow): Promise<void> {
  await db.run(
    `INSERT INTO auth_mfa_factors (id, app_id, user_id, type, name, secret_enc, email, confirmed_at, disabled_at, last_step, created_at)
     VALUES ($id, $app_id, $user_id, $type, $name, $secret_enc, $email, $confirmed_at, $disabled_at, $last_step, $created_at)`,
    { ...f },
  );
}

/** A factor of one user of one App (whatever its state), or null. */
export const factorOf = (db: Sql, appId: string, userId: string, id: string) =>
  db.get<FactorRow>("SELECT * FROM auth_mfa_factors WHERE app_id = ? AND user_id = ? AND id = ?", appId, userId, id);

/** Keyset page of a user's factors in creation (id) order. */
export const listFactors = (db: Sql, appId: string, userId: string, after: string | null, limit: number) =>
  db.all<FactorRow>("SELECT * FROM auth_mfa_factors WHERE app_id = ? AND user_id = ? AND id > ? ORDER BY id LIMIT ?", appId, userId, after ?? "", limit);

/** Enabled = confirmed and not disabled. */
export const enabledFactors = (db: Sql, appId: string, userId: string) =>
  db.all<FactorRow>("SELECT * FROM auth_mfa_factors WHERE app_id = ? AND user_id = ? AND confirmed_at IS NOT NULL AND disabled_at IS NULL ORDER BY id", appId, userId);

/** Confirms a pending factor (drops the email confirmation secret); 0 when it is no longer pending. */
export const confirmFactor = (db: Sql, id: string, now: string, clearSecret: boolean) =>
  db.run(
    `UPDATE auth_mfa_factors SET confirmed_at = ?, secret_enc = CASE WHEN ? = 1 THEN NULL ELSE secret_enc END
     WHERE id = ? AND confirmed_at IS NULL AND disabled_at IS NULL`,
    now,
    clearSecret ? 1 : 0,
    id,
  );

export const disableFactor = (db: Sql, id: string, now: string) => db.run("UPDATE auth_mfa_factors SET disabled_at = ? WHERE id = ? AND disabled_at IS NULL", now, id);

/** A pending factor that can no longer be confirmed; never used for a confirmed one. */
export const deletePendingFactor = (db: Sql, id: string) => db.run("DELETE FROM auth_mfa_factors WHERE id = ? AND confirmed_at IS NULL", id);

/** Pending factors created before `before` (ISO): their confirmation window has passed. */
export const deleteStalePending = (db: Sql, userId: string, before: string) =>
  db.run("DELETE FROM auth_mfa_factors WHERE user_id = ? AND confirmed_at IS NULL AND created_at < ?", userId, before);

/**
 * Claims a TOTP time step for a factor: succeeds (1) only when the step is later than every
 * step accepted before, so one code (or an older one) never works twice.
 */
export const claimStep = (db: Sql, id: string, step: number) =>
  db.run("UPDATE auth_mfa_factors SET last_step = ?1 WHERE id = ?2 AND (last_step IS NULL OR last_step < ?1)", step, id);

// --- challenges --------------------------------------------------------------------------

export async function insertChallenge(
  db: Sql,
  c: Pick<ChallengeRow, "id" | "app_id" | "user_id" | "tenant_id" | "created_at" | "expires_at"> & { first_amr?: string | null },
): Promise<void> {
  await db.run(
    `INSERT INTO auth_mfa_challenges (id, app_id, user_id, tenant_id, created_at, expires_at, first_amr)
     VALUES ($id, $app_id, $user_id, $tenant_id, $created_at, $expires_at, $first_amr)`,
    { ...c, first_amr: c.first_amr ?? null },
  );
}

export const challengeById = (db: Sql, appId: string, id: string) => db.get<ChallengeRow>("SELECT * FROM auth_mfa_challenges WHERE app_id = ? AND id = ?", appId, id);

/** Expired challenges of a user, once they are of no further use (kept a while for support). */
export const purgeChallenges = (db: Sql, userId: string, beforeMs: number) =>
  db.run("DELETE FROM auth_mfa_challenges WHERE user_id = ? AND expires_at < ?", userId, beforeMs);

/**
 * Stores a new emailed code when the challenge is live and the send limits allow it (fewer
 * than `maxSends` sends, the last one at least `spacingMs` ago). 0 when refused; the
 * caller re-reads the row to say why. One statement, so two racing sends can't both pass.
 */
export const recordSend = (db: Sql, id: string, factorId: string, codeHash: string, codeExpiresAt: number, now: number, maxSends: number, spacingMs: number) =>
  db.run(
    `UPDATE auth_mfa_challenges
     SET code_factor_id = ?2, code_hash = ?3, code_expires_at = ?4, sends = sends + 1, last_send_at = ?5
     WHERE id = ?1 AND consumed_at IS NULL AND locked_at IS NULL AND expires_at > ?5
       AND sends < ?6 AND (last_send_at IS NULL OR last_send_at + ?7 <= ?5)`,
    id,
    factorId,
    codeHash,
    codeExpiresAt,
    now,
    maxSends,
    spacingMs,
  );

/** Counts a wrong answer and locks at `maxFailures`; returns the new failure count, null when the challenge was no longer open. */
export const recordFailure = async (db: Sql, id: string, nowIso: string, maxFailures: number) =>
  (
    await db.get<{ failures: number }>(
      `UPDATE auth_mfa_challenges
       SET failures = failures + 1, locked_at = CASE WHEN failures + 1 >= ?3 THEN ?2 ELSE NULL END
       WHERE id = ?1 AND consumed_at IS NULL AND locked_at IS NULL
       RETURNING failures`,
      id,
      nowIso,
      maxFailures,
    )
  )?.failures ?? null;

/** Marks the challenge used; 0 when it was already consumed, locked or expired (lost a race). */
export const consumeChallenge = (db: Sql, id: string, nowIso: string, nowMs: number) =>
  db.run("UPDATE auth_mfa_challenges SET consumed_at = ?, code_hash = NULL WHERE id = ? AND consumed_at IS NULL AND locked_at IS NULL AND expires_at > ?", nowIso, id, nowMs);

/**
 * Serialises the transactions that count or accept a user's MFA answers, so the per-user
 * streak and lock (rate limiter rows) are read and written one transaction at a time. On
 * SQLite every write transaction already runs alone; on PostgreSQL this locks the user's row
 * until commit (NO KEY UPDATE: inserts referencing the user, e.g. new sessions, still pass).
 */
export async function lockUserForMfa(t: Sql, userId: string): Promise<void> {
  if (t.engine === "postgres") await t.get("SELECT 1 AS x FROM auth_users WHERE id = ? FOR NO KEY UPDATE", userId);
}

// --- recovery codes (core/store/recovery-codes.ts) ------------------------------------------

const CODES = { table: "auth_recovery_codes", owner: "user_id" } as const;

/** Replaces every recovery code (used or not) with the given hashes. Run it in a transaction. */
export const replaceRecoveryCodes = (db: Sql, userId: string, hashes: { id: string; hash: string }[], now: string) => codes.replaceRecoveryCodes(db, CODES, userId, hashes, now);
/** Marks an unused code used; 1 when it was this owner's and still unused. */
export const useRecoveryCode = (db: Sql, userId: string, hash: string, now: string) => codes.useRecoveryCode(db, CODES, userId, hash, now);
export const unusedRecoveryCodes = (db: Sql, userId: string) => codes.unusedRecoveryCodes(db, CODES, userId);
