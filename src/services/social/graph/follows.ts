/**
 * Follows, follow requests of private actors, followers and following pages.
 *
 * Decisions the spec leaves open (Mastodon and Stream behaviour):
 * - Self-follow is 422 CANNOT_FOLLOW_SELF.
 * - A follow of a private actor creates (or keeps) a pending request: {status: pending,
 *   edge: null, created: true the first time}. An existing edge answers followed, created false.
 * - Unfollow also withdraws a pending request of the same pair. Decline and unfollow are
 *   204 whether or not anything existed (unknown actors included).
 * - Approving a request that no longer exists: 201 {edge, created: false} when the follow
 *   exists anyway, else 404.
 * - Counters move in the transaction of the edge, by exactly the rows inserted or deleted
 *   (ON CONFLICT DO NOTHING / DELETE row counts), so concurrent follows and unfollows never
 *   drift. The two counter rows are updated in actor-id order (no deadlock between A->B and B->A).
 * - edge.follow.requested is sent even with suppress_notifications (only edge.follow.created
 *   is suppressed, as the spec says).
 */
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { ApiError, conflict, notFound } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import type { Page } from "../../../core/pagination";
import type { EventEmitter } from "../../../kernel/webhooks";
import { bumpCounter } from "../actors";
import { actorPair, type Lane } from "../actors/lane";
import { batchItems, expandArg, isObject, itemError, jsonObject, page, pageArgs, type ItemError } from "../core/common";
import { checkUuid } from "../core/schemas";
import * as store from "./store";
import { edgeView, expandEdges, type EdgeView } from "./views";
import type { SOCIAL_WEBHOOKS } from "../events";

export interface FollowResult {
  status: "followed" | "pending";
  edge: EdgeView | null;
  created: boolean;
}

interface FollowInput {
  src: string;
  dst: string;
  payload: string;
}

const unprocessable = (message: string, code: string) => new ApiError(422, code, message);
export const blocked = () => conflict("A block exists between these actors", "BLOCKED");

/** Moves both follow counters of an edge by delta, in actor-id order. */
export async function moveFollowCounters(t: Sql, src: string, dst: string, delta: number, now: string): Promise<void> {
  const bumps: [string, "following_count" | "follower_count"][] = [
    [src, "following_count"],
    [dst, "follower_count"],
  ];
  bumps.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  for (const [id, name] of bumps) await bumpCounter(t, id, name, delta, now);
}

function followInput(v: unknown, prefix = ""): FollowInput {
  const o = isObject(v) ? v : {};
  return { src: checkUuid(o.actor_id, `${prefix}actor_id`), dst: checkUuid(o.dst_actor_id, `${prefix}dst_actor_id`), payload: jsonObject(o.payload, `${prefix}payload`) };
}

export class FollowService {
  constructor(
    private readonly lane: Lane,
    /** Social's emit; the module adds the follow notifications to it (same transaction). */
    private readonly emit: EventEmitter<typeof SOCIAL_WEBHOOKS>,
  ) {}

  /** Removes the follow src -> dst (counters, edge.follow.deleted); true when it existed. */
  async removeFollow(t: Sql, communityId: string, src: string, dst: string, extra: Record<string, unknown> = {}): Promise<boolean> {
    const row = await store.deleteEdge(t, communityId, src, "follow", dst);
    if (!row) return false;
    const now = this.lane.ctx.clock.iso();
    await moveFollowCounters(t, src, dst, -1, now);
    await this.emit(t, communityId, "edge.follow.deleted", { ...edgeView(row), deleted_at: now, ...extra });
    return true;
  }

  private async followOne(communityId: string, input: FollowInput, notify: boolean): Promise<FollowResult> {
    return tx(this.lane.ctx.db, async (t) => {
      const [src, dst] = await actorPair(t, communityId, input.src, input.dst);
      if (src.id === dst.id) throw unprocessable("An actor cannot follow itself", "CANNOT_FOLLOW_SELF");
      const { follow: existing, blocked: isBlocked } = await store.followAndBlocks(t, communityId, src.id, dst.id);
      if (isBlocked) throw blocked();
      if (existing) return { status: "followed", edge: edgeView(existing), created: false };
      const now = this.lane.ctx.clock.iso();
      if (dst.is_private) {
        const req: store.RequestRow = { id: uuid(), community_id: communityId, src_actor_id: src.id, dst_actor_id: dst.id, payload: input.payload, created_at: now };
        const inserted = await store.insertRequest(t, req);
        if (inserted) {
          await this.emit(t, communityId, "edge.follow.requested", { request_id: req.id, src_actor_id: src.id, src_external_id: src.external_id, dst_actor_id: dst.id, created_at: now });
        }
        return { status: "pending", edge: null, created: inserted };
      }
      const row: store.EdgeRow = { id: uuid(), community_id: communityId, kind: "follow", src_actor_id: src.id, dst_actor_id: dst.id, dst_post_id: null, payload: input.payload, created_at: now };
      if (!(await store.insertEdge(t, row))) {
        // A concurrent follow of the same pair won.
        return { status: "followed", edge: edgeView((await store.edgeOf(t, communityId, src.id, "follow", dst.id))!), created: false };
      }
      await moveFollowCounters(t, src.id, dst.id, 1, now);
      if (notify) await this.emit(t, communityId, "edge.follow.created", edgeView(row));
      return { status: "followed", edge: edgeView(row), created: true };
    });
  }

  async follow(p: Principal, communityId: string, body: unknown): Promise<FollowResult> {
    const c = await this.lane.community(p, communityId, "social.create");
    return this.followOne(c.id, followInput(body), true);
  }

  async followBatch(p: Principal, communityId: string, body: unknown) {
    const c = await this.lane.community(p, communityId, "social.create");
    const o = isObject(body) ? body : {};
    const items = batchItems(o.follows, "follows").map((v, i) => followInput(v, `follows[${i}].`));
    const notify = o.suppress_notifications !== true;
    const data: ({ index: number; success: boolean; error: ItemError | null } & Partial<FollowResult>)[] = [];
    for (const [index, input] of items.entries()) {
      try {
        data.push({ index, success: true, ...(await this.followOne(c.id, input, notify)), error: null });
      } catch (e) {
        data.push({ index, success: false, status: undefined, edge: null, created: false, error: itemError(e) });
      }
    }
    const succeeded = data.filter((d) => d.success).length;
    return { data: data.map((d) => ({ index: d.index, success: d.success, status: d.status ?? null, edge: d.edge ?? null, created: d.created ?? false, error: d.error })), succeeded, failed: data.length - succeeded };
  }

  async unfollow(p: Principal, communityId: string, src: string, dst: string): Promise<void> {
    const c = await this.lane.community(p, communityId, "social.delete");
    await tx(this.lane.ctx.db, async (t) => {
      await this.removeFollow(t, c.id, src.toLowerCase(), dst.toLowerCase());
      await store.deleteRequest(t, c.id, dst.toLowerCase(), src.toLowerCase());
    });
  }

  async approve(p: Principal, communityId: string, dstId: string, srcId: string): Promise<{ edge: EdgeView; created: boolean }> {
    const c = await this.lane.community(p, communityId, "social.create");
    return tx(this.lane.ctx.db, async (t) => {
      const dst = await this.lane.actor(t, c.id, dstId);
      const src = await this.lane.actor(t, c.id, srcId);
      const req = await store.deleteRequest(t, c.id, dst.id, src.id);
      const existing = await store.edgeOf(t, c.id, src.id, "follow", dst.id);
      if (!req) {
        if (existing) return { edge: edgeView(existing), created: false };
        throw notFound("Follow request");
      }
      if (existing) return { edge: edgeView(existing), created: false };
      const now = this.lane.ctx.clock.iso();
      const row: store.EdgeRow = { id: uuid(), community_id: c.id, kind: "follow", src_actor_id: src.id, dst_actor_id: dst.id, dst_post_id: null, payload: req.payload, created_at: now };
      await store.insertEdge(t, row);
      await moveFollowCounters(t, src.id, dst.id, 1, now);
      await this.emit(t, c.id, "edge.follow.request_approved", { ...edgeView(row), request_id: req.id, approved_at: now });
      await this.emit(t, c.id, "edge.follow.created", edgeView(row));
      return { edge: edgeView(row), created: true };
    });
  }

  async decline(p: Principal, communityId: string, dstId: string, srcId: string): Promise<void> {
    const c = await this.lane.community(p, communityId, "social.delete");
    await store.deleteRequest(this.lane.ctx.db, c.id, dstId.toLowerCase(), srcId.toLowerCase());
  }

  async requests(p: Principal, communityId: string, actorId: string, q: { limit?: number; cursor?: string }) {
    const c = await this.lane.community(p, communityId, "social.list");
    const a = await this.lane.actor(this.lane.ctx.db, c.id, actorId);
    const { limit, after } = pageArgs(q);
    const rows = await store.requestsTo(this.lane.ctx.db, a.id, after, limit + 1);
    return page(rows, limit, (r) => ({ k: r.created_at, id: r.id }), (r) => ({
      request_id: r.id,
      src_actor_id: r.src_actor_id,
      src_external_id: r.src_external_id,
      src_display_name: r.src_display_name,
      src_avatar_url: r.src_avatar_url,
      created_at: r.created_at,
    }));
  }

  async following(p: Principal, communityId: string, actorId: string, q: { limit?: number; cursor?: string; expand?: string }): Promise<Page<EdgeView>> {
    return this.edgePage(p, communityId, actorId, q, "out", "follow");
  }

  async followers(p: Principal, communityId: string, actorId: string, q: { limit?: number; cursor?: string; expand?: string }): Promise<Page<EdgeView>> {
    return this.edgePage(p, communityId, actorId, q, "in", "follow");
  }

  /** A page of an actor's edges of one kind: outgoing (expand dst_actor) or incoming (expand src_actor), newest first. */
  async edgePage(p: Principal, communityId: string, actorId: string, q: { limit?: number; cursor?: string; expand?: string }, dir: "in" | "out", kind: store.EdgeKind): Promise<Page<EdgeView>> {
    const c = await this.lane.community(p, communityId, "social.list");
    const side = dir === "out" ? "dst_actor" : "src_actor";
    const expand = expandArg(q.expand, side);
    const { limit, after } = pageArgs(q);
    const a = await this.lane.actor(this.lane.ctx.db, c.id, actorId);
    const rows = dir === "out" ? await store.edgesFrom(this.lane.ctx.db, a.id, kind, after, limit + 1) : await store.edgesTo(this.lane.ctx.db, a.id, kind, after, limit + 1);
    const pg = page(rows, limit, (r) => ({ k: r.created_at, id: r.id }), edgeView);
    if (expand) pg.data = await expandEdges(this.lane.ctx.db, c.id, pg.data, side);
    return pg;
  }
}
