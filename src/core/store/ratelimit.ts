/** SQL of src/core/ratelimit.ts. Statements are prepared once per RateLimiter (hot path). */
import type { Db } from "../db";

export function prepareRateLimitStore(db: Db) {
  // One statement decides and records, so two writers can't both take the last slot.
  const insertHitIfUnder = db.prepare<never, { key: string; now: number; expires: number; since: number; limit: number }>(
    `INSERT INTO core_ratelimit_hits (key, at_ms, expires_ms)
     SELECT $key, $now, $expires
     WHERE (SELECT COUNT(*) FROM core_ratelimit_hits WHERE key = $key AND at_ms > $since) < $limit`,
  );
  const windowStats = db.prepare<{ n: number; oldest: number | null }, { key: string; since: number }>(
    "SELECT COUNT(*) AS n, MIN(at_ms) AS oldest FROM core_ratelimit_hits WHERE key = $key AND at_ms > $since",
  );
  // The hit whose leaving the window brings the count below the limit (index key_at).
  const nthHit = db.prepare<{ at_ms: number }, { key: string; since: number; offset: number }>(
    "SELECT at_ms FROM core_ratelimit_hits WHERE key = $key AND at_ms > $since ORDER BY at_ms LIMIT 1 OFFSET $offset",
  );
  const upsertFailure = db.prepare<{ count: number }, { key: string; now: number; expires: number }>(
    `INSERT INTO core_ratelimit_failures (key, count, expires_ms) VALUES ($key, 1, $expires)
     ON CONFLICT (key) DO UPDATE SET
       count = CASE WHEN core_ratelimit_failures.expires_ms <= $now THEN 1 ELSE core_ratelimit_failures.count + 1 END,
       expires_ms = excluded.expires_ms
     RETURNING count`,
  );
  const selectFailures = db.prepare<{ count: number }, { key: string; now: number }>(
    "SELECT count FROM core_ratelimit_failures WHERE key = $key AND expires_ms > $now",
  );
  const deleteFailures = db.prepare<never, { key: string }>("DELETE FROM core_ratelimit_failures WHERE key = $key");
  const upsertLock = db.prepare<{ until_ms: number }, { key: string; until: number }>(
    `INSERT INTO core_ratelimit_locks (key, until_ms) VALUES ($key, $until)
     ON CONFLICT (key) DO UPDATE SET until_ms = CASE
       WHEN excluded.until_ms > core_ratelimit_locks.until_ms THEN excluded.until_ms
       ELSE core_ratelimit_locks.until_ms END
     RETURNING until_ms`,
  );
  const selectLock = db.prepare<{ until_ms: number }, { key: string; now: number }>(
    "SELECT until_ms FROM core_ratelimit_locks WHERE key = $key AND until_ms > $now",
  );
  const deleteLock = db.prepare<never, { key: string }>("DELETE FROM core_ratelimit_locks WHERE key = $key");
  const purgeHits = db.prepare<never, { now: number }>("DELETE FROM core_ratelimit_hits WHERE expires_ms <= $now");
  const purgeFailures = db.prepare<never, { now: number }>("DELETE FROM core_ratelimit_failures WHERE expires_ms <= $now");
  const purgeLocks = db.prepare<never, { now: number }>("DELETE FROM core_ratelimit_locks WHERE until_ms <= $now");

  return {
    /** Records a hit unless `limit` hits already fall after `since`. True when recorded. */
    insertHitIfUnder: (key: string, now: number, since: number, expires: number, limit: number) =>
      insertHitIfUnder.run({ key, now, expires, since, limit }).changes === 1,
    windowStats: (key: string, since: number) => windowStats.get({ key, since }) ?? { n: 0, oldest: null },
    /** Time (ms) of the (offset+1)-th oldest hit after `since`, or null. */
    nthHit: (key: string, since: number, offset: number) => nthHit.get({ key, since, offset })?.at_ms ?? null,
    /** Adds one failure, restarting the streak at 1 if the previous one has expired. Returns the streak. */
    recordFailure: (key: string, now: number, expires: number) => upsertFailure.get({ key, now, expires })!.count,
    failures: (key: string, now: number) => selectFailures.get({ key, now })?.count ?? 0,
    clearFailures: (key: string) => void deleteFailures.run({ key }),
    /** Sets a lock, never shortening one already in place. Returns the effective end. */
    lock: (key: string, until: number) => upsertLock.get({ key, until })!.until_ms,
    lockedUntil: (key: string, now: number) => selectLock.get({ key, now })?.until_ms ?? null,
    unlock: (key: string) => void deleteLock.run({ key }),
    purgeExpired: (now: number) =>
      db.transaction(() => purgeHits.run({ now }).changes + purgeFailures.run({ now }).changes + purgeLocks.run({ now }).changes)(),
  };
}

export type RateLimitStore = ReturnType<typeof prepareRateLimitStore>;
