/** SQL the admin user routes need beyond store/users.ts. */
import type { Db } from "../../../core/db";

/** Bumps updated_at when only a contact changed (the user row itself did not). */
export const touchUser = (db: Db, id: string, now: string) => db.query("UPDATE auth_users SET updated_at = ? WHERE id = ?").run(now, id).changes;

/** Marks the primary email unverified, keeping its address. */
export const unverifyPrimaryEmail = (db: Db, userId: string) =>
  db.query("UPDATE auth_contacts SET verified_at = NULL WHERE user_id = ? AND kind = 'email' AND is_primary = 1").run(userId).changes;
