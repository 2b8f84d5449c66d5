/** TypeBox models of actors and counters. */
import { t } from "../../../core/schema";
import { Actor, ItemError, Pagination, UuidOut } from "../core/schemas";
import { EXTERNAL_ID_MAX } from "./service";

export { Actor };

/**
 * The customer's own id of an actor (free text): the upsert key and the by-external path
 * parameter. Over EXTERNAL_ID_MAX characters is 400 VALIDATION_ERROR naming the field.
 */
export const ExternalId = (description = `The customer's id, unique per community: free text, 1-${EXTERNAL_ID_MAX} characters`) =>
  t.String({ minLength: 1, maxLength: EXTERNAL_ID_MAX, description });

const upsertFields = {
  display_name: t.Optional(t.Nullable(t.String({ description: "Up to 200 characters" }))),
  avatar_url: t.Optional(t.Nullable(t.String({ description: "http(s) URL, up to 2048 characters" }))),
  metadata: t.Optional(t.Unknown({ description: "Free-form JSON object (up to 16 KiB) or null" })),
  is_private: t.Optional(t.Boolean({ description: "Changed only when sent" })),
};

export const ActorUpsert = t.Object({ external_id: ExternalId(`1-${EXTERNAL_ID_MAX} characters; the upsert key`), ...upsertFields });

export const ActorUpsertResult = t.Object({ actor: Actor, created: t.Boolean({ description: "true on first call, false on update" }) });

/** Items are checked by the service, which names a bad one by its index (actors[1].external_id). */
export const ActorBatch = t.Object({
  actors: t.Array(t.Object({ external_id: t.String({ description: `1-${EXTERNAL_ID_MAX} characters; the upsert key` }), ...upsertFields }), { description: "1-200 items" }),
});

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
  actor_id: UuidOut(),
  community_id: UuidOut(),
  follower_count: t.Integer(),
  following_count: t.Integer(),
  post_count: t.Integer({ description: "Published posts" }),
  comment_count: t.Integer({ description: "Published comments" }),
  blocks_count: t.Integer({ description: "Actors this actor blocks" }),
  updated_at: t.String(),
});
export const CountersQuery = t.Object({ actor_ids: t.String({ description: "Comma-separated actor uuids, at most 100, de-duplicated; a malformed id is 400 naming actor_ids" }) });
export const CountersMany = t.Object({ data: t.Array(Counters), missing: t.Array(UuidOut(), { description: "The requested ids no actor has" }) });
