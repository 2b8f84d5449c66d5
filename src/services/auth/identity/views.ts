/**
 * What the users' routes serve, one serialiser per record: rows turned into the records of
 * schemas.ts, whose TypeBox models are the types too (one declaration for the documented and
 * the served shape).
 */
import type { Static } from "@sinclair/typebox";
import { factorStatus } from "../../../kernel/identity";
import type { Factor, Member, Role, Tenant } from "./schemas";
import type { FactorRow } from "./store/mfa";
import type { RoleRow } from "./store/roles";
import type { MemberRow, TenantRow } from "./store/tenants";

export type TenantView = Static<typeof Tenant>;
export type MemberView = Static<typeof Member>;
export type RoleView = Static<typeof Role>;
export type FactorView = Static<typeof Factor>;

export const tenantView = (t: TenantRow): TenantView => ({
  id: t.id,
  display_id: t.display_id,
  app_id: t.app_id,
  slug: t.slug,
  display_name: t.display_name,
  status: t.status,
  metadata: JSON.parse(t.metadata),
  created_at: t.created_at,
  updated_at: t.updated_at,
});

export const memberView = (m: MemberRow): MemberView => ({
  id: m.id,
  tenant_id: m.tenant_id,
  account_id: m.user_id,
  role_id: m.role_id,
  role_name: m.role_name,
  joined_at: m.joined_at,
  invited_by: m.invited_by,
});

export const roleView = (r: RoleRow): RoleView => ({
  id: r.id,
  app_id: r.app_id,
  name: r.name,
  description: r.description,
  permissions: JSON.parse(r.permissions),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const factorView = (f: FactorRow): FactorView => ({
  id: f.id,
  type: f.type,
  name: f.name,
  status: factorStatus(f),
  email: f.email,
  created_at: f.created_at,
  confirmed_at: f.confirmed_at,
  disabled_at: f.disabled_at,
});
