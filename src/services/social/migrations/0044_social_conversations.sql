-- Community service: direct and group conversations, their participants and messages.
-- A direct conversation has a direct_key (the sorted pair of actor ids) so that creating it
-- twice returns the first one.

CREATE TABLE social_conversations (
  id               TEXT PRIMARY KEY,                 -- UUIDv7
  community_id     TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  kind             TEXT NOT NULL CHECK (kind IN ('direct','group')),
  name             TEXT,
  created_by       TEXT REFERENCES social_actors(id) ON DELETE SET NULL,
  direct_key       TEXT UNIQUE,                      -- "<smaller id>:<larger id>" for direct, else null
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  last_message_at  TEXT
);

CREATE TABLE social_conversation_participants (
  conversation_id  TEXT NOT NULL REFERENCES social_conversations(id) ON DELETE CASCADE,
  actor_id         TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  community_id     TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  role             TEXT NOT NULL DEFAULT 'member',
  muted            INTEGER NOT NULL DEFAULT 0,
  joined_at        TEXT NOT NULL,
  last_read_at     TEXT,
  -- The conversation's activity, copied here so an actor's list is one index range.
  activity_at      TEXT NOT NULL,
  PRIMARY KEY (conversation_id, actor_id)
);
CREATE INDEX social_participants_actor ON social_conversation_participants(actor_id, activity_at, conversation_id);

CREATE TABLE social_messages (
  id               TEXT PRIMARY KEY,                 -- UUIDv7
  conversation_id  TEXT NOT NULL REFERENCES social_conversations(id) ON DELETE CASCADE,
  community_id     TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  sender_actor_id  TEXT REFERENCES social_actors(id) ON DELETE SET NULL,
  body             TEXT NOT NULL,
  assets           TEXT NOT NULL DEFAULT '[]',       -- JSON array
  created_at       TEXT NOT NULL
);
CREATE INDEX social_messages_conversation ON social_messages(conversation_id, created_at, id);
