/**
 * The webhook engine as a module: the per-workspace "webhooks" switch, the pump and purge
 * jobs, and a graceful stop. createApp builds the engine and its HTTP side before any module
 * (products emit through it) and hands them in; products' scopes are mounted from their
 * own modules (webhookScopes). A plain object, checked against ServiceModule where app.ts
 * lists it: importing the contract here would tie it in a loop with the contract's use of
 * this room's types.
 */
import type { WebhookEngine } from "./engine";
import type { LegacyWebhookService } from "./legacy";
import type { WebhookService } from "./service";

/** The engine and its HTTP side, as every module's context carries them. */
export interface WebhookParts {
  /** emit() records an event for a scope's endpoints, in the caller's transaction. */
  engine: WebhookEngine;
  /** Endpoints, events log and delivery queue: a product's only way to webhook data. */
  api: WebhookService;
  /** The deprecated per-scope records (legacy.ts), for products that still serve them. */
  legacy: LegacyWebhookService;
}

export const webhooksModule = {
  name: "webhooks",
  description: "Signed webhook delivery of events from every service",
  create: (d: { webhooks: WebhookParts }) => d.webhooks,
  jobs: (w: WebhookParts) => w.engine.jobs(),
  stop: async (w: WebhookParts) => {
    // Background legacy test sends finish and are recorded, then attempts in flight.
    await w.legacy.idle();
    await w.engine.stop();
  },
};
