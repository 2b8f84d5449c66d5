/** The SQL of waitlists: the workspace settings, the waitlists, and the rows a waitlist is created with (its counts, its default variant). */
import type { Sql } from "../../../core/db";
import { updateById } from "../../../core/store/sql";

export type WaitlistStatus = "draft" | "open" | "paused" | "closed";

// ------------------------------------------------------------------ workspace settings

export interface SettingsRow {
  workspace_id: string;
  default_sender_domain_id: string | null;
  default_sender_address: string | null;
  default_auth_app_slug: string | null;
  brand_name: string | null;
  brand_logo_url: string | null;
  primary_color: string | null;
  notifications_via_mail: number;
  welcome_template_name: string | null;
  approved_template_name: string | null;
  rejected_template_name: string | null;
  updated_at: string;
}

export const settingsOf = (db: Sql, workspaceId: string) => db.get<SettingsRow>("SELECT * FROM waitlist_settings WHERE workspace_id = ?", workspaceId);

export async function upsertSettings(db: Sql, r: SettingsRow): Promise<void> {
  await db.run(
    `INSERT INTO waitlist_settings (workspace_id, default_sender_domain_id, default_sender_address, default_auth_app_slug, brand_name, brand_logo_url, primary_color,
       notifications_via_mail, welcome_template_name, approved_template_name, rejected_template_name, updated_at)
     VALUES ($workspace_id, $default_sender_domain_id, $default_sender_address, $default_auth_app_slug, $brand_name, $brand_logo_url, $primary_color,
       $notifications_via_mail, $welcome_template_name, $approved_template_name, $rejected_template_name, $updated_at)
     ON CONFLICT (workspace_id) DO UPDATE SET default_sender_domain_id = excluded.default_sender_domain_id, default_sender_address = excluded.default_sender_address,
       default_auth_app_slug = excluded.default_auth_app_slug, brand_name = excluded.brand_name, brand_logo_url = excluded.brand_logo_url, primary_color = excluded.primary_color,
       notifications_via_mail = excluded.notifications_via_mail, welcome_template_name = excluded.welcome_template_name,
       approved_template_name = excluded.approved_template_name, rejected_template_name = excluded.rejected_template_name, updated_at = excluded.updated_at`,
    { ...r },
  );
}

/** True when a workspace's settings name this mail domain (the mail service refuses its delete). */
export const domainUsed = async (db: Sql, domainId: string): Promise<boolean> =>
  !!(await db.get("SELECT 1 AS one FROM waitlist_settings WHERE default_sender_domain_id = ?", domainId));

// ------------------------------------------------------------------ waitlists

export interface WaitlistRow {
  id: string;
  workspace_id: string;
  workspace_slug: string;
  previous_workspace_slug: string | null;
  slug: string;
  display_name: string;
  description: string | null;
  status: WaitlistStatus;
  settings: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export async function insertWaitlist(db: Sql, r: WaitlistRow): Promise<void> {
  await db.run(
    `INSERT INTO waitlist_waitlists (id, workspace_id, workspace_slug, previous_workspace_slug, slug, display_name, description, status, settings, created_by, created_at, updated_at)
     VALUES ($id, $workspace_id, $workspace_slug, $previous_workspace_slug, $slug, $display_name, $description, $status, $settings, $created_by, $created_at, $updated_at)`,
    { ...r },
  );
}

export const waitlistById = (db: Sql, id: string) => db.get<WaitlistRow>("SELECT * FROM waitlist_waitlists WHERE id = ?", id);
export const waitlistInWorkspace = (db: Sql, workspaceId: string, id: string) =>
  db.get<WaitlistRow>("SELECT * FROM waitlist_waitlists WHERE workspace_id = ? AND id = ?", workspaceId, id);
export const slugTaken = async (db: Sql, workspaceId: string, slug: string) =>
  !!(await db.get("SELECT 1 AS one FROM waitlist_waitlists WHERE workspace_id = ? AND slug = ?", workspaceId, slug));

/** The public lookup: by the workspace's current slug, else by the slug it had before its last rename. */
export async function waitlistBySlugs(db: Sql, workspaceSlug: string, slug: string): Promise<WaitlistRow | null> {
  return (
    (await db.get<WaitlistRow>("SELECT * FROM waitlist_waitlists WHERE workspace_slug = ? AND slug = ?", workspaceSlug, slug)) ??
    (await db.get<WaitlistRow>("SELECT * FROM waitlist_waitlists WHERE previous_workspace_slug = ? AND slug = ?", workspaceSlug, slug))
  );
}

export function listWaitlists(db: Sql, f: { workspaceId: string; status: WaitlistStatus | null; before: { c: string; id: string } | null; limit: number }) {
  const where = ["workspace_id = ?"];
  const args: (string | number)[] = [f.workspaceId];
  if (f.status) {
    where.push("status = ?");
    args.push(f.status);
  }
  if (f.before) {
    where.push("(created_at < ? OR (created_at = ? AND id < ?))");
    args.push(f.before.c, f.before.c, f.before.id);
  }
  args.push(f.limit);
  return db.all<WaitlistRow>(`SELECT * FROM waitlist_waitlists WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`, ...args);
}

const WAITLIST_PATCHABLE = ["display_name", "description", "settings", "status"] as const;
export const updateWaitlist = (db: Sql, id: string, patch: Partial<WaitlistRow>, at: string) => updateById(db, "waitlist_waitlists", id, patch, WAITLIST_PATCHABLE, at);
export const deleteWaitlist = (db: Sql, id: string) => db.run("DELETE FROM waitlist_waitlists WHERE id = ?", id);

/** workspace.renamed: the new slug serves, the old one keeps answering. */
export const renameWorkspace = (db: Sql, workspaceId: string, oldSlug: string, newSlug: string) =>
  db.run("UPDATE waitlist_waitlists SET previous_workspace_slug = ?, workspace_slug = ? WHERE workspace_id = ?", oldSlug, newSlug, workspaceId);

/** A new waitlist's entry counts, at zero (waitlist_stats; entries/ keeps them from then on). */
export async function insertStats(db: Sql, waitlistId: string): Promise<void> {
  await db.run("INSERT INTO waitlist_stats (waitlist_id, total, pending) VALUES (?, 0, 0)", waitlistId);
}

// ------------------------------------------------------------------ a waitlist's default variant (variants/ keeps the others)

export interface VariantRow {
  id: string;
  waitlist_id: string;
  name: string;
  display_name: string | null;
  description: string | null;
  cta_text: string | null;
  weight: number;
  active: number;
  created_at: string;
  updated_at: string;
}

export async function insertVariant(db: Sql, r: VariantRow): Promise<void> {
  await db.run(
    `INSERT INTO waitlist_variants (id, waitlist_id, name, display_name, description, cta_text, weight, active, created_at, updated_at)
     VALUES ($id, $waitlist_id, $name, $display_name, $description, $cta_text, $weight, $active, $created_at, $updated_at)`,
    { ...r },
  );
}
