/**
 * What the other waitlist features use of variants: the rows the public page shows (and its
 * view) and the one the sign-up checks, and the view counts the public page writes behind.
 */
export { addViews, variantById, variantsOf } from "./store";
export { publicVariantView } from "./views";
