/** Route glue of the customer-backend lane: the Elysia base with its guard, and idempotent writes. */
import { Elysia } from "elysia";
import { principalPlugin } from "../../../access/http";
import { callerKey, idempotent, type RouteIO } from "../../../access/idempotent";
import { PLATFORM_CALLER, secured } from "../../../access/openapi";
import { requirePrincipal, type Principal, type PrincipalResolver } from "../../../access/principal";
import type { Idempotency } from "../../../core/idempotency";

export interface LaneRouteDeps {
  principals: PrincipalResolver;
  idempotency: Idempotency;
}

export const LANE_PREFIX = "/social/v1/communities/:community_id";

export const laneBase = (deps: LaneRouteDeps) => new Elysia({ prefix: LANE_PREFIX }).use(principalPlugin(deps.principals)).guard(secured(PLATFORM_CALLER));

/** A write accepting Idempotency-Key (24 h; replay answers the first response with Idempotent-Replay: true; another body is 409 IDEMPOTENCY_KEY_REUSE). */
export function write<T>(deps: LaneRouteDeps, c: RouteIO & { principal?: Principal | null }, status: number, fn: (p: Principal) => Promise<T>): Promise<T> {
  const p = requirePrincipal(c.principal ?? null);
  return idempotent(deps.idempotency, c, callerKey(p), async () => ({ status, body: (await fn(p)) ?? null })) as Promise<T>;
}

export const IDEMPOTENT = " Accepts Idempotency-Key (24 h).";
