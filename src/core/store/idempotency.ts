/** SQL of src/core/idempotency.ts. */
import type { Sql } from "./sql";

export interface IdempotencyRow {
  fingerprint: string;
  claim_id: string;
  status: number | null;
  body: string | null;
  headers: string | null;
  expires_ms: number;
  lease_until_ms: number | null;
}

export type IdempotencyClaim = {
  scope: string;
  key: string;
  fingerprint: string;
  claimId: string;
  now: number;
  expires: number;
  leaseUntil: number;
  /** claim_id of the dead row findKey() saw, null when it saw none: only that row may be replaced. */
  replaces: string | null;
};

export function findKey(db: Sql, scope: string, key: string): Promise<IdempotencyRow | null> {
  // FOR UPDATE on PostgreSQL: two nodes claiming one key serialise on the row (when it exists;
  // when it does not, the primary key makes the second INSERT wait for the first to commit).
  return db.get<IdempotencyRow>(
    `SELECT fingerprint, claim_id, status, body, headers, expires_ms, lease_until_ms
     FROM core_idempotency_keys WHERE scope = $scope AND key = $key${db.engine === "postgres" ? " FOR UPDATE" : ""}`,
    { scope, key },
  );
}

/**
 * Inserts the claim, or replaces the dead row findKey() saw (`replaces`). False when another
 * request claimed the key in between: on PostgreSQL two requests can both find no row, and
 * the second INSERT then waits for the first to commit and must not overwrite its claim.
 */
export async function claimKey(db: Sql, c: IdempotencyClaim): Promise<boolean> {
  const { replaces, ...row } = c;
  const changed = await db.run(
    `INSERT INTO core_idempotency_keys
       (scope, key, fingerprint, claim_id, status, body, headers, created_ms, expires_ms, lease_until_ms)
     VALUES ($scope, $key, $fingerprint, $claimId, NULL, NULL, NULL, $now, $expires, $leaseUntil)
     ON CONFLICT (scope, key) DO UPDATE SET
       fingerprint = excluded.fingerprint, claim_id = excluded.claim_id, status = NULL, body = NULL,
       headers = NULL, created_ms = excluded.created_ms, expires_ms = excluded.expires_ms,
       lease_until_ms = excluded.lease_until_ms
     WHERE core_idempotency_keys.claim_id = $replaces`,
    { ...row, replaces },
  );
  return changed === 1;
}

/** Stores the result; false if the claim was lost (taken over after its lease ran out). */
export async function completeKey(db: Sql, scope: string, key: string, claimId: string, status: number, body: string | null, headers: string): Promise<boolean> {
  const changed = await db.run(
    `UPDATE core_idempotency_keys SET status = $status, body = $body, headers = $headers, lease_until_ms = NULL
     WHERE scope = $scope AND key = $key AND claim_id = $claimId AND status IS NULL`,
    { scope, key, claimId, status, body, headers },
  );
  return changed === 1;
}

export async function releaseKey(db: Sql, scope: string, key: string, claimId: string): Promise<void> {
  await db.run("DELETE FROM core_idempotency_keys WHERE scope = $scope AND key = $key AND claim_id = $claimId AND status IS NULL", { scope, key, claimId });
}

export function purgeExpiredKeys(db: Sql, now: number): Promise<number> {
  return db.run("DELETE FROM core_idempotency_keys WHERE expires_ms <= ?", now);
}
