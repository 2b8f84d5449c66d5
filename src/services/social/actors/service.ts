/**
 * Actors: the customer's end users in a community, upserted by external_id, and their counters.
 *
 * Decisions the spec leaves open:
 * - Upsert overwrites display_name, avatar_url and metadata (omitted: null / {}); is_private
 *   and status change only when sent (is_private) or by PATCH (status), so a profile sync
 *   never unlocks a private account or revives a suspended one.
 * - display_name up to 200 characters, avatar_url an http(s) URL up to 2048, metadata a JSON
 *   object up to 16 KiB.
 * - actor.updated fires on every upsert of an existing actor and on every PATCH that
 *   changes something; data carries changed_fields.
 * - Batch upsert validates the whole envelope and every item first (400 names the item);
 *   then each item is its own transaction: an item that fails at write time carries its
 *   error and the others stand.
 * - DELETE removes the actor with its edges, requests, close-friends entries, hashtag follows
 *   and conversation memberships; the counters of the actors on the other side of its
 *   follows and blocks are corrected in the same transaction (no per-edge events).
 */
import type { Static } from "@sinclair/typebox";
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { invalidField, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import type { Page } from "../../../core/pagination";
import { type WebhookEngine, emitEvent } from "../../../kernel/webhooks";
import { batchItems, idList, isObject, itemError, jsonObject, page, pageArgs, type ItemError } from "../core/common";
import type { Actor } from "../core/schemas";
import type { Lane } from "./lane";
import * as store from "./store";
import { SOCIAL_WEBHOOKS } from "../events";

export const EXTERNAL_ID_MAX = 256;
export const ACTOR_NAME_MAX = 200;
export const AVATAR_URL_MAX = 2048;
const STATUSES = ["active", "suspended", "deleted"] as const;

/** An actor as the API shows it: the Actor schema (core/schemas.ts) is its one declaration. */
export type ActorView = Static<typeof Actor>;

/** The counters row as the API shows it (countersView makes the counts numbers: PostgreSQL's int8 arrives as text). */
export type CountersView = store.CounterRow;

export const actorView = (r: store.ActorRow): ActorView => ({
  id: r.id,
  community_id: r.community_id,
  external_id: r.external_id,
  display_name: r.display_name,
  avatar_url: r.avatar_url,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  status: r.status,
  is_private: !!r.is_private,
  shadow_banned_at: r.shadow_banned_at,
  shadow_banned_until: r.shadow_banned_until,
  shadow_banned_reason: r.shadow_banned_reason,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const countersView = (r: store.CounterRow): CountersView => ({
  actor_id: r.actor_id,
  community_id: r.community_id,
  follower_count: Number(r.follower_count),
  following_count: Number(r.following_count),
  post_count: Number(r.post_count),
  comment_count: Number(r.comment_count),
  blocks_count: Number(r.blocks_count),
  updated_at: r.updated_at,
});

interface UpsertInput {
  external_id: string;
  display_name: string | null;
  avatar_url: string | null;
  metadata: string;
  is_private: number | undefined;
}

function externalId(v: unknown, field = "external_id"): string {
  if (typeof v !== "string" || v.length < 1 || v.length > EXTERNAL_ID_MAX) throw invalidField(field, `required, 1-${EXTERNAL_ID_MAX} characters`);
  return v;
}

function displayName(v: unknown, field: string): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "string" || v.length > ACTOR_NAME_MAX) throw invalidField(field, `a string of at most ${ACTOR_NAME_MAX} characters or null`);
  return v;
}

function avatarUrl(v: unknown, field: string): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "string" || v.length > AVATAR_URL_MAX || !/^https?:\/\/[^\s]+$/i.test(v)) throw invalidField(field, `an http(s) URL of at most ${AVATAR_URL_MAX} characters or null`);
  return v;
}

function isPrivate(v: unknown, field: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "boolean") throw invalidField(field, "a boolean");
  return v ? 1 : 0;
}

function upsertInput(v: unknown, prefix = ""): UpsertInput {
  if (!isObject(v)) throw invalidField(prefix || "body", "must be an object");
  return {
    external_id: externalId(v.external_id, `${prefix}external_id`),
    display_name: displayName(v.display_name, `${prefix}display_name`),
    avatar_url: avatarUrl(v.avatar_url, `${prefix}avatar_url`),
    metadata: jsonObject(v.metadata, `${prefix}metadata`),
    is_private: isPrivate(v.is_private, `${prefix}is_private`),
  };
}

const changedFields = (before: store.ActorRow, patch: store.ActorPatch) =>
  (Object.keys(patch) as (keyof store.ActorPatch)[]).filter((k) => patch[k] !== undefined && patch[k] !== before[k]);

/**
 * What other features remove of an actor before it is deleted, in the deleting transaction
 * (the graph its edges, content the counts on others' rows): handed in by module.ts, since
 * those features build on actors.
 */
export type ActorDetach = (t: Sql, actorId: string, now: string) => Promise<void>;

export class ActorService {
  constructor(
    private readonly lane: Lane,
    private readonly engine: WebhookEngine,
    private readonly detach: readonly ActorDetach[] = [],
  ) {}

  private now() {
    return this.lane.ctx.clock.iso();
  }

  private emitUpdated(t: Sql, row: store.ActorRow, changed: string[]) {
    return emitEvent(this.engine, SOCIAL_WEBHOOKS, t, row.community_id, "actor.updated", { ...actorView(row), changed_fields: changed });
  }

  /** One upsert in its own transaction. */
  private async upsertOne(communityId: string, input: UpsertInput): Promise<{ actor: ActorView; created: boolean }> {
    return tx(this.lane.ctx.db, async (t) => {
      const now = this.now();
      const existing = await store.actorByExternal(t, communityId, input.external_id);
      if (!existing) {
        const row: store.ActorRow = {
          id: uuid(),
          community_id: communityId,
          external_id: input.external_id,
          display_name: input.display_name,
          avatar_url: input.avatar_url,
          metadata: input.metadata,
          status: "active",
          is_private: input.is_private ?? 0,
          shadow_banned_at: null,
          shadow_banned_until: null,
          shadow_banned_reason: null,
          created_at: now,
          updated_at: now,
        };
        if (await store.insertActorIfAbsent(t, row)) return { actor: actorView(row), created: true };
      }
      // Existing (or inserted by a concurrent upsert a moment ago): overwrite.
      const before = (await store.lockActor(t, existing?.id ?? (await store.actorByExternal(t, communityId, input.external_id))!.id))!;
      const patch: store.ActorPatch = { display_name: input.display_name, avatar_url: input.avatar_url, metadata: input.metadata };
      if (input.is_private !== undefined) patch.is_private = input.is_private;
      const changed = changedFields(before, patch);
      await store.updateActor(t, before.id, patch, now);
      const after = (await store.actorById(t, before.id))!;
      await this.emitUpdated(t, after, changed);
      return { actor: actorView(after), created: false };
    });
  }

  async upsert(p: Principal, communityId: string, body: unknown) {
    const c = await this.lane.community(p, communityId, "social.create");
    return this.upsertOne(c.id, upsertInput(body));
  }

  async upsertBatch(p: Principal, communityId: string, body: unknown) {
    const c = await this.lane.community(p, communityId, "social.create");
    const items = batchItems(isObject(body) ? body.actors : undefined, "actors").map((v, i) => upsertInput(v, `actors[${i}].`));
    const data: { index: number; success: boolean; actor: ActorView | null; created: boolean | null; error: ItemError | null }[] = [];
    for (const [index, input] of items.entries()) {
      try {
        const r = await this.upsertOne(c.id, input);
        data.push({ index, success: true, actor: r.actor, created: r.created, error: null });
      } catch (e) {
        data.push({ index, success: false, actor: null, created: null, error: itemError(e) });
      }
    }
    const succeeded = data.filter((d) => d.success).length;
    return { data, succeeded, failed: data.length - succeeded };
  }

  async byExternalBatch(p: Principal, communityId: string, body: unknown) {
    const c = await this.lane.community(p, communityId, "social.read");
    const raw = batchItems(isObject(body) ? body.external_ids : undefined, "external_ids");
    const ids = [...new Set(raw.map((v, i) => externalId(v, `external_ids[${i}]`)))];
    const rows = new Map((await store.actorsByExternalIds(this.lane.ctx.db, c.id, ids)).map((r) => [r.external_id, r]));
    return { data: ids.filter((id) => rows.has(id)).map((id) => actorView(rows.get(id)!)), missing: ids.filter((id) => !rows.has(id)) };
  }

  async byExternal(p: Principal, communityId: string, ext: string): Promise<ActorView> {
    const c = await this.lane.community(p, communityId, "social.read");
    // The route's schema bounds ext (1-EXTERNAL_ID_MAX characters).
    const r = await store.actorByExternal(this.lane.ctx.db, c.id, ext);
    if (!r) throw notFound("Actor");
    return actorView(r);
  }

  async get(p: Principal, communityId: string, actorId: string): Promise<ActorView> {
    const c = await this.lane.community(p, communityId, "social.read");
    return actorView(await this.lane.actor(this.lane.ctx.db, c.id, actorId));
  }

  async list(p: Principal, communityId: string, q: { limit?: number; cursor?: string; ids?: string }): Promise<Page<ActorView>> {
    const c = await this.lane.community(p, communityId, "social.list");
    const ids = idList(q.ids, "ids", false);
    if (ids) {
      const rows = new Map((await store.actorsByIds(this.lane.ctx.db, c.id, ids)).map((r) => [r.id, r]));
      return { data: ids.filter((id) => rows.has(id)).map((id) => actorView(rows.get(id)!)), pagination: { next_cursor: null, has_more: false } };
    }
    const { limit, after } = pageArgs(q);
    const rows = await store.listActors(this.lane.ctx.db, c.id, after, limit + 1);
    return page(rows, limit, (r) => ({ k: r.created_at, id: r.id }), actorView);
  }

  async patch(p: Principal, communityId: string, actorId: string, body: unknown): Promise<ActorView> {
    const c = await this.lane.community(p, communityId, "social.update");
    if (!isObject(body)) throw invalidField("body", "must be an object");
    const patch: store.ActorPatch = {};
    if (body.display_name !== undefined) patch.display_name = displayName(body.display_name, "display_name");
    if (body.avatar_url !== undefined) patch.avatar_url = avatarUrl(body.avatar_url, "avatar_url");
    if (body.metadata !== undefined) patch.metadata = jsonObject(body.metadata, "metadata");
    if (body.is_private !== undefined) patch.is_private = isPrivate(body.is_private, "is_private");
    if (body.status !== undefined) {
      if (typeof body.status !== "string" || !(STATUSES as readonly string[]).includes(body.status)) throw invalidField("status", `one of ${STATUSES.join(", ")}`);
      patch.status = body.status as store.ActorStatus;
    }
    return tx(this.lane.ctx.db, async (t) => {
      const before = await this.lane.actor(t, c.id, actorId);
      const changed = changedFields(before, patch);
      if (changed.length === 0) return actorView(before);
      await store.updateActor(t, before.id, patch, this.now());
      const after = (await store.actorById(t, before.id))!;
      await this.emitUpdated(t, after, changed);
      return actorView(after);
    });
  }

  async remove(p: Principal, communityId: string, actorId: string): Promise<void> {
    const c = await this.lane.community(p, communityId, "social.delete");
    await tx(this.lane.ctx.db, async (t) => {
      const a = await this.lane.actor(t, c.id, actorId);
      await store.lockActor(t, a.id);
      for (const detach of this.detach) await detach(t, a.id, this.now());
      await store.deleteActor(t, a.id);
    });
  }

  async counters(p: Principal, communityId: string, actorId: string): Promise<CountersView> {
    const c = await this.lane.community(p, communityId, "social.read");
    const a = await this.lane.actor(this.lane.ctx.db, c.id, actorId);
    return countersView((await store.countersOf(this.lane.ctx.db, a.id))!);
  }

  async countersMany(p: Principal, communityId: string, q: { actor_ids?: string }) {
    const c = await this.lane.community(p, communityId, "social.read");
    const ids = idList(q.actor_ids, "actor_ids", true)!;
    const rows = new Map((await store.countersOfMany(this.lane.ctx.db, c.id, ids)).map((r) => [r.actor_id, r]));
    return { data: ids.filter((id) => rows.has(id)).map((id) => countersView(rows.get(id)!)), missing: ids.filter((id) => !rows.has(id)) };
  }
}
