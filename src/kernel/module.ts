/**
 * One contract for a service module. Each service folder exports one ServiceModule
 * (services/<name>/module.ts) and app.ts mounts the list, one line per service; mount()
 * does the generic work once for every module: registers its policy actions and webhook
 * product, builds its ModuleContext (the kernel bound to the module's name), creates the
 * service and the ports it provides, registers its scheduled jobs, mounts its webhook scopes
 * (shared and legacy routes) and its own routes, drops its workspace-scoped webhook
 * endpoints with a deleted workspace and calls its cascade, delivers it the outbox events it
 * subscribes to, describes it in its own OpenAPI document, and awaits its stop on shutdown.
 *
 * A module is a plain object (better-auth's plugin object, PocketBase's table of contents):
 * nothing runs at import time, and the service it creates lives in one app instance.
 * docs/architecture.md has the checklist for adding a service.
 */
import type { BodyRoute } from "../core/request-body";
import type { PrefixHook } from "../core/http";
import type { ServiceDescription } from "../core/openapi";
import type { Elysia } from "elysia";
import type { TString } from "@sinclair/typebox";
import type { AppContext } from "../context";
import type { OutboxEvent } from "../core/events";
import type { Sql } from "../core/db";
import type { Migration } from "../core/store/migrations";
import type { JobDefinition } from "../core/scheduler";
import type { InboundHandler } from "../core/smtp-listener";
import type { Principal } from "../access/principal";
import type { Tenancy, WorkspaceRow } from "./tenancy";
import type { Settings, SettingValues } from "../settings";
import type { Actor, EventEmitter, ScopeResolver, WebhookParts, WebhookProduct } from "./webhooks";

/**
 * What every module's create() and hooks receive: the app context and the kernel, bound to
 * the module's name (its action namespace, its per-workspace switch, its webhook product).
 */
// `any` by default: a helper that takes any module's context (ServiceDeps) accepts every
// module's, and a module's own context types its emit by its product's declarations.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface ModuleContext<P extends WebhookProduct = any, D extends Settings = Settings> {
  ctx: AppContext;
  /** The module's name (ServiceModule.name). */
  name: string;
  /**
   * The module's settings (ServiceModule.settings), read and checked at start with the kernel's.
   * `any` in a context of no module in particular (ServiceDeps): a helper shared by a module's
   * parts reads them into its declaration's type.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  settings: Settings extends D ? any : SettingValues<D>;
  /**
   * The guard of the module's workspace routes: the workspace once `p` may do `action` in it
   * (404 for an unknown workspace, another workspace's key or a non-member, 403 without the
   * action) and the module is switched on for it (403 SERVICE_NOT_ENABLED). The id as given,
   * or lower-cased first when the module says its routes take any case (workspaceIdsAnyCase).
   */
  guard(p: Principal, workspaceId: string, action: string): Promise<WorkspaceRow>;
  /**
   * Records a webhook event of the module's product for `scopeId`, in the caller's transaction
   * `t`. Typed by the product's declarations (EventData): an undeclared type or a payload that
   * is not its declared data fails the type check, and an undeclared type throws.
   */
  emit: EventEmitter<P>;
  /** Callers, workspaces and their authorization (kernel/tenancy): for checks guard() does not cover. */
  tenancy: Tenancy;
  /** The webhook engine and its HTTP side (emit() above covers the module's own events). */
  webhooks: WebhookParts;
  /**
   * The service of a module earlier in the list, by name (e.g. the community asks for
   * "auth" to check App ids); undefined when that service is not mounted.
   */
  service<T>(name: string): T | undefined;
  /**
   * Every implementation of a port (ServiceModule.provides), one per providing module in list
   * order. Resolved at call time: a module later in the list may provide a port an earlier
   * one consumes, once it is mounted.
   */
  ports<K extends PortName>(name: K): Ports[K][];
  /** The first implementation of a port in list order (one provider is the rule), or undefined when no mounted module provides it. */
  port<K extends PortName>(name: K): Ports[K] | undefined;
}

/**
 * The ports modules provide one another, by name, with their TypeScript interface: the
 * providing or the consuming side declares each in its ports.ts by augmenting this interface
 * (`declare module "../../kernel/module" { interface Ports { "mail.sending": MailSending } }`),
 * so provides and ports() are typed by the name and the kernel names no product.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface Ports {}
export type PortName = keyof Ports & string;

/**
 * The outbox events a module may subscribe to, by type, with their data: the platform's
 * workspace events, recorded with the change under the scope `platform:<workspace id>`.
 */
export interface SubscribableEvents {
  "workspace.created": { workspace_id: string; slug: string };
  "workspace.renamed": { workspace_id: string; old_slug: string; new_slug: string };
  "workspace.deleted": { workspace_id: string; slug: string };
}

/** An outbox event as a subscriber gets it: its data parsed and typed by its type. */
export type SubscribedEvent<K extends keyof SubscribableEvents = keyof SubscribableEvents> = Omit<OutboxEvent, "type" | "data"> & { type: K; data: SubscribableEvents[K] };

/** The earlier name of ModuleContext, kept for the files (and test helpers) that still say it. */
export type ServiceDeps = ModuleContext;

/** One webhook scope of a product: mount() mounts the shared routes (and the legacy ones) at its prefix. */
export interface WebhookScopeMount {
  /** Scope path with its parameters, e.g. "/mail/v1/workspaces/:workspace_id". */
  prefix: string;
  resolve: ScopeResolver;
  /** OpenAPI tag; default "<label>: webhooks". */
  tag?: string;
  /**
   * Also the deprecated {scope}/webhooks and {scope}/webhooks/{id} routes (until 15 January 2027).
   * "unlisted": served, and documented in /docs/json only, not in the service's own document:
   * for products whose contract never listed them (their `{id}` overlaps `endpoints/{id}`, and a
   * client generated from the service's document has no use for them).
   */
  legacyRoutes?: boolean | "unlisted";
  /** Schemas of the prefix's parameters that are more than a string (a UUID): validated and documented. */
  params?: Partial<Record<string, TString>>;
}

/** What any Elysia instance is to mount(). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Routes = Elysia<any, any, any, any, any, any, any>;

export interface ServiceModule<S = unknown, P extends WebhookProduct = WebhookProduct, D extends Settings = Settings> {
  /**
   * The service's name: its policy-action namespace, its per-workspace switch
   * (DEFAULT_SERVICES, /platform/v1/workspaces/{slug}/services) and its table prefix.
   */
  name: string;
  /** One line for the workspace's service list. */
  description: string;
  /** Mount root of its routes; its OpenAPI document is `${prefix}/openapi.json`. None: no HTTP surface of its own. */
  prefix?: string;
  /** Metadata of that document (the version is the spec's, e.g. v0.1.0). */
  openapi?: { title: string; description: string; version: string; responseHeaders?: ServiceDescription["responseHeaders"] };
  /**
   * Routes whose request body is not a JSON object of at most MAX_BODY_BYTES (the kernel's
   * rule for every other route): uploads with a larger cap, form posts. Full paths.
   */
  bodyRoutes?: readonly BodyRoute[];
  /**
   * Its routes' schemas accept workspace ids (UUIDs) in any case, and its rows hold them
   * lower-case: the context's guard() lower-cases the id before the check (mail, waitlist).
   */
  workspaceIdsAnyCase?: boolean;
  /** Policy actions, `<namespace>.<verb>`; registered (grouped by namespace) before create(). */
  actions?: readonly { name: string; description: string }[];
  /**
   * The product's webhook definition (event catalogue, legacy header, label), built with
   * defineWebhookProduct. mount() adds it to the catalogue and registers the product's
   * <product>.webhooks.read / .write actions; endpoints whose scope id is a deleted
   * workspace's id go with the workspace.
   */
  webhooks?: P;
  /**
   * The service's schema: its migrations folder's list (services/<name>/migrations/index.ts).
   * The engines run the kernel's and every module's as one list (kernel/migrations: schemaOf).
   */
  migrations?: readonly Migration[];
  /**
   * The service's settings: environment variables declared in its settings.ts (src/settings.ts
   * builders), read and checked at start with the kernel's into one list of problems, and
   * handed to the module as its context's `settings`, typed by the declaration.
   */
  settings?: D;
  /** Builds the service once per app. Modules earlier in the list are already created. */
  create(deps: ModuleContext<P, D>): S;
  /** Where the shared webhook routes of the product are mounted (and whether the legacy routes are too). */
  webhookScopes?(service: S, deps: ModuleContext<P, D>): WebhookScopeMount[];
  /** The service's own routes (full paths, under its prefix). */
  routes?(service: S, deps: ModuleContext<P, D>): Routes;
  /**
   * Work on every request under a path of its own, matched route or not (a rate limit counted
   * before the body is read, headers on every response, errors included): run by the HTTP
   * kernel's wrapper for requests under the hook's prefix only, so the app's other routes pay
   * nothing for it (core/http.ts PrefixHook). Not Elysia's global onRequest/mapResponse.
   */
  requestHooks?(service: S, deps: ModuleContext<P, D>): PrefixHook<any>[];
  /** Scheduled jobs (the scheduler runs them by name; tests call them directly). */
  jobs?(service: S, deps: ModuleContext<P, D>): JobDefinition[];
  /**
   * The ports it provides other modules (and itself), by name: each builds the port's
   * implementation from the created service, once, right after create(). Consumers get them
   * through their context's ports()/port(), in list order.
   */
  provides?: { [K in PortName]?: (service: S, deps: ModuleContext<P, D>) => Ports[K] };
  /** Runs inside the transaction that deletes a workspace: drop what its foreign keys don't reach. */
  onWorkspaceDelete?(service: S, t: Sql, workspaceId: string, actor: Actor): Promise<void>;
  /**
   * Outbox subscriptions, by event type (SubscribableEvents): the kernel's platform.events job
   * hands each event to every subscriber in list order, at least once, in the transaction that
   * marks it dispatched (a throw rolls the batch back and it is offered again). For reactions
   * that may lag the change; one that must commit with it is an in-transaction listener
   * (withListeners, kernel/webhooks) instead.
   */
  subscribe?: { [K in keyof SubscribableEvents]?: (service: S, event: SubscribedEvent<K>, t: Sql) => Promise<void> | void };
  /** The owner of inbound mail (one service at most); main.ts hands it to the SMTP listener. */
  inbound?(service: S): InboundHandler;
  /** Awaited on shutdown, after the scheduler stopped and before the database closes: finish background work. */
  stop?(service: S): Promise<void>;
}

/** Identity function that lets TypeScript infer a module's service type from create() and its events from webhooks. */
export const defineService = <S, P extends WebhookProduct = WebhookProduct, D extends Settings = {}>(m: ServiceModule<S, P, D>): ServiceModule<S, P, D> => m;

/** The settings declarations of a module list, by module name (loadConfig and createApp read them). */
export const settingsOf = (modules: readonly ServiceModule<any>[]): Record<string, Settings> =>
  Object.fromEntries(modules.flatMap((m) => (m.settings ? [[m.name, m.settings]] : [])));
