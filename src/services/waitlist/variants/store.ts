/** The SQL of variants: the variants of a waitlist, the public pages' view counts and the statistics read with them. */
import type { Sql } from "../../../core/db";
import { updateById } from "../../../core/store/sql";
import type { EntryStatus } from "../entries";
import type { VariantRow } from "../waitlists";

// ------------------------------------------------------------------ variants

export const variantsOf = (db: Sql, waitlistId: string) => db.all<VariantRow>("SELECT * FROM waitlist_variants WHERE waitlist_id = ? ORDER BY created_at, id", waitlistId);
export const variantById = (db: Sql, waitlistId: string, id: string) => db.get<VariantRow>("SELECT * FROM waitlist_variants WHERE waitlist_id = ? AND id = ?", waitlistId, id);
export const variantNameTaken = async (db: Sql, waitlistId: string, name: string, exceptId: string) =>
  !!(await db.get("SELECT 1 AS one FROM waitlist_variants WHERE waitlist_id = ? AND name = ? AND id <> ?", waitlistId, name, exceptId));
const VARIANT_PATCHABLE = ["name", "display_name", "description", "cta_text", "weight", "active"] as const;
export const updateVariant = (db: Sql, id: string, patch: Partial<VariantRow>, at: string) => updateById(db, "waitlist_variants", id, patch, VARIANT_PATCHABLE, at);
export const deleteVariant = (db: Sql, id: string) => db.run("DELETE FROM waitlist_variants WHERE id = ?", id);

// ------------------------------------------------------------------ views and analytics

/** Adds counted views (write-behind batches). */
export async function addViews(db: Sql, rows: { waitlist_id: string; day: string; variant_id: string; views: number }[]): Promise<void> {
  for (const r of rows) {
    await db.run(
      `INSERT INTO waitlist_views (waitlist_id, day, variant_id, views) VALUES ($waitlist_id, $day, $variant_id, $views)
       ON CONFLICT (waitlist_id, day, variant_id) DO UPDATE SET views = waitlist_views.views + excluded.views`,
      { ...r },
    );
  }
}

export const viewsBetween = (db: Sql, waitlistId: string, since: string, until: string) =>
  db.all<{ day: string; variant_id: string; views: number }>(
    "SELECT day, variant_id, views FROM waitlist_views WHERE waitlist_id = ? AND day >= ? AND day <= ? ORDER BY day",
    waitlistId,
    since,
    until,
  );

/** Per day: sign-ups, referred sign-ups; sign-ups per variant; approvals and rejections by decided day. */
export const signupsByDay = (db: Sql, waitlistId: string, since: string, until: string) =>
  db.all<{ day: string; variant_id: string | null; signups: number; referred: number }>(
    `SELECT substr(created_at, 1, 10) AS day, variant_id, COUNT(*) AS signups, SUM(CASE WHEN referred_by_entry_id IS NULL THEN 0 ELSE 1 END) AS referred
       FROM waitlist_entries WHERE waitlist_id = ? AND created_at >= ? AND created_at < ? GROUP BY substr(created_at, 1, 10), variant_id`,
    waitlistId,
    since,
    until,
  );

export const decisionsByDay = (db: Sql, waitlistId: string, since: string, until: string) =>
  db.all<{ day: string; status: EntryStatus; n: number }>(
    `SELECT substr(decided_at, 1, 10) AS day, status, COUNT(*) AS n FROM waitlist_entries
      WHERE waitlist_id = ? AND decided_at IS NOT NULL AND decided_at >= ? AND decided_at < ? GROUP BY substr(decided_at, 1, 10), status`,
    waitlistId,
    since,
    until,
  );

export const topReferrers = (db: Sql, waitlistId: string, n: number) =>
  db.all<{ id: string; email: string; name: string | null; referral_code: string; referral_count: number }>(
    "SELECT id, email, name, referral_code, referral_count FROM waitlist_entries WHERE waitlist_id = ? AND referral_count > 0 ORDER BY referral_count DESC, created_at, id LIMIT ?",
    waitlistId,
    n,
  );

export const utmSources = (db: Sql, waitlistId: string, since: string, until: string) =>
  db.all<{ source: string | null; n: number }>(
    "SELECT utm_source AS source, COUNT(*) AS n FROM waitlist_entries WHERE waitlist_id = ? AND created_at >= ? AND created_at < ? GROUP BY utm_source ORDER BY COUNT(*) DESC, utm_source",
    waitlistId,
    since,
    until,
  );

