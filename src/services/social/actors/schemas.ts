/** TypeBox models of actors and counters. */
import { t } from "../../../core/schema";
import { Actor, ItemError, Pagination } from "../core/schemas";

export { Actor };

export const ActorUpsert = t.Object({
  external_id: t.String({ description: "1-256 characters; the upsert key" }),
  display_name: t.Optional(t.Nullable(t.String({ description: "Up to 200 characters" }))),
  avatar_url: t.Optional(t.Nullable(t.String({ description: "http(s) URL, up to 2048 characters" }))),
  metadata: t.Optional(t.Unknown({ description: "Free-form JSON object (up to 16 KiB) or null" })),
  is_private: t.Optional(t.Boolean({ description: "Changed only when sent" })),
});

export const ActorUpsertResult = t.Object({ actor: Actor, created: t.Boolean({ description: "true on first call, false on update" }) });

export const ActorBatch = t.Object({ actors: t.Array(ActorUpsert, { description: "1-200 items" }) });

export const ActorBatchResult = t.Object({
  data: t.Array(t.Object({ index: t.Integer(), success: t.Boolean(), actor: t.Nullable(Actor), created: t.Nullable(t.Boolean()), error: ItemError })),
  succeeded: t.Integer(),
  failed: t.Integer(),
});

export const ByExternalBatch = t.Object({ external_ids: t.Array(t.String(), { description: "1-200 strings of up to 256 characters; duplicates removed" }) });
export const ByExternalResult = t.Object({ data: t.Array(Actor, { description: "In request order" }), missing: t.Array(t.String()) });

export const ActorList = t.Object({ data: t.Array(Actor), pagination: Pagination });
export const ActorListQuery = t.Object({
  limit: t.Optional(t.QueryInteger({ description: "1-200, default 50" })),
  cursor: t.Optional(t.String()),
  ids: t.Optional(t.String({ description: "Comma-separated actor uuids (at most 100): those actors in request order, unknown ids omitted; limit and cursor ignored. A malformed id is 400 naming ids" })),
});

export const ActorPatch = t.Object({
  display_name: t.Optional(t.Nullable(t.String())),
  avatar_url: t.Optional(t.Nullable(t.String())),
  metadata: t.Optional(t.Unknown({ description: "Free-form JSON object (up to 16 KiB) or null" })),
  status: t.Optional(t.String({ description: "active | suspended | deleted" })),
  is_private: t.Optional(t.Boolean()),
});

export const Counters = t.Object({
  actor_id: t.String(),
  community_id: t.String(),
  follower_count: t.Integer(),
  following_count: t.Integer(),
  post_count: t.Integer({ description: "Published posts" }),
  comment_count: t.Integer({ description: "Published comments" }),
  blocks_count: t.Integer({ description: "Actors this actor blocks" }),
  updated_at: t.String(),
});
export const CountersQuery = t.Object({ actor_ids: t.String({ description: "Comma-separated actor uuids, at most 100, de-duplicated; a malformed id is 400 naming actor_ids" }) });
export const CountersMany = t.Object({ data: t.Array(Counters), missing: t.Array(t.String()) });
