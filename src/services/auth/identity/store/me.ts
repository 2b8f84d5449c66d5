/** SQL the end user's own profile (/me) needs beyond store/users.ts. */
import type { Sql } from "../../../../core/db";

export interface MyTenantRow {
  id: string;
  display_id: string;
  slug: string;
  display_name: string;
  status: string;
  role: string | null;
}

/**
 * The tenants a user belongs to, with their role there, oldest membership first.
 * One single-table read of the user's memberships, then a primary-key lookup per tenant: in
 * bun:sqlite even an empty JOIN with a correlated subquery costs ~12 µs against ~0.5 µs for
 * the membership read, and an ORDER BY needs a temporary B-tree, so the few rows are sorted here.
 */
export async function tenantsOfUser(db: Sql, appId: string, userId: string): Promise<MyTenantRow[]> {
  const memberships = await db.all<{ id: string; tenant_id: string; role_id: string | null; joined_at: string }>(
    "SELECT id, tenant_id, role_id, joined_at FROM auth_tenant_members WHERE user_id = ?",
    userId,
  );
  if (!memberships.length) return [];
  // ORDER BY joined_at, id: both ASCII, so code-unit order is SQLite's BINARY order.
  memberships.sort((a, b) => (a.joined_at < b.joined_at ? -1 : a.joined_at > b.joined_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const out: MyTenantRow[] = [];
  for (const m of memberships) {
    const t = await db.get<Omit<MyTenantRow, "role"> & { app_id: string }>("SELECT id, display_id, slug, display_name, status, app_id FROM auth_tenants WHERE id = ?", m.tenant_id);
    if (!t || t.app_id !== appId) continue;
    const role = m.role_id ? await db.get<{ name: string }>("SELECT name FROM auth_roles WHERE id = ?", m.role_id) : null;
    out.push({ id: t.id, display_id: t.display_id, slug: t.slug, display_name: t.display_name, status: t.status, role: role?.name ?? null });
  }
  return out;
}

/** Enabled MFA factors: confirmed and not disabled. */
export const enabledFactorCount = async (db: Sql, userId: string) =>
  (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM auth_mfa_factors WHERE user_id = ? AND confirmed_at IS NOT NULL AND disabled_at IS NULL", userId))!.n;

/** Revokes every live session of the user except `keepSessionId`. */
export const revokeOtherSessions = (db: Sql, userId: string, keepSessionId: string, now: string) =>
  db.run("UPDATE auth_sessions SET revoked_at = ? WHERE user_id = ? AND id <> ? AND revoked_at IS NULL", now, userId, keepSessionId);
