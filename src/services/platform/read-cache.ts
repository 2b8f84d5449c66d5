/**
 * Bounded read-through cache for platform rows read on every request (API keys by hash,
 * workspaces by slug or id), so the hot path does not pay a SQLite read transaction for
 * each of them.
 *
 * Exact, not "eventually consistent": every platform mutation writes an audit entry, which
 * moves the platform generation (audit.ts), and the cache empties itself as soon as it sees
 * a new generation. So a revoked key, a changed role policy or a suspended account takes
 * effect on the very next request. Inside a transaction it is bypassed, so a row read
 * before a rollback can never be cached. Misses (null) are not cached: unknown keys cannot
 * fill it.
 */
import type { AppContext } from "../../context";
import { platformGeneration } from "./audit";

export class PlatformReadCache<V extends object> {
  private gen = -1;
  private entries = new Map<string, V>();

  constructor(
    private readonly ctx: AppContext,
    private readonly max = 10_000,
  ) {}

  get(key: string, load: (key: string) => V | null): V | null {
    if (this.ctx.db.inTransaction) return load(key);
    const gen = platformGeneration(this.ctx);
    if (gen !== this.gen) {
      this.entries.clear();
      this.gen = gen;
    }
    const hit = this.entries.get(key);
    if (hit) return hit;
    const value = load(key);
    if (value) {
      if (this.entries.size >= this.max) this.entries.clear();
      this.entries.set(key, value);
    }
    return value;
  }
}
