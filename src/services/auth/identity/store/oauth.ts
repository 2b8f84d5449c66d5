/** SQL of App federated sign-in: web-flow states, exchange codes, native nonces, identities. */
import type { Sql } from "../../../../core/db";

// --- web-flow states ---------------------------------------------------------------------

export interface OAuthStateRow {
  state_hash: string;
  app_id: string;
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
    `INSERT INTO auth_oauth_states (state_hash, app_id, provider, nonce_hash, code_verifier_enc, return_to, created_at, expires_at)
     VALUES ($state_hash, $app_id, $provider, $nonce_hash, $code_verifier_enc, $return_to, $created_at, $expires_at)`,
    { ...r },
  );
}

/** Marks a live state of the App used and returns it; null when unknown, expired or used (one winner under races). */
export const consumeState = (db: Sql, appId: string, stateHash: string, now: string, nowMs: number) =>
  db.get<OAuthStateRow>(
    "UPDATE auth_oauth_states SET consumed_at = ? WHERE app_id = ? AND state_hash = ? AND consumed_at IS NULL AND expires_at > ? RETURNING *",
    now,
    appId,
    stateHash,
    nowMs,
  );

/** A finished web sign-in of the App used this nonce, or the native flow consumed it. */
export const nonceUsed = async (db: Sql, appId: string, nonceHash: string) =>
  !!(await db.get<{ x: number }>(
    `SELECT 1 AS x WHERE EXISTS (SELECT 1 FROM auth_oauth_states WHERE app_id = ? AND nonce_hash = ? AND consumed_at IS NOT NULL)
        OR EXISTS (SELECT 1 FROM auth_oauth_nonces WHERE app_id = ? AND nonce_hash = ?)`,
    appId,
    nonceHash,
    appId,
    nonceHash,
  ));

// --- exchange codes ----------------------------------------------------------------------

export interface OAuthCodeRow {
  code_hash: string;
  app_id: string;
  user_id: string;
  provider: string;
  created_at: string;
  expires_at: number;
  consumed_at: string | null;
}

export async function insertCode(db: Sql, r: Omit<OAuthCodeRow, "consumed_at">): Promise<void> {
  await db.run(
    `INSERT INTO auth_oauth_codes (code_hash, app_id, user_id, provider, created_at, expires_at)
     VALUES ($code_hash, $app_id, $user_id, $provider, $created_at, $expires_at)`,
    { ...r },
  );
}

export const consumeCode = (db: Sql, appId: string, codeHash: string, now: string, nowMs: number) =>
  db.get<OAuthCodeRow>(
    "UPDATE auth_oauth_codes SET consumed_at = ? WHERE app_id = ? AND code_hash = ? AND consumed_at IS NULL AND expires_at > ? RETURNING *",
    now,
    appId,
    codeHash,
    nowMs,
  );

// --- native nonces -----------------------------------------------------------------------

/** Records a native-flow nonce; false when it was already there (a replay). */
export const consumeNonce = async (db: Sql, appId: string, nonceHash: string, now: string, expiresAt: number) =>
  (await db.run("INSERT INTO auth_oauth_nonces (app_id, nonce_hash, created_at, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", appId, nonceHash, now, expiresAt)) === 1;

/** Expired states, codes and nonces (states and nonces kept until `beforeMs` for replay detection). */
export async function purge(db: Sql, beforeMs: number, nowMs: number): Promise<number> {
  return (
    (await db.run("DELETE FROM auth_oauth_states WHERE expires_at < ?", beforeMs)) +
    (await db.run("DELETE FROM auth_oauth_codes WHERE expires_at < ?", nowMs)) +
    (await db.run("DELETE FROM auth_oauth_nonces WHERE expires_at < ?", nowMs))
  );
}

// --- identities --------------------------------------------------------------------------

export interface IdentityRow {
  id: string;
  app_id: string;
  user_id: string;
  provider: string;
  issuer: string;
  subject: string;
  email: string | null;
  created_at: string;
  last_used_at: string | null;
}

export const identityBySubject = (db: Sql, appId: string, issuer: string, subject: string) =>
  db.get<IdentityRow>("SELECT * FROM auth_identities WHERE app_id = ? AND issuer = ? AND subject = ?", appId, issuer, subject);

export async function insertIdentity(db: Sql, r: IdentityRow): Promise<void> {
  await db.run(
    `INSERT INTO auth_identities (id, app_id, user_id, provider, issuer, subject, email, created_at, last_used_at)
     VALUES ($id, $app_id, $user_id, $provider, $issuer, $subject, $email, $created_at, $last_used_at)`,
    { ...r },
  );
}

export const touchIdentity = (db: Sql, id: string, now: string) => db.run("UPDATE auth_identities SET last_used_at = ? WHERE id = ?", now, id);

export const identitiesOf = (db: Sql, appId: string, userId: string) =>
  db.all<IdentityRow>("SELECT * FROM auth_identities WHERE app_id = ? AND user_id = ? ORDER BY created_at, id", appId, userId);

export const deleteIdentity = (db: Sql, appId: string, userId: string, id: string) =>
  db.run("DELETE FROM auth_identities WHERE app_id = ? AND user_id = ? AND id = ?", appId, userId, id);
