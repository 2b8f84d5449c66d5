/**
 * What every card-board route shares: the caller, the per-key rate limits with their
 * X-RateLimit-* headers, and the card-board error body.
 *
 * - The caller is resolved and counted in a request hook of the HTTP kernel (core/http.ts
 *   PrefixHook), for every request under /tack/api (matched route or not) and no other: before
 *   the body is read and before the app's credential gate, so a request refused for a missing
 *   credential, an unreadable, too large or non-JSON body, a bad field or an unknown route
 *   still counts and still carries the headers; the app's other routes pay nothing for it.
 * - Rate limits (spec: 200 writes, 600 reads, 30 batch operations per minute per API key):
 *   GET is a read, POST .../cards/batch-move a batch operation, anything else a write.
 *   The core rate limiter (a sliding log of the last minute, shared by every node) counts
 *   them per API key (per account for console tokens, per client address without a
 *   credential). X-RateLimit-Limit, -Remaining and -Reset (seconds until the oldest counted
 *   request leaves the window, i.e. until one more slot frees up) go on every response,
 *   errors included; over the limit: 429 RATE_LIMITED with Retry-After (seconds).
 *   Configurable (TACK_RATE_WRITES / _READS / _BATCH); 0 switches one off (no headers).
 * - Errors: {error: {code, message, details: [{field, reason}]}} with `details` always
 *   present (empty when there is nothing to point at), as the spec's card-board body has it.
 *   A body the route's schema refused also gets the details of the board's own rules
 *   (body-rules.ts), so that one 400 names every bad field.
 */
import { Elysia } from "elysia";
import { knownPlatformCaller, requestMeta, sessionCookieOf } from "../../../access/http";
import { bearerFrom, type Principal } from "../../../access/principal";
import type { ErrorDetail } from "../../../core/errors";
import { handledErrorOf, routeOf, type PrefixHook } from "../../../core/http";
import { EXACT_LIMIT_MAX } from "../../../core/ratelimit";
import type { ServiceDeps } from "../../../kernel/module";
import type { TackRateLimits } from "../settings";
import { withBodyRules } from "./body-rules";

export const RATE_WINDOW_MS = 60_000;
const RL_HEADERS = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"] as const;

/** The headers as the OpenAPI declares them on every card-board response (when the limit is on). */
export const RATE_LIMIT_HEADERS = {
  "X-RateLimit-Limit": { description: "Requests allowed per minute for this key and request class (absent when the limit is off)", schema: { type: "integer" } },
  "X-RateLimit-Remaining": { description: "Requests left in the current window", schema: { type: "integer" } },
  "X-RateLimit-Reset": { description: "Unix time (seconds) when the window frees a request", schema: { type: "integer" } },
};

export type RateClass = "writes" | "reads" | "batch";

export function rateClassOf(method: string, path: string): RateClass {
  if (method === "GET" || method === "HEAD") return "reads";
  return path.endsWith("/cards/batch-move") ? "batch" : "writes";
}

const keyOf = (p: Principal | null, ip: string | null) =>
  p ? (p.kind === "api_key" ? `key:${p.keyId}` : `acct:${p.accountId}`) : `ip:${ip ?? "unknown"}`;

/** The card board's base path: every response under it carries the rate-limit headers. */
const BASE = "/tack/api";

interface Counted {
  principal: Principal | null;
  headers: Record<string, string>;
}

// What the request hook found for a request, read back by the routes' derive. Keyed by the
// Request: one app's requests never meet another's.
const counted = new WeakMap<Request, Counted>();

/**
 * The board's rate limits and headers as a request hook of the kernel (ServiceModule.requestHooks):
 * every request under /tack/api, matched route or not, and no other.
 */
export function boardRequestHook(deps: ServiceDeps): PrefixHook<Counted> {
  const { ctx, tenancy } = deps;
  // Requests per minute of each rate class (TACK_RATE_*; 0: none).
  const limits: TackRateLimits = deps.settings;
  return {
    prefix: BASE,
    async before(request) {
      const bearer = bearerFrom(request.headers.get("authorization"));
      const principal: Principal | null = await tenancy.authz.resolve(bearer, bearer ? null : sessionCookieOf(request));
      const state: Counted = { principal, headers: {} };
      counted.set(request, state);
      const cls = rateClassOf(request.method, new URL(request.url).pathname);
      const limit = limits[cls];
      if (limit <= 0) return state;
      const key = `tack:${cls}:${keyOf(principal, principal ? null : requestMeta(request).ip)}`;
      const hit = await ctx.ratelimit.hit(key, limit, RATE_WINDOW_MS);
      // Until a counted request leaves the window; above the limiter's exact-log ceiling (a
      // counter per fixed window, core/ratelimit.ts), until the current window ends.
      const resetMs = !hit.allowed
        ? hit.retryAfterMs
        : limit > EXACT_LIMIT_MAX
          ? RATE_WINDOW_MS - (ctx.clock.nowMs() % RATE_WINDOW_MS)
          : await ctx.ratelimit.waitMs(key, Math.max(1, hit.count), RATE_WINDOW_MS);
      const headers = state.headers;
      headers["x-ratelimit-limit"] = String(limit);
      headers["x-ratelimit-remaining"] = String(Math.max(0, limit - hit.count));
      headers["x-ratelimit-reset"] = String(Math.ceil(resetMs / 1000));
      if (hit.allowed) return state;
      headers["retry-after"] = String(Math.max(1, Math.ceil(hit.retryAfterMs / 1000)));
      const message = `Rate limit of ${limit} ${cls === "batch" ? "batch operations" : cls} per minute exceeded for this key`;
      return new Response(JSON.stringify({ error: { code: "RATE_LIMITED", message, details: [] } }), { status: 429, headers: { "content-type": "application/json", ...headers } });
    },
    // Errors become a fresh Response in the kernel's onError (the app's credential gate, the
    // body reader and an unknown route included): the headers go onto it, and its body gets
    // the card-board shape (details always present).
    async after(request, res, state) {
      let out = res;
      if (res.status >= 400 && (res.headers.get("content-type") ?? "").includes("application/json")) {
        const body = (await res.clone().json().catch(() => null)) as { error?: { details?: unknown } } | null;
        // A body the route's schema refused (the error the kernel answered: its type and the value as sent): the board's rules name their fields too.
        const failure = handledErrorOf(request);
        const error = failure?.error as { type?: unknown; value?: unknown } | undefined;
        const refused = failure?.code === "VALIDATION" && error?.type === "body" && Array.isArray(body?.error?.details);
        const merged = refused ? withBodyRules(request.method, routeOf(request), error!.value, body!.error!.details as ErrorDetail[]) : undefined;
        if (merged) out = new Response(JSON.stringify(merged), { status: res.status, headers: res.headers });
        else if (body?.error && !Array.isArray(body.error.details)) {
          body.error.details = [];
          out = new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
        }
      }
      try {
        for (const k of RL_HEADERS) if (state.headers[k] !== undefined) out.headers.set(k, state.headers[k]!);
      } catch {
        // Immutable headers (a fetched or redirect Response): a copy takes them.
        out = new Response(out.body, out);
        for (const k of RL_HEADERS) if (state.headers[k] !== undefined) out.headers.set(k, state.headers[k]!);
      }
      return out;
    },
  };
}

/**
 * The caller of a card-board route, for its handler: the principal the request hook resolved
 * (resolved here when the request did not go through it, e.g. a route mounted without the
 * kernel). Scoped to the board's own routes. An unknown credential is a 401 here, before the
 * board validates the input.
 */
export function boardCaller(deps: ServiceDeps) {
  const { tenancy } = deps;
  return new Elysia({ name: "tack-board-caller" }).derive({ as: "scoped" }, async ({ request }) => {
    const meta = requestMeta(request);
    const state = counted.get(request);
    if (state) return { principal: knownPlatformCaller(request, state.principal), meta };
    const bearer = bearerFrom(request.headers.get("authorization"));
    return { principal: knownPlatformCaller(request, await tenancy.authz.resolve(bearer, bearer ? null : sessionCookieOf(request))), meta };
  });
}
