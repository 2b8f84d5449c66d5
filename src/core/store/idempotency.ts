/** SQL of src/core/idempotency.ts. Statements are prepared once per Idempotency instance. */
import type { Db } from "../db";

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
};

export function prepareIdempotencyStore(db: Db) {
  const find = db.prepare<IdempotencyRow, { scope: string; key: string }>(
    `SELECT fingerprint, claim_id, status, body, headers, expires_ms, lease_until_ms
     FROM core_idempotency_keys WHERE scope = $scope AND key = $key`,
  );
  // Also overwrites: the caller only claims after find() said the row is absent or dead.
  const claim = db.prepare<never, IdempotencyClaim>(
    `INSERT INTO core_idempotency_keys
       (scope, key, fingerprint, claim_id, status, body, headers, created_ms, expires_ms, lease_until_ms)
     VALUES ($scope, $key, $fingerprint, $claimId, NULL, NULL, NULL, $now, $expires, $leaseUntil)
     ON CONFLICT (scope, key) DO UPDATE SET
       fingerprint = excluded.fingerprint, claim_id = excluded.claim_id, status = NULL, body = NULL,
       headers = NULL, created_ms = excluded.created_ms, expires_ms = excluded.expires_ms,
       lease_until_ms = excluded.lease_until_ms`,
  );
  const complete = db.prepare<never, { scope: string; key: string; claimId: string; status: number; body: string | null; headers: string }>(
    `UPDATE core_idempotency_keys SET status = $status, body = $body, headers = $headers, lease_until_ms = NULL
     WHERE scope = $scope AND key = $key AND claim_id = $claimId AND status IS NULL`,
  );
  const release = db.prepare<never, { scope: string; key: string; claimId: string }>(
    "DELETE FROM core_idempotency_keys WHERE scope = $scope AND key = $key AND claim_id = $claimId AND status IS NULL",
  );
  const purge = db.prepare<never, { now: number }>("DELETE FROM core_idempotency_keys WHERE expires_ms <= $now");

  return {
    find: (scope: string, key: string) => find.get({ scope, key }),
    claim: (c: IdempotencyClaim) => void claim.run(c),
    /** Stores the result; false if the claim was lost (taken over after its lease ran out). */
    complete: (scope: string, key: string, claimId: string, status: number, body: string | null, headers: string) =>
      complete.run({ scope, key, claimId, status, body, headers }).changes === 1,
    release: (scope: string, key: string, claimId: string) => void release.run({ scope, key, claimId }),
    purgeExpired: (now: number) => purge.run({ now }).changes,
  };
}

export type IdempotencyStore = ReturnType<typeof prepareIdempotencyStore>;
