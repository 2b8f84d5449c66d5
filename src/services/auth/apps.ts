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
import type { Principal } from "../../access/principal";
import type { RequestMeta } from "../../access/http";
import { tx } from "../../core/db";
import { ApiError, badRequest, conflict, notFound, type ErrorDetail } from "../../core/errors";
import { uuid, randomBase62 } from "../../core/ids";
import { buildPage, decodeCursor, parseLimit } from "../../core/pagination";
import type { AppContext } from "../../context";
import { audit as platformAudit } from "../platform/audit";
import type { Platform } from "../platform/service";
import { recordAuthAudit, type AuthActor } from "./audit";
import type { SigningKeys } from "./keys";
import { DEFAULT_SETTINGS, applySettings, parseSettings, publicSettings, type AppSettings, type SettingsSecrets } from "./settings";
import * as store from "./store/apps";
import { roleByName } from "./store/roles";

export const SLUG_RE = /^[a-z][a-z0-9-]{1,61}[a-z0-9]$/;
const RESERVED_SLUGS = new Set(["apps", "docs", "admin", "api", "well-known", "openapi", "static", "health", "metrics", "oauth", "auth", "me"]);
export const isReservedSlug = (s: string) => RESERVED_SLUGS.has(s) || /^v\d+$/.test(s);

/** An App as every other module sees it: row, parsed settings and its issuer. */
export interface LoadedApp {
  id: string;
  workspaceId: string;
  slug: string;
  displayName: string;
  settings: AppSettings;
  issuer: string;
  publishableKey: string;
  createdAt: string;
  updatedAt: string;
}

export const actorOfPrincipal = (p: Principal): AuthActor =>
  p.kind === "api_key" ? { type: "api_key", id: p.keyId } : p.kind === "personal_token" ? { type: "personal_token", id: p.accountId } : { type: "account", id: p.accountId };

export class AppService {
  /** slug -> App; cleared on every App change (writes are rare, reads are every request). */
  private bySlugCache = new Map<string, LoadedApp>();
  readonly authBaseUrl: string;

  constructor(
    private readonly ctx: AppContext,
    private readonly platform: Platform,
    private readonly keys: SigningKeys,
    /** Drops what the App's foreign keys don't reach (its webhook endpoints), inside the deleting transaction. */
    private readonly onRemove: (app: LoadedApp, actor: Principal, meta: RequestMeta) => void,
  ) {
    this.authBaseUrl = `${ctx.config.publicUrl}/auth`;
    // A deleted workspace takes its Apps along (foreign key); their webhook endpoints go here.
    platform.workspaces.onDelete((workspaceId, actor, meta) => {
      for (const id of store.appIdsInWorkspace(ctx.db, workspaceId)) onRemove(this.byId(id)!, actor, meta);
      // Their rows go with the workspace's, so the slug cache must not keep serving them
      // (JWKS, discovery). The delete transaction is synchronous: nothing refills it before the commit.
      this.invalidate();
    });
  }

  /** Provider secrets in settings: encrypted at rest; issuers must pass the outbound guard. */
  private readonly secrets: SettingsSecrets = {
    encrypt: (plain) => this.ctx.secretBox.encrypt(plain),
    checkUrl: (url) => void this.ctx.outbound.checkUrl(url),
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

  view(a: LoadedApp) {
    return {
      id: a.id,
      workspace_id: a.workspaceId,
      slug: a.slug,
      display_name: a.displayName,
      issuer: a.issuer,
      jwks_uri: `${a.issuer}/v1/.well-known/jwks.json`,
      publishable_key: a.publishableKey,
      // Provider client secrets never leave the server: only their hint.
      settings: publicSettings(a.settings),
      created_at: a.createdAt,
      updated_at: a.updatedAt,
    };
  }

  /** The App of an end-user route, or 404. */
  bySlug(slug: string): LoadedApp {
    const key = slug.toLowerCase();
    const hit = this.bySlugCache.get(key);
    if (hit) return hit;
    const row = store.appBySlug(this.ctx.db, key);
    if (!row) throw notFound("App");
    const app = this.load(row);
    this.bySlugCache.set(key, app);
    return app;
  }

  byId(id: string): LoadedApp | null {
    const row = store.appById(this.ctx.db, id);
    return row ? this.load(row) : null;
  }

  byPublishableKey(key: string): LoadedApp | null {
    const row = store.appByPublishableKey(this.ctx.db, key);
    return row ? this.load(row) : null;
  }

  invalidate() {
    this.bySlugCache.clear();
  }

  /** Workspace guard for a platform principal: 404 (as "App") when the caller has no access to the workspace. */
  authorize(p: Principal, app: LoadedApp, action: string) {
    try {
      this.platform.authz.authorizeWorkspace(p, { id: app.workspaceId }, action);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) throw notFound("App");
      throw e;
    }
    this.platform.authz.requireService(app.workspaceId, "auth");
  }

  /** Loads an App by id for a platform principal (404 for unknown or another workspace's App). */
  forPrincipal(p: Principal, appId: string, action: string): LoadedApp {
    const app = this.byId(appId);
    if (!app) throw notFound("App");
    this.authorize(p, app, action);
    return app;
  }

  private workspaceFor(p: Principal, workspaceId: string | undefined, action: string): string {
    const id = workspaceId ?? (p.kind === "api_key" ? p.workspaceId : undefined);
    if (!id) throw badRequest("workspace_id is required for a signed-in user", [{ field: "workspace_id", reason: "required unless the caller is a workspace API key" }]);
    const { workspace } = this.platform.authz.authorizeWorkspace(p, { id }, action);
    this.platform.authz.requireService(workspace.id, "auth");
    return workspace.id;
  }

  private validateSlug(slug: string, details: ErrorDetail[]) {
    if (!SLUG_RE.test(slug)) details.push({ field: "slug", reason: "3-63 lowercase letters, digits or hyphens, starting with a letter" });
    else if (isReservedSlug(slug)) details.push({ field: "slug", reason: `"${slug}" is reserved by the Auth service's routes` });
  }

  async create(p: Principal, b: { workspace_id?: string; slug: string; display_name?: string; displayName?: string; settings?: Record<string, unknown> }, meta: RequestMeta) {
    const workspaceId = this.workspaceFor(p, b.workspace_id, "auth.app.create");
    const displayName = (b.display_name ?? b.displayName ?? "").trim();
    const details: ErrorDetail[] = [];
    this.validateSlug(b.slug, details);
    if (!displayName || displayName.length > 200) details.push({ field: "display_name", reason: "1-200 characters" });
    if (details.length) throw badRequest("Invalid App", details);
    // A new App has no roles yet, so default_role can only be null here.
    const settings = applySettings(DEFAULT_SETTINGS, b.settings ?? {}, () => false, this.secrets);
    const id = uuid();
    const { row: key } = await this.keys.generate(id);
    const now = this.ctx.clock.iso();
    tx(this.ctx.db, () => {
      if (store.slugTaken(this.ctx.db, b.slug, null)) throw conflict("This App slug is taken", "SLUG_TAKEN");
      store.insertApp(this.ctx.db, {
        id,
        workspace_id: workspaceId,
        slug: b.slug,
        display_name: displayName,
        settings: JSON.stringify(settings),
        publishable_key: `pk_${randomBase62(32)}`,
        created_at: now,
        updated_at: now,
      });
      store.insertSigningKey(this.ctx.db, key);
      recordAuthAudit(this.ctx, id, { action: "app.create", actor: actorOfPrincipal(p), target: { type: "app", id }, meta });
    });
    this.invalidate();
    return this.view(this.byId(id)!);
  }

  list(p: Principal, q: { workspace_id?: string; limit?: string; cursor?: string }) {
    const workspaceId = this.workspaceFor(p, q.workspace_id, "auth.app.list");
    const limit = parseLimit(q.limit);
    const after = decodeCursor<{ id: string }>(q.cursor)?.id ?? null;
    const rows = store.listApps(this.ctx.db, workspaceId, typeof after === "string" ? after : null, limit + 1);
    return buildPage(rows, limit, (r) => ({ id: r.id }), (r) => this.view(this.load(r)));
  }

  get(p: Principal, id: string) {
    return this.view(this.forPrincipal(p, id, "auth.app.read"));
  }

  update(p: Principal, id: string, b: { slug?: string; display_name?: string; displayName?: string; settings?: Record<string, unknown> }, meta: RequestMeta) {
    const app = this.forPrincipal(p, id, "auth.app.update");
    const details: ErrorDetail[] = [];
    const slug = b.slug ?? app.slug;
    if (b.slug !== undefined) this.validateSlug(b.slug, details);
    const displayName = (b.display_name ?? b.displayName ?? app.displayName).trim();
    if (!displayName || displayName.length > 200) details.push({ field: "display_name", reason: "1-200 characters" });
    if (details.length) throw badRequest("Invalid App", details);
    const settings = applySettings(app.settings, b.settings ?? {}, (name) => !!roleByName(this.ctx.db, app.id, name), this.secrets);
    tx(this.ctx.db, () => {
      if (slug !== app.slug && store.slugTaken(this.ctx.db, slug, app.id)) throw conflict("This App slug is taken", "SLUG_TAKEN");
      store.updateApp(this.ctx.db, app.id, { slug, display_name: displayName, settings: JSON.stringify(settings), updated_at: this.ctx.clock.iso() });
      recordAuthAudit(this.ctx, app.id, {
        action: "app.update",
        actor: actorOfPrincipal(p),
        target: { type: "app", id: app.id },
        meta,
        metadata: { fields: Object.keys(b).filter((k) => k !== "settings").concat(Object.keys(b.settings ?? {}).map((k) => `settings.${k}`)) },
      });
    });
    this.invalidate();
    return this.view(this.byId(app.id)!);
  }

  remove(p: Principal, id: string, meta: RequestMeta) {
    const app = this.forPrincipal(p, id, "auth.app.delete");
    // Everything of the App goes with it (ON DELETE CASCADE); the platform audit keeps the trace.
    tx(this.ctx.db, () => {
      this.onRemove(app, p, meta);
      store.deleteApp(this.ctx.db, app.id);
      platformAudit(this.ctx, { actor: p, action: "auth.app.delete", workspaceId: app.workspaceId, target: { type: "auth_app", id: app.id }, meta, metadata: { slug: app.slug } });
    });
    this.keys.forget(app.id);
    this.invalidate();
  }

  async rotateKey(p: Principal, id: string, meta: RequestMeta) {
    const app = this.forPrincipal(p, id, "auth.app.update");
    const kid = await this.keys.rotate(app.id, app.settings.access_token_ttl);
    recordAuthAudit(this.ctx, app.id, { action: "app.signing_key.rotate", actor: actorOfPrincipal(p), target: { type: "signing_key", id: kid }, meta });
    return { kid, jwks: this.keys.jwks(app.id) };
  }

  rotatePublishableKey(p: Principal, id: string, meta: RequestMeta) {
    const app = this.forPrincipal(p, id, "auth.app.update");
    const key = `pk_${randomBase62(32)}`;
    tx(this.ctx.db, () => {
      store.setPublishableKey(this.ctx.db, app.id, key, this.ctx.clock.iso());
      recordAuthAudit(this.ctx, app.id, { action: "app.publishable_key.rotate", actor: actorOfPrincipal(p), target: { type: "app", id: app.id }, meta });
    });
    this.invalidate();
    return this.view(this.byId(app.id)!);
  }
}
