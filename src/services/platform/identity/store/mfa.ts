/** SQL of console accounts' MFA: TOTP factors, sign-in challenges and recovery codes (migration 0015). */
import type { Sql } from "../../../../core/db";
import * as codes from "../../../../core/store/recovery-codes";

export interface FactorRow {
  id: string;
  account_id: string;
  type: "totp";
  name: string | null;
  /** The TOTP seed (base64), encrypted with the secret box. */
  secret_enc: string;
  confirmed_at: string | null;
  disabled_at: string | null;
  last_step: number | null;
  created_at: string;
}

export interface ChallengeRow {
  id: string;
  account_id: string;
  /** password | oauth:<provider> */
  first_factor: string;
  session_duration: number;
  created_at: string;
  expires_at: number;
  consumed_at: string | null;
  failures: number;
  locked_at: string | null;
}

// PostgreSQL hands BIGINT back as text: the numeric columns are read through these.
const factor = (r: FactorRow | null): FactorRow | null => (r ? { ...r, last_step: r.last_step === null ? null : Number(r.last_step) } : null);
const challenge = (r: ChallengeRow | null): ChallengeRow | null =>
  r ? { ...r, expires_at: Number(r.expires_at), session_duration: Number(r.session_duration), failures: Number(r.failures) } : null;

// --- factors -----------------------------------------------------------------------------

export async function insertFactor(db: Sql, f: FactorRow): Promise<void> {
  await db.run(
    `INSERT INTO platform_mfa_factors (id, account_id, type, name, secret_enc, confirmed_at, disabled_at, last_step, created_at)
     VALUES ($id, $account_id, $type, $name, $secret_enc, $confirmed_at, $disabled_at, $last_step, $created_at)`,
    { ...f },
  );
}

/** One factor of the account, whatever its state; null for another account's. */
export const factorOf = async (db: Sql, accountId: string, id: string) =>
  factor(await db.get<FactorRow>("SELECT * FROM platform_mfa_factors WHERE account_id = ? AND id = ?", accountId, id));

/** Every factor of the account (all states), in creation order. */
export const factorsOf = async (db: Sql, accountId: string) =>
  (await db.all<FactorRow>("SELECT * FROM platform_mfa_factors WHERE account_id = ? ORDER BY created_at, id", accountId)).map((r) => factor(r)!);

/** Enabled = confirmed and not disabled. */
export const enabledFactors = async (db: Sql, accountId: string) =>
  (await db.all<FactorRow>("SELECT * FROM platform_mfa_factors WHERE account_id = ? AND confirmed_at IS NOT NULL AND disabled_at IS NULL ORDER BY id", accountId)).map(
    (r) => factor(r)!,
  );

/** 0 when the factor is no longer pending. */
export const confirmFactor = (db: Sql, id: string, now: string) =>
  db.run("UPDATE platform_mfa_factors SET confirmed_at = ? WHERE id = ? AND confirmed_at IS NULL AND disabled_at IS NULL", now, id);

export const disableFactor = (db: Sql, id: string, now: string) => db.run("UPDATE platform_mfa_factors SET disabled_at = ? WHERE id = ? AND disabled_at IS NULL", now, id);

/** Disables every factor of the account (operator reset); the number disabled. */
export const disableAllFactors = (db: Sql, accountId: string, now: string) =>
  db.run("UPDATE platform_mfa_factors SET disabled_at = ? WHERE account_id = ? AND disabled_at IS NULL", now, accountId);

/** A pending factor that can no longer be confirmed (too many wrong codes). */
export const deletePendingFactor = (db: Sql, id: string) => db.run("DELETE FROM platform_mfa_factors WHERE id = ? AND confirmed_at IS NULL", id);

/** Pending factors created before `before` (ISO): their confirmation window has passed. */
export const deleteStalePending = (db: Sql, accountId: string, before: string) =>
  db.run("DELETE FROM platform_mfa_factors WHERE account_id = ? AND confirmed_at IS NULL AND created_at < ?", accountId, before);

/** Claims a TOTP time step: 1 only when it is later than every step accepted before (no replay). */
export const claimStep = (db: Sql, id: string, step: number) =>
  db.run("UPDATE platform_mfa_factors SET last_step = ? WHERE id = ? AND (last_step IS NULL OR last_step < ?)", step, id, step);

// --- challenges --------------------------------------------------------------------------

export async function insertChallenge(db: Sql, c: Pick<ChallengeRow, "id" | "account_id" | "first_factor" | "session_duration" | "created_at" | "expires_at">): Promise<void> {
  await db.run(
    `INSERT INTO platform_mfa_challenges (id, account_id, first_factor, session_duration, created_at, expires_at)
     VALUES ($id, $account_id, $first_factor, $session_duration, $created_at, $expires_at)`,
    { ...c },
  );
}

export const challengeById = async (db: Sql, id: string) => challenge(await db.get<ChallengeRow>("SELECT * FROM platform_mfa_challenges WHERE id = ?", id));

/** The account's challenges that expired before `beforeMs` (kept a while for support questions). */
export const purgeChallenges = (db: Sql, accountId: string, beforeMs: number) =>
  db.run("DELETE FROM platform_mfa_challenges WHERE account_id = ? AND expires_at < ?", accountId, beforeMs);

/** Every open challenge of the account ends (operator reset: they were issued under the old factors). */
export const closeChallenges = (db: Sql, accountId: string, now: string) =>
  db.run("UPDATE platform_mfa_challenges SET consumed_at = ? WHERE account_id = ? AND consumed_at IS NULL", now, accountId);

/** Counts a wrong answer and locks at `maxFailures`: the new count, or null when the challenge was no longer open. */
export const recordFailure = async (db: Sql, id: string, nowIso: string, maxFailures: number) => {
  const r = await db.get<{ failures: number }>(
    `UPDATE platform_mfa_challenges
     SET failures = failures + 1, locked_at = CASE WHEN failures + 1 >= ? THEN ? ELSE NULL END
     WHERE id = ? AND consumed_at IS NULL AND locked_at IS NULL
     RETURNING failures`,
    maxFailures,
    nowIso,
    id,
  );
  return r ? Number(r.failures) : null;
};

/** Marks the challenge used; 0 when it was consumed, locked or expired meanwhile (lost a race). */
export const consumeChallenge = (db: Sql, id: string, nowIso: string, nowMs: number) =>
  db.run("UPDATE platform_mfa_challenges SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL AND locked_at IS NULL AND expires_at > ?", nowIso, id, nowMs);

/**
 * Serialises the transactions that count or accept an account's MFA answers (its streak and
 * lock are rate-limiter rows read and written in them). On SQLite every write transaction
 * already runs alone; on PostgreSQL this locks the account's row until commit (NO KEY UPDATE:
 * inserts referencing the account, e.g. new sessions, still pass).
 */
export async function lockAccountForMfa(t: Sql, accountId: string): Promise<void> {
  if (t.engine === "postgres") await t.get("SELECT 1 AS x FROM platform_accounts WHERE id = ? FOR NO KEY UPDATE", accountId);
}

// --- recovery codes (core/store/recovery-codes.ts) ------------------------------------------

const CODES = { table: "platform_recovery_codes", owner: "account_id" } as const;

/** Replaces every recovery code (used or not) with the given hashes. Run it in a transaction. */
export const replaceRecoveryCodes = (db: Sql, accountId: string, hashes: { id: string; hash: string }[], now: string) => codes.replaceRecoveryCodes(db, CODES, accountId, hashes, now);
/** Marks an unused code used; 1 when it was this owner's and still unused. */
export const useRecoveryCode = (db: Sql, accountId: string, hash: string, now: string) => codes.useRecoveryCode(db, CODES, accountId, hash, now);
export const unusedRecoveryCodes = (db: Sql, accountId: string) => codes.unusedRecoveryCodes(db, CODES, accountId);
