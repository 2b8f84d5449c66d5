/**
 * Hashtag normalisation: a tag is stored lowercase without its leading #, NFC-normalised,
 * 1-64 Unicode letters, digits and underscores. Part 2 (posts) feeds the directory with
 * extractTags() and useHashtags() (store.ts).
 */
export const TAG_MAX = 64;
const TAG_RE = /^[\p{L}\p{N}_]{1,64}$/u;
const IN_TEXT_RE = /(?:^|[^\p{L}\p{N}_&#])#([\p{L}\p{N}_]+)/gu;

/** The normalised tag, or null when the input is not a valid tag (a leading # is allowed). */
export function normalizeTag(input: string): string | null {
  const s = (input.startsWith("#") ? input.slice(1) : input).normalize("NFC").toLowerCase();
  return [...s].length <= TAG_MAX && TAG_RE.test(s) ? s : null;
}

/** The distinct valid hashtags of a text, normalised, in order of first appearance. */
export function extractTags(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(IN_TEXT_RE)) {
    const t = normalizeTag(m[1]);
    if (t) out.add(t);
  }
  return [...out];
}
