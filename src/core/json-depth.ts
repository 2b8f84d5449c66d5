/**
 * Nesting depth of JSON text, measured before it is parsed.
 *
 * Deep documents are cheap to send and expensive to receive: JSON.parse of 1 MiB of "["
 * takes ~0.2 s, and everything that walks the parsed value recursively afterwards
 * (TypeBox validation, the idempotency fingerprint) overflows the stack around 10^4
 * levels. One linear pass over the raw text, with no recursion and no allocation, stops
 * such a body before any of that runs.
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 34; // "
const BACKSLASH = 92; // \
const OPEN_ARRAY = 91; // [
const CLOSE_ARRAY = 93; // ]
const OPEN_OBJECT = 123; // {
const CLOSE_OBJECT = 125; // }

/**
 * True when arrays/objects in `text` nest deeper than `max` (`{}` is depth 1, `[[]]` is 2).
 * Brackets inside strings do not count. The text need not be valid JSON: invalid text is
 * the parser's to reject, this only bounds the work done before it does.
 */
export function exceedsJsonDepth(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string in one go; an escaped character never ends it.
      for (i++; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}
