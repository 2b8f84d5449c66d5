/**
 * Webhook events of the community service: the catalogue served by {scope}/webhooks/event-types
 * and used to validate subscriptions. Each example is the `data` object of the envelope
 * (conventions: webhooks/catalogue.ts).
 */
import { Type, type TSchema } from "@sinclair/typebox";
import { ChangedFields, defineWebhookProduct, type EventData, EXAMPLE_T0 as T0, EXAMPLE_T1 as T1 } from "../../kernel/webhooks";

const C = "0192f200-5a1b-7c3d-8e4f-a1b2c3d4e5f6";
const ACTOR = "0192f201-1111-7aaa-8bbb-0c0d0e0f1a1b";
const ACTOR2 = "0192f201-2222-7aaa-8bbb-0c0d0e0f1a1c";
const POST = "0192f2a0-3333-7ccc-8ddd-1e1f2a2b3c3d";
const COMMENT = "0192f2b0-4444-7eee-8fff-2a2b3c3d4e4f";

const post = (over: Record<string, unknown> = {}) => ({
  id: POST,
  community_id: C,
  actor_id: ACTOR,
  kind: "post",
  status: "published",
  visibility: "public",
  body: "Our first community meetup is on Friday! #meetup",
  hashtags: ["meetup"],
  assets: [],
  reaction_counts: { like: 3 },
  comment_count: 1,
  published_at: T0,
  scheduled_for: null,
  created_at: T0,
  updated_at: T0,
  ...over,
});

const comment = (over: Record<string, unknown> = {}) => ({
  id: COMMENT,
  community_id: C,
  post_id: POST,
  parent_id: null,
  actor_id: ACTOR2,
  body: "Count me in!",
  depth: 0,
  status: "published",
  visibility: "public",
  reaction_counts: {},
  pinned: false,
  pinned_at: null,
  assets: [],
  created_at: T0,
  updated_at: T0,
  ...over,
});

const edge = { id: "0192f2c0-5555-7aaa-8bbb-3c3d4e4f5a5b", community_id: C, kind: "follow", src_actor_id: ACTOR2, dst_actor_id: ACTOR, dst_post_id: null, payload: {}, created_at: T0 };

const asset = (over: Record<string, unknown> = {}) => ({
  id: "0192f2d0-6666-7ccc-8ddd-4e4f5a5b6c6d",
  community_id: C,
  owner_actor_id: ACTOR,
  kind: "image",
  status: "ready",
  content_type: "image/jpeg",
  byte_size: 482113,
  width: 1600,
  height: 1200,
  duration_s: null,
  failure_reason: null,
  renditions: [{ name: "thumb", url: "https://cdn.example.com/social/assets/0192f2d0/thumb.jpg?sig=abc", content_type: "image/jpeg", width: 320, height: 240, byte_size: 18230 }],
  created_at: T0,
  updated_at: T1,
  ...over,
});

const flag = (over: Record<string, unknown> = {}) => ({
  id: "0192f2e0-7777-7eee-8fff-5a5b6c6d7e7f",
  community_id: C,
  reporter_actor_id: ACTOR2,
  target_type: "post",
  target_id: POST,
  reason: "spam",
  note: "Same link posted in five threads.",
  status: "open",
  auto_hidden: false,
  created_at: T0,
  updated_at: T0,
  ...over,
});

const Nullable = <S extends TSchema>(s: S) => Type.Union([s, Type.Null()]);
const Str = Type.String();
const Counts = Type.Record(Str, Type.Unknown(), { description: "{reaction: count}" });
/** The records events carry (flat, as the routes serve them), each event adding its own fields. */
const PostFields = { id: Str, community_id: Str, actor_id: Str, kind: Str, status: Str, visibility: Str, body: Nullable(Str), hashtags: Type.Array(Str), assets: Type.Array(Type.Unknown()), reaction_counts: Counts, comment_count: Type.Integer(), published_at: Nullable(Str), scheduled_for: Nullable(Str), created_at: Str, updated_at: Str };
const CommentFields = { id: Str, community_id: Str, post_id: Str, parent_id: Nullable(Str), actor_id: Str, body: Nullable(Str), depth: Type.Integer(), status: Str, visibility: Str, reaction_counts: Counts, pinned: Type.Boolean(), pinned_at: Type.Unknown(), assets: Type.Array(Type.Unknown()), created_at: Str, updated_at: Str };
const EdgeFields = { id: Str, community_id: Str, kind: Str, src_actor_id: Str, dst_actor_id: Str, dst_post_id: Type.Unknown(), payload: Type.Record(Str, Type.Unknown()), created_at: Str };
const FlagFields = { id: Str, community_id: Str, reporter_actor_id: Nullable(Str), target_type: Str, target_id: Str, reason: Nullable(Str), note: Nullable(Str), status: Str, auto_hidden: Type.Boolean(), created_at: Str, updated_at: Str };
const AssetFields = { id: Str, community_id: Str, owner_actor_id: Str, kind: Str, status: Str, content_type: Nullable(Str), byte_size: Nullable(Type.Number()), width: Nullable(Type.Number()), height: Nullable(Type.Number()), duration_s: Nullable(Type.Number()), failure_reason: Nullable(Str), renditions: Type.Array(Type.Unknown()), created_at: Str, updated_at: Str };

const EVENTS = [
  { type: "post.created",
    data: Type.Object(PostFields), description: "A post was created, including drafts and scheduled posts (check data.status).", example: post({ status: "scheduled", published_at: null, scheduled_for: "2026-11-06T16:00:00.000Z", reaction_counts: {}, comment_count: 0 }) },
  {
    type: "post.updated",
    data: Type.Object({ ...PostFields, changed_fields: ChangedFields }),
    description: "A post's body, visibility, attributes or status changed (e.g. a scheduled post was published).",
    example: { ...post({ body: "Our first community meetup is on Friday at 6pm! #meetup", updated_at: T1 }), changed_fields: ["body"] },
  },
  {
    type: "post.deleted",
    data: Type.Object({ ...PostFields, deleted_at: Str }),
    description: "A post or repost was soft-deleted (by either delete route).",
    example: { ...post({ status: "deleted", updated_at: T1 }), deleted_at: T1 },
  },
  {
    type: "post.reaction.created",
    data: Type.Object({ post_id: Str, actor_id: Str, reaction: Str, reaction_counts: Counts, created_at: Str }),
    description: "An actor reacted to a post.",
    example: { post_id: POST, actor_id: ACTOR2, reaction: "like", reaction_counts: { like: 4 }, created_at: T1 },
  },
  {
    type: "repost.created",
    data: Type.Object({ ...PostFields, source_post_id: Nullable(Str) }),
    description: "An actor reposted a post (data.source_post_id is the original).",
    example: { ...post({ id: "0192f2a1-8888-7ccc-8ddd-6c6d7e7f8a8b", actor_id: ACTOR2, kind: "repost", body: null, hashtags: [], reaction_counts: {}, comment_count: 0, created_at: T1, updated_at: T1, published_at: T1 }), source_post_id: POST },
  },
  { type: "comment.created",
    data: Type.Object(CommentFields), description: "A comment was created (data.parent_id is null for top-level comments).", example: comment() },
  {
    type: "comment.updated",
    data: Type.Object({ ...CommentFields, changed_fields: ChangedFields }),
    description: "A comment's body, status, visibility or pin changed.",
    example: { ...comment({ body: "Count me in! Bringing snacks.", updated_at: T1 }), changed_fields: ["body"] },
  },
  { type: "comment.deleted",
    data: Type.Object({ ...CommentFields, deleted_at: Str }), description: "A comment was deleted.", example: { ...comment({ status: "removed", updated_at: T1 }), deleted_at: T1 } },
  {
    type: "comment.reaction.created",
    data: Type.Object({ comment_id: Str, post_id: Str, actor_id: Str, reaction: Str, reaction_counts: Counts, created_at: Str }),
    description: "An actor reacted to a comment.",
    example: { comment_id: COMMENT, post_id: POST, actor_id: ACTOR, reaction: "like", reaction_counts: { like: 1 }, created_at: T1 },
  },
  { type: "edge.follow.created",
    data: Type.Object(EdgeFields), description: "An actor followed another actor.", example: edge },
  { type: "edge.follow.deleted",
    data: Type.Object({ ...EdgeFields, deleted_at: Str }), description: "An actor unfollowed another actor.", example: { ...edge, deleted_at: T1 } },
  {
    type: "edge.follow.requested",
    data: Type.Object({ request_id: Str, src_actor_id: Str, src_external_id: Str, dst_actor_id: Str, created_at: Str }),
    description: "An actor asked to follow a private actor; pending until approved.",
    example: { request_id: "0192f2c1-9999-7aaa-8bbb-7e7f8a8b9c9d", src_actor_id: ACTOR2, src_external_id: "user_5521", dst_actor_id: ACTOR, created_at: T0 },
  },
  {
    type: "edge.follow.request_approved",
    data: Type.Object({ ...EdgeFields, request_id: Str, approved_at: Str }),
    description: "A private actor approved a follow request; the follow edge now exists.",
    example: { ...edge, created_at: T1, request_id: "0192f2c1-9999-7aaa-8bbb-7e7f8a8b9c9d", approved_at: T1 },
  },
  { type: "flag.created",
    data: Type.Object(FlagFields), description: "Content or an actor was flagged (data.auto_hidden tells whether the target was hidden automatically).", example: flag({ auto_hidden: true }) },
  { type: "flag.updated",
    data: Type.Object({ ...FlagFields, changed_fields: ChangedFields }), description: "A flag's status changed (e.g. resolved or dismissed by a moderator).", example: { ...flag({ status: "resolved", auto_hidden: true, updated_at: T1 }), changed_fields: ["status"] } },
  {
    type: "moderation.action.applied",
    data: Type.Object({ id: Str, community_id: Str, action: Str, target_type: Str, target_id: Str, target_actor_id: Nullable(Str), moderator_actor_id: Type.Unknown(), moderator_external_id: Nullable(Str), flag_id: Nullable(Str), reason: Nullable(Str), created_at: Str }),
    description: "A moderator applied an action: hide, remove, restore, warn, ban or dismiss.",
    example: { id: "0192f2f0-aaaa-7ccc-8ddd-8a8b9c9dadad", community_id: C, action: "remove", target_type: "post", target_id: POST, target_actor_id: ACTOR, moderator_actor_id: null, moderator_external_id: "admin_1", flag_id: "0192f2e0-7777-7eee-8fff-5a5b6c6d7e7f", reason: "Spam", created_at: T1 },
  },
  {
    type: "actor.updated",
    data: Type.Object({ id: Str, community_id: Str, external_id: Str, display_name: Nullable(Str), avatar_url: Nullable(Str), metadata: Type.Record(Str, Type.Unknown()), status: Str, is_private: Type.Boolean(), created_at: Str, updated_at: Str, changed_fields: ChangedFields }),
    description: "An existing actor was updated or re-upserted.",
    example: { id: ACTOR, community_id: C, external_id: "user_1042", display_name: "Grace H.", avatar_url: "https://cdn.example.com/avatars/1042.png", metadata: { plan: "pro" }, status: "active", is_private: false, created_at: T0, updated_at: T1, changed_fields: ["display_name"] },
  },
  {
    type: "dm.message.created",
    data: Type.Object({ id: Str, conversation_id: Str, conversation_kind: Str, community_id: Str, sender_actor_id: Nullable(Str), recipient_actor_ids: Type.Array(Str), body: Nullable(Str), assets: Type.Array(Type.Unknown()), created_at: Str }),
    description: "A direct or group message was sent (data.recipient_actor_ids lists the other participants).",
    example: { id: "0192f300-bbbb-7eee-8fff-9c9dadadbebe", conversation_id: "0192f2ff-cccc-7aaa-8bbb-adadbebecfcf", conversation_kind: "direct", community_id: C, sender_actor_id: ACTOR, recipient_actor_ids: [ACTOR2], body: "See you Friday?", assets: [], created_at: T1 },
  },
  {
    type: "tag.created",
    data: Type.Object({ id: Str, community_id: Str, post_id: Str, tagger_actor_id: Str, tagged_actor_id: Str, status: Str, created_at: Str }),
    description: "An actor was tagged in a post (data.tagged_actor_id; pending until approved).",
    example: { id: "0192f310-dddd-7ccc-8ddd-bebecfcfd0d0", community_id: C, post_id: POST, tagger_actor_id: ACTOR, tagged_actor_id: ACTOR2, status: "pending", created_at: T1 },
  },
  { type: "asset.ready",
    data: Type.Object(AssetFields), description: "An uploaded asset finished processing and is ready to attach.", example: asset() },
  {
    type: "asset.failed",
    data: Type.Object(AssetFields),
    description: "An uploaded asset could not be processed (data.failure_reason).",
    example: asset({ status: "failed", renditions: [], width: null, height: null, failure_reason: "unsupported_format" }),
  },
] as const;

export const SOCIAL_WEBHOOKS = defineWebhookProduct({
  product: "social",
  label: "Community",
  legacyHeader: "x-svc-signature",
  // Community envelopes name their community next to id, type and created_at (spec 3).
  envelopeScopeField: "community_id",
  events: EVENTS,
});

/** Event type -> its data, for typed emits. */
export type SocialEvents = EventData<typeof SOCIAL_WEBHOOKS>;
