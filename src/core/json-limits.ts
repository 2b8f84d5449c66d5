/**
 * Limits on the shape of JSON text, checked before it is parsed.
 *
 * Small documents can be expensive to receive. Deep ones: JSON.parse of 1 MiB of "["
 * takes ~0.2 s, and what walks the parsed value recursively afterwards (TypeBox
 * validation, the idempotency fingerprint) overflows the stack around 10^4 levels. Wide
 * ones: a 1 MiB array holds ~500,000 values, and a failed validation pretty-prints the
 * whole value into Elysia's error (~0.35 s). One linear pass over the raw text, with no
 * recursion and no allocation, stops both before any of that runs.
 */
export const MAX_JSON_DEPTH = 64;
/**
 * Array elements plus object members in one body. The spec's largest lists are 200
 * items (bulk card and mail routes), a few fields each: 10,000 leaves ample room.
 */
export const MAX_JSON_ITEMS = 10_000;

const QUOTE = 34; // "
const BACKSLASH = 92; // \
const COMMA = 44; // ,
const OPEN_ARRAY = 91; // [
const CLOSE_ARRAY = 93; // ]
const OPEN_OBJECT = 123; // {
const CLOSE_OBJECT = 125; // }

/**
 * Which limit `text` breaks first, or null: "depth" when arrays/objects nest deeper than
 * `maxDepth` (`{}` is depth 1, `[[]]` is 2), "items" when it holds more than `maxItems`
 * array elements and object members (counted by their separators). Brackets and commas
 * inside strings do not count. The text need not be valid JSON: invalid text is the
 * parser's to reject, this only bounds the work done before it does.
 */
export function jsonLimitExceeded(text: string, maxDepth = MAX_JSON_DEPTH, maxItems = MAX_JSON_ITEMS): "depth" | "items" | null {
  let depth = 0;
  // One item per non-empty container plus one per comma; counting every container is a
  // slight over-count for empty ones, which only matters at the limit's edge.
  let items = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string in one go: jump from quote to quote (a native search, much faster than
      // this loop over long strings such as tokens); a quote after an odd run of backslashes
      // is escaped. An unterminated string runs to the end, as the parser will say.
      for (;;) {
        const q = text.indexOf('"', i + 1);
        if (q === -1) return null;
        let b = q - 1;
        while (text.charCodeAt(b) === BACKSLASH) b--;
        i = q;
        if ((q - 1 - b) % 2 === 0) break;
      }
    } else if (c === COMMA) {
      if (++items > maxItems) return "items";
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) return "depth";
      if (++items > maxItems) return "items";
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return null;
}
