/**
 * Keyword filters: each community keeps lowercase words or phrases with an action, block
 * (the write is refused: 422 CONTENT_BLOCKED) or hold (the post or comment is written
 * hidden, with an open flag of reason keyword_filter for the moderation queue). Matching is
 * case-insensitive on whole words (a phrase matches as a whole).
 */
import type { Sql } from "../../../core/db";
import { ApiError } from "../../../core/errors";
import { uuid } from "../../../core/ids";
import * as store from "./store";

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export function matches(text: string, keyword: string): boolean {
  return new RegExp(`(^|[^\\p{L}\\p{N}_])${escape(keyword)}($|[^\\p{L}\\p{N}_])`, "u").test(text.toLowerCase());
}

/** The strongest filter the texts trip: block (throws 422 CONTENT_BLOCKED), hold (returned) or none (null). */
export async function screen(db: Sql, communityId: string, texts: (string | null | undefined)[]): Promise<store.KeywordRow | null> {
  const all = texts.filter((x): x is string => typeof x === "string" && x !== "").join("\n");
  if (all === "") return null;
  let hold: store.KeywordRow | null = null;
  for (const k of await store.keywordsOf(db, communityId)) {
    if (!matches(all, k.keyword)) continue;
    if (k.action === "block") throw new ApiError(422, "CONTENT_BLOCKED", "The text contains a word this community blocks", [{ field: "body", reason: "blocked keyword" }]);
    hold ??= k;
  }
  return hold;
}

/** Files the open keyword_filter flag of held content (no reporter), already auto-hidden. */
export async function holdFlag(t: Sql, communityId: string, type: "post" | "comment", id: string, author: string, k: { keyword: string }, now: string): Promise<void> {
  await store.insertFlag(t, { id: uuid(), community_id: communityId, reporter_actor_id: null, target_type: type, target_id: id, target_actor_id: author, reason: "keyword_filter", note: k.keyword, status: "open", auto_hidden: 1, created_at: now, updated_at: now });
}
