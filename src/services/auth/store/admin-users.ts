/** SQL the admin user routes need beyond store/users.ts. */
import type { Sql } from "../../../core/db";

/** Bumps updated_at when only a contact changed (the user row itself did not). */
export const touchUser = (db: Sql, id: string, now: string) => db.run("UPDATE auth_users SET updated_at = ? WHERE id = ?", now, id);

/** Marks the primary email unverified, keeping its address. */
export const unverifyPrimaryEmail = (db: Sql, userId: string) =>
  db.run("UPDATE auth_contacts SET verified_at = NULL WHERE user_id = ? AND kind = 'email' AND is_primary = 1", userId);
