/**
 * Bounded read-through cache for platform rows read on every request (API keys by hash,
 * workspaces by slug or id), so the hot path does not pay a database read for each of them:
 * a hit answers at once, without a promise (core/maybe-promise.ts); only a miss waits.
 *
 * Exact, not "eventually consistent": every platform mutation writes an audit entry, which
 * moves the platform generation (audit.ts) at once and again when its transaction commits,
 * and the cache empties itself as soon as it sees a new generation. So a revoked key, a
 * changed role policy or a suspended account takes effect on the very next request. A load
 * the generation moved under is answered but not kept (it may have read the row before the
 * commit). Inside a transaction it is bypassed, so a row read before a rollback can never be
 * cached. Misses (null) are not cached: unknown keys cannot fill it. With several nodes
 * (PostgreSQL) an entry is also served for at most the cache bus's maxAgeMs.
 */
import type { Sql } from "../../core/db";
import { inTransaction } from "../../core/store/sql";
import { andThen, type MaybePromise } from "../../core/maybe-promise";
import type { AppContext } from "../../context";
import { platformGeneration } from "./audit";

export class PlatformReadCache<V extends object> {
  private gen = -1;
  private entries = new Map<string, { value: V; at: number }>();

  constructor(
    private readonly ctx: AppContext,
    private readonly max = 10_000,
  ) {}

  /** The value of key, read through `load` on a miss. db: the database, or a transaction handle (then the cache is bypassed). */
  get(db: Sql, key: string, load: (db: Sql, key: string) => MaybePromise<V | null>): MaybePromise<V | null> {
    if (db !== this.ctx.db || inTransaction(this.ctx.db)) return load(db, key);
    const gen = platformGeneration(this.ctx);
    if (gen !== this.gen) {
      this.entries.clear();
      this.gen = gen;
    }
    const maxAge = this.ctx.caches.maxAgeMs;
    const hit = this.entries.get(key);
    if (hit && (maxAge === Number.POSITIVE_INFINITY || this.ctx.clock.nowMs() - hit.at < maxAge)) return hit.value;
    return andThen(load(db, key), (value) => {
      if (value && platformGeneration(this.ctx) === gen) {
        if (this.entries.size >= this.max) this.entries.clear();
        this.entries.set(key, { value, at: maxAge === Number.POSITIVE_INFINITY ? 0 : this.ctx.clock.nowMs() });
      }
      return value;
    });
  }
}
