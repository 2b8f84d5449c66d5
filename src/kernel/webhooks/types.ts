/**
 * Contract shared by the webhook engine (engine.ts with outbox.ts, delivery-pump.ts and
 * attempts.ts: fan-out, delivery, retries) and the HTTP surface (routes.ts / endpoints.ts).
 * Products emit through WebhookEngine.emit and read webhook data through WebhookService.
 */

/**
 * A product that owns webhook scopes (e.g. "mail", "auth", "social"). The engine knows no
 * product by name: each service module brings its WebhookProduct (catalogue.ts) and
 * mount() adds it to the app's EventCatalogue.
 */
export type Product = string;

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
