/** What the other features of the community use of hashtags: the directory's counts, moved with the post that uses or releases a tag. */
export { releaseHashtags, useHashtags } from "./store";
