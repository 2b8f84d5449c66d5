/**
 * Route glue for Idempotency-Key: every write route that accepts the header wraps its
 * work in idempotent(); the key is scoped to the caller so two callers never collide.
 */
import { fingerprint } from "../core/idempotency";
import type { Idempotency } from "../core/idempotency";
import type { Principal } from "./principal";

export interface RouteIO {
  request: Request;
  set: { status?: number | string; headers: Record<string, string | number> };
  body?: unknown;
}

/**
 * Whose keys a request's Idempotency-Key lives among: the API key, or the account behind a
 * console session or personal token (one person's keys are one namespace on every route).
 */
export const callerKey = (p: Principal): string => (p.kind === "api_key" ? `api_key:${p.keyId}` : `account:${p.accountId}`);

export async function idempotent(
  idem: Idempotency,
  c: RouteIO,
  scope: string,
  exec: () => Promise<{ status: number; body: unknown; headers?: Record<string, string> }>,
) {
  const key = c.request.headers.get("idempotency-key");
  // Without a key nothing is stored or compared: the body is not hashed.
  const fp = key === null ? "" : fingerprint(c.request.method, new URL(c.request.url).pathname, c.body ?? null);
  const r = await idem.run({ scope, key, fingerprint: fp, exec });
  c.set.status = r.status;
  for (const [k, v] of Object.entries(r.headers ?? {})) c.set.headers[k] = v;
  if (r.replayed) c.set.headers["idempotent-replay"] = "true";
  return r.body;
}

/**
 * An idempotent create (or rotation) that returns a secret to show once. The idempotency
 * table stores the response body, so the secret must not be in it: the record keeps
 * `field: null` and the secret is added to the first response only. A replay therefore
 * says "this was created" without revealing the secret. `make` may return secret null (a
 * caller-chosen secret, never echoed).
 */
export async function idempotentWithSecret<V extends object, F extends string>(
  idem: Idempotency,
  c: RouteIO,
  principal: Principal,
  opts: { status: number; field: F },
  make: () => { view: V; secret: string | null } | Promise<{ view: V; secret: string | null }>,
): Promise<V & { [K in F]: string | null }> {
  let secret: string | null = null;
  const body = (await idempotent(idem, c, callerKey(principal), async () => {
    const r = await make();
    secret = r.secret;
    return { status: opts.status, body: { ...r.view, [opts.field]: null } };
  })) as V & { [K in F]: string | null };
  return secret !== null ? { ...body, [opts.field]: secret } : body;
}
