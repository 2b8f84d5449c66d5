/**
 * Apps: the isolation unit of the Auth service. Managed by platform principals (console
 * session, personal token or workspace API key) with auth.app.* actions in the App's
 * workspace; the Auth service must be enabled for that workspace.
 *
 * Decisions the spec leaves open:
 * - Slugs: 3-63 lowercase letters, digits and hyphens, starting with a letter; globally
 *   unique (they are the first path segment of every end-user route). Words the router
 *   uses at that position (v1, v2, ..., apps, docs, admin, well-known, openapi) are refused.
 * - Changing the slug changes the issuer, so outstanding tokens stop verifying: documented
 *   on the route.
 * - The publishable key (pk_...) is public by design and is shown on every read.
 * - Another workspace's App answers 404, as does an unknown id.
 */
import type { Principal } from "../../../access/principal";
import type { RequestMeta } from "../../../access/http";
import { tx, type Sql } from "../../../core/db";
import { ApiError, badRequest, conflict, notFound, type ErrorDetail } from "../../../core/errors";
import { uuid, randomBase62 } from "../../../core/ids";
import type { MaybePromise } from "../../../core/maybe-promise";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import { isUniqueViolation } from "../../../core/store/sql";
import { audit as platformAudit } from "../../../kernel/tenancy";
import type { ModuleContext } from "../../../kernel/module";
import { recordAuthAudit, type AuthActor } from "../audit/record";
import type { SigningKeys } from "./keys";
import { DEFAULT_SETTINGS, applySettings, parseSettings, type AppSettings, type SettingsSecrets } from "./settings";
import type { LoadedApp } from "./loaded";
import * as store from "./store";
import { appView } from "./views";

export type { LoadedApp };

export const SLUG_RE = /^[a-z][a-z0-9-]{1,61}[a-z0-9]$/;
const RESERVED_SLUGS = new Set(["apps", "docs", "admin", "api", "well-known", "openapi", "static", "health", "metrics", "oauth", "auth", "me"]);
export const isReservedSlug = (s: string) => RESERVED_SLUGS.has(s) || /^v\d+$/.test(s);

export const actorOfPrincipal = (p: Principal): AuthActor =>
  p.kind === "api_key" ? { type: "api_key", id: p.keyId } : p.kind === "personal_token" ? { type: "personal_token", id: p.accountId } : { type: "account", id: p.accountId };

/** Cache-bus topic (core/cache-bus.ts) of App rows: every node drops its slug cache when an App changes. */
export const APPS_TOPIC = "auth.apps";

const slugTakenError = () => conflict("This App slug is taken", "SLUG_TAKEN");

export class AppService {
  /**
   * slug -> App, for the end-user routes (every request resolves its App). Emptied when the
   * App generation moves (any App change, on any node: `changed`); with several nodes an
   * entry is also served for at most the cache bus's maxAgeMs. A hit answers without a promise.
   */
  private bySlugCache = new Map<string, { app: LoadedApp; at: number }>();
  private cacheGen = -1;
  readonly authBaseUrl: string;

  constructor(
    /** The Auth module's context: its name is the service an App's workspace must have switched on. */
    private readonly m: Pick<ModuleContext, "ctx" | "tenancy" | "name">,
    private readonly keys: SigningKeys,
    /** Drops what the App's foreign keys don't reach (its webhook endpoints), inside the deleting transaction t. */
    private readonly onRemove: (t: Sql, app: LoadedApp, actor: Principal, meta: RequestMeta) => Promise<void>,
    /** Whether the App has a role of this name (roles are the users' feature, which builds on Apps). */
    private readonly roleExists: (appId: string, name: string) => Promise<boolean>,
  ) {
    this.authBaseUrl = `${m.ctx.config.publicUrl}/auth`;
    // A deleted workspace takes its Apps along (foreign key); their webhook endpoints go here.
    m.tenancy.onWorkspaceDelete(async (t, workspaceId, actor, meta) => {
      for (const id of await store.appIdsInWorkspace(t, workspaceId)) {
        const app = await this.byId(id, t);
        if (app) await onRemove(t, app, actor, meta);
      }
      // Their rows go with the workspace's, so the slug caches must not keep serving them
      // (JWKS, discovery): moved now and again, on every node, when t commits.
      await this.changed(t);
    });
  }

  /** Provider secrets in settings: encrypted at rest; issuers must pass the outbound guard. */
  private readonly secrets: SettingsSecrets = {
    encrypt: (plain) => this.m.ctx.secretBox.encrypt(plain),
    checkUrl: (url) => void this.m.ctx.outbound.checkUrl(url),
  };

  private load(row: store.AppRow): LoadedApp {
    return {
      id: row.id,
      workspaceId: row.workspace_id,
      slug: row.slug,
      displayName: row.display_name,
      settings: parseSettings(row.settings),
      issuer: `${this.authBaseUrl}/${row.slug}`,
      publishableKey: row.publishable_key,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  /** The App of an end-user route, or 404. A cached App answers at once (no promise); a miss reads it. */
  bySlug(slug: string): MaybePromise<LoadedApp> {
    const key = slug.toLowerCase();
    const gen = this.m.ctx.caches.generation(APPS_TOPIC);
    const maxAge = this.m.ctx.caches.maxAgeMs;
    if (gen !== this.cacheGen) {
      this.bySlugCache.clear();
      this.cacheGen = gen;
    }
    const hit = this.bySlugCache.get(key);
    if (hit && (maxAge === Number.POSITIVE_INFINITY || this.m.ctx.clock.nowMs() - hit.at < maxAge)) return hit.app;
    return store.appBySlug(this.m.ctx.db, key).then((row) => {
      if (!row) throw notFound("App");
      const app = this.load(row);
      // A load the generation moved under may have read the row before a commit: answered, not kept.
      if (this.m.ctx.caches.generation(APPS_TOPIC) === gen) {
        if (this.bySlugCache.size >= 10_000) this.bySlugCache.clear();
        this.bySlugCache.set(key, { app, at: maxAge === Number.POSITIVE_INFINITY ? 0 : this.m.ctx.clock.nowMs() });
      }
      return app;
    });
  }

  /** db: the database, or the caller's open transaction. */
  async byId(id: string, db: Sql = this.m.ctx.db): Promise<LoadedApp | null> {
    const row = await store.appById(db, id);
    return row ? this.load(row) : null;
  }

  async byPublishableKey(key: string, db: Sql = this.m.ctx.db): Promise<LoadedApp | null> {
    const row = await store.appByPublishableKey(db, key);
    return row ? this.load(row) : null;
  }

  /** Marks the Apps changed: slug caches empty now, and on every node when t commits. */
  changed(t: Sql): Promise<void> {
    return this.m.ctx.caches.changed(t, APPS_TOPIC);
  }

  /** Workspace guard for a platform principal: 404 (as "App") when the caller has no access to the workspace. */
  async authorize(p: Principal, app: LoadedApp, action: string, db: Sql = this.m.ctx.db): Promise<void> {
    try {
      await this.m.tenancy.authz.authorizeWorkspace(db, p, { id: app.workspaceId }, action);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) throw notFound("App");
      throw e;
    }
    await this.m.tenancy.authz.requireService(db, app.workspaceId, this.m.name);
  }

  /** Loads an App by id for a platform principal (404 for unknown or another workspace's App). */
  async forPrincipal(p: Principal, appId: string, action: string): Promise<LoadedApp> {
    const app = await this.byId(appId);
    if (!app) throw notFound("App");
    await this.authorize(p, app, action);
    return app;
  }

  private async workspaceFor(p: Principal, workspaceId: string | undefined, action: string): Promise<string> {
    const id = workspaceId ?? (p.kind === "api_key" ? p.workspaceId : undefined);
    if (!id) throw badRequest("workspace_id is required for a signed-in user", [{ field: "workspace_id", reason: "required unless the caller is a workspace API key" }]);
    const { workspace } = await this.m.tenancy.authz.authorizeService(this.m.ctx.db, p, { id }, action, this.m.name);
    return workspace.id;
  }

  private validateSlug(slug: string, details: ErrorDetail[]) {
    if (!SLUG_RE.test(slug)) details.push({ field: "slug", reason: "3-63 lowercase letters, digits or hyphens, starting with a letter" });
    else if (isReservedSlug(slug)) details.push({ field: "slug", reason: `"${slug}" is reserved by the Auth service's routes` });
  }

  async create(p: Principal, b: { workspace_id?: string; slug: string; display_name?: string; displayName?: string; settings?: Record<string, unknown> }, meta: RequestMeta) {
    const workspaceId = await this.workspaceFor(p, b.workspace_id, "auth.app.create");
    const displayName = (b.display_name ?? b.displayName ?? "").trim();
    const details: ErrorDetail[] = [];
    this.validateSlug(b.slug, details);
    if (!displayName || displayName.length > 200) details.push({ field: "display_name", reason: "1-200 characters" });
    if (details.length) throw badRequest("Invalid App", details);
    // A new App has no roles yet, so default_role can only be null here.
    const settings = applySettings(DEFAULT_SETTINGS, b.settings ?? {}, () => false, this.secrets);
    const id = uuid();
    const { row: key } = await this.keys.generate(id);
    const now = this.m.ctx.clock.iso();
    await tx(this.m.ctx.db, async (t) => {
      if (await store.slugTaken(t, b.slug, null)) throw slugTakenError();
      await store
        .insertApp(t, {
          id,
          workspace_id: workspaceId,
          slug: b.slug,
          display_name: displayName,
          settings: JSON.stringify(settings),
          publishable_key: `pk_${randomBase62(32)}`,
          created_at: now,
          updated_at: now,
        })
        .catch((e) => {
          // Another node took the slug since the check (PostgreSQL, READ COMMITTED).
          throw isUniqueViolation(e) ? slugTakenError() : e;
        });
      await store.insertSigningKey(t, key);
      await recordAuthAudit(t, this.m.ctx, id, { action: "app.create", actor: actorOfPrincipal(p), target: { type: "app", id }, meta });
      await this.changed(t);
    });
    return appView((await this.byId(id))!);
  }

  async list(p: Principal, q: { workspace_id?: string; limit?: number; cursor?: string }) {
    const workspaceId = await this.workspaceFor(p, q.workspace_id, "auth.app.list");
    const limit = parseLimit(q.limit);
    const after = decodeCursor<{ id: string }>(q.cursor)?.id ?? null;
    const rows = await store.listApps(this.m.ctx.db, workspaceId, typeof after === "string" ? after : null, limit + 1);
    return buildPage(rows, limit, (r) => ({ id: r.id }), (r) => appView(this.load(r)));
  }

  async get(p: Principal, id: string) {
    return appView(await this.forPrincipal(p, id, "auth.app.read"));
  }

  async update(p: Principal, id: string, b: { slug?: string; display_name?: string; displayName?: string; settings?: Record<string, unknown> }, meta: RequestMeta) {
    const app = await this.forPrincipal(p, id, "auth.app.update");
    const details: ErrorDetail[] = [];
    const slug = b.slug ?? app.slug;
    if (b.slug !== undefined) this.validateSlug(b.slug, details);
    const displayName = (b.display_name ?? b.displayName ?? app.displayName).trim();
    if (!displayName || displayName.length > 200) details.push({ field: "display_name", reason: "1-200 characters" });
    if (details.length) throw badRequest("Invalid App", details);
    // applySettings checks default_role synchronously: look the named role up first.
    const wantedRole = b.settings?.default_role;
    const roleKnown = typeof wantedRole === "string" && (await this.roleExists(app.id, wantedRole));
    const settings = applySettings(app.settings, b.settings ?? {}, (name) => roleKnown && name === wantedRole, this.secrets);
    await tx(this.m.ctx.db, async (t) => {
      if (slug !== app.slug && (await store.slugTaken(t, slug, app.id))) throw slugTakenError();
      await store.updateApp(t, app.id, { slug, display_name: displayName, settings: JSON.stringify(settings), updated_at: this.m.ctx.clock.iso() }).catch((e) => {
        throw isUniqueViolation(e) ? slugTakenError() : e;
      });
      await recordAuthAudit(t, this.m.ctx, app.id, {
        action: "app.update",
        actor: actorOfPrincipal(p),
        target: { type: "app", id: app.id },
        meta,
        metadata: { fields: Object.keys(b).filter((k) => k !== "settings").concat(Object.keys(b.settings ?? {}).map((k) => `settings.${k}`)) },
      });
      await this.changed(t);
    });
    return appView((await this.byId(app.id))!);
  }

  async remove(p: Principal, id: string, meta: RequestMeta) {
    const app = await this.forPrincipal(p, id, "auth.app.delete");
    // Everything of the App goes with it (ON DELETE CASCADE); the platform audit keeps the trace.
    await tx(this.m.ctx.db, async (t) => {
      await this.onRemove(t, app, p, meta);
      await store.deleteApp(t, app.id);
      await platformAudit(t, this.m.ctx, { actor: p, action: "auth.app.delete", workspaceId: app.workspaceId, target: { type: "auth_app", id: app.id }, meta, metadata: { slug: app.slug } });
      await this.changed(t);
    });
    this.keys.forget(app.id);
  }

  async rotateKey(p: Principal, id: string, meta: RequestMeta) {
    const app = await this.forPrincipal(p, id, "auth.app.update");
    const kid = await this.keys.rotate(app.id, app.settings.access_token_ttl);
    await recordAuthAudit(this.m.ctx.db, this.m.ctx, app.id, { action: "app.signing_key.rotate", actor: actorOfPrincipal(p), target: { type: "signing_key", id: kid }, meta });
    return { kid, jwks: await this.keys.jwks(app.id) };
  }

  async rotatePublishableKey(p: Principal, id: string, meta: RequestMeta) {
    const app = await this.forPrincipal(p, id, "auth.app.update");
    const key = `pk_${randomBase62(32)}`;
    await tx(this.m.ctx.db, async (t) => {
      await store.setPublishableKey(t, app.id, key, this.m.ctx.clock.iso());
      await recordAuthAudit(t, this.m.ctx, app.id, { action: "app.publishable_key.rotate", actor: actorOfPrincipal(p), target: { type: "app", id: app.id }, meta });
      await this.changed(t);
    });
    return appView((await this.byId(app.id))!);
  }
}
