/**
 * Hides (spec: POST /hides, DELETE /hides/{src}/{post}, GET /actors/{id}/hides): an actor
 * hides a post from its own home and discover feeds only (a hard filter there; single reads
 * and other actors are unaffected). Body {src_actor_id (or actor_id), post_id (or
 * dst_post_id), payload?}; the record has the edge shape with kind "hide", dst_actor_id the
 * post's author and dst_post_id the post. Idempotent: 201 {edge, created}; deletes are 204
 * always; the post must be one the actor can see (404 otherwise).
 */
import type { Principal } from "../../../access/principal";
import { tx } from "../../../core/db";
import { invalidField } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import { isObject, jsonObject, page, pageArgs } from "../core/common";
import type { PostService } from "../posts/service";
import { deleteHide, hideOf, hidesOf, insertHide, type HideRow } from "./store";

const view = (r: HideRow) => ({ ...r, kind: "hide", payload: JSON.parse(r.payload) as Record<string, unknown> });

export class HideService {
  constructor(private readonly posts: PostService) {}

  async hide(pr: Principal, communityId: string, body: unknown) {
    const c = await this.posts.lane.community(pr, communityId, "social.create");
    const o = isObject(body) ? body : {};
    const src = o.src_actor_id ?? o.actor_id;
    const postId = o.post_id ?? o.dst_post_id;
    if (typeof postId !== "string") throw invalidField("post_id", "required, a post uuid");
    const payload = jsonObject(o.payload, "payload");
    return tx(this.posts.lane.ctx.db, async (t) => {
      const actor = await this.posts.writer(t, c.id, src, "src_actor_id");
      const post = await this.posts.visibleTo(t, c.id, postId, actor.id);
      const row: HideRow = { id: uuid(), community_id: c.id, src_actor_id: actor.id, dst_actor_id: post.actor_id, dst_post_id: post.id, payload, created_at: this.posts.now() };
      const n = await insertHide(t, row);
      return { edge: view(n === 1 ? row : ((await hideOf(t, actor.id, post.id)) as HideRow)), created: n === 1 };
    });
  }

  async unhide(pr: Principal, communityId: string, src: string, postId: string): Promise<void> {
    const c = await this.posts.lane.community(pr, communityId, "social.delete");
    await deleteHide(this.posts.lane.ctx.db, c.id, src.toLowerCase(), postId.toLowerCase());
  }

  async list(pr: Principal, communityId: string, actorId: string, q: { limit?: number; cursor?: string }) {
    const c = await this.posts.lane.community(pr, communityId, "social.list");
    const a = await this.posts.lane.actor(this.posts.lane.ctx.db, c.id, actorId);
    const { limit, after } = pageArgs(q);
    return page(await hidesOf(this.posts.lane.ctx.db, a.id, after, limit + 1), limit, (r) => ({ k: r.created_at, id: r.id }), view);
  }
}
