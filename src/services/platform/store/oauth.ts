/** SQL of console federated sign-in: web-flow states, provider identities, email proof. */
import type { Db } from "../../../core/db";

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

export function insertState(db: Db, r: Omit<OAuthStateRow, "consumed_at">) {
  db.query(
    `INSERT INTO platform_oauth_states (state_hash, provider, nonce_hash, code_verifier_enc, return_to, created_at, expires_at)
     VALUES ($state_hash, $provider, $nonce_hash, $code_verifier_enc, $return_to, $created_at, $expires_at)`,
  ).run(r as any);
}

/** Marks a live state used and returns it; null when unknown, expired or already used (one winner under races). */
export const consumeState = (db: Db, stateHash: string, now: string, nowMs: number) =>
  db
    .query<OAuthStateRow, [string, string, number]>(
      "UPDATE platform_oauth_states SET consumed_at = ? WHERE state_hash = ? AND consumed_at IS NULL AND expires_at > ? RETURNING *",
    )
    .get(now, stateHash, nowMs);

/** True when a finished sign-in already used this nonce (an ID token replayed into a new flow). */
export const nonceUsed = (db: Db, nonceHash: string) =>
  !!db.query<{ x: number }, [string]>("SELECT 1 AS x FROM platform_oauth_states WHERE nonce_hash = ? AND consumed_at IS NOT NULL").get(nonceHash);

/** States expired before `beforeMs` (used ones too: they only serve replay detection until then). */
export const purgeStates = (db: Db, beforeMs: number) => db.query("DELETE FROM platform_oauth_states WHERE expires_at < ?").run(beforeMs).changes;

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

export const identityBySubject = (db: Db, issuer: string, subject: string) =>
  db.query<IdentityRow, [string, string]>("SELECT * FROM platform_identities WHERE issuer = ? AND subject = ?").get(issuer, subject);

export function insertIdentity(db: Db, r: IdentityRow) {
  db.query(
    `INSERT INTO platform_identities (id, account_id, provider, issuer, subject, email, created_at, last_used_at)
     VALUES ($id, $account_id, $provider, $issuer, $subject, $email, $created_at, $last_used_at)`,
  ).run(r as any);
}

export const touchIdentity = (db: Db, id: string, now: string) => db.query("UPDATE platform_identities SET last_used_at = ? WHERE id = ?").run(now, id);

export const identitiesOf = (db: Db, accountId: string) =>
  db.query<IdentityRow, [string]>("SELECT * FROM platform_identities WHERE account_id = ? ORDER BY created_at, id").all(accountId);

export const deleteIdentity = (db: Db, accountId: string, id: string) =>
  db.query("DELETE FROM platform_identities WHERE account_id = ? AND id = ?").run(accountId, id).changes;

// --- accounts ----------------------------------------------------------------------------

/** The account holding an email, with whether that address was proven. */
export const accountEmailProof = (db: Db, email: string) =>
  db.query<{ id: string; email_verified_at: string | null }, [string]>("SELECT id, email_verified_at FROM platform_accounts WHERE email = ?").get(email);

export const markEmailVerified = (db: Db, accountId: string, now: string) =>
  db.query("UPDATE platform_accounts SET email_verified_at = COALESCE(email_verified_at, ?) WHERE id = ?").run(now, accountId);

export const hasPassword = (db: Db, accountId: string) =>
  !!db.query<{ x: number }, [string]>("SELECT 1 AS x FROM platform_accounts WHERE id = ? AND password_hash IS NOT NULL").get(accountId);
