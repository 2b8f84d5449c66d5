/** TypeBox models shared by the customer-backend lane's parts. */
import type { TString } from "@sinclair/typebox";
import { t } from "../../../core/schema";
import { ErrorBody, JsonObject, Pagination } from "../../../access/schemas";
import { invalidField } from "../../../core/errors";
import { isUuid } from "../../../core/ids";
import { UUID_PATTERN, Uuid } from "../../../access/schemas";
export { UUID_PATTERN, Uuid };

export { ErrorBody, Pagination };

export const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
export const writeErrors = { ...errors, 409: ErrorBody };

// Every id the community API issued (communities, workspaces, actors, posts, comments, assets,
// conversations, flags, keywords, notifications) is a UUID, taken in a path, a query or a body
// as `Uuid` (access/schemas.ts): malformed is 400 naming the field before any lookup.

/**
 * A UUID the API wrote itself, in a response: format uuid tells a generated client what it
 * holds (no pattern: these come from the database, not from a caller).
 */
export const UuidOut = (description?: string) => t.String({ format: "uuid", ...(description === undefined ? {} : { description }) });

/**
 * One of a fixed set of strings (a reaction type, a rendition name), documented as an enum:
 * anything else is 400 VALIDATION_ERROR naming the field; no default (core/schema.ts).
 */
export function OneOf<const T extends readonly [string, ...string[]]>(values: T, description: string) {
  return t.UnionEnum(values, { description });
}

/** The same rule where no schema sees the value (a multipart field, a scope resolved for shared routes): the id lowercased, or 400 naming `field`. */
export function checkUuid(v: unknown, field: string): string {
  if (typeof v !== "string") throw invalidField(field, "required: a UUID");
  if (!isUuid(v)) throw invalidField(field, "must be a UUID");
  return v.toLowerCase();
}

/** Path parameters of the customer-backend lane: community_id and the named ids, all UUIDs. */
export function laneParams<K extends string>(...ids: K[]) {
  const props = { community_id: Uuid(), ...Object.fromEntries(ids.map((k) => [k, Uuid()])) } as { community_id: TString } & Record<K, TString>;
  return t.Object(props);
}

export const CommunityParams = laneParams();
export const ActorParams = laneParams("actor_id");
export const PairParams = laneParams("src_actor_id", "dst_actor_id");
export const PostParams = laneParams("post_id");
export const CommentParams = laneParams("post_id", "comment_id");

/** An attachment of a post, comment or message: a ready asset of the community owned by the author. */
export const AssetRef = t.Object({ asset_id: Uuid("A ready asset of the community owned by the author"), alt_text: t.Optional(t.Nullable(t.String({ description: "Up to 1000 characters" }))) });

export const PageQuery = t.Object({
  limit: t.Optional(t.QueryInteger({ description: "1-200, default 50" })),
  cursor: t.Optional(t.String({ description: "next_cursor of the previous page (opaque base64url); legacy raw-id cursors are 400 INVALID_CURSOR" })),
});

export const Payload = JsonObject({ description: "Free-form JSON object (up to 16 KiB)" });

export const ItemError = t.Nullable(
  t.Object({ status: t.Integer({ description: "HTTP status the item would have had alone" }), code: t.String(), message: t.String() }),
);

export const Actor = t.Object({
  id: UuidOut(),
  community_id: UuidOut(),
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
  id: UuidOut(),
  community_id: UuidOut(),
  kind: t.String({ description: "follow | mute | block | restrict" }),
  src_actor_id: UuidOut(),
  dst_actor_id: UuidOut(),
  dst_post_id: t.Nullable(UuidOut("null for actor edges")),
  payload: JsonObject(),
  created_at: t.String(),
});
