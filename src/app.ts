/**
 * Builds one Bunker instance: the context every service receives, the Elysia app with
 * each service mounted at its prefix, the scheduled jobs, and the health/metrics/docs
 * routes. Tests build several side by side; main.ts builds one and listens.
 */
import { Elysia } from "elysia";
import { swagger } from "@elysiajs/swagger";
import { ActionRegistry } from "./access/actions";
import type { Config } from "./config";
import { DAY, systemClock, type Clock } from "./core/clock";
import { checkpoint, migrate, openDb, ping } from "./core/db";
import { EventOutbox } from "./core/events";
import { httpKernel } from "./core/http";
import { Idempotency } from "./core/idempotency";
import { FORM_TYPE, JSON_TYPE, MULTIPART_TYPE, RequestBodies, type BodyRoute } from "./core/request-body";
import { createLogger, type Logger } from "./core/log";
import { SystemMailer } from "./core/mailer";
import { Metrics } from "./core/metrics";
import { createObjectStore } from "./core/objects";
import { createOutboundHttp } from "./core/outbound-http";
import { PasswordHasher } from "./core/password";
import { RateLimiter } from "./core/ratelimit";
import { Scheduler } from "./core/scheduler";
import { createSecretBox, loadMasterKey } from "./core/secrets";
import type { AppContext } from "./context";
import type { InboundHandler } from "./core/smtp-listener";
import { Platform } from "./services/platform/service";
import { AVATAR_MAX_BYTES } from "./services/platform/workspaces";
import { platformRoutes } from "./services/platform/routes";
import { WebhookEngine, type WebhookEngineOptions } from "./services/webhooks/engine";
import { EventCatalogue, registerBuiltinEventTypes } from "./services/webhooks/catalogue";
import { publicEventTypesRoute, webhookRoutes } from "./services/webhooks/routes";
import { LegacyWebhookService } from "./services/webhooks/legacy";
import { legacyWebhookRoutes } from "./services/webhooks/legacy-routes";
import { workspaceScope } from "./services/webhooks/scopes";
import { WebhookService } from "./services/webhooks/service";
import { AuthService } from "./services/auth/service";
import { authRoutes } from "./services/auth/routes";
import { appWebhookScope } from "./services/auth/webhook-scope";
import { socialRoutes } from "./services/social/routes";
import { tackWebhookRoutes } from "./services/webhooks/tack-routes";
import adminHtml from "../static/admin/index.html" with { type: "text" };
import { join } from "node:path";
import type { Server } from "bun";

export const VERSION = "0.1.0";

/** Mounted services: prefix -> human title, used for per-service OpenAPI documents. */
const SERVICES = [
  { prefix: "/platform", title: "Bunker platform administration" },
  { prefix: "/auth", title: "Bunker Auth" },
  { prefix: "/mail", title: "Bunker mail" },
  { prefix: "/waitlist", title: "Bunker waitlist" },
  { prefix: "/trawl", title: "Bunker extraction jobs" },
  { prefix: "/tack", title: "Bunker card board" },
  { prefix: "/social", title: "Bunker community" },
];

/**
 * Routes whose request body is not a JSON object of at most MAX_BODY_BYTES, the kernel's
 * rule for every other route. Caps beyond MAX_BODY_BYTES are uploads, listed in README.
 */
const BODY_ROUTES: BodyRoute[] = [
  // Multipart adds a boundary and part headers around the 2 MB image; the service checks the file itself.
  { method: "POST", path: "/platform/v1/workspaces/:workspace_slug/avatar", types: [MULTIPART_TYPE], maxBytes: AVATAR_MAX_BYTES + 64 * 1024 },
  // OAuth endpoints take form posts (RFC 6749 §4.4.2, RFC 7662 §2.1; OIDC response_mode=form_post) as well as JSON.
  { method: "POST", path: "/platform/v1/auth/oauth/:provider/callback", types: [FORM_TYPE, JSON_TYPE] },
  { method: "POST", path: "/auth/:app_slug/v1/auth/oauth/:provider/callback", types: [FORM_TYPE, JSON_TYPE] },
  { method: "POST", path: "/auth/:app_slug/v1/oauth/token", types: [FORM_TYPE, JSON_TYPE], raw: true },
  { method: "POST", path: "/auth/:app_slug/v1/oauth/introspect", types: [FORM_TYPE, JSON_TYPE] },
];

/** Products whose webhook endpoints live in a workspace: {prefix}/v1/workspaces/{workspace_id}/webhooks/... */
const WORKSPACE_WEBHOOK_PRODUCTS = ["mail", "waitlist", "trawl"] as const;
/** Every product with a workspace webhook scope (tack and social mount theirs in their own route modules). */
const WORKSPACE_SCOPED_PRODUCTS = [...WORKSPACE_WEBHOOK_PRODUCTS, "tack", "social"] as const;

export interface BunkerApp {
  app: Elysia<any, any, any, any, any, any, any>;
  ctx: AppContext;
  platform: Platform;
  auth: AuthService;
  /** The shared webhook engine: products emit through it; its pump and purge jobs are registered. */
  webhooks: WebhookEngine;
  /** Webhook endpoints, events log and event catalogue (the HTTP side of webhooks). */
  webhookApi: WebhookService;
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

export function buildContext(config: Config, opts: { clock?: Clock; log?: Logger } = {}): AppContext {
  const log = opts.log ?? createLogger(config.logLevel);
  const clock = opts.clock ?? systemClock;
  const db = openDb(join(config.dataDir, "bunker.db"));
  migrate(db);
  const metrics = new Metrics();
  if (config.env === "production" && !config.smtpRelayUrl) {
    log.warn("SMTP_RELAY_URL is not set: system mails (reset codes, invitations) are only written to the log");
  }
  const masterKey = loadMasterKey({ masterKey: config.masterKey, dataDir: config.dataDir });
  return {
    config,
    db,
    clock,
    log,
    metrics,
    masterKey,
    secretBox: createSecretBox(masterKey),
    passwords: new PasswordHasher(config.argon2MemoryKiB, config.argon2TimeCost),
    ratelimit: new RateLimiter(db, clock),
    idempotency: new Idempotency(db, clock),
    events: new EventOutbox(db, clock),
    mailer: new SystemMailer({ db, clock, log, relayUrl: config.smtpRelayUrl, from: config.mailFrom }),
    objects: createObjectStore({ kind: config.objectStore, dataDir: config.dataDir, s3Bucket: config.s3Bucket }),
    scheduler: new Scheduler(log, metrics, clock),
    outbound: createOutboundHttp({ allowPrivateTargets: config.allowPrivateTargets, requireHttps: config.env === "production" }),
    actions: new ActionRegistry(),
  };
}

/** Retention of finished system mails (they hold reset codes and invite links) and dispatched events. */
export const SYSTEM_MAIL_RETENTION_MS = 7 * DAY;
export const DISPATCHED_EVENT_RETENTION_MS = 30 * DAY;

function registerCoreJobs(ctx: AppContext) {
  ctx.scheduler.register({ name: "mail.deliver", schedule: "*/5 * * * * *", run: async () => void (await ctx.mailer.deliverPending()) });
  ctx.scheduler.register({ name: "ratelimit.purge", schedule: "0 */5 * * * *", run: () => void ctx.ratelimit.purgeExpired() });
  ctx.scheduler.register({ name: "idempotency.purge", schedule: "0 7 * * * *", run: () => void ctx.idempotency.purgeExpired() });
  ctx.scheduler.register({
    name: "retention.purge",
    schedule: "0 17 3 * * *",
    run: () => {
      const now = ctx.clock.nowMs();
      ctx.mailer.purgeFinishedBefore(now - SYSTEM_MAIL_RETENTION_MS);
      ctx.events.purgeDispatchedBefore(now - DISPATCHED_EVENT_RETENTION_MS);
    },
  });
}

export async function createApp(config: Config, opts: { clock?: Clock; log?: Logger; webhooks?: Partial<WebhookEngineOptions> } = {}): Promise<BunkerApp> {
  const ctx = buildContext(config, opts);
  const platform = new Platform(ctx);
  const webhooks = new WebhookEngine(ctx, opts.webhooks);
  registerCoreJobs(ctx);
  webhooks.registerJobs(ctx.scheduler);
  const catalogue = new EventCatalogue();
  registerBuiltinEventTypes(catalogue);
  const webhookApi = new WebhookService(ctx, { catalogue, engine: webhooks });
  const auth = new AuthService(ctx, platform, webhooks, webhookApi);
  // Workspace-scoped webhook endpoints have no foreign key to the workspace: drop them with it.
  platform.workspaces.onDelete((workspaceId, principal, meta) => {
    for (const product of WORKSPACE_SCOPED_PRODUCTS) webhookApi.endpoints.removeScope({ product, scopeId: workspaceId, workspaceId }, { principal, meta });
  });

  const bodies = new RequestBodies(config.maxBodyBytes, BODY_ROUTES);
  const app = new Elysia()
    .use(httpKernel(ctx.log, ctx.metrics, bodies))
    .use(
      swagger({
        path: "/docs",
        provider: "swagger-ui",
        // Otherwise any path with a dot is dropped, e.g. /auth/{app}/v1/.well-known/jwks.json.
        excludeStaticFile: false,
        documentation: { info: { title: "Bunker API", version: VERSION, description: "Every Bunker service. Per-service documents: /<service>/openapi.json" } },
        exclude: ["/docs", "/docs/json", "/healthz", "/readyz", "/metrics", "/", "/admin", "/admin/"],
      }),
    )
    .get("/healthz", () => ({ status: "ok", version: VERSION }), { detail: { hide: true } })
    .get("/readyz", ({ set }) => {
      const db = ping(ctx.db);
      const scheduler = ctx.scheduler.isRunning();
      if (!db || !scheduler) set.status = 503;
      return { status: db && scheduler ? "ready" : "not_ready", checks: { db, scheduler } };
    }, { detail: { hide: true } })
    .get("/metrics", () => new Response(ctx.metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4" } }), { detail: { hide: true } })
    .get("/", ({ redirect }) => redirect("/admin/", 302), { detail: { hide: true } })
    // Elysia matches "/admin" and "/admin/" as one route (non-strict paths), so a separate
    // "/admin" redirect would also answer "/admin/" and loop: one handler decides by path.
    .get("/admin/", ({ request, redirect }) =>
      new URL(request.url).pathname === "/admin"
        ? redirect("/admin/", 302)
        : new Response(adminHtml as unknown as string, { headers: { "content-type": "text/html; charset=utf-8", "x-frame-options": "DENY" } }), { detail: { hide: true } })
    .use(platformRoutes(platform))
    .use(authRoutes(auth));

  // Shared webhook routes, one factory per scope kind (Auth apps and communities mount theirs the same way).
  // The deprecated {scope}/webhooks and {scope}/webhooks/{id} routes (until 15 January 2027) sit beside them.
  const legacyWebhooks = new LegacyWebhookService(ctx, webhookApi, webhooks);
  for (const product of WORKSPACE_WEBHOOK_PRODUCTS) {
    app.use(
      webhookRoutes(
        { webhooks: webhookApi, principals: platform.authz, idempotency: ctx.idempotency },
        { product, prefix: `/${product}/v1/workspaces/:workspace_id`, resolve: workspaceScope(platform, product) },
      ),
    );
    app.use(
      legacyWebhookRoutes(
        { legacy: legacyWebhooks, principals: platform.authz, idempotency: ctx.idempotency },
        { product, prefix: `/${product}/v1/workspaces/:workspace_id`, resolve: workspaceScope(platform, product) },
      ),
    );
  }

  // Auth Apps: /auth/v1/apps/{app_id}/webhooks/... (shared and legacy routes, like the workspace products).
  const authScope = { product: "auth" as const, prefix: "/auth/v1/apps/:app_id", resolve: appWebhookScope(auth) };
  app.use(webhookRoutes({ webhooks: webhookApi, principals: platform.authz, idempotency: ctx.idempotency }, authScope));
  app.use(legacyWebhookRoutes({ legacy: legacyWebhooks, principals: platform.authz, idempotency: ctx.idempotency }, authScope));

  // The community service's public catalogue (spec 3), communities and their webhooks; card-board webhook records.
  app.use(publicEventTypesRoute(catalogue, "social", "/social/v1/webhook-event-types"));
  const productDeps = { ctx, platform, webhookApi, engine: webhooks, catalogue, legacy: legacyWebhooks, apps: auth.apps };
  app.use(socialRoutes(productDeps));
  app.use(tackWebhookRoutes(productDeps));

  // Per-service OpenAPI documents: the full document filtered to the service's prefix.
  for (const s of SERVICES) {
    app.get(`${s.prefix}/openapi.json`, async () => {
      const full = (await (await app.handle(new Request("http://localhost/docs/json"))).json()) as any;
      const paths = Object.fromEntries(Object.entries(full.paths ?? {}).filter(([p]) => p.startsWith(s.prefix + "/") && !p.endsWith("/openapi.json")));
      return { ...full, info: { ...full.info, title: s.title, version: "v1.0.0" }, servers: [{ url: ctx.config.publicUrl }], paths };
    }, { detail: { hide: true } });
  }

  return {
    app,
    ctx,
    platform,
    auth,
    webhooks,
    webhookApi,
    handle: (req) => app.handle(req),
    listen(port, hostname) {
      app.listen({ port, hostname, maxRequestBodySize: bodies.ceiling });
      return app.server!;
    },
    async stop() {
      await ctx.scheduler.stop();
      // Attempts in flight finish and are recorded before the database closes.
      await webhooks.stop();
      await platform.accounts.idle();
      await auth.verification.idle();
      checkpoint(ctx.db);
      ctx.db.close();
    },
  };
}
