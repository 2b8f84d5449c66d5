/** TypeBox models of hashtags. */
import { t } from "../../../core/schema";
import { TAG_MAX } from "./tags";

/**
 * A hashtag as a caller writes it (path or body): an optional leading # and then letters,
 * digits and underscores. JSON Schema patterns carry no Unicode classes here (TypeBox builds
 * them without the u flag), so the pattern admits ASCII word characters and any non-ASCII
 * character; hashtags/tags.ts then applies the full rule (NFC, lowercase, 1-64 Unicode letters,
 * digits or underscores) and answers 400 INVALID_TAG naming the field for what it refuses.
 */
export const TAG_PATTERN = "^#?[0-9A-Za-z_\\u0080-\\uffff]+$";
export const HashtagName = (description = `A hashtag: an optional leading # (%23 in a path), then 1-${TAG_MAX} Unicode letters, digits or underscores; case and Unicode composition do not matter (stored lowercase, NFC). Anything else is 400 (VALIDATION_ERROR, or INVALID_TAG for non-ASCII characters that are not letters or digits)`) =>
  t.String({ minLength: 1, pattern: TAG_PATTERN, description });
