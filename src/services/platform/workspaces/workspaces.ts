/** Workspaces: create, list, read, update (slug rename event), delete, avatar. */
import type { Principal } from "../../../access/principal";
import { ApiError, badRequest, conflict, notFound } from "../../../core/errors";
import { tx, type Sql } from "../../../core/db";
import { isUniqueViolation } from "../../../core/store/sql";
import { uuid } from "../../../core/ids";
import { buildPage, decodeCursor, parseLimit } from "../../../core/pagination";
import { andThen } from "../../../core/maybe-promise";
import type { AppContext } from "../../../context";
import { audit, type RequestMeta, type Tenancy } from "../../../kernel/tenancy";
import type { Static } from "@sinclair/typebox";
import * as store from "./store/workspaces";
import type { Workspace } from "./schemas";
import { workspaceView } from "./views";
import { WORKSPACE_SLUG_MAX, WORKSPACE_SLUG_PATTERN } from "../schemas";

export const SLUG_RE = new RegExp(WORKSPACE_SLUG_PATTERN);
export const AVATAR_MAX_BYTES = 2 * 1024 * 1024;
const SETTINGS_MAX_BYTES = 16 * 1024;

export function validateSlug(slug: unknown, field = "slug"): string {
  if (typeof slug !== "string" || !SLUG_RE.test(slug) || slug.length > WORKSPACE_SLUG_MAX) {
    throw badRequest("Invalid slug", [{ field, reason: "1-63 lowercase letters and digits, separated by single hyphens" }], "INVALID_SLUG");
  }
  return slug;
}

export function validateDisplayName(v: unknown, field = "display_name"): string {
  const s = typeof v === "string" ? v.trim() : "";
  if (!s || s.length > 100) throw badRequest("Invalid display name", [{ field, reason: "1-100 characters" }], "INVALID_DISPLAY_NAME");
  return s;
}

/** What an avatar may be (and is served as). */
export const AVATAR_TYPES = ["image/png", "image/jpeg", "image/webp"] as const;

/** Image type from the first bytes, never from the declared content type. */
export function sniffImage(b: Uint8Array): (typeof AVATAR_TYPES)[number] | null {
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 && b[4] === 0x0d && b[5] === 0x0a && b[6] === 0x1a && b[7] === 0x0a) return "image/png";
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (b.length >= 12 && String.fromCharCode(...b.subarray(0, 4)) === "RIFF" && String.fromCharCode(...b.subarray(8, 12)) === "WEBP") return "image/webp";
  return null;
}

const slugTaken = (message = "This slug is taken") => conflict(message, "SLUG_TAKEN");

/** A unique-slug race lost at the insert (PostgreSQL checks it at the statement, not at our read): the same 409. */
async function slugRace<T>(work: Promise<T>, message?: string): Promise<T> {
  try {
    return await work;
  } catch (e) {
    throw isUniqueViolation(e) ? slugTaken(message) : e;
  }
}

export class WorkspaceService {
  constructor(
    private readonly ctx: AppContext,
    private readonly tenancy: Tenancy,
    private readonly authz = tenancy.authz,
  ) {}

  avatarUrl(w: store.WorkspaceRow): string | null {
    if (!w.avatar_key) return null;
    return `${this.ctx.config.publicUrl}/platform/v1/avatars/${w.id}?v=${encodeURIComponent(w.avatar_key.split("/").pop()!)}`;
  }

  /**
   * The API shape of a row, built once per row object: the read cache hands out the same row
   * on every request for a workspace, and a fresh row (after any change) gets a fresh view.
   */
  private views = new WeakMap<store.WorkspaceRow, Static<typeof Workspace>>();

  view(w: store.WorkspaceRow) {
    let v = this.views.get(w);
    if (!v) this.views.set(w, (v = workspaceView(w, this.avatarUrl(w))));
    return v;
  }


  create(p: Extract<Principal, { accountId: string }>, b: { slug: unknown; display_name: unknown }, meta: RequestMeta) {
    const slug = validateSlug(b.slug);
    const display_name = validateDisplayName(b.display_name);
    const now = this.ctx.clock.iso();
    const id = uuid();
    return slugRace(
      tx(this.ctx.db, async (t) => {
        if (await store.slugTaken(t, slug)) throw slugTaken();
        await store.insertWorkspace(t, { id, slug, display_name, created_by: p.accountId, status: "active", settings: "{}", created_at: now, updated_at: now });
        await store.insertMember(t, { id: uuid(), workspace_id: id, account_id: p.accountId, role_id: store.BUILTIN_ROLE_IDS.owner, created_at: now });
        for (const s of this.ctx.services.defaults) await store.enableService(t, id, s, now);
        await this.ctx.events.record(t, { type: "workspace.created", scope: `platform:${id}`, data: { workspace_id: id, slug } });
        await audit(t, this.ctx, { actor: p, action: "workspace.create", workspaceId: id, target: { type: "workspace", id }, meta });
        return this.view((await store.workspaceById(t, id))!);
      }),
    );
  }

  async list(p: Principal, q: { limit?: number; cursor?: string }) {
    const limit = parseLimit(q.limit, 20, 100);
    const after = decodeCursor<{ id: string }>(q.cursor)?.id ?? null;
    if (p.kind === "api_key") {
      // A key sees exactly its own workspace.
      const w = after ? null : await store.workspaceById(this.ctx.db, p.workspaceId);
      return { data: w ? [this.view(w)] : [], pagination: { next_cursor: null, has_more: false } };
    }
    const rows = await store.workspacesOfAccount(this.ctx.db, p.accountId, after, limit + 1);
    return buildPage(rows, limit, (r) => ({ id: r.id }), (r) => ({ ...this.view(r), member_role_id: r.member_role_id, member_role: r.member_role }));
  }

  /** Without a promise when the caller is an API key whose workspace is cached (the hot read). */
  get(p: Principal, slug: string) {
    return andThen(this.authz.authorizeWorkspace(this.ctx.db, p, { slug }, "workspace.read"), (a) => this.view(a.workspace));
  }

  update(p: Principal, slug: string, b: { display_name?: unknown; slug?: unknown; settings?: unknown }, meta: RequestMeta) {
    const details: { field: string; reason: string }[] = [];
    const next = {
      slug: b.slug === undefined ? undefined : validateSlug(b.slug),
      display_name: b.display_name === undefined ? undefined : validateDisplayName(b.display_name),
      settings: b.settings,
    };
    if (b.settings !== undefined) {
      if (b.settings === null || typeof b.settings !== "object" || Array.isArray(b.settings)) details.push({ field: "settings", reason: "must be an object" });
      else if (JSON.stringify(b.settings).length > SETTINGS_MAX_BYTES) details.push({ field: "settings", reason: "at most 16 KiB of JSON" });
    }
    if (details.length) throw badRequest("Invalid workspace update", details);
    const takenMessage = "This slug is taken by another workspace";
    return slugRace(
      tx(this.ctx.db, async (t) => {
        const { workspace: w } = await this.authz.authorizeWorkspace(t, p, { slug }, "workspace.update");
        const slugChanged = next.slug !== undefined && next.slug !== w.slug;
        if (slugChanged && (await store.slugTaken(t, next.slug!, w.id))) throw slugTaken(takenMessage);
        await store.updateWorkspace(t, w.id, {
          slug: next.slug ?? w.slug,
          display_name: next.display_name ?? w.display_name,
          settings: next.settings !== undefined ? JSON.stringify(next.settings) : w.settings,
          updated_at: this.ctx.clock.iso(),
        });
        if (slugChanged) {
          // Outbox, same transaction: consumers holding the old slug are told exactly once the change commits.
          await this.ctx.events.record(t, { type: "workspace.renamed", scope: `platform:${w.id}`, data: { workspace_id: w.id, old_slug: w.slug, new_slug: next.slug } });
        }
        await audit(t, this.ctx, { actor: p, action: "workspace.update", workspaceId: w.id, target: { type: "workspace", id: w.id }, meta, metadata: slugChanged ? { old_slug: w.slug, new_slug: next.slug } : {} });
        return this.view((await store.workspaceById(t, w.id))!);
      }),
      takenMessage,
    );
  }

  /** Deletes the workspace; the modules' cascade (Tenancy.onWorkspaceDelete) runs first, in the same transaction. */
  async remove(p: Principal, slug: string, meta: RequestMeta): Promise<void> {
    const removedAvatar = await tx(this.ctx.db, async (t) => {
      const { workspace: w } = await this.authz.authorizeWorkspace(t, p, { slug }, "workspace.delete");
      await this.tenancy.workspaceDeleting(t, w.id, p, meta);
      await store.deleteWorkspace(t, w.id);
      await this.ctx.events.record(t, { type: "workspace.deleted", scope: `platform:${w.id}`, data: { workspace_id: w.id, slug: w.slug } });
      await audit(t, this.ctx, { actor: p, action: "workspace.delete", workspaceId: w.id, target: { type: "workspace", id: w.id }, meta });
      return w.avatar_key;
    });
    if (removedAvatar) void this.ctx.objects.delete(removedAvatar).catch(() => {});
  }

  async setAvatar(p: Principal, slug: string, file: unknown, meta: RequestMeta) {
    const { workspace: w } = await this.authz.authorizeWorkspace(this.ctx.db, p, { slug }, "workspace.update");
    if (!(file instanceof Blob)) throw badRequest("A file is required", [{ field: "file", reason: "multipart/form-data field 'file'" }]);
    if (file.size > AVATAR_MAX_BYTES) throw new ApiError(413, "FILE_TOO_LARGE", "Avatar must be at most 2 MB", [{ field: "file", reason: "at most 2097152 bytes" }]);
    const bytes = new Uint8Array(await file.arrayBuffer());
    const type = sniffImage(bytes);
    if (!type) throw new ApiError(415, "UNSUPPORTED_IMAGE", "Avatar must be a PNG, JPEG or WEBP image", [{ field: "file", reason: "content is not PNG, JPEG or WEBP" }]);
    const key = `avatars/${w.id}/${uuid()}`;
    await this.ctx.objects.put(key, bytes, type);
    const old = await tx(this.ctx.db, async (t) => {
      const current = await store.workspaceById(t, w.id);
      if (!current) throw notFound("Workspace");
      await store.setAvatar(t, w.id, key, type, this.ctx.clock.iso());
      await audit(t, this.ctx, { actor: p, action: "workspace.avatar.update", workspaceId: w.id, target: { type: "workspace", id: w.id }, meta });
      return current.avatar_key;
    });
    if (old) void this.ctx.objects.delete(old).catch(() => {});
    const updated = (await store.workspaceById(this.ctx.db, w.id))!;
    return { avatar_url: this.avatarUrl(updated), content_type: type, size: bytes.length };
  }

  async avatar(workspaceId: string) {
    const w = await store.workspaceById(this.ctx.db, workspaceId);
    if (!w?.avatar_key) throw notFound("Avatar");
    const obj = await this.ctx.objects.get(w.avatar_key);
    if (!obj) throw notFound("Avatar");
    return { data: obj.data, type: w.avatar_type ?? obj.contentType };
  }
}
