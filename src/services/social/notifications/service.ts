/**
 * The in-app notification inbox of an actor (Stream's aggregated notification feed): one
 * group per (type, target), e.g. "12 actors reacted to your post", most recent activity
 * first, each with activity_count, actor_count and the latest actors, is_read and is_seen.
 * unread_count and unseen_count count groups. A new activity makes its group unread and
 * unseen again. Types: follow, follow_request, follow_request_approved, reaction, comment,
 * reply, mention, tag, repost, vote, moderation. Activities are written in the transaction
 * of the write that causes them (one upsert), so counts are exact under concurrency.
 * Follow notifications come from the follow events (followNotifications below), so a batch
 * follow with suppress_notifications writes none.
 */
import type { Principal } from "../../../access/principal";
import type { Sql } from "../../../core/db";
import { invalidField } from "../../../core/errors";
import { isUuid } from "../../../core/ids";
import type { EventListeners } from "../../../kernel/webhooks";
import type { SOCIAL_WEBHOOKS } from "../events";
import type { Lane } from "../actors/lane";
import { isObject, page, pageArgs } from "../core/common";
import * as store from "./store";

export const LATEST_ACTORS = 5;
export const MARK_IDS_MAX = 200;

export class NotificationService {
  constructor(private readonly lane: Lane) {}

  async list(pr: Principal, communityId: string, actorId: string, q: { limit?: number; cursor?: string }) {
    const c = await this.lane.community(pr, communityId, "social.list");
    const a = await this.lane.actor(this.lane.ctx.db, c.id, actorId);
    const { limit, after } = pageArgs(q);
    const rows = await store.inbox(this.lane.ctx.db, a.id, after, limit + 1);
    const pg = page(rows, limit, (r) => ({ k: r.updated_at, id: r.id }), (r) => r);
    const actors = await store.actorsOf(this.lane.ctx.db, pg.data.map((r) => r.id), LATEST_ACTORS);
    const counts = await store.counts(this.lane.ctx.db, a.id);
    return {
      data: pg.data.map((r) => ({
        id: r.id,
        actor_id: r.actor_id,
        type: r.type,
        target_type: r.target_type,
        target_id: r.target_id,
        activity_count: Number(r.activity_count),
        actor_count: actors.get(r.id)?.count ?? 0,
        latest_actor_ids: actors.get(r.id)?.ids ?? [],
        data: JSON.parse(r.data) as Record<string, unknown>,
        is_read: Number(r.is_read) === 1,
        is_seen: Number(r.is_seen) === 1,
        created_at: r.created_at,
        updated_at: r.updated_at,
      })),
      pagination: pg.pagination,
      unread_count: counts.unread,
      unseen_count: counts.unseen,
    };
  }

  async counts(pr: Principal, communityId: string, actorId: string) {
    const c = await this.lane.community(pr, communityId, "social.read");
    const a = await this.lane.actor(this.lane.ctx.db, c.id, actorId);
    const n = await store.counts(this.lane.ctx.db, a.id);
    return { unread_count: n.unread, unseen_count: n.unseen };
  }

  /** Marks all groups (no ids) or the given ones read (which also makes them seen) or seen. */
  async mark(pr: Principal, communityId: string, actorId: string, what: "read" | "seen", body: unknown) {
    const c = await this.lane.community(pr, communityId, "social.update");
    const a = await this.lane.actor(this.lane.ctx.db, c.id, actorId);
    const o = isObject(body) ? body : {};
    let ids: string[] | null = null;
    if (o.ids !== undefined && o.ids !== null) {
      if (!Array.isArray(o.ids) || o.ids.length > MARK_IDS_MAX || o.ids.some((x) => typeof x !== "string" || !isUuid(x))) throw invalidField("ids", `up to ${MARK_IDS_MAX} notification uuids`);
      ids = (o.ids as string[]).map((x) => x.toLowerCase());
    }
    const updated = await store.mark(this.lane.ctx.db, a.id, what, ids);
    const n = await store.counts(this.lane.ctx.db, a.id);
    return { updated, unread_count: n.unread, unseen_count: n.unseen };
  }
}

/**
 * The in-app notifications of follow events, added in the transaction of the event (the
 * follow service emits through withListeners): a follow, a request, an approval.
 */
export function followNotifications(now: () => string): EventListeners<typeof SOCIAL_WEBHOOKS> {
  // The recipient is the notification's target too (the actor followed, asked or approved).
  const notify = (t: Sql, communityId: string, recipient: string, type: store.NotificationType, from: string) =>
    store.addActivity(t, { community_id: communityId, target_type: "actor", now: now(), recipient, type, target_id: recipient, from });
  return {
    "edge.follow.created": (t, c, d) => notify(t, c, d.dst_actor_id, "follow", d.src_actor_id),
    "edge.follow.requested": (t, c, d) => notify(t, c, d.dst_actor_id, "follow_request", d.src_actor_id),
    "edge.follow.request_approved": (t, c, d) => notify(t, c, d.src_actor_id, "follow_request_approved", d.dst_actor_id),
  };
}
