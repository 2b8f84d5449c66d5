/** Routes of the notification inbox: /actors/{actor_id}/notifications[/counts|/read|/seen]. */
import { t } from "../../../core/schema";
import { JsonObject } from "../../../access/schemas";
import { requirePrincipal } from "../../../access/principal";
import { IDEMPOTENT, laneBase, write, type LaneRouteDeps } from "../core/routes";
import { ActorParams, errors, Pagination, PageQuery, Uuid, UuidOut, writeErrors } from "../core/schemas";
import type { NotificationService } from "./service";

const tags = ["Community: notifications"];

const Notification = t.Object({
  id: UuidOut(),
  actor_id: UuidOut("Recipient"),
  type: t.String({ description: "follow | follow_request | follow_request_approved | reaction | comment | reply | mention | tag | repost | vote | moderation" }),
  target_type: t.String({ description: "post | comment | actor" }),
  target_id: UuidOut(),
  activity_count: t.Integer({ description: "Activities in the group" }),
  actor_count: t.Integer({ description: "Distinct actors in the group" }),
  latest_actor_ids: t.Array(UuidOut(), { description: "Up to 5, most recent first" }),
  data: JsonObject({ description: "Of the latest activity" }),
  is_read: t.Boolean(),
  is_seen: t.Boolean(),
  created_at: t.String(),
  updated_at: t.String({ description: "Latest activity" }),
});
const Counts = { unread_count: t.Integer({ description: "Unread groups" }), unseen_count: t.Integer({ description: "Unseen groups" }) };
const MarkBody = t.Object({ ids: t.Optional(t.Nullable(t.Array(Uuid(), { description: "Up to 200 notification ids; omitted: all" }))) });
const MarkResult = t.Object({ updated: t.Integer(), ...Counts });

export function notificationRoutes(notifications: NotificationService, deps: LaneRouteDeps) {
  return laneBase(deps)
    .get("/actors/:actor_id/notifications", (c) => notifications.list(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id, c.query), {
      params: ActorParams,
      query: PageQuery,
      response: { 200: t.Object({ data: t.Array(Notification), pagination: Pagination, ...Counts }), ...errors },
      detail: { tags, summary: "The actor's notifications grouped by (type, target), latest activity first (action social.list)" },
    })
    .get("/actors/:actor_id/notifications/counts", (c) => notifications.counts(requirePrincipal(c.principal), c.params.community_id, c.params.actor_id), {
      params: ActorParams,
      response: { 200: t.Object(Counts), ...errors },
      detail: { tags, summary: "Unread and unseen group counts (action social.read)" },
    })
    .post("/actors/:actor_id/notifications/read", (c) => write(deps, c, 200, (p) => notifications.mark(p, c.params.community_id, c.params.actor_id, "read", c.body)), {
      params: ActorParams,
      body: MarkBody,
      response: { 200: MarkResult, ...writeErrors },
      detail: { tags, summary: "Mark all or some groups read, and so seen (action social.update)", description: "A new activity in a group makes it unread again." + IDEMPOTENT },
    })
    .post("/actors/:actor_id/notifications/seen", (c) => write(deps, c, 200, (p) => notifications.mark(p, c.params.community_id, c.params.actor_id, "seen", c.body)), {
      params: ActorParams,
      body: MarkBody,
      response: { 200: MarkResult, ...writeErrors },
      detail: { tags, summary: "Mark all or some groups seen (action social.update)", description: "Seen clears the badge (unseen_count); read is per group." + IDEMPOTENT },
    });
}
