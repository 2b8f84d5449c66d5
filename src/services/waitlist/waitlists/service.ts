/**
 * Waitlists (admin lane /waitlist/v1/workspaces/{workspace_id}/waitlists) and the workspace's
 * waitlist settings. Decisions the spec leaves open (docs/waitlist.md, "Reference"):
 * - slug: 2-63 of a-z, 0-9 and hyphens, starting and ending with a letter or digit; unique per
 *   workspace (409 SLUG_TAKEN). display_name 1-200 characters; description up to 2000 or null.
 * - status starts as draft. Moves: draft->open, open<->paused, open|paused->closed,
 *   closed->open; anything else 409 INVALID_STATUS_TRANSITION (the same status is a no-op).
 * - Creating a waitlist provisions its "default" variant (weight 1, active); the referral
 *   settings (referral_boost 1) are part of its settings object.
 * - workspace_slug follows the workspace's slug (workspace.renamed), and the slug it had
 *   before the last rename (previous_workspace_slug) keeps serving the public routes.
 */
import type { RequestMeta } from "../../../access/http";
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { conflict, invalidField, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit, type Page } from "../../../core/pagination";
import { isUniqueViolation } from "../../../core/store/sql";
import { audit } from "../../../kernel/tenancy";
import type { Bridges } from "../bridges";
import { applyWaitlistSettings, defaultWaitlistSettings, parseWaitlistSettings, settingsPatch, type WaitlistSettings } from "../settings";
import * as store from "./store";
import { waitlistView, type WaitlistView, type WorkspaceSettingsView } from "./views";
import { putSettings, readSettings } from "./workspace-settings";
import type { WaitlistContext } from "../events";

export const WAITLIST_ACTIONS = [
  { name: "waitlist.list", description: "List waitlists" },
  { name: "waitlist.read", description: "Read waitlists, their variants and analytics" },
  { name: "waitlist.create", description: "Create waitlists" },
  { name: "waitlist.update", description: "Change waitlists (fields, settings, status, variants)" },
  { name: "waitlist.delete", description: "Delete waitlists with their entries" },
  { name: "waitlist.settings.read", description: "Read the workspace's waitlist settings" },
  { name: "waitlist.settings.write", description: "Change the workspace's waitlist settings" },
  { name: "waitlist.entry.read", description: "List, count, read and export entries" },
  { name: "waitlist.entry.write", description: "Change, approve, reject and delete entries" },
] as const;

export const STATUSES = ["draft", "open", "paused", "closed"] as const;
export const SLUG_RE = /^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$/;
export const DISPLAY_NAME_MAX = 200;
export const DESCRIPTION_MAX = 2000;
export const LIST_DEFAULT = 20;
export const LIST_MAX = 100;
/** Cache-bus topic of what the public GET serves (waitlists, workspace settings, variants). */
export const PUBLIC_TOPIC = "waitlist.public";

/**
 * The notification worker (entries/notify.ts), which the module creates before this service: a
 * port here because entries/ builds on waitlists/, not the other way round.
 */
export interface Notifier {
  kick(): void;
}

const MOVES: Record<store.WaitlistStatus, readonly store.WaitlistStatus[]> = {
  draft: ["open"],
  open: ["paused", "closed"],
  paused: ["open", "closed"],
  closed: ["open"],
};

export const isStatus = (v: unknown): v is store.WaitlistStatus => typeof v === "string" && (STATUSES as readonly string[]).includes(v);
const createdBy = (p: Principal) => (p.kind === "api_key" ? `api_key:${p.keyId}` : `account:${p.accountId}`);


export class WaitlistService {
  constructor(
    readonly m: WaitlistContext,
    readonly bridges: Bridges,
    readonly notifier: Notifier,
  ) {}

  async inWorkspace(db: Sql, workspaceId: string, id: string): Promise<store.WaitlistRow> {
    const r = await store.waitlistInWorkspace(db, workspaceId, id.toLowerCase());
    if (!r) throw notFound("Waitlist");
    return r;
  }

  /**
   * The workspace and a waitlist of it, for the routes under /waitlists/{waitlist_id}, in the
   * house order: the credential (403; the ids' shapes are the route schema's), then `check`,
   * the input rules that need no stored record (400), then the waitlist exists (404).
   */
  async scoped<T = void>(p: Principal, workspaceId: string, waitlistId: string, action: string, check?: () => T) {
    const ws = await this.m.guard(p, workspaceId, action);
    const input = check?.() as T;
    return { ws, waitlist: await this.inWorkspace(this.m.ctx.db, ws.id, waitlistId), input };
  }

  private publicChanged(t: Sql) {
    return this.m.ctx.caches.changed(t, PUBLIC_TOPIC);
  }

  // ------------------------------------------------------------------ settings

  async getSettings(p: Principal, workspaceId: string): Promise<WorkspaceSettingsView> {
    const ws = await this.m.guard(p, workspaceId, "waitlist.settings.read");
    return readSettings(this.m.ctx.db, ws.id);
  }

  async putSettings(p: Principal, workspaceId: string, body: Record<string, unknown>, meta?: RequestMeta): Promise<WorkspaceSettingsView> {
    const ws = await this.m.guard(p, workspaceId, "waitlist.settings.write");
    const view = await putSettings(this.m.ctx.db, this.bridges, ws.id, body, this.m.ctx.clock.iso());
    await tx(this.m.ctx.db, async (t) => {
      await this.publicChanged(t);
      await audit(t, this.m.ctx, { actor: p, action: "waitlist.settings.update", workspaceId: ws.id, target: { type: "waitlist_settings", id: ws.id }, meta, metadata: { fields: Object.keys(body) } });
    });
    return view;
  }

  // ------------------------------------------------------------------ waitlists

  async create(p: Principal, workspaceId: string, input: { slug?: unknown; display_name?: unknown; description?: unknown; settings?: unknown }, meta?: RequestMeta): Promise<WaitlistView> {
    const ws = await this.m.guard(p, workspaceId, "waitlist.create");
    if (typeof input.slug !== "string" || !SLUG_RE.test(input.slug)) throw invalidField("slug", "2-63 of a-z, 0-9 and hyphens, starting and ending with a letter or digit");
    const slug = input.slug;
    const display_name = this.displayName(input.display_name);
    const description = this.description(input.description ?? null);
    const settings = input.settings === undefined ? defaultWaitlistSettings() : applyWaitlistSettings(defaultWaitlistSettings(), input.settings);
    const id = uuid();
    const now = this.m.ctx.clock.iso();
    const taken = () => conflict(`The slug "${slug}" is already used by a waitlist of this workspace`, "SLUG_TAKEN");
    try {
      await tx(this.m.ctx.db, async (t) => {
        if (await store.slugTaken(t, ws.id, slug)) throw taken();
        await store.insertWaitlist(t, {
          id, workspace_id: ws.id, workspace_slug: ws.slug, previous_workspace_slug: null, slug, display_name, description,
          status: "draft", settings: JSON.stringify(settings), created_by: createdBy(p), created_at: now, updated_at: now,
        });
        await store.insertStats(t, id);
        await store.insertVariant(t, { id: uuid(), waitlist_id: id, name: "default", display_name: null, description: null, cta_text: null, weight: 1, active: 1, created_at: now, updated_at: now });
        await audit(t, this.m.ctx, { actor: p, action: "waitlist.create", workspaceId: ws.id, target: { type: "waitlist", id }, meta, metadata: { slug } });
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw taken();
      throw e;
    }
    return waitlistView((await store.waitlistById(this.m.ctx.db, id))!);
  }

  private displayName(v: unknown): string {
    if (typeof v !== "string" || v.trim().length < 1 || v.trim().length > DISPLAY_NAME_MAX) throw invalidField("display_name", `1-${DISPLAY_NAME_MAX} characters`);
    return v.trim();
  }

  private description(v: unknown): string | null {
    if (v === null) return null;
    if (typeof v !== "string" || v.length > DESCRIPTION_MAX) throw invalidField("description", `a string of at most ${DESCRIPTION_MAX} characters, or null`);
    return v;
  }

  async list(p: Principal, workspaceId: string, q: { limit?: number; cursor?: string; status?: string }): Promise<Page<WaitlistView>> {
    const ws = await this.m.guard(p, workspaceId, "waitlist.list");
    const limit = parseLimit(q.limit, LIST_DEFAULT, LIST_MAX);
    const status = q.status === undefined || q.status === "" ? null : q.status;
    if (status !== null && !isStatus(status)) throw invalidField("status", `one of ${STATUSES.join(", ")}`);
    const c = decodeCursor<{ c?: unknown; id?: unknown }>(q.cursor);
    if (c && (typeof c.c !== "string" || typeof c.id !== "string")) throw invalidField("cursor", "not a cursor issued by this API");
    const rows = await store.listWaitlists(this.m.ctx.db, { workspaceId: ws.id, status, before: c ? { c: c.c as string, id: c.id as string } : null, limit: limit + 1 });
    return buildPage(rows, limit, (r) => ({ c: r.created_at, id: r.id }), waitlistView);
  }

  async get(p: Principal, workspaceId: string, id: string): Promise<WaitlistView> {
    const ws = await this.m.guard(p, workspaceId, "waitlist.read");
    return waitlistView(await this.inWorkspace(this.m.ctx.db, ws.id, id));
  }

  async update(p: Principal, workspaceId: string, id: string, input: { display_name?: unknown; description?: unknown; settings?: unknown }, meta?: RequestMeta): Promise<WaitlistView> {
    const ws = await this.m.guard(p, workspaceId, "waitlist.update");
    const patch: Partial<store.WaitlistRow> = {};
    if (input.display_name !== undefined) patch.display_name = this.displayName(input.display_name);
    if (input.description !== undefined) patch.description = this.description(input.description);
    const settings = input.settings === undefined ? undefined : settingsPatch(input.settings);
    return tx(this.m.ctx.db, async (t) => {
      const r = await this.inWorkspace(t, ws.id, id);
      if (settings !== undefined) patch.settings = JSON.stringify({ ...parseWaitlistSettings(r.settings), ...settings });
      if (Object.keys(patch).length === 0) return waitlistView(r);
      await store.updateWaitlist(t, r.id, patch, this.m.ctx.clock.iso());
      await this.publicChanged(t);
      await audit(t, this.m.ctx, { actor: p, action: "waitlist.update", workspaceId: ws.id, target: { type: "waitlist", id: r.id }, meta, metadata: { fields: Object.keys(patch) } });
      return waitlistView((await store.waitlistById(t, r.id))!);
    });
  }

  async setStatus(p: Principal, workspaceId: string, id: string, status: unknown, meta?: RequestMeta): Promise<WaitlistView> {
    const ws = await this.m.guard(p, workspaceId, "waitlist.update");
    if (!isStatus(status)) throw invalidField("status", `one of ${STATUSES.join(", ")}`);
    return tx(this.m.ctx.db, async (t) => {
      const r = await this.inWorkspace(t, ws.id, id);
      if (r.status === status) return waitlistView(r);
      if (!MOVES[r.status].includes(status)) {
        throw conflict(`A ${r.status} waitlist cannot move to ${status} (allowed: ${MOVES[r.status].join(", ")})`, "INVALID_STATUS_TRANSITION");
      }
      const now = this.m.ctx.clock.iso();
      await store.updateWaitlist(t, r.id, { status }, now);
      await this.publicChanged(t);
      const view = waitlistView((await store.waitlistById(t, r.id))!);
      await this.m.emit(t, ws.id, "waitlist.status_changed", { ...view, previous_status: r.status });
      await audit(t, this.m.ctx, { actor: p, action: "waitlist.status", workspaceId: ws.id, target: { type: "waitlist", id: r.id }, meta, metadata: { from: r.status, to: status } });
      return view;
    });
  }

  async remove(p: Principal, workspaceId: string, id: string, meta?: RequestMeta): Promise<void> {
    const ws = await this.m.guard(p, workspaceId, "waitlist.delete");
    await tx(this.m.ctx.db, async (t) => {
      const r = await this.inWorkspace(t, ws.id, id);
      await store.deleteWaitlist(t, r.id);
      await this.publicChanged(t);
      await audit(t, this.m.ctx, { actor: p, action: "waitlist.delete", workspaceId: ws.id, target: { type: "waitlist", id: r.id }, meta, metadata: { slug: r.slug } });
    });
  }
}
