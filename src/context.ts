/**
 * The context app.ts builds once per app instance and hands to every service. Nothing
 * stateful lives at module level, so tests run isolated apps side by side.
 */
import type { ActionRegistry } from "./access/actions";
import type { Config } from "./config";
import type { CacheBus } from "./core/cache-bus";
import type { Clock } from "./core/clock";
import type { Db } from "./core/db";
import type { EventOutbox } from "./core/events";
import type { Idempotency } from "./core/idempotency";
import type { Logger } from "./core/log";
import type { SystemMailer } from "./core/mailer";
import type { Metrics } from "./core/metrics";
import type { NodeIdentity } from "./core/node-id";
import type { ObjectStore } from "./core/objects";
import type { createOutboundHttp } from "./core/outbound-http";
import type { PasswordHasher } from "./core/password";
import type { RateLimiter } from "./core/ratelimit";
import type { Scheduler } from "./core/scheduler";
import type { createSecretBox } from "./core/secrets";

/** The mounted services (app.ts's module list), for the platform's per-workspace switches. */
export interface ServiceCatalogue {
  /** Every service, in mount order: name and one line of description. */
  all: readonly { name: string; description: string }[];
  /** Enabled on a new workspace (DEFAULT_SERVICES, or every service). */
  defaults: readonly string[];
}

export interface AppContext {
  config: Config;
  db: Db;
  /** In-process cache invalidation across nodes (core/cache-bus.ts). */
  caches: CacheBus;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  masterKey: Uint8Array;
  secretBox: ReturnType<typeof createSecretBox>;
  passwords: PasswordHasher;
  ratelimit: RateLimiter;
  idempotency: Idempotency;
  events: EventOutbox;
  mailer: SystemMailer;
  objects: ObjectStore;
  scheduler: Scheduler;
  outbound: ReturnType<typeof createOutboundHttp>;
  actions: ActionRegistry;
  services: ServiceCatalogue;
  /** This node's name and this process's claim owner (core/node-id.ts nodeOf: made on first use). */
  node?: NodeIdentity;
}
