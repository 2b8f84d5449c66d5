/**
 * What the other features of the community use of posts, besides PostService: the rows
 * and the operations they run in their own transaction (comments, reactions, reposts and
 * moderation move a post's counts and state with the write that changed them), and an
 * actor's removal from others' content.
 */
export { detachContent } from "./detach-store";
export { bumpPost, insertPost, liveRepostBy, postById, reactionCounts, repostsOf, restricts, updatePost, type PostReadRow, type PostRow, type Visibility } from "./store";
