/** What the other features of the community use of comments: reading one (reactions, flags) and moderation's change of its status. */
export { commentById, commentInCommunity, updateComment, visibleTo, type CommentRow } from "./store";
