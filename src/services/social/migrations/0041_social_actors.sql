-- Community service: actors (the customer's end users projected into a community) and their
-- counters. Counters live in their own row per actor, updated in the transaction of the edge
-- (or, in part 2, the post or comment) that changes them, so they never drift.

CREATE TABLE social_actors (
  id                    TEXT PRIMARY KEY,                 -- UUIDv7
  community_id          TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  external_id           TEXT NOT NULL,                    -- the customer's id, 1-256 chars, unique per community
  display_name          TEXT,
  avatar_url            TEXT,
  metadata              TEXT NOT NULL DEFAULT '{}',       -- JSON object
  status                TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active','suspended','deleted')),
  is_private            INTEGER NOT NULL DEFAULT 0,
  shadow_banned_at      TEXT,
  shadow_banned_until   TEXT,
  shadow_banned_reason  TEXT,
  created_at            TEXT NOT NULL,
  updated_at            TEXT NOT NULL,
  UNIQUE (community_id, external_id)
);
-- Newest-first keyset pages of one community.
CREATE INDEX social_actors_community ON social_actors(community_id, created_at, id);

CREATE TABLE social_counters (
  actor_id         TEXT PRIMARY KEY REFERENCES social_actors(id) ON DELETE CASCADE,
  community_id     TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  follower_count   BIGINT NOT NULL DEFAULT 0,
  following_count  BIGINT NOT NULL DEFAULT 0,
  post_count       BIGINT NOT NULL DEFAULT 0,      -- published posts (part 2)
  comment_count    BIGINT NOT NULL DEFAULT 0,      -- published comments (part 2)
  blocks_count     BIGINT NOT NULL DEFAULT 0,      -- actors this actor blocks
  updated_at       TEXT NOT NULL
);
