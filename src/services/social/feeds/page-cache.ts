/**
 * First pages of the home and discover (latest) feeds, kept as the JSON they were answered
 * with, so that a reader asking again before anything changed costs a lookup instead of the
 * candidate scan, the visibility checks, the hydration of 50 posts and their serialisation
 * (about 1 ms at 1,000,000 posts against a few µs).
 *
 * Exact, not "fresh enough":
 * - Every write that can change a page signals feedsChanged in its transaction
 *   (core/feed-changes.ts); the cache listens and moves its generation when that transaction
 *   commits, before the writer is answered. An entry is served only while the generation it
 *   was built under stands.
 * - A page built while the generation moved (a commit landed between its reads) is answered
 *   but not kept: it may hold rows from before the commit.
 * - What changes by the clock alone bounds an entry's life: the soonest future expiry of a
 *   story among the rows it read, and the soonest end of a shadow ban among the authors it
 *   read (and, for discover, among the community's actors: their posts reappear then).
 * - Only first pages (no cursor) are kept: later pages are rarer and their cursor already
 *   pins them. Hot and top rankings are not kept (their scores move with the clock).
 * - SQLite only (see core/feed-changes.ts); on PostgreSQL every read builds its page.
 *
 * Bounded by bytes (least recently used first out), so memory does not grow with readers.
 */
import type { Db } from "../../../core/db";
import { FEEDS_CHANNEL } from "../core/feed-changes";

/** Total size of the kept pages' JSON (about 32 KB each for 50 posts: some 1,000 readers' first pages). */
export const FEED_CACHE_BYTES = 32 * 1024 * 1024;

interface Entry {
  json: string;
  generation: number;
  /** ISO time from which the page may be wrong without a write (a story expires, a ban ends); null: none. */
  until: string | null;
}

export class FeedPageCache {
  private readonly entries = new Map<string, Entry>();
  /** JSON characters kept. */
  private bytes = 0;
  private generation = 0;
  /** On once the database delivers feed changes to this cache (SQLite only). */
  private enabled = false;

  constructor(
    db: Db,
    private readonly maxBytes = FEED_CACHE_BYTES,
  ) {
    if (db.engine === "sqlite") {
      void db.listen(FEEDS_CHANNEL, () => this.changed()).then(() => {
        this.enabled = true;
      });
    }
  }

  /** Everything kept is out of date (a feed-changing write committed). */
  changed(): void {
    this.generation++;
    this.entries.clear();
    this.bytes = 0;
  }

  /** The current generation: take it before the first read a page is built from. */
  mark(): number {
    return this.generation;
  }

  /** The kept JSON for `key`, while it is valid at `now`. */
  get(key: string, now: string): string | null {
    if (!this.enabled) return null;
    const e = this.entries.get(key);
    if (!e) return null;
    if (e.generation !== this.generation || (e.until !== null && e.until <= now)) {
      this.drop(key, e);
      return null;
    }
    // Most recently used last: re-inserting moves it.
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.json;
  }

  /** Keeps `json` for `key` if no feed-changing write committed since `mark` was taken. */
  put(key: string, json: string, mark: number, until: string | null): void {
    if (!this.enabled || mark !== this.generation || json.length > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) this.drop(key, old);
    this.entries.set(key, { json, generation: mark, until });
    this.bytes += json.length;
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(k, e);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private drop(key: string, e: Entry) {
    this.entries.delete(key);
    this.bytes -= e.json.length;
  }
}

/** The earlier of two optional ISO times. */
export const earlier = (a: string | null, b: string | null): string | null => (a === null ? b : b === null || a <= b ? a : b);
