/**
 * Persistent rate limits, failure streaks and lock-outs, stored in the database so a
 * restart doesn't reset them and every node sees the same counts. Keys are free-form and namespaced by the caller, e.g.
 * `signin:burst:<id>`, `signin:fail:<id>`, `signin:lock:<id>`.
 *
 * Typical sign-in use:
 *   if (rl.lockedUntil(lockKey)) -> 429
 *   if (!rl.hit(burstKey, 5, MINUTE).allowed) -> 429
 *   bad password: if (rl.recordFailure(failKey, 15 * MINUTE) >= 4) { rl.lock(lockKey, now + 15 * MINUTE); rl.clearFailures(failKey) }
 *   good password: rl.clearFailures(failKey)
 *
 * Expired rows are ignored by every read; purgeExpired() (a scheduled job) deletes them.
 */
import type { Clock } from "./clock";
import type { Db, Sql } from "./db";
import * as store from "./store/ratelimit";

export interface HitResult {
  allowed: boolean;
  /** Hits counted in the window after this call (a denied attempt is not counted). */
  count: number;
  /** 0 when allowed; otherwise how long until the oldest counted hit leaves the window. */
  retryAfterMs: number;
}

/**
 * Limits up to this many hits per window are kept exactly, as a sliding log (a row per hit,
 * counted on every check). Above it, as a sliding-window counter (Cloudflare's
 * approximation): the previous fixed window's count weighted by how much of it still lies in
 * the last `windowMs`, plus the current window's; two rows per key, so a check costs the same
 * however high the limit (an operator's 10,000 mails a second would otherwise count up to
 * 10,000 rows twice per request). The estimate assumes the previous window's hits were
 * spread evenly; it never lets more than `limit` in within one fixed window.
 */
export const EXACT_LIMIT_MAX = 1000;

export class RateLimiter {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /**
   * Counts an attempt against `limit` per `windowMs`, as a sliding log: the window is
   * always the last `windowMs` before now, so there is no burst of 2x`limit` across a
   * fixed-window boundary. A hit at t counts while now < t + windowMs.
   * Denied attempts are not recorded: rows per key stay bounded by `limit`, and a client
   * that keeps hammering regains one slot each time its oldest allowed hit ages out.
   */
  hit(key: string, limit: number, windowMs: number): Promise<HitResult> {
    return this.hitMany(key, 1, limit, windowMs);
  }

  /**
   * Counts `n` attempts at once (all or none), as `n` calls of hit() would if they all fit:
   * allowed when the window holds at most `limit - n` hits; a denied call records nothing.
   * One statement instead of `n` round trips.
   */
  async hitMany(key: string, n: number, limit: number, windowMs: number): Promise<HitResult> {
    checkLimit(limit, windowMs);
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`hit count must be a positive integer, got ${n}`);
    if (limit > EXACT_LIMIT_MAX) return this.hitWindow(key, n, limit, windowMs);
    const now = this.clock.nowMs();
    const since = now - windowMs;
    // Checked and recorded in one transaction: one count of the window, not one to decide and one to answer.
    const r = n > limit ? { allowed: false, ...(await store.windowStats(this.db, key, since)) } : await store.hitLog(this.db, { key, n, now, since, expires: now + windowMs, limit });
    let retryAfterMs = 0;
    if (!r.allowed) {
      // The time until enough hits leave the window for n more to fit. When the limit was
      // lowered since the hits were recorded this is optimistic; a retry simply gets a new answer.
      const at = n > limit ? null : await store.nthHit(this.db, key, since, r.n - (limit - n) - 1);
      retryAfterMs = Math.max(0, (at ?? r.oldest ?? now) + windowMs - now);
    }
    return { allowed: r.allowed, count: r.n, retryAfterMs };
  }

  /**
   * Counts `n` attempts with the sliding-window counter whatever the limit (hit and hitMany
   * use it above EXACT_LIMIT_MAX). On `on`, a transaction handle: the slots are taken in that
   * transaction and given back if it rolls back (a sign-up takes its slots in the commit
   * that writes its entry).
   */
  async hitWindow(key: string, n: number, limit: number, windowMs: number, on: Sql = this.db): Promise<HitResult> {
    checkLimit(limit, windowMs);
    const now = this.clock.nowMs();
    const start = now - (now % windowMs);
    const elapsed = now - start;
    const weight = (windowMs - elapsed) / windowMs;
    const r = n > limit ? { allowed: false, cur: 0, prev: 0 } : await store.bumpWindow(on, { key, start, windowMs, weight, n, limit }, on !== this.db);
    const count = Math.floor(r.prev * weight) + r.cur;
    const rollMs = windowMs - elapsed;
    if (r.allowed) return { allowed: true, count, retryAfterMs: 0 };
    // Until the estimate leaves room for n more: the previous window's share fades linearly;
    // when the current window alone is too full, the next window.
    let retryAfterMs = rollMs;
    if (n <= limit && r.cur + n <= limit && r.prev > 0) {
      retryAfterMs = Math.min(rollMs, Math.max(0, Math.ceil((windowMs * (r.prev - (limit - r.cur - n))) / r.prev) - elapsed));
    }
    return { allowed: false, count, retryAfterMs };
  }

  /**
   * How long until a hit would be allowed (0: now), without counting one: the time until
   * enough of the counted hits have left the window to bring them under `limit`.
   * For limits that count failures rather than attempts: check with waitMs, then
   * record each failure with hit().
   */
  async waitMs(key: string, limit: number, windowMs: number): Promise<number> {
    checkLimit(limit, windowMs);
    const now = this.clock.nowMs();
    const since = now - windowMs;
    const { n } = await store.windowStats(this.db, key, since);
    if (n < limit) return 0;
    const at = await store.nthHit(this.db, key, since, n - limit);
    return at === null ? 0 : Math.max(0, at + windowMs - now);
  }

  /** Hits in the last `windowMs`, without counting one. */
  async count(key: string, windowMs: number): Promise<number> {
    return (await store.windowStats(this.db, key, this.clock.nowMs() - windowMs)).n;
  }

  /**
   * Adds a failure to the key's streak and returns its length. The streak ends (the
   * next failure counts 1 again) once `windowMs` passes without a failure, or on
   * clearFailures() after a success. Measuring from the latest failure rather than the
   * first means a slow, steady guesser still accumulates failures.
   */
  async recordFailure(key: string, windowMs: number): Promise<number> {
    checkLimit(1, windowMs);
    const now = this.clock.nowMs();
    return store.recordFailure(this.db, key, now, now + windowMs);
  }

  /** Current streak length, 0 when none or expired. */
  failures(key: string): Promise<number> {
    return store.failures(this.db, key, this.clock.nowMs());
  }

  clearFailures(key: string): Promise<void> {
    return store.clearFailures(this.db, key);
  }

  /**
   * Locks the key until the instant `untilMs` (epoch ms, from the clock). An existing
   * later lock is kept, so a short lock never cuts a long one; unlock() first to shorten.
   * Returns the effective end of the lock.
   */
  lock(key: string, untilMs: number): Promise<number> {
    return store.lock(this.db, key, untilMs);
  }

  /** End of the lock (epoch ms), or null when there is none or it has passed. */
  lockedUntil(key: string): Promise<number | null> {
    return store.lockedUntil(this.db, key, this.clock.nowMs());
  }

  unlock(key: string): Promise<void> {
    return store.unlock(this.db, key);
  }

  /** Deletes expired hits, failure streaks and locks. Returns the number of rows removed. */
  purgeExpired(): Promise<number> {
    return store.purgeExpired(this.db, this.clock.nowMs());
  }
}

function checkLimit(limit: number, windowMs: number) {
  // Programming errors, not client input: a zero window or limit would silently deny or allow everything.
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`rate limit must be a positive integer, got ${limit}`);
  if (!Number.isFinite(windowMs) || windowMs <= 0) throw new RangeError(`rate limit window must be positive, got ${windowMs}`);
}
