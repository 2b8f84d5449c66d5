/** Tunables of the webhook engine and what one delivery pass reports (engine.ts). */
import { REPLY_DEADLINE_MS } from "./types";

export interface WebhookEngineOptions {
  /**
   * Attempts in flight across all endpoints that started less than slowAfterMs ago. Older
   * ones (receivers taking their time, or never answering) stop counting here, so that
   * several dead endpoints cannot take the whole pool for the 15 s deadline; they still
   * count against maxInFlight.
   */
  maxConcurrency: number;
  slowAfterMs: number;
  /** Hard cap of attempts in flight, slow ones included (sockets, Bun's fetch pool). */
  maxInFlight: number;
  /** In-flight attempts per endpoint: what one slow or dead receiver can occupy at most. */
  perEndpointConcurrency: number;
  /** In-flight attempts of an endpoint whose latest attempt timed out. */
  slowEndpointConcurrency: number;
  /** Deadline of one attempt (DNS, connect, answer). The spec's is 15 s; tests shorten it. */
  replyDeadlineMs: number;
  /**
   * How long a claim protects an in-flight delivery. Must exceed replyDeadlineMs (a live
   * pump always finishes first); after a crash the delivery is retried once it expires.
   */
  leaseMs: number;
  /** emit() kicks a pump once the caller's transaction has committed (a notification on it). */
  autoKick: boolean;
  /** Outbox rows fanned out per transaction. */
  dispatchBatch: number;
}

export const DEFAULT_ENGINE_OPTIONS: WebhookEngineOptions = {
  maxConcurrency: 64,
  slowAfterMs: 2_000,
  maxInFlight: 160,
  perEndpointConcurrency: 8,
  slowEndpointConcurrency: 2,
  replyDeadlineMs: REPLY_DEADLINE_MS,
  leaseMs: 60_000,
  autoKick: true,
  dispatchBatch: 500,
};

export interface DeliverStats {
  /** Attempts made by this call (each one a POST, or a failure before it, e.g. blocked). */
  attempted: number;
  /** Attempts answered with a 2xx. */
  delivered: number;
  /** Attempts that failed (the delivery may still have retries left). */
  failed: number;
}
