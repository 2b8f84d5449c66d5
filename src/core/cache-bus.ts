/**
 * Invalidation of in-process caches (platform reads, API keys, policies, signing keys),
 * on this node and on every other node sharing the database.
 *
 * A cache keeps a generation per topic and empties itself when the generation moves.
 * `changed(t, topic)` moves it at once on this node, and again on every node (this one
 * included) when t's transaction commits, through the database's notifications: on
 * SQLite an in-process delivery, on PostgreSQL a NOTIFY that each node LISTENs to. The
 * second move matters on this node too: a read that ran between the first move and the
 * commit saw the old row and may have cached it.
 *
 * A notification can be missed on PostgreSQL (a listener connection dropping and coming
 * back), so there caches also bound the age of an entry by `maxAgeMs` (CACHE_TTL_MS): the
 * documented time within which a change made on another node is seen everywhere.
 */
import type { Db, Sql } from "./db";

const CHANNEL = "bunker_cache";

export class CacheBus {
  private readonly generations = new Map<string, number>();
  private unlisten: (() => Promise<void>) | null = null;
  /** Longest time a cached entry may be served: Infinity on one node (SQLite). */
  readonly maxAgeMs: number;

  constructor(
    private readonly db: Db,
    ttlMs: number,
  ) {
    this.maxAgeMs = db.engine === "sqlite" ? Number.POSITIVE_INFINITY : ttlMs;
  }

  async start(): Promise<void> {
    this.unlisten ??= await this.db.listen(CHANNEL, (topic) => this.bump(topic));
  }

  async stop(): Promise<void> {
    const u = this.unlisten;
    this.unlisten = null;
    await u?.().catch(() => {});
  }

  generation(topic: string): number {
    return this.generations.get(topic) ?? 0;
  }

  /** Marks topic changed: here now, everywhere when t commits (t may be the database: at once). */
  async changed(t: Sql, topic: string): Promise<void> {
    this.bump(topic);
    await t.notify(CHANNEL, topic);
  }

  private bump(topic: string) {
    this.generations.set(topic, this.generation(topic) + 1);
  }
}
