/**
 * Mutes, blocks, restricts and close friends.
 *
 * Decisions the spec leaves open (Mastodon, Instagram):
 * - Block (POST /blocks {src_actor_id, dst_actor_id, payload}): removes the follows both
 *   ways (counters corrected, edge.follow.deleted with reason "block"), pending follow
 *   requests both ways and close-friends entries both ways; afterwards follows, mutes,
 *   restricts and close-friends entries between the pair are 409 BLOCKED either way, as are
 *   direct messages. blocks_count of the blocker counts its blocks. Mutes survive a block.
 * - Restrict (POST /restricts, same body): the restricted actor's conversations with the
 *   owner move to the owner's requests folder; in part 2 their comments on the owner's
 *   posts wait for approval.
 * - Self-mute, self-block, self-restrict and self-add to close friends are 422.
 * - Creating an edge that exists answers 201 {edge, created: false}; deletes are 204 always.
 */
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { ApiError } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { bumpCounter } from "../actors";
import type { Lane } from "../actors/lane";
import { isObject, jsonObject, page, pageArgs } from "../core/common";
import { checkUuid } from "../core/schemas";
import { blocked, type FollowService } from "./follows";
import * as store from "./store";
import { edgeView, type EdgeView } from "./views";

type PlainKind = "mute" | "block" | "restrict";

const SELF: Record<PlainKind | "close_friend", [string, string]> = {
  mute: ["An actor cannot mute itself", "CANNOT_MUTE_SELF"],
  block: ["An actor cannot block itself", "CANNOT_BLOCK_SELF"],
  restrict: ["An actor cannot restrict itself", "CANNOT_RESTRICT_SELF"],
  close_friend: ["An actor cannot add itself to its close friends", "CANNOT_ADD_SELF"],
};

const selfError = (k: keyof typeof SELF) => new ApiError(422, SELF[k][1], SELF[k][0]);

export class EdgeService {
  constructor(
    private readonly lane: Lane,
    private readonly follows: FollowService,
  ) {}

  /** Creates a mute, block or restrict edge; 201 {edge, created}. */
  async create(p: Principal, communityId: string, kind: PlainKind, body: unknown): Promise<{ edge: EdgeView; created: boolean }> {
    const c = await this.lane.community(p, communityId, "social.create");
    const o = isObject(body) ? body : {};
    const srcId = checkUuid(o.src_actor_id, "src_actor_id");
    const dstId = checkUuid(o.dst_actor_id, "dst_actor_id");
    const payload = jsonObject(o.payload, "payload");
    return tx(this.lane.ctx.db, async (t) => {
      const src = await this.lane.actor(t, c.id, srcId, "src_actor_id");
      const dst = await this.lane.actor(t, c.id, dstId, "dst_actor_id");
      if (src.id === dst.id) throw selfError(kind);
      if (kind !== "block" && (await store.blockBetween(t, src.id, dst.id))) throw blocked();
      const existing = await store.edgeOf(t, c.id, src.id, kind, dst.id);
      if (existing) return { edge: edgeView(existing), created: false };
      const now = this.lane.ctx.clock.iso();
      const row: store.EdgeRow = { id: uuid(), community_id: c.id, kind, src_actor_id: src.id, dst_actor_id: dst.id, dst_post_id: null, payload, created_at: now };
      if (!(await store.insertEdge(t, row))) return { edge: edgeView((await store.edgeOf(t, c.id, src.id, kind, dst.id))!), created: false };
      if (kind === "block") await this.applyBlock(t, c.id, src.id, dst.id, now);
      return { edge: edgeView(row), created: true };
    });
  }

  private async applyBlock(t: Sql, communityId: string, a: string, b: string, now: string): Promise<void> {
    await bumpCounter(t, a, "blocks_count", 1, now);
    // Follow counters in actor-id order, like every follow write.
    const [x, y] = a < b ? [a, b] : [b, a];
    await this.follows.removeFollow(t, communityId, x, y, { reason: "block" });
    await this.follows.removeFollow(t, communityId, y, x, { reason: "block" });
    await store.dropPairExtras(t, a, b);
  }

  async remove(p: Principal, communityId: string, kind: PlainKind, src: string, dst: string): Promise<void> {
    const c = await this.lane.community(p, communityId, "social.delete");
    await tx(this.lane.ctx.db, async (t) => {
      const row = await store.deleteEdge(t, c.id, src.toLowerCase(), kind, dst.toLowerCase());
      if (row && kind === "block") await bumpCounter(t, row.src_actor_id, "blocks_count", -1, this.lane.ctx.clock.iso());
    });
  }

  async addCloseFriend(p: Principal, communityId: string, body: unknown): Promise<void> {
    const c = await this.lane.community(p, communityId, "social.create");
    const o = isObject(body) ? body : {};
    const ownerId = checkUuid(o.owner_actor_id, "owner_actor_id");
    const memberId = checkUuid(o.member_actor_id, "member_actor_id");
    await tx(this.lane.ctx.db, async (t) => {
      const owner = await this.lane.actor(t, c.id, ownerId, "owner_actor_id");
      const member = await this.lane.actor(t, c.id, memberId, "member_actor_id");
      if (owner.id === member.id) throw selfError("close_friend");
      if (await store.blockBetween(t, owner.id, member.id)) throw blocked();
      await store.insertCloseFriend(t, c.id, owner.id, member.id, this.lane.ctx.clock.iso());
    });
  }

  async removeCloseFriend(p: Principal, communityId: string, owner: string, member: string): Promise<void> {
    const c = await this.lane.community(p, communityId, "social.delete");
    await store.deleteCloseFriend(this.lane.ctx.db, c.id, owner.toLowerCase(), member.toLowerCase());
  }

  async closeFriends(p: Principal, communityId: string, actorId: string, q: { limit?: number; cursor?: string }) {
    const c = await this.lane.community(p, communityId, "social.list");
    const a = await this.lane.actor(this.lane.ctx.db, c.id, actorId);
    const { limit, after } = pageArgs(q);
    const rows = await store.closeFriendsOf(this.lane.ctx.db, a.id, after, limit + 1);
    return page(rows, limit, (r) => ({ k: r.created_at, id: r.member_actor_id }), (r) => ({ ...r }));
  }
}
