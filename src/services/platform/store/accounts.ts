/** SQL for console accounts, sessions, refresh tokens and password resets. */
import type { Db } from "../../../core/db";

export interface AccountRow {
  id: string;
  email: string;
  username: string;
  display_name: string | null;
  password_hash: string | null;
  status: "active" | "suspended" | "deactivated" | "blocked";
  is_operator: number;
  created_at: string;
  updated_at: string;
}

/** Setup stays open until this is non-zero: ordinary accounts never close it. */
export function countOperators(db: Db): number {
  return db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM platform_accounts WHERE is_operator = 1").get()!.n;
}

export function insertAccount(db: Db, a: AccountRow) {
  db.query(
    `INSERT INTO platform_accounts (id, email, username, display_name, password_hash, status, is_operator, created_at, updated_at)
     VALUES ($id, $email, $username, $display_name, $password_hash, $status, $is_operator, $created_at, $updated_at)`,
  ).run(a as any);
}

export const accountById = (db: Db, id: string) =>
  db.query<AccountRow, [string]>("SELECT * FROM platform_accounts WHERE id = ?").get(id);

/** Email and username are both NOCASE-unique; an identifier matches either. */
export const accountByIdentifier = (db: Db, identifier: string) =>
  db.query<AccountRow, [string, string]>("SELECT * FROM platform_accounts WHERE email = ? OR username = ? LIMIT 1").get(identifier, identifier);

export const accountByEmail = (db: Db, email: string) =>
  db.query<AccountRow, [string]>("SELECT * FROM platform_accounts WHERE email = ?").get(email);

export function emailOrUsernameTaken(db: Db, email: string, username: string) {
  const row = db
    .query<{ email_taken: number; username_taken: number }, [string, string]>(
      `SELECT EXISTS(SELECT 1 FROM platform_accounts WHERE email = ?1) AS email_taken,
              EXISTS(SELECT 1 FROM platform_accounts WHERE username = ?2) AS username_taken`,
    )
    .get(email, username)!;
  return { email: !!row.email_taken, username: !!row.username_taken };
}

export function setAccountStatus(db: Db, id: string, status: AccountRow["status"], now: string) {
  return db.query("UPDATE platform_accounts SET status = ?, updated_at = ? WHERE id = ?").run(status, now, id).changes;
}

export function setPassword(db: Db, id: string, hash: string, now: string) {
  db.query("UPDATE platform_accounts SET password_hash = ?, updated_at = ? WHERE id = ?").run(hash, now, id);
}

export function listAccounts(db: Db, after: string | null, limit: number) {
  return db
    .query<AccountRow, [string | null, string | null, number]>(
      "SELECT * FROM platform_accounts WHERE (? IS NULL OR id > ?) ORDER BY id LIMIT ?",
    )
    .all(after, after, limit);
}

// --- sessions -------------------------------------------------------------------------

export interface SessionAuthRow {
  session_id: string;
  account_id: string;
  expires_at: number;
  revoked_at: string | null;
  status: AccountRow["status"];
  is_operator: number;
}

export function insertSession(
  db: Db,
  s: { id: string; account_id: string; created_at: string; expires_at: number; ip: string | null; user_agent: string | null },
) {
  db.query(
    `INSERT INTO platform_sessions (id, account_id, created_at, expires_at, ip, user_agent)
     VALUES ($id, $account_id, $created_at, $expires_at, $ip, $user_agent)`,
  ).run(s as any);
}

/** The one query on the authenticated hot path: session liveness plus account status. */
export const sessionForAuth = (db: Db, sessionId: string) =>
  db
    .query<SessionAuthRow, [string]>(
      // Correlated primary-key subqueries, not a JOIN: in bun:sqlite the join costs ~5 µs a
      // call against <1 µs for this form (measured; same plan, same rows).
      `SELECT s.id AS session_id, s.account_id, s.expires_at, s.revoked_at,
              (SELECT a.status FROM platform_accounts a WHERE a.id = s.account_id) AS status,
              (SELECT a.is_operator FROM platform_accounts a WHERE a.id = s.account_id) AS is_operator
       FROM platform_sessions s WHERE s.id = ?`,
    )
    .get(sessionId);

export function revokeSession(db: Db, sessionId: string, now: string) {
  return db.query("UPDATE platform_sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(now, sessionId).changes;
}

export function revokeAllSessions(db: Db, accountId: string, now: string) {
  return db.query("UPDATE platform_sessions SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL").run(now, accountId).changes;
}

export function insertRefreshToken(db: Db, tokenHash: string, sessionId: string, now: string) {
  db.query("INSERT INTO platform_refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)").run(tokenHash, sessionId, now);
}

export const refreshToken = (db: Db, tokenHash: string) =>
  db
    .query<{ token_hash: string; session_id: string; rotated_at: string | null; account_id: string; expires_at: number; revoked_at: string | null }, [string]>(
      `SELECT r.token_hash, r.session_id, r.rotated_at, s.account_id, s.expires_at, s.revoked_at
       FROM platform_refresh_tokens r JOIN platform_sessions s ON s.id = r.session_id WHERE r.token_hash = ?`,
    )
    .get(tokenHash);

/** Marks a refresh token used; returns false when another request rotated it first. */
export function rotateRefreshToken(db: Db, tokenHash: string, now: string): boolean {
  return db.query("UPDATE platform_refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL").run(now, tokenHash).changes === 1;
}

// --- password resets ------------------------------------------------------------------

export function insertPasswordReset(db: Db, r: { id: string; account_id: string; code_hash: string; created_at: string; expires_at: number }) {
  // Only one live code per account: a new request supersedes the old one.
  db.query("UPDATE platform_password_resets SET used_at = ? WHERE account_id = ? AND used_at IS NULL").run(r.created_at, r.account_id);
  db.query(
    `INSERT INTO platform_password_resets (id, account_id, code_hash, created_at, expires_at)
     VALUES ($id, $account_id, $code_hash, $created_at, $expires_at)`,
  ).run(r as any);
}

export const liveResetByCode = (db: Db, codeHash: string, nowMs: number) =>
  db
    .query<{ id: string; account_id: string }, [string, number]>(
      "SELECT id, account_id FROM platform_password_resets WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?",
    )
    .get(codeHash, nowMs);

export const resetCodeInUse = (db: Db, codeHash: string) =>
  !!db.query("SELECT 1 FROM platform_password_resets WHERE code_hash = ?").get(codeHash);

export function consumeReset(db: Db, id: string, now: string) {
  return db.query("UPDATE platform_password_resets SET used_at = ? WHERE id = ? AND used_at IS NULL").run(now, id).changes === 1;
}

// --- settings (setup token) -------------------------------------------------------------

export const getSetting = (db: Db, key: string) =>
  db.query<{ value: string }, [string]>("SELECT value FROM core_settings WHERE key = ?").get(key)?.value ?? null;

export function putSetting(db: Db, key: string, value: string, now: string) {
  db.query(
    "INSERT INTO core_settings (key, value, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT(key) DO UPDATE SET value = ?2, updated_at = ?3",
  ).run(key, value, now);
}

export function deleteSetting(db: Db, key: string) {
  db.query("DELETE FROM core_settings WHERE key = ?").run(key);
}
