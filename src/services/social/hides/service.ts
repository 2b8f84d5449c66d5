/**
 * Hides (spec: POST /hides, DELETE /hides/{src}/{post}, GET /actors/{id}/hides): an actor
 * hides a post from its own home and discover feeds only (a hard filter there; single reads
 * and other actors are unaffected). Body {src_actor_id (or actor_id), post_id (or
 * dst_post_id), payload?}; the record has the edge shape with kind "hide", dst_actor_id the
 * post's author and dst_post_id the post. Idempotent: 201 {edge, created}; deletes are 204
 * always; the post must be one the actor can see (404 otherwise).
 */
import type { Principal } from "../../../access/principal";
import { tx, type Sql } from "../../../core/db";
import { invalidField } from "../../../core/errors";
import { isUuid, uuid } from "../../../core/ids";
import type { Keyset } from "../core/keyset";
import { isObject, jsonObject, page, pageArgs } from "../core/common";
import type { PostService } from "../posts/service";

export interface HideRow {
  id: string;
  community_id: string;
  src_actor_id: string;
  dst_actor_id: string;
  dst_post_id: string;
  payload: string;
  created_at: string;
}

const view = (r: HideRow) => ({ ...r, kind: "hide", payload: JSON.parse(r.payload) as Record<string, unknown> });

const hideOf = (db: Sql, src: string, post: string) => db.get<HideRow>("SELECT * FROM social_hides WHERE src_actor_id = ? AND dst_post_id = ?", src, post);

function hidesOf(db: Sql, src: string, after: Keyset | null, limit: number): Promise<HideRow[]> {
  return after
    ? db.all<HideRow>("SELECT * FROM social_hides WHERE src_actor_id = ? AND (created_at < ? OR (created_at = ? AND id < ?)) ORDER BY created_at DESC, id DESC LIMIT ?", src, after.k, after.k, after.id, limit)
    : db.all<HideRow>("SELECT * FROM social_hides WHERE src_actor_id = ? ORDER BY created_at DESC, id DESC LIMIT ?", src, limit);
}

export class HideService {
  constructor(private readonly posts: PostService) {}

  private get db() {
    return this.posts.lane.ctx.db;
  }

  async hide(pr: Principal, communityId: string, body: unknown) {
    const c = await this.posts.lane.community(pr, communityId, "social.create");
    const o = isObject(body) ? body : {};
    const src = o.src_actor_id ?? o.actor_id;
    const postId = o.post_id ?? o.dst_post_id;
    if (typeof postId !== "string") throw invalidField("post_id", "required, a post uuid");
    const payload = jsonObject(o.payload, "payload");
    return tx(this.db, async (t) => {
      const actor = await this.posts.writer(t, c.id, src, "src_actor_id");
      const post = await this.posts.visibleTo(t, c.id, postId, actor.id);
      const row: HideRow = { id: uuid(), community_id: c.id, src_actor_id: actor.id, dst_actor_id: post.actor_id, dst_post_id: post.id, payload, created_at: this.posts.now() };
      const n = await t.run(
        "INSERT INTO social_hides (id, community_id, src_actor_id, dst_actor_id, dst_post_id, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (src_actor_id, dst_post_id) DO NOTHING",
        row.id, row.community_id, row.src_actor_id, row.dst_actor_id, row.dst_post_id, row.payload, row.created_at,
      );
      return { edge: view(n === 1 ? row : ((await hideOf(t, actor.id, post.id)) as HideRow)), created: n === 1 };
    });
  }

  async unhide(pr: Principal, communityId: string, src: string, postId: string): Promise<void> {
    const c = await this.posts.lane.community(pr, communityId, "social.delete");
    if (!isUuid(src) || !isUuid(postId)) return;
    await this.db.run("DELETE FROM social_hides WHERE community_id = ? AND src_actor_id = ? AND dst_post_id = ?", c.id, src.toLowerCase(), postId.toLowerCase());
  }

  async list(pr: Principal, communityId: string, actorId: string, q: { limit?: string; cursor?: string }) {
    const c = await this.posts.lane.community(pr, communityId, "social.list");
    const a = await this.posts.lane.actor(this.db, c.id, actorId);
    const { limit, after } = pageArgs(q);
    return page(await hidesOf(this.db, a.id, after, limit + 1), limit, (r) => ({ k: r.created_at, id: r.id }), view);
  }
}
