-- The feed page cache (feeds/page-cache.ts) keeps a discover page until the soonest end of a
-- shadow ban in its community, when that author's posts come back: this index makes that
-- lookup one probe instead of a pass over the community's actors.
CREATE INDEX social_actors_ban_end ON social_actors(community_id, shadow_banned_until) WHERE shadow_banned_until IS NOT NULL;
