/** SQL of App federated sign-in: web-flow states, exchange codes, native nonces, identities. */
import type { Db } from "../../../core/db";

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

export function insertState(db: Db, r: Omit<OAuthStateRow, "consumed_at">) {
  db.query(
    `INSERT INTO auth_oauth_states (state_hash, app_id, provider, nonce_hash, code_verifier_enc, return_to, created_at, expires_at)
     VALUES ($state_hash, $app_id, $provider, $nonce_hash, $code_verifier_enc, $return_to, $created_at, $expires_at)`,
  ).run(r as any);
}

/** Marks a live state of the App used and returns it; null when unknown, expired or used (one winner under races). */
export const consumeState = (db: Db, appId: string, stateHash: string, now: string, nowMs: number) =>
  db
    .query<OAuthStateRow, [string, string, string, number]>(
      "UPDATE auth_oauth_states SET consumed_at = ? WHERE app_id = ? AND state_hash = ? AND consumed_at IS NULL AND expires_at > ? RETURNING *",
    )
    .get(now, appId, stateHash, nowMs);

/** A finished web sign-in of the App used this nonce, or the native flow consumed it. */
export const nonceUsed = (db: Db, appId: string, nonceHash: string) =>
  !!db
    .query<{ x: number }, [string, string, string, string]>(
      `SELECT 1 AS x WHERE EXISTS (SELECT 1 FROM auth_oauth_states WHERE app_id = ? AND nonce_hash = ? AND consumed_at IS NOT NULL)
          OR EXISTS (SELECT 1 FROM auth_oauth_nonces WHERE app_id = ? AND nonce_hash = ?)`,
    )
    .get(appId, nonceHash, appId, nonceHash);

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

export function insertCode(db: Db, r: Omit<OAuthCodeRow, "consumed_at">) {
  db.query(
    `INSERT INTO auth_oauth_codes (code_hash, app_id, user_id, provider, created_at, expires_at)
     VALUES ($code_hash, $app_id, $user_id, $provider, $created_at, $expires_at)`,
  ).run(r as any);
}

export const consumeCode = (db: Db, appId: string, codeHash: string, now: string, nowMs: number) =>
  db
    .query<OAuthCodeRow, [string, string, string, number]>(
      "UPDATE auth_oauth_codes SET consumed_at = ? WHERE app_id = ? AND code_hash = ? AND consumed_at IS NULL AND expires_at > ? RETURNING *",
    )
    .get(now, appId, codeHash, nowMs);

// --- native nonces -----------------------------------------------------------------------

/** Records a native-flow nonce; false when it was already there (a replay). */
export const consumeNonce = (db: Db, appId: string, nonceHash: string, now: string, expiresAt: number) =>
  db.query("INSERT INTO auth_oauth_nonces (app_id, nonce_hash, created_at, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING").run(appId, nonceHash, now, expiresAt).changes === 1;

/** Expired states, codes and nonces (states and nonces kept until `beforeMs` for replay detection). */
export function purge(db: Db, beforeMs: number, nowMs: number) {
  return (
    db.query("DELETE FROM auth_oauth_states WHERE expires_at < ?").run(beforeMs).changes +
    db.query("DELETE FROM auth_oauth_codes WHERE expires_at < ?").run(nowMs).changes +
    db.query("DELETE FROM auth_oauth_nonces WHERE expires_at < ?").run(nowMs).changes
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

export const identityBySubject = (db: Db, appId: string, issuer: string, subject: string) =>
  db.query<IdentityRow, [string, string, string]>("SELECT * FROM auth_identities WHERE app_id = ? AND issuer = ? AND subject = ?").get(appId, issuer, subject);

export function insertIdentity(db: Db, r: IdentityRow) {
  db.query(
    `INSERT INTO auth_identities (id, app_id, user_id, provider, issuer, subject, email, created_at, last_used_at)
     VALUES ($id, $app_id, $user_id, $provider, $issuer, $subject, $email, $created_at, $last_used_at)`,
  ).run(r as any);
}

export const touchIdentity = (db: Db, id: string, now: string) => db.query("UPDATE auth_identities SET last_used_at = ? WHERE id = ?").run(now, id);

export const identitiesOf = (db: Db, appId: string, userId: string) =>
  db.query<IdentityRow, [string, string]>("SELECT * FROM auth_identities WHERE app_id = ? AND user_id = ? ORDER BY created_at, id").all(appId, userId);

export const deleteIdentity = (db: Db, appId: string, userId: string, id: string) =>
  db.query("DELETE FROM auth_identities WHERE app_id = ? AND user_id = ? AND id = ?").run(appId, userId, id).changes;
