/**
 * Builds one Bunker instance: the context every service receives, the Elysia app with
 * each service mounted at its prefix, the scheduled jobs, and the health/metrics/docs
 * routes. Tests build several side by side; main.ts builds one and listens.
 */
import { Elysia } from "elysia";
import { ActionRegistry } from "./access/actions";
import { PUBLIC, SECURITY_SCHEMES } from "./access/openapi";
import { t } from "./core/schema";
import { invalidConfiguration, moduleSettings, type Config } from "./config";
import { DAY, systemClock, type Clock } from "./core/clock";
import { openDatabase, sqliteOf, SQLITE_FILE, type Sql } from "./core/db";
import { CacheBus } from "./core/cache-bus";
import { EventOutbox } from "./core/events";
import { CredentialGate } from "./core/credential-gate";
import type { RouteInfo } from "./core/openapi";
import { httpKernel, type ClientLimits, type PrefixHook } from "./core/http";
import { ClientAddresses } from "./core/client-address";
import { Idempotency } from "./core/idempotency";
import { RequestBodies } from "./core/request-body";
import { createLogger, type Logger } from "./core/log";
import { SystemMailer } from "./core/mailer";
import { Metrics } from "./core/metrics";
import { apiDocs } from "./core/docs";
import { metricsRoute, registerDatabaseGauges } from "./core/metrics-route";
import { createObjectStore } from "./core/objects";
import { createOutboundHttp } from "./core/outbound-http";
import { PasswordHasher } from "./core/password";
import { RateLimiter } from "./core/ratelimit";
import { Scheduler } from "./core/scheduler";
import { createSecretBox } from "./core/secrets";
import { unlockMasterKey } from "./core/key-check";
import { ensureWritableDir } from "./core/startup";
import type { AppContext, ServiceCatalogue } from "./context";
import type { InboundHandler } from "./core/smtp-listener";
import { settingsOf, type ModuleContext, type Routes, type ServiceModule, type SubscribedEvent } from "./kernel/module";
import { Tenancy } from "./kernel/tenancy";
import type { Platform } from "./services/platform/service";
import type { AuthService } from "./services/auth/service";
import {
  EventCatalogue,
  LegacyWebhookService,
  legacyWebhookRoutes,
  productEmitter,
  registerWebhookActions,
  WebhookEngine,
  webhookRoutes,
  webhooksModule,
  WebhookService,
  type WebhookEngineOptions,
} from "./kernel/webhooks";
import { platformModule } from "./services/platform/module";
import { authModule } from "./services/auth/module";
import { mailModule } from "./services/mail/module";
import { tackModule } from "./services/tack/module";
import { waitlistModule } from "./services/waitlist/module";
import { trawlModule } from "./services/trawl/module";
import { socialModule } from "./services/social/module";
import { schemaOf } from "./kernel/migrations";
import type { Migration } from "./core/store/migrations";
import { adminConsole } from "./admin-console";
import { join } from "node:path";
import { hostname } from "node:os";
import { randomHex } from "./core/ids";
import { claimTick } from "./core/store/job-ticks";
import type { Server } from "bun";

import { VERSION } from "./version";

export { VERSION };

/**
 * Every service, one line each, in mount order (a module may use the services of the
 * modules before it). Adding a service: its folder (migrations included) and one line here
 * (docs/architecture.md).
 */
export const SERVICE_MODULES: readonly ServiceModule<any>[] = [
  platformModule,
  authModule,
  webhooksModule,
  mailModule,
  tackModule,
  waitlistModule,
  trawlModule,
  socialModule,
];

/** The shipped app's schema (the kernel's and every module's migrations): `bunker migrate`, tests' databases. */
export const MIGRATIONS = schemaOf(SERVICE_MODULES);

export interface BunkerApp {
  app: Routes;
  ctx: AppContext;
  platform: Platform;
  auth: AuthService;
  /** The shared webhook engine: products emit through it; its pump and purge jobs are registered. */
  webhooks: WebhookEngine;
  /** Webhook endpoints, events log and event catalogue (the HTTP side of webhooks). */
  webhookApi: WebhookService;
  /** The context a mounted module was given (tests that build a module's part by hand). */
  contextOf(name: string): ModuleContext;
  /** Handles one request in-process (tests). */
  handle(req: Request): Promise<Response>;
  /**
   * Serves over HTTP. Elysia's own listen, so handlers get the server (client addresses
   * for audit entries and per-client limits come from server.requestIP).
   */
  listen(port: number, hostname: string): Server<unknown>;
  stop(): Promise<void>;
  /** Owner of inbound mail (the mail service sets it); main.ts hands it to the SMTP listener. */
  inbound?: InboundHandler;
}

/** The service catalogue of a module list: every name, and the ones DEFAULT_SERVICES enables (all by default). */
export function serviceCatalogue(config: Config, modules: readonly ServiceModule<any>[]): ServiceCatalogue {
  const all = modules.map((m) => ({ name: m.name, description: m.description }));
  const names = new Set(all.map((m) => m.name));
  if (names.size !== all.length) throw new Error(`two service modules share a name: ${all.map((m) => m.name).join(", ")}`);
  const unknown = (config.defaultServices ?? []).filter((s) => !all.some((m) => m.name === s));
  if (unknown.length) throw invalidConfiguration(unknown.map((s) => `DEFAULT_SERVICES: unknown service "${s}"`));
  return { all, defaults: config.defaultServices ?? all.map((m) => m.name) };
}

export async function buildContext(config: Config, services: ServiceCatalogue, migrations: readonly Migration[], opts: { clock?: Clock; log?: Logger } = {}): Promise<AppContext> {
  const log = opts.log ?? createLogger(config.logLevel);
  const clock = opts.clock ?? systemClock;
  ensureWritableDir(config.dataDir);
  const db = await openDatabase(config, migrations);
  const metrics = new Metrics();
  const sqlite = sqliteOf(db);
  if (sqlite) registerDatabaseGauges(metrics, join(config.dataDir, SQLITE_FILE), sqlite.commitStats);
  else if (config.objectStore === "local") {
    // Several nodes on one PostgreSQL database each keep their own local objects folder
    // unless it is shared: an avatar uploaded through one node would be missing on the others.
    log.warn("DATABASE_URL is PostgreSQL and OBJECT_STORE is local: with more than one node, use S3-compatible storage (OBJECT_STORE=s3) or a shared DATA_DIR/objects", { database: db.location });
  }
  if (config.env === "production" && !config.smtpRelayUrl) {
    log.warn("SMTP_RELAY_URL is not set: system mails (reset codes, invitations) are only written to the log");
  }
  let masterKey: Uint8Array;
  try {
    masterKey = await unlockMasterKey(db, { masterKey: config.masterKey, dataDir: config.dataDir }, clock.iso());
  } catch (e) {
    await db.close(); // a refused start leaves no handle open (tests retry with the right key)
    throw e;
  }
  const caches = new CacheBus(db, config.cacheTtlMs);
  await caches.start();
  return {
    config,
    db,
    caches,
    clock,
    log,
    metrics,
    masterKey,
    secretBox: createSecretBox(masterKey),
    passwords: new PasswordHasher(config.argon2MemoryKiB, config.argon2TimeCost),
    ratelimit: new RateLimiter(db, clock),
    idempotency: new Idempotency(db, clock),
    events: new EventOutbox(db, clock),
    mailer: new SystemMailer({ db, clock, log, relayUrl: config.smtpRelayUrl, from: config.mailFrom, metrics }),
    objects: createObjectStore({ kind: config.objectStore, dataDir: config.dataDir, s3Bucket: config.s3Bucket }),
    scheduler: new Scheduler(log, metrics, clock),
    outbound: createOutboundHttp({ allowPrivateTargets: config.allowPrivateTargets, requireHttps: config.env === "production" }),
    actions: new ActionRegistry(),
    services,
  };
}

/** Retention of finished system mails (they hold reset codes and invite links) and dispatched events. */
export const SYSTEM_MAIL_RETENTION_MS = 7 * DAY;
export const DISPATCHED_EVENT_RETENTION_MS = 30 * DAY;
/** Outbox scope of the platform's workspace.* events (workspaces.ts records them). */
export const WORKSPACE_EVENT_SCOPE = "platform:";

function registerCoreJobs(ctx: AppContext) {
  ctx.scheduler.register({ name: "mail.deliver", schedule: "*/5 * * * * *", run: async () => void (await ctx.mailer.deliverPending()) });
  ctx.scheduler.register({ name: "ratelimit.purge", schedule: "0 */5 * * * *", run: async () => void (await ctx.ratelimit.purgeExpired()) });
  ctx.scheduler.register({ name: "idempotency.purge", schedule: "0 7 * * * *", run: async () => void (await ctx.idempotency.purgeExpired()) });
  ctx.scheduler.register({
    name: "retention.purge",
    schedule: "0 17 3 * * *",
    run: async () => {
      const now = ctx.clock.nowMs();
      await ctx.mailer.purgeFinishedBefore(now - SYSTEM_MAIL_RETENTION_MS);
      await ctx.events.purgeDispatchedBefore(now - DISPATCHED_EVENT_RETENTION_MS);
    },
  });
}

/** A mounted module, the service it created, the context it was given and the ports it provides, by name. */
interface Mounted {
  module: ServiceModule<any>;
  service: unknown;
  context: ModuleContext;
  ports: Map<string, unknown>;
}

/** What mount() hands every module: the app context, tenancy, the webhook engine and each module's settings by name. */
type Kernel = Pick<ModuleContext, "ctx" | "tenancy" | "webhooks"> & { settings: Config["settings"] };

/** What a module reaches of the others: their services and the ports they provide, looked up when asked. */
type Neighbours = Pick<ModuleContext, "service" | "ports" | "port">;

/** The kernel as one module sees it: guard and emit bound to its name (its switch, its webhook product). */
function moduleContext(m: ServiceModule<any>, kernel: Kernel, neighbours: Neighbours): ModuleContext {
  const { name } = m;
  const product = m.webhooks?.product ?? name;
  return {
    ...kernel,
    name,
    settings: kernel.settings[name] ?? {},
    guard: (p, workspaceId, action) => kernel.tenancy.guard(p, m.workspaceIdsAnyCase ? workspaceId.toLowerCase() : workspaceId, action, name),
    // A product's emit refuses the types it does not declare; a module without one emits under its name.
    emit: m.webhooks ? productEmitter(kernel.webhooks.engine, m.webhooks) : (t, scopeId, type, data) => kernel.webhooks.engine.emit(t, { product, scopeId }, type, data),
    ...neighbours,
  };
}

/**
 * The generic wiring of every module, done once: actions and webhook products first (so
 * policies and subscriptions can name them), then each service in list order with its
 * ports, jobs, webhook scopes and routes, then the workspace-delete cascade and the delivery
 * of outbox subscriptions. Returns the mounted modules in order.
 */
function mount(app: Routes, modules: readonly ServiceModule<any>[], kernel: Kernel, catalogue: EventCatalogue, prefixHooks: PrefixHook[]): Mounted[] {
  const { ctx, tenancy, webhooks } = kernel;
  for (const m of modules) {
    // Grouped by namespace: the platform's module owns several (workspace, member, apikey ...).
    const byNamespace = Map.groupBy(m.actions ?? [], (a) => a.name.split(".")[0]!);
    for (const [ns, actions] of byNamespace) ctx.actions.register(ns, actions.map((a) => ({ name: a.name, description: a.description })));
    if (m.webhooks) {
      catalogue.addProduct(m.webhooks);
      registerWebhookActions(ctx.actions, m.webhooks.product);
    }
  }

  const mounted: Mounted[] = [];
  // Looked up when called, not when the context is built: a port provided further down the list is there once mounted.
  const neighbours: Neighbours = {
    service: <T>(name: string) => mounted.find((x) => x.module.name === name)?.service as T | undefined,
    ports: (name) => mounted.flatMap((x) => (x.ports.has(name) ? [x.ports.get(name) as never] : [])),
    port: (name) => mounted.find((x) => x.ports.has(name))?.ports.get(name) as never,
  };
  const shared = { webhooks: webhooks.api, principals: tenancy.authz, idempotency: ctx.idempotency };
  const legacy = { legacy: webhooks.legacy, principals: tenancy.authz, idempotency: ctx.idempotency };
  for (const m of modules) {
    const full = moduleContext(m, kernel, neighbours);
    const s = m.create(full);
    const provides = Object.entries(m.provides ?? {}) as [string, (s: unknown, d: ModuleContext) => unknown][];
    mounted.push({ module: m, service: s, context: full, ports: new Map(provides.map(([name, build]) => [name, build(s, full)])) });
    for (const job of m.jobs?.(s, full) ?? []) ctx.scheduler.register(job);
    prefixHooks.push(...(m.requestHooks?.(s, full) ?? []));
    if (m.webhooks) {
      const product = m.webhooks.product;
      for (const scope of m.webhookScopes?.(s, full) ?? []) {
        const opts = { product, prefix: scope.prefix, resolve: scope.resolve, tag: scope.tag, params: scope.params };
        app.use(webhookRoutes(shared, opts));
        if (scope.legacyRoutes) app.use(legacyWebhookRoutes(legacy, { ...opts, tag: undefined, unlisted: scope.legacyRoutes === "unlisted" }));
      }
    }
    const routes = m.routes?.(s, full);
    if (routes) app.use(routes);
  }

  // Webhook endpoints have no foreign key to their scope's owner: every product's endpoints
  // scoped to the workspace go with it, then each module drops what else it keeps.
  tenancy.onWorkspaceDelete(async (t, workspaceId, principal, meta) => {
    const actor = { principal, meta };
    for (const { module: m } of mounted) {
      if (m.webhooks) await webhooks.api.endpoints.removeScope(t, { product: m.webhooks.product, scopeId: workspaceId, workspaceId }, actor);
    }
    for (const { module: m, service: s } of mounted) await m.onWorkspaceDelete?.(s, t, workspaceId, actor);
  });

  // Outbox subscriptions: the platform's workspace events (workspace.created / renamed /
  // deleted) go to the modules subscribed to their type, in the claim's transaction, and are
  // marked dispatched (subscribed to or not) so the retention purge removes them.
  const subscribers = mounted.filter((x) => x.module.subscribe);
  ctx.scheduler.register({
    name: "platform.events",
    schedule: "*/5 * * * * *",
    run: async () => {
      while (
        (await ctx.events.claim(WORKSPACE_EVENT_SCOPE, 500, async (e, t) => {
          const event = { ...e, data: JSON.parse(e.data) as unknown, dispatched_at: null } as SubscribedEvent;
          for (const { module: m, service: s } of subscribers) {
            const handle = m.subscribe![event.type] as ((s: unknown, e: SubscribedEvent, t: Sql) => Promise<void> | void) | undefined;
            await handle?.(s, event, t);
          }
        })) === 500
      );
    },
  });
  return mounted;
}

const OPERATIONS = ["Operations"];
const Readiness = t.Object({ status: t.Union([t.Literal("ready"), t.Literal("not_ready")]), checks: t.Object({ db: t.Boolean(), scheduler: t.Boolean() }) });

export async function createApp(
  config: Config,
  opts: { clock?: Clock; log?: Logger; webhooks?: Partial<WebhookEngineOptions>; modules?: readonly ServiceModule<any>[] } = {},
): Promise<BunkerApp> {
  const modules = opts.modules ?? SERVICE_MODULES;
  // Before anything opens: a module's bad setting is a ConfigError like the kernel's.
  const settings = moduleSettings(config, settingsOf(modules));
  const ctx = await buildContext(config, serviceCatalogue(config, modules), schemaOf(modules), opts);
  if (ctx.db.engine === "postgres") {
    // Several nodes may share this database: each scheduled tick runs on one of them.
    const node = `${hostname()}:${process.pid}:${randomHex(4)}`;
    ctx.scheduler.shareTicks((job, tickAt) => claimTick(ctx.db, job, tickAt, node, new Date().toISOString()));
  }
  registerCoreJobs(ctx);
  // Tenancy and the webhook engine are the kernel every module builds on: created first and
  // handed to every module (the platform module builds its accounts and workspaces on tenancy).
  const tenancy = new Tenancy(ctx);
  const catalogue = new EventCatalogue();
  const engine = new WebhookEngine(ctx, catalogue, opts.webhooks);
  const webhookApi = new WebhookService(ctx, { catalogue, engine });
  const legacyWebhooks = new LegacyWebhookService(ctx, webhookApi, engine);

  const bodies = new RequestBodies(config.maxBodyBytes, modules.flatMap((m) => m.bodyRoutes ?? []), { timeoutMs: config.bodyTimeoutMs, minRate: config.bodyMinRate });
  // Filled by mount(), read by the kernel's wrapper at each request.
  const prefixHooks: PrefixHook[] = [];
  const clients: ClientLimits = { addresses: new ClientAddresses(config.trustedProxies), server: () => app.server, maxInProgress: config.maxRequestsPerClient };
  const app = new Elysia({
    // Responses are checked against their schemas, never re-encoded: Elysia's t.Integer is a
    // transform (it accepts numeric strings on input), and any transform in a response schema
    // otherwise sends every response through TypeBox's dynamic Value.Encode (about a sixth of
    // a card create). No response schema relies on an encode step (no t.Date and the like).
    encodeSchema: false,
    // Input is validated as sent: Elysia's default normalizer (exact-mirror) rebuilt a nested
    // object field from whatever it was given before validating, so `"metadata": "abc"` became
    // {"0":"a","1":"b","2":"c"} and `"settings": "x"` an empty, valid object. TypeBox's Clean
    // only removes properties the schema does not declare, and leaves a wrong type to fail.
    normalize: "typebox",
  })
    .use(httpKernel(ctx.log, ctx.metrics, bodies, new CredentialGate((): readonly RouteInfo[] => app.routes, SECURITY_SCHEMES), clients, prefixHooks))
    .get("/healthz", () => ({ status: "ok" as const, version: VERSION }), {
      response: t.Object({ status: t.Literal("ok"), version: t.String() }),
      detail: { tags: OPERATIONS, security: PUBLIC, summary: "Liveness: the process answers HTTP" },
    })
    .get("/readyz", async ({ set }) => {
      const db = await ctx.db.ping();
      const scheduler = ctx.scheduler.isRunning();
      if (!db || !scheduler) set.status = 503;
      return { status: db && scheduler ? ("ready" as const) : ("not_ready" as const), checks: { db, scheduler } };
    }, {
      response: { 200: Readiness, 503: Readiness },
      detail: { tags: OPERATIONS, security: PUBLIC, summary: "Readiness: the database answers and the scheduler runs (503 otherwise)" },
    })
    .use(metricsRoute(ctx.metrics, ctx.config.metricsToken, { tags: OPERATIONS, security: [{}, { metricsToken: [] }] }))
    .get("/", ({ redirect }) => redirect("/admin/", 302), { detail: { hide: true } })
    .use(adminConsole());

  const mounted = mount(app, modules, { ctx, tenancy, webhooks: { engine, api: webhookApi, legacy: legacyWebhooks }, settings }, catalogue, prefixHooks);

  // Last, so the documents describe every route above: /docs (Swagger UI), /docs/json, and
  // /<service>/openapi.json with each module's title, description and version.
  app.use(apiDocs(() => app.routes, {
    info: { title: "Bunker API", version: VERSION, description: "Every Bunker service. Per-service documents: `/<service>/openapi.json`." },
    services: mounted.flatMap(({ module: m }) => (m.prefix && m.openapi ? [{ prefix: m.prefix, ...m.openapi }] : [])),
    securitySchemes: SECURITY_SCHEMES,
    serverUrl: ctx.config.publicUrl,
  }));

  await engine.ready();
  const serviceOf = <T>(name: string) => mounted.find((x) => x.module.name === name)?.service as T;
  const inbound = mounted.find((x) => x.module.inbound);
  return {
    app,
    ctx,
    platform: serviceOf<Platform>("platform"),
    auth: serviceOf<AuthService>("auth"),
    contextOf: (name) => mounted.find((x) => x.module.name === name)!.context,
    webhooks: engine,
    webhookApi,
    inbound: inbound?.module.inbound!(inbound.service),
    handle: (req) => app.handle(req),
    listen(port, hostname) {
      // reusePort off (Elysia turns it on): a second instance on a taken port must fail to
      // bind, not share it and split requests between two databases.
      app.listen({ port, hostname, reusePort: false, maxRequestBodySize: bodies.ceiling });
      return app.server!;
    },
    async stop() {
      await ctx.scheduler.stop();
      // Background work finishes and is recorded before the database closes: the modules
      // built last (on top of the others) stop first.
      for (const { module: m, service: s } of [...mounted].reverse()) await m.stop?.(s);
      await ctx.caches.stop();
      await ctx.db.close(); // SQLite: checkpoints the WAL first
    },
  };
}
