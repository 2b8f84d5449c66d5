/** SQL of console federated sign-in: web-flow states, provider identities, email proof. */
import type { Sql } from "../../../../core/db";

export interface OAuthStateRow {
  state_hash: string;
  provider: string;
  nonce_hash: string;
  code_verifier_enc: string;
  return_to: string;
  created_at: string;
  expires_at: number;
  consumed_at: string | null;
}

export async function insertState(db: Sql, r: Omit<OAuthStateRow, "consumed_at">): Promise<void> {
  await db.run(
    `INSERT INTO platform_oauth_states (state_hash, provider, nonce_hash, code_verifier_enc, return_to, created_at, expires_at)
     VALUES ($state_hash, $provider, $nonce_hash, $code_verifier_enc, $return_to, $created_at, $expires_at)`,
    { ...r },
  );
}

/** Marks a live state used and returns it; null when unknown, expired or already used (one winner under races). */
export const consumeState = (db: Sql, stateHash: string, now: string, nowMs: number) =>
  db.get<OAuthStateRow>(
    "UPDATE platform_oauth_states SET consumed_at = ? WHERE state_hash = ? AND consumed_at IS NULL AND expires_at > ? RETURNING *",
    now,
    stateHash,
    nowMs,
  );

/** True when a finished sign-in already used this nonce (an ID token replayed into a new flow). */
export const nonceUsed = async (db: Sql, nonceHash: string) =>
  (await db.get<{ x: number }>("SELECT 1 AS x FROM platform_oauth_states WHERE nonce_hash = ? AND consumed_at IS NOT NULL", nonceHash)) !== null;

/** States expired before `beforeMs` (used ones too: they only serve replay detection until then). */
export const purgeStates = (db: Sql, beforeMs: number) => db.run("DELETE FROM platform_oauth_states WHERE expires_at < ?", beforeMs);

// --- identities --------------------------------------------------------------------------

export interface IdentityRow {
  id: string;
  account_id: string;
  provider: string;
  issuer: string;
  subject: string;
  email: string | null;
  created_at: string;
  last_used_at: string | null;
}

export const identityBySubject = (db: Sql, issuer: string, subject: string) =>
  db.get<IdentityRow>("SELECT * FROM platform_identities WHERE issuer = ? AND subject = ?", issuer, subject);

export async function insertIdentity(db: Sql, r: IdentityRow): Promise<void> {
  await db.run(
    `INSERT INTO platform_identities (id, account_id, provider, issuer, subject, email, created_at, last_used_at)
     VALUES ($id, $account_id, $provider, $issuer, $subject, $email, $created_at, $last_used_at)`,
    { ...r },
  );
}

export const touchIdentity = (db: Sql, id: string, now: string) => db.run("UPDATE platform_identities SET last_used_at = ? WHERE id = ?", now, id);

export const identitiesOf = (db: Sql, accountId: string) =>
  db.all<IdentityRow>("SELECT * FROM platform_identities WHERE account_id = ? ORDER BY created_at, id", accountId);

export const deleteIdentity = (db: Sql, accountId: string, id: string) => db.run("DELETE FROM platform_identities WHERE account_id = ? AND id = ?", accountId, id);

// --- accounts ----------------------------------------------------------------------------

/** The account holding an email, with whether that address was proven. */
export const accountEmailProof = (db: Sql, email: string) =>
  db.get<{ id: string; email_verified_at: string | null }>("SELECT id, email_verified_at FROM platform_accounts WHERE email = ?", email);

export const markEmailVerified = (db: Sql, accountId: string, now: string) =>
  db.run("UPDATE platform_accounts SET email_verified_at = COALESCE(email_verified_at, ?) WHERE id = ?", now, accountId);

export const hasPassword = async (db: Sql, accountId: string) =>
  (await db.get<{ x: number }>("SELECT 1 AS x FROM platform_accounts WHERE id = ? AND password_hash IS NOT NULL", accountId)) !== null;
