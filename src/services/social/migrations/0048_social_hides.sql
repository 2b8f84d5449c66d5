-- Community service, part 2: hides (an actor hides a post from its own home and discover
-- feeds). Kept as edges of kind hide with dst_post_id, in a table of their own (the actor-edge
-- table's kinds are the four actor-to-actor ones).

CREATE TABLE social_hides (
  id            TEXT PRIMARY KEY,
  community_id  TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  src_actor_id  TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  dst_actor_id  TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,   -- the post's author
  dst_post_id   TEXT NOT NULL REFERENCES social_posts(id) ON DELETE CASCADE,
  payload       TEXT NOT NULL DEFAULT '{}',
  created_at    TEXT NOT NULL,
  UNIQUE (src_actor_id, dst_post_id)
);
CREATE INDEX social_hides_src ON social_hides(src_actor_id, created_at, id);
