/**
 * Sign-up rate limits as sliding-window counters (Cloudflare's approximation): the estimate
 * for "the last minute" is count(previous minute) x (share of it still inside the last 60 s)
 * + count(current minute). One counter row per key and minute, so a check is O(1) however
 * high the limit (tests and benchmarks raise WAITLIST_SIGNUPS_PER_IP_PER_MINUTE and
 * signups_per_minute). The count is taken first (one upsert) and given back when over the
 * limit, so concurrent checks on any engine or node never admit more than the limit.
 */
import { MINUTE } from "../../core/clock";
import { tx } from "../../core/db";
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
 * Takes one slot of every limit, all or none, in one transaction (one commit for both of a
 * sign-up's limits); 429 RATE_LIMITED with Retry-After for the first limit that is full.
 */
export async function takeSignupSlots(ctx: AppContext, limits: Limit[]): Promise<void> {
  const now = ctx.clock.nowMs();
  const start = now - (now % WINDOW_MS);
  const weight = (WINDOW_MS - (now - start)) / WINDOW_MS;
  const refusal = await tx(ctx.db, async (t) => {
    for (const [i, l] of limits.entries()) {
      const cur = await store.bumpCounter(t, l.key, start);
      const prev = cur > l.limit ? 0 : await store.counterAt(t, l.key, start - WINDOW_MS);
      if (cur <= l.limit && Math.floor(prev * weight) + cur <= l.limit) continue;
      // Give back what this call took.
      for (const taken of limits.slice(0, i + 1)) await store.unbumpCounter(t, taken.key, start);
      // Until the estimate leaves room for one more: the previous window fades linearly; a full current one waits for the next.
      const c = cur - 1;
      let waitMs = start + WINDOW_MS - now;
      if (c < l.limit && prev > 0) waitMs = Math.min(waitMs, Math.max(0, Math.ceil(WINDOW_MS * (1 - (l.limit - c) / prev)) - (now - start)));
      return { l, s: Math.max(1, Math.ceil(waitMs / 1000)) };
    }
    return null;
  });
  if (refusal) throw new ApiError(429, "RATE_LIMITED", `Too many sign-ups ${refusal.l.what}: at most ${refusal.l.limit} per minute`, undefined, { "retry-after": String(refusal.s) });
}

/** Drops counters older than the previous window (job waitlist.views.flush). */
export const purgeSignupCounters = (ctx: AppContext) => store.purgeCounters(ctx.db, ctx.clock.nowMs() - 2 * WINDOW_MS);
