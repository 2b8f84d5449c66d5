/** TypeBox models shared by the customer-backend lane's parts. */
import { t } from "../../../core/schema";
import { ErrorBody, JsonObject, Pagination } from "../../../access/schemas";

export { ErrorBody, Pagination };

export const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
export const writeErrors = { ...errors, 409: ErrorBody };

export const CommunityParams = t.Object({ community_id: t.String() });
export const ActorParams = t.Object({ community_id: t.String(), actor_id: t.String() });
export const PairParams = t.Object({ community_id: t.String(), src_actor_id: t.String(), dst_actor_id: t.String() });

export const PageQuery = t.Object({
  limit: t.Optional(t.String({ description: "1-200, default 50" })),
  cursor: t.Optional(t.String({ description: "next_cursor of the previous page (opaque base64url); legacy raw-id cursors are 400 INVALID_CURSOR" })),
});

export const Payload = JsonObject({ description: "Free-form JSON object (up to 16 KiB)" });

export const ItemError = t.Nullable(
  t.Object({ status: t.Integer({ description: "HTTP status the item would have had alone" }), code: t.String(), message: t.String() }),
);

export const Actor = t.Object({
  id: t.String({ description: "uuid" }),
  community_id: t.String(),
  external_id: t.String({ description: "The customer's id, unique per community, up to 256 characters" }),
  display_name: t.Nullable(t.String()),
  avatar_url: t.Nullable(t.String()),
  metadata: JsonObject(),
  status: t.String({ description: "active | suspended | deleted" }),
  is_private: t.Boolean({ description: "Follows need an approved request" }),
  shadow_banned_at: t.Nullable(t.String()),
  shadow_banned_until: t.Nullable(t.String()),
  shadow_banned_reason: t.Nullable(t.String()),
  created_at: t.String(),
  updated_at: t.String(),
});

export const Edge = t.Object({
  id: t.String(),
  community_id: t.String(),
  kind: t.String({ description: "follow | mute | block | restrict" }),
  src_actor_id: t.String(),
  dst_actor_id: t.String(),
  dst_post_id: t.Nullable(t.String({ description: "null for actor edges" })),
  payload: JsonObject(),
  created_at: t.String(),
});
