/** SQL of src/core/ratelimit.ts. */
import { lockKey, type Sql } from "./sql";

/**
 * Counts the key's hits after `since` and records `n` more at `now` unless they would pass
 * `limit` (all or none), in one transaction: on SQLite nothing runs between the count and
 * the insert; on PostgreSQL (READ COMMITTED, several nodes) a transaction-scoped advisory
 * lock on the key serialises them. Answers the window's count and oldest hit afterwards.
 */
export async function hitLog(
  db: Sql,
  h: { key: string; n: number; now: number; since: number; expires: number; limit: number },
): Promise<{ allowed: boolean; n: number; oldest: number | null }> {
  return db.tx(async (t) => {
    if (t.engine === "postgres") await lockKey(t, `ratelimit:${h.key}`);
    const before = await windowStats(t, h.key, h.since);
    if (before.n + h.n > h.limit) return { allowed: false, ...before };
    await t.run(
      `WITH RECURSIVE slots(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM slots WHERE i < $n)
       INSERT INTO core_ratelimit_hits (key, at_ms, expires_ms) SELECT $key, $now, $expires FROM slots`,
      { key: h.key, n: h.n, now: h.now, expires: h.expires },
    );
    return { allowed: true, n: before.n + h.n, oldest: before.oldest ?? h.now };
  });
}

/**
 * Sliding-window counter (limits above the exact log's ceiling): the estimate of the last
 * window is floor(previous window's count x weight) + the current window's count. Adds `n`
 * to the current window unless the estimate would pass `limit`; one transaction reads both
 * counters and writes (with a transaction-scoped lock of the key on PostgreSQL).
 */
export async function bumpWindow(
  db: Sql,
  w: { key: string; start: number; windowMs: number; weight: number; n: number; limit: number },
  /** db is the caller's open transaction: the lock lasts until it ends, and a savepoint of its own would only cost. */
  inCallersTx = false,
): Promise<{ allowed: boolean; cur: number; prev: number }> {
  const bump = async (t: Sql) => {
    if (t.engine === "postgres") await lockKey(t, `ratelimit:${w.key}`);
    const rows = await t.all<{ start_ms: number; count: number }>(
      "SELECT start_ms, count FROM core_ratelimit_windows WHERE key = ? AND start_ms IN (?, ?)",
      w.key,
      w.start,
      w.start - w.windowMs,
    );
    let cur = 0;
    let prev = 0;
    for (const r of rows) {
      if (Number(r.start_ms) === w.start) cur = Number(r.count);
      else prev = Number(r.count);
    }
    if (Math.floor(prev * w.weight) + cur + w.n > w.limit) return { allowed: false, cur, prev };
    await t.run(
      `INSERT INTO core_ratelimit_windows (key, start_ms, count, expires_ms) VALUES (?, ?, ?, ?)
       ON CONFLICT (key, start_ms) DO UPDATE SET count = core_ratelimit_windows.count + excluded.count`,
      w.key,
      w.start,
      w.n,
      w.start + 2 * w.windowMs,
    );
    return { allowed: true, cur: cur + w.n, prev };
  };
  return inCallersTx ? bump(db) : db.tx(bump);
}

export async function windowStats(db: Sql, key: string, since: number): Promise<{ n: number; oldest: number | null }> {
  const row = await db.get<{ n: number; oldest: number | null }>("SELECT COUNT(*) AS n, MIN(at_ms) AS oldest FROM core_ratelimit_hits WHERE key = $key AND at_ms > $since", { key, since });
  // Numbers on both engines (PostgreSQL's COUNT and BIGINT may arrive as text).
  return { n: Number(row?.n ?? 0), oldest: row?.oldest == null ? null : Number(row.oldest) };
}

/** Time (ms) of the (offset+1)-th oldest hit after `since`, or null (index key_at). */
export async function nthHit(db: Sql, key: string, since: number, offset: number): Promise<number | null> {
  const row = await db.get<{ at_ms: number }>("SELECT at_ms FROM core_ratelimit_hits WHERE key = $key AND at_ms > $since ORDER BY at_ms LIMIT 1 OFFSET $offset", { key, since, offset });
  return row?.at_ms ?? null;
}

/** Adds one failure, restarting the streak at 1 if the previous one has expired. Returns the streak. */
export async function recordFailure(db: Sql, key: string, now: number, expires: number): Promise<number> {
  const row = await db.get<{ count: number }>(
    `INSERT INTO core_ratelimit_failures (key, count, expires_ms) VALUES ($key, 1, $expires)
     ON CONFLICT (key) DO UPDATE SET
       count = CASE WHEN core_ratelimit_failures.expires_ms <= $now THEN 1 ELSE core_ratelimit_failures.count + 1 END,
       expires_ms = excluded.expires_ms
     RETURNING count`,
    { key, now, expires },
  );
  return row!.count;
}

export async function failures(db: Sql, key: string, now: number): Promise<number> {
  return (await db.get<{ count: number }>("SELECT count FROM core_ratelimit_failures WHERE key = $key AND expires_ms > $now", { key, now }))?.count ?? 0;
}

export async function clearFailures(db: Sql, key: string): Promise<void> {
  await db.run("DELETE FROM core_ratelimit_failures WHERE key = ?", key);
}

/** Sets a lock, never shortening one already in place. Returns the effective end. */
export async function lock(db: Sql, key: string, until: number): Promise<number> {
  const row = await db.get<{ until_ms: number }>(
    `INSERT INTO core_ratelimit_locks (key, until_ms) VALUES ($key, $until)
     ON CONFLICT (key) DO UPDATE SET until_ms = CASE
       WHEN excluded.until_ms > core_ratelimit_locks.until_ms THEN excluded.until_ms
       ELSE core_ratelimit_locks.until_ms END
     RETURNING until_ms`,
    { key, until },
  );
  return row!.until_ms;
}

export async function lockedUntil(db: Sql, key: string, now: number): Promise<number | null> {
  return (await db.get<{ until_ms: number }>("SELECT until_ms FROM core_ratelimit_locks WHERE key = $key AND until_ms > $now", { key, now }))?.until_ms ?? null;
}

export async function unlock(db: Sql, key: string): Promise<void> {
  await db.run("DELETE FROM core_ratelimit_locks WHERE key = ?", key);
}

export function purgeExpired(db: Sql, now: number): Promise<number> {
  return db.tx(
    async (t) =>
      (await t.run("DELETE FROM core_ratelimit_hits WHERE expires_ms <= ?", now)) +
      (await t.run("DELETE FROM core_ratelimit_windows WHERE expires_ms <= ?", now)) +
      (await t.run("DELETE FROM core_ratelimit_failures WHERE expires_ms <= ?", now)) +
      (await t.run("DELETE FROM core_ratelimit_locks WHERE until_ms <= ?", now)),
  );
}
