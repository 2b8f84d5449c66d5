/**
 * Webhook events of the community service: the catalogue served by {scope}/webhooks/event-types
 * and used to validate subscriptions. Each example is the `data` object of the envelope
 * (conventions: webhooks/catalogue.ts).
 */
import { defineWebhookProduct, EXAMPLE_T0 as T0, EXAMPLE_T1 as T1 } from "../../kernel/webhooks/catalogue";
import type { EventTypeInfo } from "../../kernel/webhooks/types";

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

const EVENTS: EventTypeInfo[] = [
  { type: "post.created", description: "A post was created, including drafts and scheduled posts (check data.status).", example: post({ status: "scheduled", published_at: null, scheduled_for: "2026-11-06T16:00:00.000Z", reaction_counts: {}, comment_count: 0 }) },
  {
    type: "post.updated",
    description: "A post's body, visibility, attributes or status changed (e.g. a scheduled post was published).",
    example: { ...post({ body: "Our first community meetup is on Friday at 6pm! #meetup", updated_at: T1 }), changed_fields: ["body"] },
  },
  {
    type: "post.deleted",
    description: "A post or repost was soft-deleted (by either delete route).",
    example: { ...post({ status: "deleted", updated_at: T1 }), deleted_at: T1 },
  },
  {
    type: "post.reaction.created",
    description: "An actor reacted to a post.",
    example: { post_id: POST, actor_id: ACTOR2, reaction: "like", reaction_counts: { like: 4 }, created_at: T1 },
  },
  {
    type: "repost.created",
    description: "An actor reposted a post (data.source_post_id is the original).",
    example: { ...post({ id: "0192f2a1-8888-7ccc-8ddd-6c6d7e7f8a8b", actor_id: ACTOR2, kind: "repost", body: null, hashtags: [], reaction_counts: {}, comment_count: 0, created_at: T1, updated_at: T1, published_at: T1 }), source_post_id: POST },
  },
  { type: "comment.created", description: "A comment was created (data.parent_id is null for top-level comments).", example: comment() },
  {
    type: "comment.updated",
    description: "A comment's body, status, visibility or pin changed.",
    example: { ...comment({ body: "Count me in! Bringing snacks.", updated_at: T1 }), changed_fields: ["body"] },
  },
  { type: "comment.deleted", description: "A comment was deleted.", example: { ...comment({ status: "removed", updated_at: T1 }), deleted_at: T1 } },
  {
    type: "comment.reaction.created",
    description: "An actor reacted to a comment.",
    example: { comment_id: COMMENT, post_id: POST, actor_id: ACTOR, reaction: "like", reaction_counts: { like: 1 }, created_at: T1 },
  },
  { type: "edge.follow.created", description: "An actor followed another actor.", example: edge },
  { type: "edge.follow.deleted", description: "An actor unfollowed another actor.", example: { ...edge, deleted_at: T1 } },
  {
    type: "edge.follow.requested",
    description: "An actor asked to follow a private actor; pending until approved.",
    example: { request_id: "0192f2c1-9999-7aaa-8bbb-7e7f8a8b9c9d", src_actor_id: ACTOR2, src_external_id: "user_5521", dst_actor_id: ACTOR, created_at: T0 },
  },
  {
    type: "edge.follow.request_approved",
    description: "A private actor approved a follow request; the follow edge now exists.",
    example: { ...edge, created_at: T1, request_id: "0192f2c1-9999-7aaa-8bbb-7e7f8a8b9c9d", approved_at: T1 },
  },
  { type: "flag.created", description: "Content or an actor was flagged (data.auto_hidden tells whether the target was hidden automatically).", example: flag({ auto_hidden: true }) },
  { type: "flag.updated", description: "A flag's status changed (e.g. resolved or dismissed by a moderator).", example: { ...flag({ status: "resolved", auto_hidden: true, updated_at: T1 }), changed_fields: ["status"] } },
  {
    type: "moderation.action.applied",
    description: "A moderator applied an action: hide, remove, restore, warn, ban or dismiss.",
    example: { id: "0192f2f0-aaaa-7ccc-8ddd-8a8b9c9dadad", community_id: C, action: "remove", target_type: "post", target_id: POST, target_actor_id: ACTOR, moderator_actor_id: null, moderator_external_id: "admin_1", flag_id: "0192f2e0-7777-7eee-8fff-5a5b6c6d7e7f", reason: "Spam", created_at: T1 },
  },
  {
    type: "actor.updated",
    description: "An existing actor was updated or re-upserted.",
    example: { id: ACTOR, community_id: C, external_id: "user_1042", display_name: "Grace H.", avatar_url: "https://cdn.example.com/avatars/1042.png", metadata: { plan: "pro" }, status: "active", is_private: false, created_at: T0, updated_at: T1, changed_fields: ["display_name"] },
  },
  {
    type: "dm.message.created",
    description: "A direct or group message was sent (data.recipient_actor_ids lists the other participants).",
    example: { id: "0192f300-bbbb-7eee-8fff-9c9dadadbebe", conversation_id: "0192f2ff-cccc-7aaa-8bbb-adadbebecfcf", conversation_kind: "direct", community_id: C, sender_actor_id: ACTOR, recipient_actor_ids: [ACTOR2], body: "See you Friday?", assets: [], created_at: T1 },
  },
  {
    type: "tag.created",
    description: "An actor was tagged in a post (data.tagged_actor_id; pending until approved).",
    example: { id: "0192f310-dddd-7ccc-8ddd-bebecfcfd0d0", community_id: C, post_id: POST, tagger_actor_id: ACTOR, tagged_actor_id: ACTOR2, status: "pending", created_at: T1 },
  },
  { type: "asset.ready", description: "An uploaded asset finished processing and is ready to attach.", example: asset() },
  {
    type: "asset.failed",
    description: "An uploaded asset could not be processed (data.failure_reason).",
    example: asset({ status: "failed", renditions: [], width: null, height: null, failure_reason: "unsupported_format" }),
  },
];

export const SOCIAL_WEBHOOKS = defineWebhookProduct({
  product: "social",
  label: "Community",
  legacyHeader: "x-svc-signature",
  // Community envelopes name their community next to id, type and created_at (spec 3).
  envelopeScopeField: "community_id",
  events: EVENTS,
});
