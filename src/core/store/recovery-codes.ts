/**
 * MFA recovery codes, the same rows for every kind of owner: console accounts
 * (platform_recovery_codes.account_id) and App users (auth_recovery_codes.user_id). Table and
 * column names come from the owning store's constant, never from input.
 */
import type { Sql } from "./sql";

export interface RecoveryCodeTable {
  readonly table: string;
  /** Column of the owner's id. */
  readonly owner: string;
}

/** Replaces every recovery code of the owner (used or not) with the given hashes. Run it in a transaction. */
export async function replaceRecoveryCodes(db: Sql, c: RecoveryCodeTable, ownerId: string, hashes: { id: string; hash: string }[], now: string): Promise<void> {
  await db.run(`DELETE FROM ${c.table} WHERE ${c.owner} = ?`, ownerId);
  if (!hashes.length) return;
  // One statement for all of them: one round trip on PostgreSQL.
  const values = hashes.map(() => "(?, ?, ?, NULL, ?)").join(", ");
  await db.run(`INSERT INTO ${c.table} (id, ${c.owner}, code_hash, used_at, created_at) VALUES ${values}`, ...hashes.flatMap((h) => [h.id, ownerId, h.hash, now]));
}

/** Marks an unused code used; 1 when it was the owner's and still unused. */
export const useRecoveryCode = (db: Sql, c: RecoveryCodeTable, ownerId: string, hash: string, now: string) =>
  db.run(`UPDATE ${c.table} SET used_at = ? WHERE ${c.owner} = ? AND code_hash = ? AND used_at IS NULL`, now, ownerId, hash);

export const unusedRecoveryCodes = async (db: Sql, c: RecoveryCodeTable, ownerId: string) =>
  Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${c.table} WHERE ${c.owner} = ? AND used_at IS NULL`, ownerId))?.n ?? 0);
