/** Identifiers: UUIDv7 for rows (time-ordered, index friendly) and prefixed ids for public handles. */
import { randomBytes } from "node:crypto";

export const uuid = (): string => Bun.randomUUIDv7();

const B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Uniform random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += B62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const randomHex = (bytes: number) => randomBytes(bytes).toString("hex");

/** e.g. prefixedId("evt") -> evt_01J... (UUIDv7 without dashes keeps time order). */
export const prefixedId = (prefix: string) => `${prefix}_${uuid().replaceAll("-", "")}`;

/**
 * The anchored pattern (JSON Schema / RegExp source) of what prefixedId makes with one of
 * `prefixes`: the prefix, "_" and 32 lowercase hex digits.
 */
export const prefixedIdPattern = (...prefixes: string[]) => `^${prefixes.length === 1 ? prefixes[0] : `(${prefixes.join("|")})`}_[0-9a-f]{32}$`;

/** Short display id, e.g. displayId("tnt") -> tnt_1a2b3c4d5e6f. */
export const displayId = (prefix: string, hexChars = 12) => `${prefix}_${randomHex(Math.ceil(hexChars / 2)).slice(0, hexChars)}`;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID_RE.test(s);
