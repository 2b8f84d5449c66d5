/**
 * Contract shared by the webhook engine (engine.ts: fan-out, delivery, retries) and the
 * HTTP surface (routes.ts / endpoints.ts). Products only ever call WebhookEngine.emit.
 */

/** Products that own webhook scopes, and the header name of their legacy signature. */
export const PRODUCTS = {
  mail: { legacyHeader: "x-mail-signature", scopeLabel: "workspace" },
  waitlist: { legacyHeader: "x-waitlist-signature", scopeLabel: "workspace" },
  trawl: { legacyHeader: "x-trawl-signature", scopeLabel: "workspace" },
  tack: { legacyHeader: "x-tack-signature", scopeLabel: "workspace" },
  auth: { legacyHeader: "x-auth-signature", scopeLabel: "app" },
  social: { legacyHeader: "x-svc-signature", scopeLabel: "community" },
} as const;
export type Product = keyof typeof PRODUCTS;

/** A webhook scope: one product's endpoints for one workspace / app / community. */
export interface Scope {
  product: Product;
  scopeId: string;
}

/** Retry delays after each failed attempt: 7 attempts over about 32 hours. */
export const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 6 * 3_600_000, 24 * 3_600_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
export const REPLY_DEADLINE_MS = 15_000;
export const AUTO_DISABLE_FAILURES = 20;
export const AUTO_DISABLE_AFTER_MS = 24 * 3_600_000;
export const MAX_ENDPOINTS_PER_SCOPE = 10;
export const EVENT_RETENTION_MS = 30 * 24 * 3_600_000;
export const RESPONSE_BODY_KEEP_BYTES = 1024;

/** What one HTTP attempt produced (also the answer of test sends and replays). */
export interface AttemptResult {
  succeeded: boolean;
  status_code: number | null;
  latency_ms: number;
  error_class: string | null;
  response_body: string | null;
}

/** Per-product event-type catalogue entry, served by GET {scope}/webhooks/event-types. */
export interface EventTypeInfo {
  type: string;
  description: string;
  example: Record<string, unknown>;
}
