/**
 * Route glue for Idempotency-Key: every write route that accepts the header wraps its
 * work in idempotent(); the key is scoped to the caller so two callers never collide.
 */
import { fingerprint } from "../core/idempotency";
import type { Idempotency } from "../core/idempotency";

export interface RouteIO {
  request: Request;
  set: { status?: number | string; headers: Record<string, string | number> };
  body?: unknown;
}

export async function idempotent(
  idem: Idempotency,
  c: RouteIO,
  scope: string,
  exec: () => Promise<{ status: number; body: unknown; headers?: Record<string, string> }>,
) {
  const key = c.request.headers.get("idempotency-key");
  const path = new URL(c.request.url).pathname;
  const r = await idem.run({ scope, key, fingerprint: fingerprint(c.request.method, path, c.body ?? null), exec });
  c.set.status = r.status;
  for (const [k, v] of Object.entries(r.headers ?? {})) c.set.headers[k] = v;
  if (r.replayed) c.set.headers["idempotent-replay"] = "true";
  return r.body;
}
