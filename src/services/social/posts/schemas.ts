/** TypeBox models of posts and tags. */
import { t } from "../../../core/schema";
import { JsonObject } from "../../../access/schemas";
import { AssetRef, Uuid, UuidOut } from "../core/schemas";


export const Post = t.Object({
  id: UuidOut(),
  community_id: UuidOut(),
  actor_id: UuidOut("Author"),
  kind: t.String({ description: "text | link | image | quote | story | poll | repost" }),
  status: t.String({ description: "draft | scheduled | published" }),
  visibility: t.String({ description: "public | followers | close_friends, as written" }),
  effective_visibility: t.String({ description: "What applies: a private author's public posts count as followers" }),
  body: t.Nullable(t.String()),
  attributes: JsonObject({ description: "Free-form; url for link posts, poll {question, options, closes_at} for polls" }),
  assets: t.Array(t.Object({ asset_id: UuidOut(), alt_text: t.Nullable(t.String()) })),
  hashtags: t.Array(t.String(), { description: "Normalised tags parsed from body" }),
  mentions: t.Array(UuidOut(), { description: "Ids of the actors @mentioned in body (written by external_id)" }),
  quote_post_id: t.Nullable(UuidOut()),
  source_post_id: t.Nullable(UuidOut("Reposts: the original post")),
  reaction_counts: t.Record(t.String(), t.Integer(), { description: "Reaction type -> count (types with a count only)" }),
  reaction_count: t.Integer(),
  comment_count: t.Integer({ description: "Published, live comments" }),
  repost_count: t.Integer(),
  view_count: t.Integer(),
  scheduled_for: t.Nullable(t.String()),
  published_at: t.Nullable(t.String()),
  expires_at: t.Nullable(t.String({ description: "Stories: 24 h after publication" })),
  moderation: t.Nullable(t.String({ description: "null, hidden or removed" })),
  deleted_at: t.Nullable(t.String()),
  created_at: t.String(),
  updated_at: t.String(),
});

export const PostCreate = t.Object({
  actor_id: Uuid("Author; must be active"),
  kind: t.Optional(t.String({ description: "text (default) | link | image | quote | story | poll" })),
  body: t.Optional(t.Nullable(t.String({ description: "Up to 10000 characters after trim; required for text" }))),
  status: t.Optional(t.String({ description: "published (default) | draft | scheduled" })),
  scheduled_for: t.Optional(t.Nullable(t.String({ description: "Required for scheduled: a future ISO 8601 time" }))),
  visibility: t.Optional(t.String({ description: "public (default) | followers | close_friends" })),
  attributes: t.Optional(t.Unknown({ description: "Object: url (link, required), poll {question 1-300, options 2-10 labels of 1-100, closes_at?} (poll, required)" })),
  assets: t.Optional(t.Array(AssetRef, { description: "Up to 20; image posts need at least one" })),
  quote_post_id: t.Optional(t.Nullable(Uuid("Required for quote: a post the author can see"))),
});

export const PostPatch = t.Object({
  body: t.Optional(t.Nullable(t.String())),
  status: t.Optional(t.String({ description: "draft -> scheduled | published; scheduled -> draft | published" })),
  scheduled_for: t.Optional(t.Nullable(t.String())),
  visibility: t.Optional(t.String()),
  attributes: t.Optional(t.Unknown()),
  assets: t.Optional(t.Array(AssetRef)),
});

export const Tag = t.Object({
  id: UuidOut(),
  community_id: UuidOut(),
  post_id: UuidOut(),
  tagger_actor_id: UuidOut(),
  tagged_actor_id: UuidOut(),
  status: t.String({ description: "pending | approved | declined" }),
  created_at: t.String(),
  updated_at: t.String(),
});
