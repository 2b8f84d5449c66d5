/**
 * Communities: the admin lane's resource (/social/v1/workspaces/{workspace_id}/communities)
 * and the lookup every /social/v1/communities/{community_id}/... route starts with.
 *
 * Decisions the spec leaves open:
 * - slug: 3-63 characters of lowercase letters, digits and hyphens, starting and ending with
 *   a letter or digit; unique per workspace (409 SLUG_TAKEN). Upper case is refused, not folded.
 * - display_name: 1-200 characters after trimming (stored trimmed). description: up to 2000
 *   characters or null.
 * - app_id: the id (UUID) of an Auth App. When the app wiring hands the service an App
 *   directory (the Auth service's Apps), the App must exist in the same workspace (else 404); without
 *   it the UUID is stored as given. An App connects to at most one community (409
 *   APP_ALREADY_CONNECTED). app_id cannot be changed by PATCH.
 * - status: active on create. PATCH moves freely between active and suspended; archived is
 *   terminal (409 COMMUNITY_ARCHIVED for any other status afterwards). Other fields of an
 *   archived community stay editable.
 * - list: newest first, keyset cursor. The cursor carries its filters (q, status): follow-up
 *   pages may repeat them or omit them; different ones are 400 INVALID_CURSOR.
 * - q: case-insensitive (Unicode lower-casing) substring of the display name or the slug,
 *   matched literally (% and _ are ordinary characters); empty means no filter.
 * - Another workspace's community, or an id that is not a UUID, is 404 like an unknown one.
 */
import type { RequestMeta } from "../../../access/http";
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { isUniqueViolation } from "../../../core/store/sql";
import { ApiError, badRequest, conflict, invalidField, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { checkUuid } from "../core/schemas";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../../core/pagination";
import { audit } from "../../../kernel/tenancy";
import type { ModuleContext } from "../../../kernel/module";
import { DESCRIPTION_MAX, DISPLAY_NAME_MAX, LIST_DEFAULT, LIST_MAX, Q_MAX, SLUG_RE } from "./limits";
import { applySettings, defaultSettings, parseSettings } from "./settings";
import * as store from "./store";
import { communityView, type CommunityView } from "./views";

export const SOCIAL_ACTIONS = [
  { name: "social.list", description: "List communities and other community records" },
  { name: "social.read", description: "Read a community and its records" },
  { name: "social.create", description: "Create communities and community records (actors, follows, mutes, ...)" },
  { name: "social.update", description: "Change a community (name, description, settings, status) and its records" },
  { name: "social.delete", description: "Delete a community with everything in it, or single community records" },
] as const;

export const STATUSES = ["active", "suspended", "archived"] as const;

/** What the service needs of the Auth service to check app_id (AuthService.apps fits). */
export interface AppDirectory {
  byId(id: string): { id: string; workspaceId: string } | null | Promise<{ id: string; workspaceId: string } | null>;
}

export interface CommunityInput {
  slug?: unknown;
  display_name?: unknown;
  description?: unknown;
  app_id?: unknown;
  settings?: unknown;
  status?: unknown;
}

export interface ListQuery {
  limit?: unknown;
  cursor?: string;
  q?: string;
  status?: string;
}

export interface Actor {
  principal: Principal;
  meta?: RequestMeta;
}

export interface CommunityHooks {
  /** App directory of the Auth service, to check app_id; absent: app_id is stored as given. */
  apps?: AppDirectory;
}

/** A community row as features read it (the lane resolves it for every community route). */
export type CommunityRow = store.CommunityRow;

const isStatus = (v: unknown): v is store.CommunityStatus => typeof v === "string" && (STATUSES as readonly string[]).includes(v);

/** LIKE pattern for a literal, case-folded substring (backslash escapes %, _ and itself). */
const likePattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;

const badCursor = (reason: string) => badRequest("Malformed cursor", [{ field: "cursor", reason }], "INVALID_CURSOR");

export class CommunityService {
  constructor(
    /** The social module's context: its guard, tenancy for a community addressed by id, and the webhook endpoints a deleted community takes along. */
    private readonly m: Pick<ModuleContext, "ctx" | "guard" | "tenancy" | "name" | "webhooks">,
    private readonly hooks: CommunityHooks = {},
  ) {}

  private async inWorkspace(db: Sql, workspaceId: string, id: string): Promise<store.CommunityRow> {
    const r = await store.communityInWorkspace(db, workspaceId, checkUuid(id, "community_id"));
    if (!r) throw notFound("Community");
    return r;
  }

  /**
   * A community addressed by id alone (/social/v1/communities/{community_id}/...): the caller
   * needs `action` in its workspace and the workspace must have social enabled. Malformed:
   * 400; unknown, or in a workspace the caller has no access to: 404.
   */
  async forPrincipal(p: Principal, communityId: string, action: string): Promise<store.CommunityRow> {
    const r = await store.communityById(this.m.ctx.db, checkUuid(communityId, "community_id"));
    if (!r) throw notFound("Community");
    try {
      await this.m.tenancy.authz.authorizeWorkspace(this.m.ctx.db, p, { id: r.workspace_id }, action);
    } catch (e) {
      // The platform says "Workspace not found": the caller asked for a community.
      if (e instanceof ApiError && e.status === 404) throw notFound("Community");
      throw e;
    }
    await this.m.tenancy.authz.requireService(this.m.ctx.db, r.workspace_id, this.m.name);
    return r;
  }

  // ------------------------------------------------------------------ validation

  private slug(v: unknown): string {
    if (typeof v !== "string" || v === "") throw invalidField("slug", "required");
    if (!SLUG_RE.test(v)) throw invalidField("slug", "3-63 lowercase letters, digits and hyphens, starting and ending with a letter or digit");
    return v;
  }

  private displayName(v: unknown): string {
    if (typeof v !== "string") throw invalidField("display_name", "required");
    const name = v.trim();
    if (name.length < 1 || name.length > DISPLAY_NAME_MAX) throw invalidField("display_name", `1-${DISPLAY_NAME_MAX} characters after trimming`);
    return name;
  }

  private description(v: unknown): string | null {
    if (v === null) return null;
    if (typeof v !== "string") throw invalidField("description", "must be a string or null");
    if (v.length > DESCRIPTION_MAX) throw invalidField("description", `at most ${DESCRIPTION_MAX} characters`);
    return v;
  }

  /** app_id: null or the UUID of an Auth App of this workspace (read before the transaction: the App directory reads on its own). */
  private async appId(workspaceId: string, v: unknown): Promise<string | null> {
    if (v === undefined || v === null) return null;
    const id = checkUuid(v, "app_id");
    if (this.hooks.apps) {
      const app = await this.hooks.apps.byId(id);
      if (!app || app.workspaceId !== workspaceId) throw notFound("App");
    }
    return id;
  }

  // ------------------------------------------------------------------ operations

  async create(p: Principal, workspaceId: string, input: CommunityInput, meta?: RequestMeta): Promise<CommunityView> {
    const ws = await this.m.guard(p, workspaceId, "social.create");
    const slug = this.slug(input.slug);
    const display_name = this.displayName(input.display_name);
    const description = input.description === undefined ? null : this.description(input.description);
    const settings = input.settings === undefined ? defaultSettings() : applySettings(defaultSettings(), input.settings);
    const id = uuid();
    const now = this.m.ctx.clock.iso();
    const slugTaken = () => conflict(`The slug "${slug}" is already used by a community of this workspace`, "SLUG_TAKEN");
    const appTaken = () => conflict("This App is already connected to a community", "APP_ALREADY_CONNECTED");
    const app_id = await this.appId(ws.id, input.app_id);
    try {
      await tx(this.m.ctx.db, async (t) => {
        if (await store.slugTaken(t, ws.id, slug)) throw slugTaken();
        if (app_id !== null && (await store.appConnected(t, app_id))) throw appTaken();
        await store.insertCommunity(t, {
          id,
          workspace_id: ws.id,
          slug,
          display_name,
          name_fold: display_name.toLowerCase(),
          description,
          app_id,
          settings: JSON.stringify(settings),
          status: "active",
          created_at: now,
          updated_at: now,
        });
        await audit(t, this.m.ctx, { actor: p, action: "social.community.create", workspaceId: ws.id, target: { type: "community", id }, meta, metadata: { slug, app_id } });
      });
    } catch (e) {
      // Two creates at once (PostgreSQL: both checks pass, one insert loses): the same 409s.
      if (!isUniqueViolation(e)) throw e;
      if (await store.slugTaken(this.m.ctx.db, ws.id, slug)) throw slugTaken();
      throw appTaken();
    }
    return communityView((await store.communityById(this.m.ctx.db, id))!);
  }

  async list(p: Principal, workspaceId: string, q: ListQuery): Promise<Page<CommunityView>> {
    const ws = await this.m.guard(p, workspaceId, "social.list");
    const limit = parseLimit(q.limit, LIST_DEFAULT, LIST_MAX);
    let text = q.q === undefined || q.q === "" ? null : q.q;
    if (text !== null && text.length > Q_MAX) throw invalidField("q", `at most ${Q_MAX} characters`);
    let status = q.status === undefined || q.status === "" ? null : q.status;
    if (status !== null && !isStatus(status)) throw invalidField("status", `one of ${STATUSES.join(", ")}`);

    const c = decodeCursor<{ c?: unknown; id?: unknown; q?: unknown; s?: unknown }>(q.cursor);
    if (c) {
      if (typeof c.c !== "string" || typeof c.id !== "string" || (c.q !== null && typeof c.q !== "string") || (c.s !== null && !isStatus(c.s))) {
        throw badCursor("not a cursor issued by this API");
      }
      // Follow-up pages keep the first page's filters: omitted ones come from the cursor.
      if ((text !== null && text !== c.q) || (status !== null && status !== c.s)) throw badCursor("the cursor belongs to other filters (q, status); start again without it");
      text = c.q as string | null;
      status = c.s as string | null;
    }
    const rows = await store.listCommunities(this.m.ctx.db, {
      workspaceId: ws.id,
      pattern: text === null ? null : likePattern(text),
      status: status as store.CommunityStatus | null,
      before: c ? { created_at: c.c as string, id: c.id as string } : null,
      limit: limit + 1,
    });
    return buildPage(rows, limit, (r) => ({ c: r.created_at, id: r.id, q: text, s: status }), (r) => communityView(r));
  }

  /** Ids of the workspace's communities (its deletion drops their webhook endpoints), on `db` (the deleting transaction). */
  idsInWorkspace(db: Sql, workspaceId: string): Promise<string[]> {
    return store.communityIdsInWorkspace(db, workspaceId);
  }

  async get(p: Principal, workspaceId: string, id: string): Promise<CommunityView> {
    const ws = await this.m.guard(p, workspaceId, "social.read");
    return communityView(await this.inWorkspace(this.m.ctx.db, ws.id, id));
  }

  async update(p: Principal, workspaceId: string, id: string, input: CommunityInput, meta?: RequestMeta): Promise<CommunityView> {
    const ws = await this.m.guard(p, workspaceId, "social.update");
    const patch: store.CommunityPatch = {};
    if (input.display_name !== undefined) {
      patch.display_name = this.displayName(input.display_name);
      patch.name_fold = patch.display_name.toLowerCase();
    }
    if (input.description !== undefined) patch.description = this.description(input.description);
    if (input.status !== undefined && !isStatus(input.status)) throw invalidField("status", `one of ${STATUSES.join(", ")}`);
    return tx(this.m.ctx.db, async (t) => {
      const r = await this.inWorkspace(t, ws.id, id);
      if (input.settings !== undefined) patch.settings = JSON.stringify(applySettings(parseSettings(r.settings), input.settings));
      if (input.status !== undefined && input.status !== r.status) {
        if (r.status === "archived") throw conflict("The community is archived; archived is final", "COMMUNITY_ARCHIVED");
        patch.status = input.status as store.CommunityStatus;
      }
      if (Object.keys(patch).length === 0) return communityView(r);
      await store.updateCommunity(t, r.id, patch, this.m.ctx.clock.iso());
      await audit(t, this.m.ctx, {
        actor: p,
        action: "social.community.update",
        workspaceId: ws.id,
        target: { type: "community", id: r.id },
        meta,
        metadata: { fields: Object.keys(patch).filter((k) => k !== "name_fold"), ...(patch.status ? { status: { from: r.status, to: patch.status } } : {}) },
      });
      return communityView((await store.communityById(t, r.id))!);
    });
  }

  /** Drops the community's webhook endpoints on the deleting transaction `t` (the community's, or its workspace's). */
  dropWebhooks(t: Sql, c: { id: string; workspace_id: string }, actor: Actor): Promise<void> {
    return this.m.webhooks.api.endpoints.removeScope(t, { product: this.m.name, scopeId: c.id, workspaceId: c.workspace_id }, actor);
  }

  /** Deletes the community and everything in it (cascades), its webhook endpoints included. Not reversible. */
  async remove(p: Principal, workspaceId: string, id: string, meta?: RequestMeta): Promise<void> {
    const ws = await this.m.guard(p, workspaceId, "social.delete");
    await tx(this.m.ctx.db, async (t) => {
      const r = await this.inWorkspace(t, ws.id, id);
      await this.dropWebhooks(t, r, { principal: p, meta });
      await store.deleteCommunity(t, r.id);
      await audit(t, this.m.ctx, { actor: p, action: "social.community.delete", workspaceId: ws.id, target: { type: "community", id: r.id }, meta, metadata: { slug: r.slug } });
    });
  }
}
