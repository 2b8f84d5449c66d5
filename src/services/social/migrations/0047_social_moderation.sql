-- Community service, part 2: flags (reports) on posts, comments and actors, the moderation
-- actions taken on them, and per-community keyword filters (block or hold for review).

CREATE TABLE social_flags (
  id                 TEXT PRIMARY KEY,
  community_id       TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  reporter_actor_id  TEXT REFERENCES social_actors(id) ON DELETE CASCADE,   -- null: raised by a keyword filter
  target_type        TEXT NOT NULL CHECK (target_type IN ('post','comment','actor')),
  target_id          TEXT NOT NULL,
  target_actor_id    TEXT REFERENCES social_actors(id) ON DELETE CASCADE,   -- the author (or the actor flagged)
  reason             TEXT NOT NULL,
  note               TEXT,
  status             TEXT NOT NULL CHECK (status IN ('open','resolved','dismissed')),
  auto_hidden        INTEGER NOT NULL DEFAULT 0,
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL
);
-- One open flag per reporter and target (a repeat answers the open one).
CREATE UNIQUE INDEX social_flags_open_once ON social_flags(reporter_actor_id, target_type, target_id) WHERE status = 'open';
CREATE INDEX social_flags_target ON social_flags(target_type, target_id, status);
CREATE INDEX social_flags_queue ON social_flags(community_id, status, created_at, id);

CREATE TABLE social_moderation_actions (
  id                     TEXT PRIMARY KEY,
  community_id           TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  action                 TEXT NOT NULL CHECK (action IN ('hide','remove','restore','warn','ban','dismiss')),
  target_type            TEXT NOT NULL CHECK (target_type IN ('post','comment','actor')),
  target_id              TEXT NOT NULL,
  target_actor_id        TEXT,
  flag_id                TEXT,
  moderator_external_id  TEXT,
  reason                 TEXT,
  data                   TEXT NOT NULL DEFAULT '{}',
  created_at             TEXT NOT NULL
);
CREATE INDEX social_moderation_actions_target ON social_moderation_actions(target_type, target_id, created_at);
CREATE INDEX social_moderation_actions_community ON social_moderation_actions(community_id, created_at, id);

CREATE TABLE social_keyword_filters (
  id            TEXT PRIMARY KEY,
  community_id  TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  keyword       TEXT NOT NULL,                       -- lowercase, matched as a whole word or phrase
  action        TEXT NOT NULL CHECK (action IN ('block','hold')),
  created_at    TEXT NOT NULL,
  UNIQUE (community_id, keyword)
);
