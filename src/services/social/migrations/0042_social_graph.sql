-- Community service: the actor graph. One edge table for the four actor-edge kinds (follow,
-- mute, block, restrict; src acts on dst), pending follow requests to private actors, and
-- close-friends lists. Every row goes with its community and with either actor.

CREATE TABLE social_edges (
  id            TEXT PRIMARY KEY,                 -- UUIDv7
  community_id  TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  kind          TEXT NOT NULL CHECK (kind IN ('follow','mute','block','restrict')),
  src_actor_id  TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  dst_actor_id  TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  dst_post_id   TEXT,                             -- null for actor edges
  payload       TEXT NOT NULL DEFAULT '{}',       -- JSON object
  created_at    TEXT NOT NULL,
  UNIQUE (src_actor_id, kind, dst_actor_id)
);
-- Outgoing pages (following, mutes, blocks, restricts) ride the unique index's prefix plus
-- this one for the order; incoming pages (followers) use the dst index.
CREATE INDEX social_edges_src ON social_edges(src_actor_id, kind, created_at, id);
CREATE INDEX social_edges_dst ON social_edges(dst_actor_id, kind, created_at, id);

CREATE TABLE social_follow_requests (
  id            TEXT PRIMARY KEY,                 -- request_id
  community_id  TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  src_actor_id  TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  dst_actor_id  TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  payload       TEXT NOT NULL DEFAULT '{}',
  created_at    TEXT NOT NULL,
  UNIQUE (dst_actor_id, src_actor_id)
);
CREATE INDEX social_follow_requests_dst ON social_follow_requests(dst_actor_id, created_at, id);
CREATE INDEX social_follow_requests_src ON social_follow_requests(src_actor_id);

CREATE TABLE social_close_friends (
  community_id     TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  owner_actor_id   TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  member_actor_id  TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  created_at       TEXT NOT NULL,
  PRIMARY KEY (owner_actor_id, member_actor_id)
);
CREATE INDEX social_close_friends_owner ON social_close_friends(owner_actor_id, created_at, member_actor_id);
CREATE INDEX social_close_friends_member ON social_close_friends(member_actor_id);
