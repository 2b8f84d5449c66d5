/** Post records as the API returns them. */
import type { Sql } from "../../../core/db";
import * as store from "./store";
import { effectiveVisibility } from "./visibility";

export type PostView = ReturnType<typeof shape>;

function shape(r: store.PostRow | store.PostReadRow, counts: Record<string, number>) {
  return {
    id: r.id,
    community_id: r.community_id,
    actor_id: r.actor_id,
    kind: r.kind,
    status: r.status,
    visibility: r.visibility,
    effective_visibility: "a_private" in r ? effectiveVisibility(r) : r.visibility,
    body: r.body,
    attributes: JSON.parse(r.attributes) as Record<string, unknown>,
    assets: JSON.parse(r.assets) as { asset_id: string; alt_text: string | null }[],
    hashtags: JSON.parse(r.hashtags) as string[],
    mentions: JSON.parse(r.mentions) as string[],
    quote_post_id: r.quote_post_id,
    source_post_id: r.source_post_id,
    reaction_counts: counts,
    reaction_count: Number(r.reaction_count),
    comment_count: Number(r.comment_count),
    repost_count: Number(r.repost_count),
    view_count: Number(r.view_count),
    scheduled_for: r.scheduled_for,
    published_at: r.published_at,
    expires_at: r.expires_at,
    moderation: r.moderation,
    deleted_at: r.deleted_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export async function postViews(db: Sql, rows: (store.PostRow | store.PostReadRow)[]): Promise<PostView[]> {
  const counts = await store.reactionCounts(db, rows.map((r) => r.id));
  return rows.map((r) => shape(r, counts.get(r.id) ?? {}));
}

/** A post just written: no reactions yet, so no counts to read. */
export const newPostView = (r: store.PostRow): PostView => shape(r, {});

export async function postView(db: Sql, r: store.PostRow | store.PostReadRow): Promise<PostView> {
  return (await postViews(db, [r]))[0];
}
