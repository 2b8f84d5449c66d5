/** TypeBox model of a feed page (the routes answer it; the page cache checks a page against it before keeping it). */
import { t } from "../../../core/schema";
import { Pagination } from "../core/schemas";
import { Post } from "../posts/schemas";

export const FeedPage = t.Object({ data: t.Array(Post), pagination: Pagination });
