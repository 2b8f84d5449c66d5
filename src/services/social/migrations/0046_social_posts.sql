-- Community service, part 2: posts (text, link, image, quote, story, poll, repost; draft,
-- scheduled, published; soft delete), their hashtags and tags (@mentions), reactions on
-- posts and comments with exact per-type counts, bookmarks, views, poll votes, comments and
-- uploaded assets. Counts kept on rows are changed in the transaction of the write that
-- changes them (UPDATE ... SET n = n + 1), so they are exact under concurrency.

CREATE TABLE social_assets (
  id              TEXT PRIMARY KEY,                 -- UUIDv7
  community_id    TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  owner_actor_id  TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  kind            TEXT NOT NULL DEFAULT 'image',
  status          TEXT NOT NULL CHECK (status IN ('uploading','processing','ready','failed')),
  content_type    TEXT,
  byte_size       BIGINT,
  width           INTEGER,
  height          INTEGER,
  duration_s      INTEGER,
  failure_reason  TEXT,
  renditions      TEXT NOT NULL DEFAULT '[]',       -- JSON [{name, key, content_type, width, height, byte_size}]
  object_key      TEXT,
  lease_until     TEXT,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
);
CREATE INDEX social_assets_owner ON social_assets(owner_actor_id, created_at, id);
CREATE INDEX social_assets_status ON social_assets(status, created_at);

CREATE TABLE social_posts (
  id               TEXT PRIMARY KEY,                -- UUIDv7
  community_id     TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  actor_id         TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  kind             TEXT NOT NULL CHECK (kind IN ('text','link','image','quote','story','poll','repost')),
  status           TEXT NOT NULL CHECK (status IN ('draft','scheduled','published')),
  visibility       TEXT NOT NULL CHECK (visibility IN ('public','followers','close_friends')),
  body             TEXT,
  attributes       TEXT NOT NULL DEFAULT '{}',      -- JSON object (link url, poll, ...)
  assets           TEXT NOT NULL DEFAULT '[]',      -- JSON [{asset_id, alt_text}]
  hashtags         TEXT NOT NULL DEFAULT '[]',      -- JSON array of normalised tags
  mentions         TEXT NOT NULL DEFAULT '[]',      -- JSON array of mentioned actor ids
  quote_post_id    TEXT,
  source_post_id   TEXT,                            -- reposts: the original post
  repost_key       TEXT,                            -- = source_post_id while the repost is live (one live repost per actor and source)
  scheduled_for    TEXT,
  published_at     TEXT,
  expires_at       TEXT,                            -- stories: published_at + 24 h
  moderation       TEXT,                            -- null, 'hidden' or 'removed' (moderators)
  deleted_at       TEXT,
  reaction_count   BIGINT NOT NULL DEFAULT 0,
  comment_count    BIGINT NOT NULL DEFAULT 0,
  repost_count     BIGINT NOT NULL DEFAULT 0,
  view_count       BIGINT NOT NULL DEFAULT 0,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  UNIQUE (actor_id, repost_key)
);
-- Public reads (GET /posts, discover): live, published, public posts of a community, newest first.
CREATE INDEX social_posts_public ON social_posts(community_id, published_at, id)
  WHERE status = 'published' AND visibility = 'public' AND deleted_at IS NULL;
-- Home feed (fan-out on read) and author pages: an author's live published posts, newest first.
CREATE INDEX social_posts_author ON social_posts(actor_id, published_at, id)
  WHERE status = 'published' AND deleted_at IS NULL;
-- The scheduler's due scheduled posts.
CREATE INDEX social_posts_due ON social_posts(scheduled_for) WHERE status = 'scheduled';
CREATE INDEX social_posts_source ON social_posts(source_post_id) WHERE source_post_id IS NOT NULL;

-- Tags of published posts, for hashtag-follow feeds.
CREATE TABLE social_post_hashtags (
  post_id       TEXT NOT NULL REFERENCES social_posts(id) ON DELETE CASCADE,
  community_id  TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  tag           TEXT NOT NULL,
  published_at  TEXT NOT NULL,
  PRIMARY KEY (post_id, tag)
);
CREATE INDEX social_post_hashtags_tag ON social_post_hashtags(community_id, tag, published_at, post_id);

-- An actor tagged (@mentioned) in a post: pending until the tagged actor approves.
CREATE TABLE social_post_tags (
  id               TEXT PRIMARY KEY,
  community_id     TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  post_id          TEXT NOT NULL REFERENCES social_posts(id) ON DELETE CASCADE,
  tagger_actor_id  TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  tagged_actor_id  TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  status           TEXT NOT NULL CHECK (status IN ('pending','approved','declined')),
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  UNIQUE (post_id, tagged_actor_id)
);
CREATE INDEX social_post_tags_tagged ON social_post_tags(tagged_actor_id, created_at, id);

CREATE TABLE social_comments (
  id            TEXT PRIMARY KEY,
  community_id  TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  post_id       TEXT NOT NULL REFERENCES social_posts(id) ON DELETE CASCADE,
  parent_id     TEXT,
  actor_id      TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  body          TEXT NOT NULL,
  depth         INTEGER NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('published','pending_approval','hidden','removed')),
  visibility    TEXT NOT NULL CHECK (visibility IN ('public','author_only')),
  pinned        INTEGER NOT NULL DEFAULT 0,
  pinned_at     TEXT,
  assets        TEXT NOT NULL DEFAULT '[]',
  deleted_at    TEXT,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX social_comments_top ON social_comments(post_id, created_at, id) WHERE parent_id IS NULL;
CREATE INDEX social_comments_replies ON social_comments(parent_id, created_at, id);

-- Reactions on posts and comments: one per actor and type; counts per (target, type).
CREATE TABLE social_reactions (
  target_id     TEXT NOT NULL,                     -- post or comment id
  actor_id      TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  type          TEXT NOT NULL,
  community_id  TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  target_type   TEXT NOT NULL CHECK (target_type IN ('post','comment')),
  created_at    TEXT NOT NULL,
  PRIMARY KEY (target_id, actor_id, type)
);
CREATE INDEX social_reactions_actor ON social_reactions(actor_id);
CREATE TABLE social_reaction_counts (
  target_id     TEXT NOT NULL,
  type          TEXT NOT NULL,
  community_id  TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  n             BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (target_id, type)
);

CREATE TABLE social_bookmarks (
  actor_id      TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  post_id       TEXT NOT NULL REFERENCES social_posts(id) ON DELETE CASCADE,
  community_id  TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  created_at    TEXT NOT NULL,
  PRIMARY KEY (actor_id, post_id)
);
CREATE INDEX social_bookmarks_actor ON social_bookmarks(actor_id, created_at, post_id);

CREATE TABLE social_post_views (
  post_id          TEXT NOT NULL REFERENCES social_posts(id) ON DELETE CASCADE,
  viewer_actor_id  TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  community_id     TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  viewed_at        TEXT NOT NULL,
  PRIMARY KEY (post_id, viewer_actor_id)
);
CREATE INDEX social_post_views_recent ON social_post_views(post_id, viewed_at, viewer_actor_id);

CREATE TABLE social_poll_votes (
  post_id       TEXT NOT NULL REFERENCES social_posts(id) ON DELETE CASCADE,
  actor_id      TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  community_id  TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  option_index  INTEGER NOT NULL,
  voted_at      TEXT NOT NULL,
  PRIMARY KEY (post_id, actor_id)
);

-- In-app notifications, one row per (recipient, type, target) group (Stream's aggregated
-- feeds): activity_count and actor_count grow with each activity, which also makes the
-- group unread and unseen again.
CREATE TABLE social_notifications (
  id              TEXT PRIMARY KEY,
  community_id    TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  actor_id        TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,   -- recipient
  type            TEXT NOT NULL,
  target_type     TEXT NOT NULL,
  target_id       TEXT NOT NULL,
  activity_count  BIGINT NOT NULL DEFAULT 0,
  last_actor_id   TEXT,
  data            TEXT NOT NULL DEFAULT '{}',
  is_read         INTEGER NOT NULL DEFAULT 0,
  is_seen         INTEGER NOT NULL DEFAULT 0,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  UNIQUE (actor_id, type, target_id)
);
CREATE INDEX social_notifications_inbox ON social_notifications(actor_id, updated_at, id);
CREATE TABLE social_notification_actors (
  notification_id  TEXT NOT NULL REFERENCES social_notifications(id) ON DELETE CASCADE,
  actor_id         TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  at               TEXT NOT NULL,
  PRIMARY KEY (notification_id, actor_id)
);
