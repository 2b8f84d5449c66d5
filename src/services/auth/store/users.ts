/** SQL for App users, their contacts, sessions and refresh tokens. */
import type { Db } from "../../../core/db";

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

export function insertUser(db: Db, u: UserRow) {
  db.query(
    `INSERT INTO auth_users (id, app_id, username, display_name, password_hash, role_id, status, metadata, created_at, updated_at)
     VALUES ($id, $app_id, $username, $display_name, $password_hash, $role_id, $status, $metadata, $created_at, $updated_at)`,
  ).run(u as any);
}

export function insertContact(db: Db, c: ContactRow) {
  db.query(
    `INSERT INTO auth_contacts (id, app_id, user_id, kind, value, is_primary, verified_at, created_at)
     VALUES ($id, $app_id, $user_id, $kind, $value, $is_primary, $verified_at, $created_at)`,
  ).run(c as any);
}

export const userView = (db: Db, appId: string, id: string) =>
  db.query<UserView, [string, string]>(`${VIEW} WHERE u.app_id = ? AND u.id = ?`).get(appId, id);

/** Sign-in identifiers: the username, or an email that is the user's verified primary address. */
export function userByIdentifier(db: Db, appId: string, identifier: string): UserView | null {
  const byName = db.query<UserView, [string, string]>(`${VIEW} WHERE u.app_id = ? AND u.username = ?`).get(appId, identifier);
  if (byName) return byName;
  const c = db
    .query<{ user_id: string }, [string, string]>(
      "SELECT user_id FROM auth_contacts WHERE app_id = ? AND kind = 'email' AND value = ? AND is_primary = 1 AND verified_at IS NOT NULL",
    )
    .get(appId, identifier);
  return c ? userView(db, appId, c.user_id) : null;
}

export function emailOrUsernameTaken(db: Db, appId: string, email: string | null, username: string) {
  const r = db
    .query<{ e: number; u: number }, [string, string, string, string]>(
      `SELECT EXISTS(SELECT 1 FROM auth_contacts WHERE app_id = ?1 AND kind = 'email' AND value = ?2) AS e,
              EXISTS(SELECT 1 FROM auth_users WHERE app_id = ?3 AND username = ?4) AS u`,
    )
    .get(appId, email ?? "", appId, username)!;
  return { email: email !== null && !!r.e, username: !!r.u };
}

export const usernameTaken = (db: Db, appId: string, username: string) =>
  !!db.query<{ x: number }, [string, string]>("SELECT 1 AS x FROM auth_users WHERE app_id = ? AND username = ?").get(appId, username);

export const contactByValue = (db: Db, appId: string, kind: "email" | "phone", value: string) =>
  db.query<ContactRow, [string, string, string]>("SELECT * FROM auth_contacts WHERE app_id = ? AND kind = ? AND value = ?").get(appId, kind, value);

export const contactsOf = (db: Db, userId: string) =>
  db.query<ContactRow, [string]>("SELECT * FROM auth_contacts WHERE user_id = ? ORDER BY is_primary DESC, created_at").all(userId);

export const markContactVerified = (db: Db, contactId: string, now: string) =>
  db.query("UPDATE auth_contacts SET verified_at = COALESCE(verified_at, ?) WHERE id = ?").run(now, contactId).changes;

export function setPrimaryEmail(db: Db, userId: string, value: string) {
  return db.query("UPDATE auth_contacts SET value = ?, verified_at = NULL WHERE user_id = ? AND kind = 'email' AND is_primary = 1").run(value, userId).changes;
}

export function updateUserFields(db: Db, id: string, f: Partial<Pick<UserRow, "username" | "display_name" | "metadata" | "status" | "role_id" | "password_hash">>, now: string) {
  const keys = Object.keys(f) as (keyof typeof f)[];
  if (!keys.length) return 0;
  const sets = keys.map((k) => `${k} = $${k}`).join(", ");
  return db.query(`UPDATE auth_users SET ${sets}, updated_at = $updated_at WHERE id = $id`).run({ ...f, id, updated_at: now } as any).changes;
}

export const deleteUser = (db: Db, appId: string, id: string) => db.query("DELETE FROM auth_users WHERE app_id = ? AND id = ?").run(appId, id).changes;

/** Keyset page of an App's users in id (creation) order, optionally filtered by a search on username / email. */
export function listUsers(db: Db, appId: string, after: string | null, limit: number, q: string | null) {
  if (q) {
    const like = `%${q.replace(/[\\%_]/g, (m) => "\\" + m)}%`;
    return db
      .query<UserView, [string, string, string, string, number]>(
        `${VIEW} WHERE u.app_id = ? AND u.id > ? AND (u.username LIKE ? ESCAPE '\\' OR u.id IN (SELECT user_id FROM auth_contacts WHERE app_id = u.app_id AND value LIKE ? ESCAPE '\\')) ORDER BY u.id LIMIT ?`,
      )
      .all(appId, after ?? "", like, like, limit);
  }
  return db.query<UserView, [string, string, number]>(`${VIEW} WHERE u.app_id = ? AND u.id > ? ORDER BY u.id LIMIT ?`).all(appId, after ?? "", limit);
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

export function insertSession(db: Db, s: SessionRow) {
  db.query(
    `INSERT INTO auth_sessions (id, app_id, user_id, tenant_id, amr, mfa_at, created_at, expires_at, revoked_at, ip, user_agent)
     VALUES ($id, $app_id, $user_id, $tenant_id, $amr, $mfa_at, $created_at, $expires_at, $revoked_at, $ip, $user_agent)`,
  ).run(s as any);
}

export const sessionById = (db: Db, appId: string, id: string) =>
  db.query<SessionRow, [string, string]>("SELECT * FROM auth_sessions WHERE app_id = ? AND id = ?").get(appId, id);

/**
 * The user behind an access token, only while the token's session is live (not revoked,
 * not expired): the user view plus a primary-key probe of the session, in one query.
 */
export function userViewOfLiveSession(db: Db, appId: string, userId: string, sessionId: string, nowMs: number): UserView | null {
  const row = db
    .query<UserView & { session_live: number }, [string, number, string, string]>(
      `SELECT v.*, EXISTS(SELECT 1 FROM auth_sessions s WHERE s.id = ? AND s.user_id = v.id AND s.revoked_at IS NULL AND s.expires_at > ?) AS session_live
       FROM (${VIEW} WHERE u.app_id = ? AND u.id = ?) v`,
    )
    .get(sessionId, nowMs, appId, userId);
  if (!row?.session_live) return null;
  const { session_live: _, ...user } = row;
  return user;
}

/** Whether a session of this App and user is live: one primary-key read. */
export const sessionLive = (db: Db, appId: string, id: string, userId: string, nowMs: number) =>
  !!db
    .query<{ x: number }, [string, string, string, number]>("SELECT 1 AS x FROM auth_sessions WHERE id = ? AND app_id = ? AND user_id = ? AND revoked_at IS NULL AND expires_at > ?")
    .get(id, appId, userId, nowMs);

export const setSessionMfa = (db: Db, id: string, amr: string[], mfaAt: string) =>
  db.query("UPDATE auth_sessions SET amr = ?, mfa_at = ? WHERE id = ?").run(JSON.stringify(amr), mfaAt, id);

export const revokeSession = (db: Db, id: string, now: string) =>
  db.query("UPDATE auth_sessions SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?").run(now, id);

export const revokeUserSessions = (db: Db, userId: string, now: string) =>
  db.query("UPDATE auth_sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL").run(now, userId).changes;

export const insertRefreshToken = (db: Db, hash: string, sessionId: string, now: string) =>
  db.query("INSERT INTO auth_refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)").run(hash, sessionId, now);

/** The refresh token's row with its session, or null. */
export const refreshToken = (db: Db, hash: string) =>
  db
    .query<{ rotated_at: string | null; session_id: string }, [string]>("SELECT rotated_at, session_id FROM auth_refresh_tokens WHERE token_hash = ?")
    .get(hash);

/** Marks a live token rotated; 0 when it was already rotated (a replay). */
export const rotateRefreshToken = (db: Db, hash: string, now: string) =>
  db.query("UPDATE auth_refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL").run(now, hash).changes;

export const purgeExpiredSessions = (db: Db, beforeMs: number) =>
  db.query("DELETE FROM auth_sessions WHERE expires_at < ?").run(beforeMs).changes;
