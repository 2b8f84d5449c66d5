/**
 * What every card-board route shares: the caller, the per-key rate limits with their
 * X-RateLimit-* headers, and the card-board error body.
 *
 * - The caller is resolved in a transform hook (derive), before body validation, so a
 *   request refused for a bad body still counts and still carries the headers.
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
 */
import { Elysia } from "elysia";
import { requestMeta, sessionCookieOf } from "../../../access/http";
import { bearerFrom, type Principal } from "../../../access/principal";
import { ApiError } from "../../../core/errors";
import { EXACT_LIMIT_MAX } from "../../../core/ratelimit";
import type { ServiceDeps } from "../../module";

export const RATE_WINDOW_MS = 60_000;
const RL_HEADERS = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"] as const;

export type RateClass = "writes" | "reads" | "batch";

export function rateClassOf(method: string, path: string): RateClass {
  if (method === "GET" || method === "HEAD") return "reads";
  return path.endsWith("/cards/batch-move") ? "batch" : "writes";
}

const keyOf = (p: Principal | null, ip: string | null) =>
  p ? (p.kind === "api_key" ? `key:${p.keyId}` : `acct:${p.accountId}`) : `ip:${ip ?? "unknown"}`;

export function boardGuard(deps: ServiceDeps) {
  const { ctx, platform } = deps;
  const limits = ctx.config.tackRateLimits;
  return new Elysia({ name: "tack-board-guard" })
    .derive({ as: "scoped" }, async ({ request, server, set }) => {
      const bearer = bearerFrom(request.headers.get("authorization"));
      const principal: Principal | null = await platform.authz.resolve(bearer, bearer ? null : sessionCookieOf(request));
      const meta = requestMeta(request, server);
      const cls = rateClassOf(request.method, new URL(request.url).pathname);
      const limit = limits[cls];
      if (limit > 0) {
        const key = `tack:${cls}:${keyOf(principal, principal ? null : meta.ip)}`;
        const hit = await ctx.ratelimit.hit(key, limit, RATE_WINDOW_MS);
        // Until a counted request leaves the window; above the limiter's exact-log ceiling (a
        // counter per fixed window, core/ratelimit.ts), until the current window ends.
        const resetMs = !hit.allowed
          ? hit.retryAfterMs
          : limit > EXACT_LIMIT_MAX
            ? RATE_WINDOW_MS - (ctx.clock.nowMs() % RATE_WINDOW_MS)
            : await ctx.ratelimit.waitMs(key, Math.max(1, hit.count), RATE_WINDOW_MS);
        const headers: Record<string, string> = {
          "x-ratelimit-limit": String(limit),
          "x-ratelimit-remaining": String(Math.max(0, limit - hit.count)),
          "x-ratelimit-reset": String(Math.ceil(resetMs / 1000)),
        };
        if (!hit.allowed) {
          headers["retry-after"] = String(Math.max(1, Math.ceil(hit.retryAfterMs / 1000)));
          Object.assign(set.headers, headers);
          throw new ApiError(429, "RATE_LIMITED", `Rate limit of ${limit} ${cls === "batch" ? "batch operations" : cls} per minute exceeded for this key`, undefined, headers);
        }
        Object.assign(set.headers, headers);
      }
      return { principal, meta };
    })
    // Errors become a fresh Response in the kernel's onError: copy the headers onto it and
    // give its body the card-board shape (details always present).
    .mapResponse({ as: "scoped" }, async ({ set, responseValue: res }) => {
      if (!(res instanceof Response)) {
        // An error body that reaches here as a value (Elysia serialises it afterwards).
        const err = (res as { error?: { code?: unknown; details?: unknown } } | null)?.error;
        if (err && typeof err === "object" && typeof err.code === "string" && !Array.isArray(err.details)) err.details = [];
        return;
      }
      const headers = set.headers as Record<string, string | undefined>;
      let out = res;
      if (res.status >= 400 && (res.headers.get("content-type") ?? "").includes("application/json")) {
        const body = (await res.clone().json().catch(() => null)) as { error?: { details?: unknown } } | null;
        if (body?.error && !Array.isArray(body.error.details)) {
          body.error.details = [];
          out = new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
        }
      }
      try {
        for (const k of RL_HEADERS) if (headers[k] !== undefined) out.headers.set(k, headers[k]!);
      } catch {
        out = new Response(out.body, out);
        for (const k of RL_HEADERS) if (headers[k] !== undefined) out.headers.set(k, headers[k]!);
      }
      return out;
    });
}
