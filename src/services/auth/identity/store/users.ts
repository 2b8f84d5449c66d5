/** SQL for App users, their contacts, sessions and refresh tokens. */
import type { Sql } from "../../../../core/db";

export type UserStatus = "active" | "suspended" | "deactivated" | "blocked";

export interface UserRow {
  id: string;
  app_id: string;
  username: string;
  display_name: string | null;
  password_hash: string | null;
  role_id: string | null;
  status: UserStatus;
  metadata: string;
  created_at: string;
  updated_at: string;
}

/** A user with what tokens and views need: primary email, its verification, role name and permissions. */
export interface UserView extends UserRow {
  email: string | null;
  email_verified_at: string | null;
  role_name: string | null;
  role_permissions: string | null;
}

export interface ContactRow {
  id: string;
  app_id: string;
  user_id: string;
  kind: "email" | "phone";
  value: string;
  is_primary: number;
  verified_at: string | null;
  created_at: string;
}

// Correlated primary-key subqueries instead of JOINs: measurably faster in bun:sqlite.
const VIEW = `SELECT u.*,
  (SELECT value FROM auth_contacts c WHERE c.user_id = u.id AND c.kind = 'email' AND c.is_primary = 1) AS email,
  (SELECT verified_at FROM auth_contacts c WHERE c.user_id = u.id AND c.kind = 'email' AND c.is_primary = 1) AS email_verified_at,
  (SELECT name FROM auth_roles r WHERE r.id = u.role_id) AS role_name,
  (SELECT permissions FROM auth_roles r WHERE r.id = u.role_id) AS role_permissions
  FROM auth_users u`;

export async function insertUser(db: Sql, u: UserRow): Promise<void> {
  await db.run(
    `INSERT INTO auth_users (id, app_id, username, display_name, password_hash, role_id, status, metadata, created_at, updated_at)
     VALUES ($id, $app_id, $username, $display_name, $password_hash, $role_id, $status, $metadata, $created_at, $updated_at)`,
    { ...u },
  );
}

export async function insertContact(db: Sql, c: ContactRow): Promise<void> {
  await db.run(
    `INSERT INTO auth_contacts (id, app_id, user_id, kind, value, is_primary, verified_at, created_at)
     VALUES ($id, $app_id, $user_id, $kind, $value, $is_primary, $verified_at, $created_at)`,
    { ...c },
  );
}

export const userView = (db: Sql, appId: string, id: string) => db.get<UserView>(`${VIEW} WHERE u.app_id = ? AND u.id = ?`, appId, id);

/** Sign-in identifiers: the username, or an email that is the user's verified primary address. */
export async function userByIdentifier(db: Sql, appId: string, identifier: string): Promise<UserView | null> {
  const byName = await db.get<UserView>(`${VIEW} WHERE u.app_id = ? AND u.username = ?`, appId, identifier);
  if (byName) return byName;
  const c = await db.get<{ user_id: string }>(
    "SELECT user_id FROM auth_contacts WHERE app_id = ? AND kind = 'email' AND value = ? AND is_primary = 1 AND verified_at IS NOT NULL",
    appId,
    identifier,
  );
  return c ? userView(db, appId, c.user_id) : null;
}

export async function emailOrUsernameTaken(db: Sql, appId: string, email: string | null, username: string) {
  const r = (await db.get<{ e: number; u: number }>(
    `SELECT CASE WHEN EXISTS(SELECT 1 FROM auth_contacts WHERE app_id = ? AND kind = 'email' AND value = ?) THEN 1 ELSE 0 END AS e,
            CASE WHEN EXISTS(SELECT 1 FROM auth_users WHERE app_id = ? AND username = ?) THEN 1 ELSE 0 END AS u`,
    appId,
    email ?? "",
    appId,
    username,
  ))!;
  return { email: email !== null && !!r.e, username: !!r.u };
}

export const usernameTaken = async (db: Sql, appId: string, username: string) =>
  !!(await db.get<{ x: number }>("SELECT 1 AS x FROM auth_users WHERE app_id = ? AND username = ?", appId, username));

export const contactByValue = (db: Sql, appId: string, kind: "email" | "phone", value: string) =>
  db.get<ContactRow>("SELECT * FROM auth_contacts WHERE app_id = ? AND kind = ? AND value = ?", appId, kind, value);

export const contactsOf = (db: Sql, userId: string) =>
  db.all<ContactRow>("SELECT * FROM auth_contacts WHERE user_id = ? ORDER BY is_primary DESC, created_at", userId);

export const markContactVerified = (db: Sql, contactId: string, now: string) =>
  db.run("UPDATE auth_contacts SET verified_at = COALESCE(verified_at, ?) WHERE id = ?", now, contactId);

export function setPrimaryEmail(db: Sql, userId: string, value: string): Promise<number> {
  return db.run("UPDATE auth_contacts SET value = ?, verified_at = NULL WHERE user_id = ? AND kind = 'email' AND is_primary = 1", value, userId);
}

export async function updateUserFields(db: Sql, id: string, f: Partial<Pick<UserRow, "username" | "display_name" | "metadata" | "status" | "role_id" | "password_hash">>, now: string): Promise<number> {
  const keys = Object.keys(f) as (keyof typeof f)[];
  if (!keys.length) return 0;
  const sets = keys.map((k) => `${k} = $${k}`).join(", ");
  return db.run(`UPDATE auth_users SET ${sets}, updated_at = $updated_at WHERE id = $id`, { ...f, id, updated_at: now });
}

export const deleteUser = (db: Sql, appId: string, id: string) => db.run("DELETE FROM auth_users WHERE app_id = ? AND id = ?", appId, id);

/** Keyset page of an App's users in id (creation) order, optionally filtered by a search on username / email. */
export function listUsers(db: Sql, appId: string, after: string | null, limit: number, q: string | null): Promise<UserView[]> {
  if (q) {
    // lower() on both sides: SQLite's LIKE ignores ASCII case, PostgreSQL's does not.
    const like = `%${q.replace(/[\\%_]/g, (m) => "\\" + m)}%`;
    return db.all<UserView>(
      `${VIEW} WHERE u.app_id = ? AND u.id > ? AND (lower(u.username) LIKE lower(?) ESCAPE '\\' OR u.id IN (SELECT user_id FROM auth_contacts WHERE app_id = u.app_id AND lower(value) LIKE lower(?) ESCAPE '\\')) ORDER BY u.id LIMIT ?`,
      appId,
      after ?? "",
      like,
      like,
      limit,
    );
  }
  return db.all<UserView>(`${VIEW} WHERE u.app_id = ? AND u.id > ? ORDER BY u.id LIMIT ?`, appId, after ?? "", limit);
}

// --- sessions ---------------------------------------------------------------------------

export interface SessionRow {
  id: string;
  app_id: string;
  user_id: string;
  tenant_id: string | null;
  amr: string;
  mfa_at: string | null;
  created_at: string;
  expires_at: number;
  revoked_at: string | null;
  ip: string | null;
  user_agent: string | null;
}

export async function insertSession(db: Sql, s: SessionRow): Promise<void> {
  await db.run(
    `INSERT INTO auth_sessions (id, app_id, user_id, tenant_id, amr, mfa_at, created_at, expires_at, revoked_at, ip, user_agent)
     VALUES ($id, $app_id, $user_id, $tenant_id, $amr, $mfa_at, $created_at, $expires_at, $revoked_at, $ip, $user_agent)`,
    { ...s },
  );
}

export const sessionById = (db: Sql, appId: string, id: string) => db.get<SessionRow>("SELECT * FROM auth_sessions WHERE app_id = ? AND id = ?", appId, id);

/**
 * The user behind an access token, only while the token's session is live (not revoked,
 * not expired), with the session's expiry: the user view plus a primary-key probe of the
 * session, in one query.
 */
export async function userViewOfLiveSession(db: Sql, appId: string, userId: string, sessionId: string, nowMs: number): Promise<{ user: UserView; expiresAt: number } | null> {
  const row = await db.get<UserView & { session_expires_at: number | null }>(
    `SELECT v.*, (SELECT s.expires_at FROM auth_sessions s WHERE s.id = ? AND s.user_id = v.id AND s.revoked_at IS NULL AND s.expires_at > ?) AS session_expires_at
     FROM (${VIEW} WHERE u.app_id = ? AND u.id = ?) v`,
    sessionId,
    nowMs,
    appId,
    userId,
  );
  if (row?.session_expires_at == null) return null;
  const { session_expires_at: expiresAt, ...user } = row;
  return { user, expiresAt };
}

/** When a live session of this App and user ends (expires_at), or null when it is not live: one primary-key read. */
export const sessionLiveUntil = async (db: Sql, appId: string, id: string, userId: string, nowMs: number) =>
  (
    await db.get<{ expires_at: number }>(
      "SELECT expires_at FROM auth_sessions WHERE id = ? AND app_id = ? AND user_id = ? AND revoked_at IS NULL AND expires_at > ?",
      id,
      appId,
      userId,
      nowMs,
    )
  )?.expires_at ?? null;

export const setSessionMfa = (db: Sql, id: string, amr: string[], mfaAt: string) =>
  db.run("UPDATE auth_sessions SET amr = ?, mfa_at = ? WHERE id = ?", JSON.stringify(amr), mfaAt, id);

export const revokeSession = (db: Sql, id: string, now: string) =>
  db.run("UPDATE auth_sessions SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", now, id);

export const revokeUserSessions = (db: Sql, userId: string, now: string) =>
  db.run("UPDATE auth_sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", now, userId);

export const insertRefreshToken = (db: Sql, hash: string, sessionId: string, now: string) =>
  db.run("INSERT INTO auth_refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)", hash, sessionId, now);

/** The refresh token's row with its session, or null. */
export const refreshToken = (db: Sql, hash: string) =>
  db.get<{ rotated_at: string | null; session_id: string }>("SELECT rotated_at, session_id FROM auth_refresh_tokens WHERE token_hash = ?", hash);

/** Marks a live token rotated; 0 when it was already rotated (a replay). */
export const rotateRefreshToken = (db: Sql, hash: string, now: string) =>
  db.run("UPDATE auth_refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL", now, hash);

export const purgeExpiredSessions = (db: Sql, beforeMs: number) => db.run("DELETE FROM auth_sessions WHERE expires_at < ?", beforeMs);
