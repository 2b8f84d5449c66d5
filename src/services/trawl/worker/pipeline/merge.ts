/**
 * Merging partial results across pages and chunks: arrays are concatenated and
 * de-duplicated (by canonical JSON), objects merged key by key, and a scalar keeps the first
 * non-empty value seen (pages are read in order: suggested URLs first).
 */
import { isEmpty, isObject, type JsonObject } from "../../schema";

const canonical = (v: unknown): string => JSON.stringify(v, (_k, x) => (isObject(x) ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, x[k]])) : x));

export function merge(a: JsonObject, b: JsonObject): JsonObject {
  const out: JsonObject = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const cur = out[k];
    if (isEmpty(cur)) {
      if (!isEmpty(v)) out[k] = v;
    } else if (Array.isArray(cur) && Array.isArray(v)) {
      const seen = new Set(cur.map(canonical));
      out[k] = [...cur, ...v.filter((x) => !seen.has(canonical(x)) && seen.add(canonical(x)))];
    } else if (isObject(cur) && isObject(v)) {
      out[k] = merge(cur, v);
    }
  }
  return out;
}

/** Drops null values and empty strings (an answer's "unknown"), at every depth. */
export function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls).filter((x) => x !== undefined);
  if (!isObject(v)) return v === null || (typeof v === "string" && v.trim() === "") ? undefined : v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) {
    const y = dropNulls(x);
    if (y !== undefined) out[k] = y;
  }
  return out;
}
