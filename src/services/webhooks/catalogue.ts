/**
 * Per-product webhook event-type catalogue, served by GET {scope}/webhooks/event-types and
 * used to validate endpoint subscriptions. An instance lives in the app context (no
 * module-level state); registerBuiltinEventTypes fills it with every product's types.
 *
 * `ping` is deliberately absent: it is sent only by the test operation and is not
 * subscribable.
 */
import { PRODUCTS, type EventTypeInfo, type Product } from "./types";

/** Event type names: dot-separated lowercase segments, at least two (e.g. entry.created). */
const TYPE_RE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
/** Sent by the test operation only; never part of a catalogue. */
export const RESERVED_EVENT_TYPES: readonly string[] = ["ping"];

function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v as object)) deepFreeze(x);
  }
  return v;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export class EventCatalogue {
  private readonly byProduct = new Map<Product, Map<string, EventTypeInfo>>();

  /** Adds event types to a product, in order. Throws on a duplicate, reserved or malformed type (nothing is added then). */
  register(product: Product, types: EventTypeInfo[]): void {
    if (!(product in PRODUCTS)) throw new Error(`unknown product: ${product}`);
    const existing = this.byProduct.get(product) ?? new Map<string, EventTypeInfo>();
    const seen = new Set<string>();
    for (const t of types) {
      if (!TYPE_RE.test(t.type)) throw new Error(`malformed event type: ${JSON.stringify(t.type)}`);
      if (RESERVED_EVENT_TYPES.includes(t.type)) throw new Error(`reserved event type: ${t.type}`);
      if (existing.has(t.type) || seen.has(t.type)) throw new Error(`duplicate event type for ${product}: ${t.type}`);
      if (!t.description?.trim()) throw new Error(`event type ${t.type} needs a description`);
      if (!isPlainObject(t.example)) throw new Error(`event type ${t.type} needs an example object`);
      seen.add(t.type);
    }
    for (const t of types) {
      existing.set(t.type, deepFreeze({ type: t.type, description: t.description, example: structuredClone(t.example) }));
    }
    this.byProduct.set(product, existing);
  }

  /** Entries in registration order (frozen; safe to serialise directly). */
  list(product: Product): EventTypeInfo[] {
    return [...(this.byProduct.get(product)?.values() ?? [])];
  }

  has(product: Product, type: string): boolean {
    return this.byProduct.get(product)?.has(type) ?? false;
  }

  get(product: Product, type: string): EventTypeInfo | undefined {
    return this.byProduct.get(product)?.get(type);
  }

  types(product: Product): string[] {
    return [...(this.byProduct.get(product)?.keys() ?? [])];
  }

  /** Types of `requested` not in the product's catalogue (for 400s that name the valid set). */
  unknownTypes(product: Product, requested: readonly string[]): string[] {
    return requested.filter((t) => !this.has(product, t));
  }
}

// ---------------------------------------------------------------------------------------
// Built-in catalogues. Each example is the `data` object of the envelope
// {id, type, created_at, data} (community envelopes also carry community_id).
// Convention (from the community spec, which names data.status, data.parent_id,
// data.auto_hidden, ...): `data` is the affected record itself, flat, plus a few
// event-specific fields (changes / changed_fields on updates, deleted_at on deletes,
// source_post_id, recipient_actor_ids, ...). Delete events carry the record's id.
// ---------------------------------------------------------------------------------------

const T0 = "2026-11-02T09:14:05.000Z";
const T1 = "2026-11-02T09:20:41.000Z";

// --- waitlist --------------------------------------------------------------------------
const entry = (over: Record<string, unknown> = {}) => ({
  id: "0192f3a1-7c2e-7a10-9b1e-3f5d2c8a4e61",
  waitlist_id: "0192f39e-1b44-7c3d-8e02-6a9b1d7f0c25",
  workspace_id: "ws_0192f0c4e5b87d21a9c3",
  email: "ada@example.com",
  name: "Ada Lovelace",
  interest: "Team plan",
  referrer: "https://news.example.org/launch",
  referral_code: "ADA7K2",
  referral_count: 2,
  referred_by_entry_id: null,
  position: 42,
  status: "pending",
  invited_at: null,
  invited_to_app_slug: null,
  metadata: { utm_source: "newsletter" },
  created_at: T0,
  updated_at: T0,
  ...over,
});

const WAITLIST: EventTypeInfo[] = [
  { type: "entry.created", description: "Someone joined a waitlist (status pending).", example: entry() },
  {
    type: "entry.updated",
    description: "A waitlist entry's fields, position or referral count changed.",
    example: { ...entry({ position: 17, referral_count: 3, updated_at: T1 }), changes: { position: { from: 42, to: 17 }, referral_count: { from: 2, to: 3 } } },
  },
  { type: "entry.approved", description: "A waitlist entry was approved.", example: entry({ status: "approved", updated_at: T1 }) },
  {
    type: "entry.rejected",
    description: "A waitlist entry was rejected.",
    example: entry({ status: "rejected", updated_at: T1 }),
  },
  {
    type: "entry.invited",
    description: "An approved entry was sent an invitation to an Auth app.",
    example: entry({ status: "approved", invited_at: T1, invited_to_app_slug: "acme-app", updated_at: T1 }),
  },
  {
    type: "entry.deleted",
    description: "A waitlist entry was deleted.",
    example: { id: "0192f3a1-7c2e-7a10-9b1e-3f5d2c8a4e61", waitlist_id: "0192f39e-1b44-7c3d-8e02-6a9b1d7f0c25", email: "ada@example.com", deleted_at: T1 },
  },
];

// --- tack (card board) -----------------------------------------------------------------
const card = (over: Record<string, unknown> = {}) => ({
  id: "card_0192f3b27d1e7f0a8c44",
  project_id: "proj_0192f3a9c0de7b11a2f7",
  list_id: "list_0192f3aa11c47e5d93b0",
  title: "Ship the billing page",
  body: "Stripe checkout plus **invoices** list.",
  priority: "high",
  position: 0,
  assignees: ["usr_0192f0c5a1b2"],
  labels: ["frontend"],
  due_at: "2026-11-15T17:00:00.000Z",
  completed_at: null,
  metadata: {},
  created_at: T0,
  updated_at: T0,
  ...over,
});

const TACK: EventTypeInfo[] = [
  { type: "card.created", description: "A card was created on a list.", example: { ...card(), actor_id: "usr_0192f0c5a1b2" } },
  {
    type: "card.updated",
    description: "A card's title, body, priority, assignees, labels, due date or metadata changed.",
    example: { ...card({ title: "Ship the billing page (v2)", updated_at: T1 }), changes: { title: { from: "Ship the billing page", to: "Ship the billing page (v2)" } }, actor_id: "usr_0192f0c5a1b2" },
  },
  {
    type: "card.moved",
    description: "A card moved to another list or position.",
    example: {
      ...card({ list_id: "list_0192f3aa5e9f7c028d61", position: 3, updated_at: T1 }),
      changes: { list_id: { from: "list_0192f3aa11c47e5d93b0", to: "list_0192f3aa5e9f7c028d61" }, position: { from: 0, to: 3 } },
      actor_id: "usr_0192f0c5a1b2",
    },
  },
  { type: "card.completed", description: "A card was marked complete (completed_at set).", example: { ...card({ completed_at: T1, updated_at: T1 }), actor_id: "usr_0192f0c5a1b2" } },
  { type: "card.deleted", description: "A card was deleted.", example: { id: "card_0192f3b27d1e7f0a8c44", project_id: "proj_0192f3a9c0de7b11a2f7", list_id: "list_0192f3aa11c47e5d93b0", actor_id: "usr_0192f0c5a1b2", deleted_at: T1 } },
  {
    type: "comment.created",
    description: "A comment was added to a card.",
    example: { id: "cmt_0192f3c0a4d97e21b6f3", card_id: "card_0192f3b27d1e7f0a8c44", project_id: "proj_0192f3a9c0de7b11a2f7", author_id: "usr_0192f0c5a1b2", body: "Blocked on the tax API key.", created_at: T1 },
  },
];

// --- social (community) ----------------------------------------------------------------
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

const SOCIAL: EventTypeInfo[] = [
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

// --- mail ------------------------------------------------------------------------------
const message = (over: Record<string, unknown> = {}) => ({
  id: "0192f400-1a2b-7c3d-8e4f-5a6b7c8d9e0f",
  workspace_id: "ws_0192f0c4e5b87d21a9c3",
  domain_id: "0192f3ff-0a1b-7c2d-8e3f-4a5b6c7d8e9f",
  from_address: "hello@mail.acme.example",
  to_address: "ada@example.com",
  subject: "Welcome to Acme",
  template_name: "welcome",
  status: "queued",
  bounce_code: null,
  bounce_detail: null,
  created_at: T0,
  sent_at: null,
  delivered_at: null,
  deferred_at: null,
  deferral_count: 0,
  ...over,
});

const domain = (over: Record<string, unknown> = {}) => ({
  id: "0192f3ff-0a1b-7c2d-8e3f-4a5b6c7d8e9f",
  workspace_id: "ws_0192f0c4e5b87d21a9c3",
  fqdn: "mail.acme.example",
  intent: "send",
  status: "active",
  verified_at: T1,
  last_dns_check_at: T1,
  ...over,
});

const MAIL: EventTypeInfo[] = [
  { type: "message.queued", description: "An outbound message was accepted and queued.", example: message() },
  { type: "message.sent", description: "An outbound message left the relay (not proof of delivery).", example: message({ status: "sent", sent_at: T1 }) },
  {
    type: "message.delivered",
    description: "Recipient-side evidence shows the message was delivered.",
    example: message({ status: "delivered", sent_at: T0, delivered_at: T1 }),
  },
  {
    type: "message.deferred",
    description: "Delivery was temporarily deferred; it will be retried.",
    example: message({ status: "deferred", deferred_at: T1, deferral_count: 1, bounce_code: "4.7.1", bounce_detail: "451 4.7.1 Greylisted, try again later" }),
  },
  {
    type: "message.bounced",
    description: "The message bounced permanently; the address is suppressed.",
    example: { ...message({ status: "bounced", sent_at: T0, bounce_code: "5.1.1", bounce_detail: "550 5.1.1 User unknown" }), bounce_type: "hard" },
  },
  {
    type: "message.complained",
    description: "The recipient reported the message as spam (feedback loop); the address is suppressed.",
    example: { ...message({ status: "complained", sent_at: T0 }), feedback_type: "abuse", complained_at: T1 },
  },
  {
    type: "message.failed",
    description: "The message could not be sent (e.g. retries exhausted or rejected before sending).",
    example: { ...message({ status: "failed" }), error: "retries exhausted: connection timed out" },
  },
  {
    type: "message.received",
    description: "An inbound message arrived in a mailbox.",
    example: {
      id: "0192f410-2b3c-7d4e-8f5a-6b7c8d9e0f1a",
      mailbox_id: "0192f3fe-9a8b-7c6d-8e5f-4a3b2c1d0e9f",
      seq_id: "118",
      envelope_to: "support@mail.acme.example",
      from_address: "ada@example.com",
      to_addresses: ["support@mail.acme.example"],
      cc_addresses: [],
      subject: "Question about my invoice",
      rfc822_message_id: "<CAF1x9@mail.example.com>",
      size_bytes: 5821,
      spam_verdict: "ham",
      spf_result: "pass",
      dkim_result: "pass",
      dmarc_result: "pass",
      quarantined: false,
      received_at: T1,
    },
  },
  { type: "domain.verified", description: "A sending/receiving domain passed its DNS checks and is active.", example: domain() },
  {
    type: "domain.failed",
    description: "A domain failed its DNS checks.",
    example: { ...domain({ status: "failed", verified_at: null }), failed_checks: [{ purpose: "dkim", type: "TXT", host: "bk1._domainkey.mail.acme.example", reason: "record not found" }] },
  },
];

// --- trawl (extraction jobs) -----------------------------------------------------------
const job = (over: Record<string, unknown> = {}) => ({
  id: "job_0192f500a1b27c3d8e4f",
  workspace_id: "ws_0192f0c4e5b87d21a9c3",
  status: "queued",
  description: "Extract pricing tiers",
  suggested_urls: ["https://acme.example/pricing"],
  model_tier: "standard",
  attempts: 0,
  result: null,
  error: null,
  enqueued_at: T0,
  started_at: null,
  completed_at: null,
  created_at: T0,
  ...over,
});

const TRAWL: EventTypeInfo[] = [
  { type: "job.queued", description: "An extraction job was created and queued.", example: job() },
  { type: "job.running", description: "A worker started (or retried) an extraction job.", example: job({ status: "running", attempts: 1, started_at: T0 }) },
  {
    type: "job.succeeded",
    description: "An extraction job finished with a result matching its schema.",
    example: job({ status: "succeeded", attempts: 1, started_at: T0, completed_at: T1, result: { tiers: [{ name: "Starter", price_usd: 19 }, { name: "Pro", price_usd: 49 }] } }),
  },
  {
    type: "job.failed",
    description: "An extraction job failed (timeout, step limit or error).",
    example: job({ status: "failed", attempts: 3, started_at: T0, completed_at: T1, error: "timeout after 120s" }),
  },
  { type: "job.cancelled", description: "An extraction job was cancelled before it finished.", example: job({ status: "cancelled", completed_at: T1 }) },
];

// --- auth ------------------------------------------------------------------------------
const APP = "app_0192f600b1c2";
const user = (over: Record<string, unknown> = {}) => ({
  id: "usr_0192f601c3d4",
  app_id: APP,
  email: "ada@example.com",
  email_verified: false,
  name: "Ada Lovelace",
  created_at: T0,
  updated_at: T0,
  ...over,
});
const tenant = (over: Record<string, unknown> = {}) => ({
  id: "tnt_0192f602d5e6",
  app_id: APP,
  name: "Acme Inc",
  slug: "acme",
  status: "active",
  created_at: T0,
  updated_at: T0,
  ...over,
});

const AUTH: EventTypeInfo[] = [
  { type: "user.created", description: "A user signed up (or was created by an admin or invitation).", example: { ...user(), signup_method: "password" } },
  {
    type: "user.signed_in",
    description: "A user signed in.",
    example: { user_id: "usr_0192f601c3d4", method: "password", mfa: false, session_id: "ses_0192f6a0e7f8", ip: "203.0.113.7", user_agent: "Mozilla/5.0", signed_in_at: T1 },
  },
  { type: "user.email_verified", description: "A user verified their email address.", example: user({ email_verified: true, updated_at: T1 }) },
  { type: "user.updated", description: "A user's profile or email changed.", example: { ...user({ name: "Ada King", updated_at: T1 }), changed_fields: ["name"] } },
  { type: "user.deleted", description: "A user was deleted.", example: { id: "usr_0192f601c3d4", app_id: APP, email: "ada@example.com", deleted_at: T1 } },
  { type: "role.assigned", description: "A role was assigned to a user (app-wide or within a tenant).", example: { user_id: "usr_0192f601c3d4", role: "admin", tenant_id: "tnt_0192f602d5e6", assigned_at: T1 } },
  { type: "role.removed", description: "A role was removed from a user.", example: { user_id: "usr_0192f601c3d4", role: "admin", tenant_id: "tnt_0192f602d5e6", removed_at: T1 } },
  { type: "tenant.created", description: "A tenant (organization) was created.", example: tenant() },
  { type: "tenant.updated", description: "A tenant's name, slug or status changed.", example: { ...tenant({ status: "suspended", updated_at: T1 }), changed_fields: ["status"] } },
  { type: "tenant.deleted", description: "A tenant was deleted.", example: { id: "tnt_0192f602d5e6", app_id: APP, slug: "acme", deleted_at: T1 } },
  { type: "tenant.member.added", description: "A user joined a tenant.", example: { tenant_id: "tnt_0192f602d5e6", user_id: "usr_0192f601c3d4", roles: ["member"], added_at: T1 } },
  { type: "tenant.member.removed", description: "A user was removed from a tenant.", example: { tenant_id: "tnt_0192f602d5e6", user_id: "usr_0192f601c3d4", removed_at: T1 } },
];

/** Built-in event types per product (deep-frozen; register copies them). */
export const BUILTIN_EVENT_TYPES: Readonly<Record<Product, readonly EventTypeInfo[]>> = deepFreeze({
  waitlist: WAITLIST,
  tack: TACK,
  social: SOCIAL,
  mail: MAIL,
  trawl: TRAWL,
  auth: AUTH,
});

/** Registers every product's built-in event types (call once per catalogue). */
export function registerBuiltinEventTypes(c: EventCatalogue): void {
  for (const product of Object.keys(BUILTIN_EVENT_TYPES) as Product[]) c.register(product, [...BUILTIN_EVENT_TYPES[product]]);
}
