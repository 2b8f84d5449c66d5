/**
 * Before an actor is hard-deleted (its posts, comments, reactions, reposts and votes go with
 * it through foreign keys), the counts kept on other rows are corrected in the same
 * transaction so they stay exact: reaction counts and reaction_count of what it reacted to,
 * comment_count of others' posts it commented on and of the actors who commented on its
 * posts, repost_count of what it reposted, the hashtag directory's post_count; others'
 * reposts of its posts are soft-deleted, and reactions on its content are dropped.
 */
import type { Sql } from "../../../core/db";
import { feedsChanged } from "../core/feed-changes";

export async function detachContent(t: Sql, actorId: string, now: string): Promise<void> {
  const a = actorId;
  // Its reactions.
  await t.run(
    `UPDATE social_posts SET reaction_count = reaction_count - (SELECT COUNT(*) FROM social_reactions r WHERE r.actor_id = ? AND r.target_id = social_posts.id)
     WHERE id IN (SELECT target_id FROM social_reactions WHERE actor_id = ? AND target_type = 'post') AND actor_id <> ?`,
    a, a, a,
  );
  await t.run(
    `UPDATE social_reaction_counts SET n = n - 1
     WHERE EXISTS (SELECT 1 FROM social_reactions r WHERE r.actor_id = ? AND r.target_id = social_reaction_counts.target_id AND r.type = social_reaction_counts.type)`,
    a,
  );
  // Its published comments on others' posts.
  await t.run(
    `UPDATE social_posts SET comment_count = comment_count - (SELECT COUNT(*) FROM social_comments c WHERE c.post_id = social_posts.id AND c.actor_id = ? AND c.status = 'published' AND c.deleted_at IS NULL)
     WHERE id IN (SELECT post_id FROM social_comments WHERE actor_id = ?) AND actor_id <> ?`,
    a, a, a,
  );
  // Others' published comments on its posts.
  await t.run(
    `UPDATE social_counters SET comment_count = comment_count - (SELECT COUNT(*) FROM social_comments c JOIN social_posts p ON p.id = c.post_id
       WHERE p.actor_id = ? AND c.actor_id = social_counters.actor_id AND c.status = 'published' AND c.deleted_at IS NULL), updated_at = ?
     WHERE actor_id IN (SELECT c.actor_id FROM social_comments c JOIN social_posts p ON p.id = c.post_id WHERE p.actor_id = ? AND c.actor_id <> ?)`,
    a, now, a, a,
  );
  // Its live reposts of others' posts; others' live reposts of its posts.
  await t.run(
    `UPDATE social_posts SET repost_count = repost_count - 1
     WHERE id IN (SELECT source_post_id FROM social_posts WHERE actor_id = ? AND kind = 'repost' AND deleted_at IS NULL) AND actor_id <> ?`,
    a, a,
  );
  await t.run(
    `UPDATE social_posts SET deleted_at = ?, repost_key = NULL, updated_at = ?
     WHERE source_post_id IN (SELECT id FROM social_posts WHERE actor_id = ?) AND actor_id <> ? AND deleted_at IS NULL`,
    now, now, a, a,
  );
  // The hashtag directory.
  await t.run(
    `UPDATE social_hashtags SET post_count = post_count - (SELECT COUNT(*) FROM social_post_hashtags h JOIN social_posts p ON p.id = h.post_id
       WHERE p.actor_id = ? AND h.community_id = social_hashtags.community_id AND h.tag = social_hashtags.tag)
     WHERE EXISTS (SELECT 1 FROM social_post_hashtags h JOIN social_posts p ON p.id = h.post_id WHERE p.actor_id = ? AND h.community_id = social_hashtags.community_id AND h.tag = social_hashtags.tag)`,
    a, a,
  );
  // Reactions on its content (no foreign key reaches them).
  const targets = `SELECT id FROM social_posts WHERE actor_id = ? UNION SELECT id FROM social_comments WHERE actor_id = ? UNION SELECT c.id FROM social_comments c JOIN social_posts p ON p.id = c.post_id WHERE p.actor_id = ?`;
  await t.run(`DELETE FROM social_reaction_counts WHERE target_id IN (${targets})`, a, a, a);
  await t.run(`DELETE FROM social_reactions WHERE target_id IN (${targets})`, a, a, a);
  await feedsChanged(t);
}
