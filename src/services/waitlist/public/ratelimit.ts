/**
 * Sign-up rate limits: the core limiter's sliding-window counter (core/ratelimit.ts
 * hitWindow: one counter row per key and minute, so a check costs the same whatever the limit;
 * tests and benchmarks raise WAITLIST_SIGNUPS_PER_IP_PER_MINUTE and signups_per_minute). A
 * sign-up that writes an entry takes its slots in the entry's own transaction (one commit),
 * and a refused limit rolls back the slots the earlier ones took with it.
 */
import { MINUTE } from "../../../core/clock";
import { tx, type Sql } from "../../../core/db";
import { ApiError } from "../../../core/errors";
import type { AppContext } from "../../../context";

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
  for (const l of limits) {
    const hit = await ctx.ratelimit.hitWindow(l.key, 1, l.limit, WINDOW_MS, t);
    if (hit.allowed) continue;
    throw new ApiError(429, "RATE_LIMITED", `Too many sign-ups ${l.what}: at most ${l.limit} per minute`, undefined, {
      "retry-after": String(Math.max(1, Math.ceil(hit.retryAfterMs / 1000))),
    });
  }
}

/** takeSlotsIn in a transaction of its own (attempts that write nothing else: invalid bodies, repeats). */
export const takeSignupSlots = (ctx: AppContext, limits: Limit[]): Promise<void> => tx(ctx.db, (t) => takeSlotsIn(t, ctx, limits));
