/** TypeBox models of the actor graph. */
import { t } from "../../../core/schema";
import { Actor, Edge, ItemError, laneParams, Pagination, Uuid, UuidOut } from "../core/schemas";

export { Edge };

const PayloadIn = t.Optional(t.Unknown({ description: "Free-form JSON object (up to 16 KiB)" }));

export const ExpandedEdge = t.Composite([
  Edge,
  t.Object({
    src_actor: t.Optional(t.Nullable(Actor)),
    dst_actor: t.Optional(t.Nullable(Actor)),
  }),
]);
export const EdgePage = t.Object({ data: t.Array(ExpandedEdge), pagination: Pagination });
export const EdgeResult = t.Object({ edge: Edge, created: t.Boolean() });

export const FollowBody = t.Object({
  actor_id: Uuid("Follower"),
  dst_actor_id: Uuid("Followed actor"),
  payload: PayloadIn,
});
export const FollowResult = t.Object({
  status: t.String({ description: "followed | pending (the destination is private: a follow request waits for approval)" }),
  edge: t.Nullable(Edge),
  created: t.Boolean(),
});
export const FollowBatch = t.Object({
  follows: t.Array(FollowBody, { description: "1-200 items" }),
  suppress_notifications: t.Optional(t.Boolean({ description: "Skip edge.follow.created per item; counters still update" })),
});
export const FollowBatchResult = t.Object({
  data: t.Array(t.Object({ index: t.Integer(), success: t.Boolean(), status: t.Nullable(t.String()), edge: t.Nullable(Edge), created: t.Boolean(), error: ItemError })),
  succeeded: t.Integer(),
  failed: t.Integer(),
});

export const RequestParams = laneParams("dst_actor_id", "src_actor_id");
export const FollowRequestPage = t.Object({
  data: t.Array(
    t.Object({
      request_id: UuidOut(),
      src_actor_id: UuidOut(),
      src_external_id: t.String(),
      src_display_name: t.Nullable(t.String()),
      src_avatar_url: t.Nullable(t.String()),
      created_at: t.String(),
    }),
  ),
  pagination: Pagination,
});

export const EdgePageQuery = (side: string) =>
  t.Object({
    limit: t.Optional(t.QueryInteger({ description: "1-200, default 50" })),
    cursor: t.Optional(t.String({ description: "Opaque next_cursor; legacy raw-id cursors are 400 INVALID_CURSOR" })),
    expand: t.Optional(t.String({ description: `${side} adds the other actor to each edge; anything else is 400 INVALID_EXPAND` })),
  });

export const ActorEdgeBody = t.Object({
  src_actor_id: Uuid("Acting actor"),
  dst_actor_id: Uuid("Target actor"),
  payload: PayloadIn,
});

export const CloseFriendBody = t.Object({ owner_actor_id: Uuid(), member_actor_id: Uuid() });
export const CloseFriendParams = laneParams("owner_actor_id", "member_actor_id");
export const CloseFriendPage = t.Object({
  data: t.Array(
    t.Object({
      owner_actor_id: UuidOut(),
      member_actor_id: UuidOut(),
      member_external_id: t.String(),
      member_display_name: t.Nullable(t.String()),
      member_avatar_url: t.Nullable(t.String()),
      created_at: t.String(),
    }),
  ),
  pagination: Pagination,
});
