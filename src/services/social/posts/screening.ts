/**
 * What posts and comments need of the keyword filters (moderation/keywords.ts), declared
 * here so that content does not build on moderation (moderation acts on posts and
 * comments): content.ts hands the filters in.
 */
import type { Sql } from "../../../core/db";

/** The filter a text tripped that holds it for review. */
export interface HeldBy {
  keyword: string;
}

export interface ContentScreen {
  /** The strongest filter the texts trip: block throws 422 CONTENT_BLOCKED, hold is returned, none is null. */
  screen(db: Sql, communityId: string, texts: (string | null | undefined)[]): Promise<HeldBy | null>;
  /** Files the open keyword_filter flag of held content, in the writing transaction `t`. */
  hold(t: Sql, communityId: string, type: "post" | "comment", id: string, author: string, k: HeldBy, now: string): Promise<void>;
}
