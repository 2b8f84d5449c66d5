/**
 * SQL for one-time codes sent to a contact: email / phone verification and end-user
 * password reset. Only an HMAC of the code is stored. At most one live code per
 * (App, purpose, target): minting supersedes the older ones in the same transaction.
 */
import type { Sql } from "../../../../core/db";

export type CodePurpose = "verify_email" | "verify_phone" | "password_reset";

export interface CodeRow {
  id: string;
  app_id: string;
  user_id: string | null;
  purpose: CodePurpose;
  target: string;
  code_hash: string;
  created_at: string;
  expires_at: number;
  consumed_at: string | null;
  superseded_at: string | null;
}

export const supersedeCodes = (db: Sql, appId: string, purpose: CodePurpose, target: string, now: string) =>
  db.run(
    "UPDATE auth_codes SET superseded_at = ? WHERE app_id = ? AND purpose = ? AND target = ? AND consumed_at IS NULL AND superseded_at IS NULL",
    now,
    appId,
    purpose,
    target,
  );

export async function insertCode(db: Sql, r: CodeRow): Promise<void> {
  await db.run(
    `INSERT INTO auth_codes (id, app_id, user_id, purpose, target, code_hash, created_at, expires_at, consumed_at, superseded_at)
     VALUES ($id, $app_id, $user_id, $purpose, $target, $code_hash, $created_at, $expires_at, $consumed_at, $superseded_at)`,
    { ...r },
  );
}

/** The target's unexpired, unused, unsuperseded code, if any. */
export const liveCode = (db: Sql, appId: string, purpose: CodePurpose, target: string, nowMs: number) =>
  db.get<CodeRow>(
    "SELECT * FROM auth_codes WHERE app_id = ? AND purpose = ? AND target = ? AND consumed_at IS NULL AND superseded_at IS NULL AND expires_at > ? ORDER BY created_at DESC LIMIT 1",
    appId,
    purpose,
    target,
    nowMs,
  );

/** Marks a live code used; 0 when it was used, superseded or burnt in the meantime. */
export const consumeCode = (db: Sql, id: string, now: string) =>
  db.run("UPDATE auth_codes SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL AND superseded_at IS NULL", now, id);

/** Burns a code after too many wrong guesses (it can no longer be used). */
export const burnCode = (db: Sql, id: string, now: string) => db.run("UPDATE auth_codes SET superseded_at = COALESCE(superseded_at, ?) WHERE id = ?", now, id);

/** Deletes codes that expired before `beforeMs` (nothing reads them any more). */
export const purgeCodes = (db: Sql, beforeMs: number) => db.run("DELETE FROM auth_codes WHERE expires_at < ?", beforeMs);
