/**
 * Sign-up rate limits as sliding-window counters (Cloudflare's approximation): the estimate
 * for "the last minute" is count(previous minute) x (share of it still inside the last 60 s)
 * + count(current minute). One counter row per key and minute, so a check is O(1) however
 * high the limit (tests and benchmarks raise WAITLIST_SIGNUPS_PER_IP_PER_MINUTE and
 * signups_per_minute). The count is taken first (one upsert) and given back when over the
 * limit, so concurrent checks on any engine or node never admit more than the limit. A
 * sign-up that writes an entry takes its slots in the entry's own transaction (one commit).
 */
import { MINUTE } from "../../core/clock";
import { tx, type Sql } from "../../core/db";
import { ApiError } from "../../core/errors";
import type { AppContext } from "../../context";
import * as store from "./store";

export const WINDOW_MS = MINUTE;

export interface Limit {
  key: string;
  limit: number;
  /** "per client address", "for this waitlist": for the message. */
  what: string;
}

/**
 * Takes one slot of every limit in t, all or none: 429 RATE_LIMITED with Retry-After for the
 * first limit that is full (the caller's transaction then rolls back what this call took).
 */
export async function takeSlotsIn(t: Sql, ctx: AppContext, limits: Limit[]): Promise<void> {
  const now = ctx.clock.nowMs();
  const start = now - (now % WINDOW_MS);
  const weight = (WINDOW_MS - (now - start)) / WINDOW_MS;
  for (const l of limits) {
    const cur = await store.bumpCounter(t, l.key, start);
    const prev = cur > l.limit ? 0 : await store.counterAt(t, l.key, start - WINDOW_MS);
    if (cur <= l.limit && Math.floor(prev * weight) + cur <= l.limit) continue;
    // Until the estimate leaves room for one more: the previous window fades linearly; a full current one waits for the next.
    const c = cur - 1;
    let waitMs = start + WINDOW_MS - now;
    if (c < l.limit && prev > 0) waitMs = Math.min(waitMs, Math.max(0, Math.ceil(WINDOW_MS * (1 - (l.limit - c) / prev)) - (now - start)));
    throw new ApiError(429, "RATE_LIMITED", `Too many sign-ups ${l.what}: at most ${l.limit} per minute`, undefined, { "retry-after": String(Math.max(1, Math.ceil(waitMs / 1000))) });
  }
}

/** takeSlotsIn in a transaction of its own (attempts that write nothing else: invalid bodies, repeats). */
export const takeSignupSlots = (ctx: AppContext, limits: Limit[]): Promise<void> => tx(ctx.db, (t) => takeSlotsIn(t, ctx, limits));

/** Drops counters older than the previous window (job waitlist.views.flush). */
export const purgeSignupCounters = (ctx: AppContext) => store.purgeCounters(ctx.db, ctx.clock.nowMs() - 2 * WINDOW_MS);
