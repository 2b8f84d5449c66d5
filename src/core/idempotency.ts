/**
 * Idempotency-Key handling shared by every write route that accepts the header.
 *
 * Contract: keys are 1-256 of [A-Za-z0-9_:-], per scope (the caller), kept 24 h from the
 * first request. A replay returns the stored status, body and headers plus
 * `idempotent-replay: true`; the same key with a different request is 409
 * IDEMPOTENCY_KEY_REUSE; while the first request is still running a duplicate gets 409
 * IDEMPOTENCY_KEY_IN_USE (like Stripe), so the handler never runs twice.
 *
 * What is stored: any outcome below 500 except 429, including ApiErrors thrown by exec,
 * which run() turns into results ({status, error body, headers}) instead of rethrowing,
 * so a route handles every outcome the same way, replayed or not. 5xx, 429 (transient by
 * definition) and non-ApiError exceptions release the key so the client can retry.
 *
 * Route usage:
 *   const r = await idem.run({ scope: principal.id, key: headers["idempotency-key"],
 *     fingerprint: fingerprint(request.method, path, body), exec: async () => ({ status: 201, body: created }) });
 *   set.status = r.status; Object.assign(set.headers, r.headers); return r.body;
 */
import { createHash } from "node:crypto";
import { HOUR, type Clock } from "./clock";
import { tx, type Db } from "./db";
import { ApiError, invalidField } from "./errors";
import { randomHex } from "./ids";
import * as store from "./store/idempotency";
import type { IdempotencyRow } from "./store/idempotency";

export const IDEMPOTENCY_TTL_MS = 24 * HOUR;
/**
 * An in-flight claim older than this is taken to belong to a crashed process and may be
 * claimed again; without it a crash mid-request would block the key for 24 h. Far longer
 * than any request is allowed to run.
 */
export const IDEMPOTENCY_LEASE_MS = 5 * 60 * 1000;
export const REPLAY_HEADER = "idempotent-replay";

const KEY_RE = /^[A-Za-z0-9_:-]{1,256}$/;

export interface ExecResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface RunResult {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  replayed: boolean;
}

export interface RunOptions {
  /** Whose key this is (e.g. principal id), so two callers' keys never collide. */
  scope: string;
  /** The Idempotency-Key header; null/undefined means no idempotency, just exec. */
  key: string | null | undefined;
  /** From fingerprint(); tells a genuine retry from a different request reusing the key. */
  fingerprint: string;
  exec: () => Promise<ExecResult>;
}

/** Throws 400 VALIDATION_ERROR (field "Idempotency-Key") unless the key is well formed. */
export function validateIdempotencyKey(key: string): void {
  if (!KEY_RE.test(key)) throw invalidField("Idempotency-Key", "must be 1-256 characters of A-Z, a-z, 0-9, '_', ':' or '-'");
}

/**
 * SHA-256 of method, path and a canonical JSON of the body (object keys sorted at every
 * level), so the same request with keys in another order still counts as the same. Pass
 * the path with its query string when the query changes what the request does.
 */
export function fingerprint(method: string, path: string, body: unknown): string {
  const canonical = body === undefined ? "" : JSON.stringify(body, sortKeys);
  return createHash("sha256").update(`${method.toUpperCase()} ${path}\n${canonical}`).digest("hex");
}

function sortKeys(_key: string, value: unknown) {
  if (!value || typeof value !== "object" || Array.isArray(value)) return value;
  const obj = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(obj).sort().map((k) => [k, obj[k]]));
}

type Claim = { replay: IdempotencyRow } | { claimId: string };

export class Idempotency {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly leaseMs = IDEMPOTENCY_LEASE_MS,
  ) {}

  async run(opts: RunOptions): Promise<RunResult> {
    const { scope, key, exec } = opts;
    if (key === null || key === undefined) return { ...(await execute(exec)), replayed: false };
    validateIdempotencyKey(key);

    const claim = await this.claim(scope, key, opts.fingerprint);
    if ("replay" in claim) return replay(claim.replay);

    let result: Required<ExecResult>;
    try {
      result = await execute(exec);
    } catch (err) {
      await store.releaseKey(this.db, scope, key, claim.claimId);
      throw err;
    }
    if (result.status >= 500 || result.status === 429) {
      await store.releaseKey(this.db, scope, key, claim.claimId);
    } else {
      const body = result.body === undefined ? null : JSON.stringify(result.body);
      // False only if our lease ran out and another request took the key over; that one's result stands.
      await store.completeKey(this.db, scope, key, claim.claimId, result.status, body, JSON.stringify(result.headers));
    }
    return { ...result, replayed: false };
  }

  /** Deletes records past their 24 h. Returns how many. */
  purgeExpired(): Promise<number> {
    return store.purgeExpiredKeys(this.db, this.clock.nowMs());
  }

  /** Finds and claims in one transaction, so two requests can't both see the key as free. */
  private claim(scope: string, key: string, fp: string): Promise<Claim> {
    return tx(this.db, async (t): Promise<Claim> => {
      const now = this.clock.nowMs();
      const row = await store.findKey(t, scope, key);
      if (row && row.expires_ms > now) {
        if (row.fingerprint !== fp) {
          throw new ApiError(409, "IDEMPOTENCY_KEY_REUSE", "This Idempotency-Key was already used with a different request");
        }
        if (row.status !== null) return { replay: row };
        if (row.lease_until_ms !== null && row.lease_until_ms > now) {
          throw new ApiError(409, "IDEMPOTENCY_KEY_IN_USE", "A request with this Idempotency-Key is still in progress; retry later");
        }
        // In flight past its lease: the process running it died. Take it over.
      }
      const claimId = randomHex(12);
      const claimed = await store.claimKey(t, { scope, key, fingerprint: fp, claimId, now, expires: now + IDEMPOTENCY_TTL_MS, leaseUntil: now + this.leaseMs, replaces: row?.claim_id ?? null });
      // Another request claimed the key since findKey (PostgreSQL: both found no row): it is in flight.
      if (!claimed) throw new ApiError(409, "IDEMPOTENCY_KEY_IN_USE", "A request with this Idempotency-Key is still in progress; retry later");
      return { claimId };
    });
  }
}

/** Runs exec, turning a thrown client error (ApiError below 500) into a result. */
async function execute(exec: () => Promise<ExecResult>): Promise<Required<ExecResult>> {
  try {
    const r = await exec();
    return { status: r.status, body: r.body, headers: { ...(r.headers ?? {}) } };
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) return { status: err.status, body: err.toBody(), headers: { ...(err.headers ?? {}) } };
    throw err;
  }
}

function replay(row: IdempotencyRow): RunResult {
  return {
    status: row.status!,
    body: row.body === null ? undefined : JSON.parse(row.body),
    headers: { ...(row.headers ? JSON.parse(row.headers) : {}), [REPLAY_HEADER]: "true" },
    replayed: true,
  };
}
