/** SQL for invites (only the code's hash is stored) and the tenant membership an invite grants. */
import type { Sql } from "../../../../core/db";

export interface InviteRow {
  id: string;
  app_id: string;
  code_hash: string;
  code_hint: string;
  email: string | null;
  role_id: string | null;
  tenant_id: string | null;
  max_uses: number;
  uses: number;
  expires_at: number | null;
  revoked_at: string | null;
  created_by: string | null;
  created_at: string;
}

/** An invite with its role's name, for views. */
export interface InviteView extends InviteRow {
  role_name: string | null;
}

export type InviteStatus = "active" | "revoked" | "expired" | "exhausted";

const VIEW = `SELECT i.*, (SELECT name FROM auth_roles r WHERE r.id = i.role_id) AS role_name FROM auth_invites i`;

/**
 * SQL twins of inviteStatus() in invites.ts (same precedence: revoked, exhausted, expired),
 * so the list filter and the accept answer always agree. $now is epoch ms.
 */
const STATUS_SQL: Record<InviteStatus, string> = {
  revoked: "i.revoked_at IS NOT NULL",
  exhausted: "i.revoked_at IS NULL AND i.uses >= i.max_uses",
  expired: "i.revoked_at IS NULL AND i.uses < i.max_uses AND i.expires_at IS NOT NULL AND i.expires_at <= $now",
  active: "i.revoked_at IS NULL AND i.uses < i.max_uses AND (i.expires_at IS NULL OR i.expires_at > $now)",
};

export async function insertInvite(db: Sql, r: InviteRow): Promise<void> {
  await db.run(
    `INSERT INTO auth_invites (id, app_id, code_hash, code_hint, email, role_id, tenant_id, max_uses, uses, expires_at, revoked_at, created_by, created_at)
     VALUES ($id, $app_id, $code_hash, $code_hint, $email, $role_id, $tenant_id, $max_uses, $uses, $expires_at, $revoked_at, $created_by, $created_at)`,
    { ...r },
  );
}

export const inviteById = (db: Sql, appId: string, id: string) => db.get<InviteView>(`${VIEW} WHERE i.app_id = ? AND i.id = ?`, appId, id);

export const inviteByHash = (db: Sql, appId: string, hash: string) => db.get<InviteView>(`${VIEW} WHERE i.app_id = ? AND i.code_hash = ?`, appId, hash);

/** Keyset page, newest first (created_at, then id, descending). */
export function listInvites(db: Sql, appId: string, o: { status: InviteStatus | null; after: { c: string; i: string } | null; limit: number; nowMs: number }) {
  const where = ["i.app_id = $app"];
  if (o.status) where.push(`(${STATUS_SQL[o.status]})`);
  if (o.after) where.push("(i.created_at < $c OR (i.created_at = $c AND i.id < $i))");
  // Exactly the parameters the statement names.
  const params: Record<string, string | number> = { app: appId, limit: o.limit };
  if (o.status && o.status !== "revoked" && o.status !== "exhausted") params.now = o.nowMs;
  if (o.after) Object.assign(params, { c: o.after.c, i: o.after.i });
  return db.all<InviteView>(`${VIEW} WHERE ${where.join(" AND ")} ORDER BY i.created_at DESC, i.id DESC LIMIT $limit`, params);
}

/** Sets revoked_at once (a second revoke keeps the first time). 0 when the invite is not in the App. */
export const revokeInvite = (db: Sql, appId: string, id: string, now: string) =>
  db.run("UPDATE auth_invites SET revoked_at = COALESCE(revoked_at, ?) WHERE app_id = ? AND id = ?", now, appId, id);

/**
 * Takes one use of a live invite: the check and the increment are one statement, so two
 * concurrent accepts of the last use cannot both succeed. 1 when taken, 0 otherwise.
 */
export const takeInviteUse = (db: Sql, id: string, nowMs: number) =>
  db.run("UPDATE auth_invites SET uses = uses + 1 WHERE id = ? AND revoked_at IS NULL AND uses < max_uses AND (expires_at IS NULL OR expires_at > ?)", id, nowMs);

export async function insertTenantMember(db: Sql, m: { id: string; tenant_id: string; user_id: string; role_id: string | null; invited_by: string | null; joined_at: string }): Promise<void> {
  await db.run(
    `INSERT INTO auth_tenant_members (id, tenant_id, user_id, role_id, invited_by, joined_at)
     VALUES ($id, $tenant_id, $user_id, $role_id, $invited_by, $joined_at)`,
    { ...m },
  );
}
