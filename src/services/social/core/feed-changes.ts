/**
 * The signal that a write may have changed what a feed shows. Every store function that
 * writes a table a feed page is read from (posts and their hashtags, reaction counts, actors,
 * the graph's edges and close friends, hashtag follows, hides) calls feedsChanged in the
 * write's transaction; feeds/page-cache.ts listens and drops its first pages when the
 * transaction commits (never for a rolled-back one). Signalling from the store functions,
 * where all SQL of those tables lives, is what makes the cache exact: a new write path
 * reaches these tables through a store function or not at all.
 *
 * SQLite only: there the notification is delivered in-process at the commit, before the
 * writer is answered, so no read after a write can be served a page from before it. On
 * PostgreSQL another node's commit would reach this node a little later (or never, when a
 * listener connection drops), so the page cache is off there and nothing is sent.
 */
import type { Sql } from "../../../core/db";

export const FEEDS_CHANNEL = "social_feeds";

export const feedsChanged = (t: Sql): Promise<void> => (t.engine === "sqlite" ? t.notify(FEEDS_CHANNEL) : Promise.resolve());

/** A one-statement store write that signals feedsChanged once it has run. */
export async function feedWrite<T>(t: Sql, write: Promise<T>): Promise<T> {
  const r = await write;
  await feedsChanged(t);
  return r;
}
