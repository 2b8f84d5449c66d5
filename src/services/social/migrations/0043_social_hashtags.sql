-- Community service: the hashtag directory (tags are written by posts, part 2) and hashtag
-- follows. tag is normalised by the application: lowercase, no leading #, 1-64 Unicode
-- letters, digits and underscores.

CREATE TABLE social_hashtags (
  community_id   TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  tag            TEXT NOT NULL,
  first_used_at  TEXT NOT NULL,
  post_count     BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (community_id, tag)
);

CREATE TABLE social_hashtag_follows (
  community_id  TEXT NOT NULL REFERENCES social_communities(id) ON DELETE CASCADE,
  actor_id      TEXT NOT NULL REFERENCES social_actors(id) ON DELETE CASCADE,
  tag           TEXT NOT NULL,
  followed_at   TEXT NOT NULL,
  PRIMARY KEY (actor_id, tag),
  FOREIGN KEY (community_id, tag) REFERENCES social_hashtags(community_id, tag) ON DELETE CASCADE
);
CREATE INDEX social_hashtag_follows_actor ON social_hashtag_follows(actor_id, followed_at, tag);
