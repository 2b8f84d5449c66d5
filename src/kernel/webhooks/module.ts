/**
 * The webhook engine as a module: the per-workspace "webhooks" switch, the pump and purge
 * jobs, and a graceful stop. mount() builds the engine and its HTTP side before any module
 * (products emit through it) and hands them in; products' scopes are mounted from their
 * own modules (webhookScopes).
 */
import { defineService } from "../module";

export const webhooksModule = defineService({
  name: "webhooks",
  description: "Signed webhook delivery of events from every service",
  create: (d) => d.webhooks,
  jobs: (w) => w.engine.jobs(),
  stop: async (w) => {
    // Background legacy test sends finish and are recorded, then attempts in flight.
    await w.legacy.idle();
    await w.engine.stop();
  },
});
